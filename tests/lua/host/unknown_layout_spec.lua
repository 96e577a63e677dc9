-- busted specs: a known event type declared with a size none of its
-- layouts fits (docs/eventlog.md "Unknown types"). Its events come with
-- known = 0 and the raw payload: "*" handlers get them, the type's own
-- handlers (stream and time order) do not, and the host warns once per
-- session, naming the type and the declaration's byte. Run by
-- tests/tools/el_spec on real hosts; expected values by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- A session whose header declares HEAP_SIZE (type 50) with 1 payload byte
-- (its only layout has 12), and its events: three 1-byte HEAP_SIZE events
-- and two HEAP_ALLOCATED ones (declared as GHC does).
local function bad_session()
  local saved = W.TYPES.HEAP_SIZE
  W.TYPES.HEAP_SIZE = {50, 1, {"u8"}, "Current heap size"}
  local ok, bytes = pcall(W.eventlog, {
    {cap = 0,
      {"HEAP_ALLOCATED", 100, 1, 4096},
      {"HEAP_SIZE", 110, 7},
      {"HEAP_SIZE", 120, 8},
      {"HEAP_ALLOCATED", 130, 1, 8192},
      {"HEAP_SIZE", 140, 9},
    },
  })
  W.TYPES.HEAP_SIZE = saved
  assert(ok, bytes)
  return bytes
end

-- A session declaring every type as GHC does, with one HEAP_SIZE event.
local function good_session()
  return (W.eventlog{{cap = 0, {"HEAP_SIZE", 200, 1, 65536}}})
end

-- The byte of HEAP_SIZE's declaration in W.header(): "hdrb" "hetb", then
-- each declaration in ascending id ("etb\0" id:u16 size:u16 len:u32 desc
-- extra:u32 "ete\0": 20 bytes + the description).
local function heap_size_decl_offset()
  local names = {}
  for name in pairs(W.TYPES) do names[#names + 1] = name end
  table.sort(names, function(a, b) return W.TYPES[a][1] < W.TYPES[b][1] end)
  local off = 8
  for _, name in ipairs(names) do
    if name == "HEAP_SIZE" then return off end
    off = off + 20 + #W.TYPES[name][4]
  end
end

local CODE = [[
  local el = require("eventlog_live")
  local named, star, heap_alloc, star_fields = {}, {}, 0, {}
  local ORDER = ...
  el.on("HEAP_SIZE", function(ev)
    named[#named + 1] = ev.session .. ":" .. tostring(ev.size_bytes)
  end, {order = ORDER})
  el.on("HEAP_ALLOCATED", function(ev) heap_alloc = heap_alloc + 1 end,
        {order = ORDER})
  el.on("*", function(ev)
    if ev.type ~= "HEAP_SIZE" then return end
    star[#star + 1] = ev.session .. ":" .. #ev.payload
    star_fields[#star_fields + 1] = tostring(ev.heap_capset)
  end, {order = ORDER})
  el.on_end(function()
    el.host_log("warn", "named " .. table.concat(named, " "))
    el.host_log("warn", "star " .. table.concat(star, " "))
    el.host_log("warn", "star_fields " .. table.concat(star_fields, " "))
    el.host_log("warn", "heap_alloc " .. heap_alloc)
  end)
]]

local function run(order)
  local code = CODE:gsub("local ORDER = %.%.%.", ("local ORDER = %q"):format(order))
  local h = el_spec.host{code = code, service_name = "spec"}
  assert(h:feed(bad_session() .. good_session()))
  assert(h:finish())
  local out, warned = {}, {}
  for _, m in ipairs(h:messages()) do
    local k, v = m.text:match("^(%S+) (.*)$")
    if k == "named" or k == "star" or k == "star_fields" or k == "heap_alloc" then
      out[k] = v
    elseif m.text:find("HEAP_SIZE (type 50)", 1, true) then
      warned[#warned + 1] = m.text
    end
  end
  return out, warned, h
end

for _, order in ipairs({"stream", "time"}) do
  describe("a known type declared with no layout that fits (" .. order ..
           " order)", function()
    it("reaches \"*\" handlers with its raw payload, not its own", function()
      local out = run(order)
      -- session 1: none of the three 1-byte events; session 2 declares
      -- HEAP_SIZE as GHC does: its event has its fields again
      assert.are.equal("2:65536", out.named)
      assert.are.equal("1:1 1:1 1:1 2:12", out.star)
      assert.are.equal("nil nil nil 1", out.star_fields)
      assert.are.equal("2", out.heap_alloc) -- other types unaffected
    end)
    it("is warned about once, naming the type and the byte", function()
      local _, warned = run(order)
      assert.are.equal(1, #warned)
      local off = heap_size_decl_offset()
      assert.truthy(warned[1]:find("at byte " .. off .. " with size 1", 1, true),
                    warned[1])
      assert.truthy(warned[1]:find('"*" handlers only, not to HEAP_SIZE handlers',
                                   1, true), warned[1])
    end)
    it("counts the events and the handler calls", function()
      local _, _, h = run(order)
      -- 1 marker + 5 events, then 1 marker + 1 event
      assert.are.equal(8, h:stats().events)
      -- "*": all 8; HEAP_ALLOCATED's: 2; HEAP_SIZE's: session 2's only
      assert.are.equal(8 + 2 + 1, h:stats().dispatched)
    end)
  end)
end
