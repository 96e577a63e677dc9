-- busted specs for el.threads{keep_finished=}'s bound on tracker:list()
-- (docs/lua-api.md §6): the threads alive and the keep_finished that
-- finished last, however few threads finished (the table forgets older
-- ones in batches, past 2 * keep_finished + 64). Run on real hosts
-- (tests/tools/el_spec); the expected lists are worked out by hand from
-- the events below.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- Threads 1..5 each run once on capability 0; 1..4 finish (STOP_THREAD
-- status 5, ThreadFinished) in the order 3, 1, 4, 2; thread 5 blocks
-- (status 3, BlockedOnMVar) and stays alive.
local function log()
  local b = {cap = 0}
  local t = 0
  for _, th in ipairs({3, 1, 4, 2}) do
    b[#b + 1] = {"RUN_THREAD", t + 10, th}
    b[#b + 1] = {"STOP_THREAD", t + 20, th, 5, 0}
    t = t + 100
  end
  b[#b + 1] = {"RUN_THREAD", t + 10, 5}
  b[#b + 1] = {"STOP_THREAD", t + 20, 5, 3, 0}
  return W.eventlog{b}
end

local function listed(keep)
  local h = el_spec.host{code = ([[
    local el = require("eventlog_live")
    local tr = el.threads{keep_finished = %d}
    el.on_end(function()
      local ids = {}
      for _, th in ipairs(tr:list()) do ids[#ids + 1] = th.thread end
      el.host_log("warn", "ids=" .. table.concat(ids, ","))
    end)
  ]]):format(keep)}
  assert(h:feed(log()))
  assert(h:finish())
  for _, m in ipairs(h:messages()) do
    local ids = m.text:match("^ids=(.*)$")
    if ids then return ids end
  end
end

describe("el.threads{keep_finished=}", function()
  it("lists the alive and the last finished, by id", function()
    -- finished in the order 3, 1, 4, 2: the last two are 4 and 2
    assert.equal("2,4,5", listed(2))
    assert.equal("5", listed(0))
    assert.equal("1,2,3,4,5", listed(4))
    assert.equal("1,2,3,4,5", listed(1000))
  end)
end)
