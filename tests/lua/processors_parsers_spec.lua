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

  it("decodes the 0.5 layout and the ProtocolVersion message", function()
    -- ghc-stack-profiler-core 0.5: FF C0 version (u8); stacks carry a u64
    -- thread id; a StringDef length counts UTF-8 bytes.
    assert.are.same({tag = "version", version = 0},
                    sp.decode(string.pack(">I2B", 0xFFC0, 0)))
    assert.are.same({tag = "version", version = 7},
                    sp.decode(string.pack(">I2B", 0xFFC0, 7)))
    assert.are.equal(sp.LAYOUT_05, sp.PROTOCOLS[0])
    assert.is_nil(sp.PROTOCOLS[1])
    -- "héllo" is 5 characters, 6 bytes.
    local m = sp.decode(string.pack(">I2I8I2", 0xFFCC, 7, 6) .. "héllo!",
                        sp.LAYOUT_05)
    assert.are.same({tag = "string", id = 7, text = "héllo"}, m)
    m = sp.decode(string.pack(">I2I4I8I2BI8", 0xFFCB, 1, (1 << 40) + 42, 1,
                              2, 7), sp.LAYOUT_05)
    assert.are.same({tag = "chunk", cap = 1, thread = (1 << 40) + 42,
                     items = {{kind = "string", string = 7}}}, m)
    -- The same bytes read as 0.4 give another thread: the layouts differ.
    m = sp.decode(string.pack(">I2I4I4I2BI8", 0xFFCB, 1, 42, 1, 2, 7))
    assert.are.equal(42, m.thread)
    -- An unknown tag is named, so the caller can report it once.
    local bad, err, tag = sp.decode(string.pack(">I2I4", 0xFFC5, 1))
    assert.is_nil(bad)
    assert.truthy(err:find("0xffc5"))
    assert.are.equal(0xFFC5, tag)
    -- A short 0.5 string is an error, not a crash.
    bad, err = sp.decode(string.pack(">I2I8I2", 0xFFCC, 7, 9) .. "abc",
                         sp.LAYOUT_05)
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
