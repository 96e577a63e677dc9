-- busted specs for the pure-Lua parsers of the default processors (no host
-- needed): ghc-stack-profiler messages (stack_profiler.lua,
-- spec/reference-behaviour.md §5.4.3) and IPE source locations (ipe.lua,
-- §5.2.2, ipedb's parseSrcLoc). The processors themselves run on real
-- hosts in tests/lua/host/processors_default_spec.lua. Expected values are
-- written out by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
local sp = require("eventlog_live.processors.stack_profiler")
local ipe = require("eventlog_live.processors.ipe")

local function str(id, s)
  return string.pack(">I2I8I2", 0xFFCC, id, utf8.len(s)) .. s
end

describe("processor parsers", function()
  it("decodes ghc-stack-profiler messages", function()
    local m = sp.decode(str(7, "héllo") .. "trailing")
    assert.are.same({tag = "string", id = 7, text = "héllo"}, m)
    m = sp.decode(string.pack(">I2I8I4I4I8", 0xFFCD, 3, 10, 5, 7))
    assert.are.same({tag = "srcloc", id = 3, line = 10, column = 5, file = 7}, m)
    m = sp.decode(string.pack(">I2I4I4I2BI8BI8BI8I8", 0xFFCA, 1, 42, 3,
                              1, 0x10, 2, 7, 3, 7, 3))
    assert.are.same({tag = "final", cap = 1, thread = 42, items = {
      {kind = "ipe", id = 0x10}, {kind = "string", string = 7},
      {kind = "srcloc", string = 7, srcloc = 3}}}, m)
    local bad, err = sp.decode("\1\2\3")
    assert.is_nil(bad)
    assert.truthy(err)
  end)

  it("parses source locations like ipedb", function()
    assert.are.same({"a/B.hs", 3, 4}, {ipe.parse_srcloc("a/B.hs:3:4")})
    assert.are.same({"a/B.hs", 3, 4}, {ipe.parse_srcloc("a/B.hs:3:4-9")})
    assert.are.same({"C:/x.hs", 1, 2}, {ipe.parse_srcloc("C:/x.hs:(1,2)-(3,4)")})
    assert.are.same({"f.hs"}, {ipe.parse_srcloc("f.hs:")})
    assert.are.same({""}, {ipe.parse_srcloc("<built-in>")})
  end)
end)
