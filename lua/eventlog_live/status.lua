-- eventlog_live.status: STOP_THREAD status codes (spec/reference-behaviour.md
-- §4; spec/eventlog-format.md §2.2). The names come from the host's one table
-- (el.status_name, src/eventlog/ev_codes.c): this module needs a host.
-- docs/lua-api.md §8.
local el = require("eventlog_live")

local M = {}

M.FINISHED = 5

-- The name of status code `code`; BlockedOnBlackHole carries its owner
-- thread (info) when known: "BlockedOnBlackHoleOwnedBy 42"; without an
-- owner (info nil or 0) it is "BlockedOnBlackHole".
M.name = el.status_name

-- True for the codes that mean the thread blocked (not yielding, not
-- finished, not a heap/stack check).
function M.is_blocked(code)
  return code == 4 or code == 6 or (code >= 7 and code <= 20 and code ~= 17
    and code ~= 19)
end

return M
