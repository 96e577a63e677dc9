-- eventlog_live.status: names of STOP_THREAD status codes, as ghc-events
-- shows them (spec/reference-behaviour.md §4; spec/eventlog-format.md
-- §2.2). Pure Lua. docs/lua-api.md §8.
local M = {}

M.FINISHED = 5

local names = {
  [0] = "NoStatus", "HeapOverflow", "StackOverflow", "ThreadYielding",
  "ThreadBlocked", "ThreadFinished", "ForeignCall", "BlockedOnMVar",
  "BlockedOnBlackHole", "BlockedOnRead", "BlockedOnWrite", "BlockedOnDelay",
  "BlockedOnSTM", "BlockedOnDoProc", "BlockedOnCCall",
  "BlockedOnCCall_NoUnblockExc", "BlockedOnMsgThrowTo", "ThreadMigrating",
  "BlockedOnMsgGlobalise", "NoStatus", "BlockedOnMVarRead",
}

-- The name of status code `code`; BlockedOnBlackHole carries its owner
-- thread (info) when known: "BlockedOnBlackHoleOwnedBy 42".
function M.name(code, info)
  if code == 8 then
    return "BlockedOnBlackHoleOwnedBy " .. tostring(info or 0)
  end
  return names[code] or "NoStatus"
end

-- True for the codes that mean the thread blocked (not yielding, not
-- finished, not a heap/stack check).
function M.is_blocked(code)
  return code == 4 or code == 6 or (code >= 7 and code <= 20 and code ~= 17
    and code ~= 19)
end

return M
