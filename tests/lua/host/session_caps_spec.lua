-- busted specs for el.session.caps (docs/lua-api.md §3): the capabilities
-- seen, ascending, whatever order their blocks come in (the list is
-- appended to when a capability above the last comes, rebuilt otherwise).
-- Run by tests/tools/el_spec on real hosts; expected lists by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- The caps list after each block's USER_MSG, for blocks of `order`.
local function caps_seen(order)
  local h = el_spec.host{code = [[
    local el = require("eventlog_live")
    _G.seen = {}
    el.on("USER_MSG", function(ev)
      _G.seen[#_G.seen + 1] = table.concat(el.session.caps, ",")
    end)
    el.on_end(function()
      el.host_log("warn", "caps " .. table.concat(_G.seen, " "))
    end)
  ]], service_name = "spec"}
  local blocks = {}
  for i, cap in ipairs(order) do
    blocks[#blocks + 1] = {cap = cap, {"USER_MSG", i, "m"}}
  end
  local bytes = W.eventlog(blocks)
  assert(h:feed(bytes))
  assert(h:finish())
  for _, m in ipairs(h:messages()) do
    local caps = m.text:match("^caps (.*)$")
    if caps then return caps end
  end
end

describe("el.session.caps", function()
  it("lists capabilities in ascending order as their blocks come", function()
    assert.are.equal("0 0,1 0,1,3", caps_seen({0, 1, 3}))
  end)
  it("stays ascending when a lower capability comes later", function()
    assert.are.equal("2 1,2 1,2,3 0,1,2,3", caps_seen({2, 1, 3, 0}))
  end)
end)
