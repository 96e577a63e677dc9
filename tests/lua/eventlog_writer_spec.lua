-- busted specs for tests/lua/eventlog_writer.lua, the eventlog writer of
-- the host specs (tests/lua/host/). Expected bytes are the worked examples
-- of spec/eventlog-format.md (§1.3, §3.3) and layouts written out by hand
-- from its tables (§1.4, §1.5, §2.1).
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local W = require("eventlog_writer")

-- "65 74 62 00 | 00 00" -> bytes
local function hex(s)
  return (s:gsub("[^%x]", ""):gsub("%x%x", function(b)
    return string.char(tonumber(b, 16))
  end))
end

describe("eventlog_writer", function()
  it("declares a type as GHC 9.0.2 does (spec §1.3 example)", function()
    assert.are.equal(hex("65 74 62 00 | 00 00 | 00 04 | 00 00 00 0d")
                     .. "Create thread" .. hex("00 00 00 00 | 65 74 65 00"),
                     W.declaration("CREATE_THREAD"))
  end)

  it("declares variable-size types with size 0xFFFF", function()
    assert.are.equal(hex("65 74 62 00 | 00 3a | ff ff | 00 00 00 0b")
                     .. "User marker" .. hex("00 00 00 00 | 65 74 65 00"),
                     W.declaration("USER_MARKER"))
  end)

  it("writes HEAP_PROF_BEGIN and HEAP_PROF_COST_CENTRE payloads (spec §3.3)", function()
    assert.are.equal(hex("00 | 00 00 00 00 05 f5 e1 00 | 00 00 00 01"
                         .. "| 00 00 00 00 00 00 00"),
                     W.payload("HEAP_PROF_BEGIN", 0, 100000000, 1,
                               "", "", "", "", "", "", ""))
    assert.are.equal(hex("00 00 00 6e") .. "IDLE\0IDLE\0<built-in>\0"
                     .. hex("00"),
                     W.payload("HEAP_PROF_COST_CENTRE", 110, "IDLE", "IDLE",
                               "<built-in>", 0))
  end)

  it("frames fixed and variable events (spec §1.4)", function()
    -- STOP_THREAD: type 2, t, thread:u32, status:u16, info:u32
    assert.are.equal(hex("00 02 | 00 00 00 00 00 00 01 00 | 00 00 00 07"
                         .. "| 00 08 | 00 00 00 2a"),
                     W.event{"STOP_THREAD", 256, 7, 8, 42})
    -- USER_MARKER: type 58, t, payload_size:u16, text
    assert.are.equal(hex("00 3a | 00 00 00 00 00 00 00 05 | 00 02") .. "hi",
                     W.event{"USER_MARKER", 5, "hi"})
    -- PROGRAM_ARGS: capset, then each argument followed by NUL
    assert.are.equal(hex("00 1e | 00 00 00 00 00 00 00 00 | 00 0c"
                         .. "| 00 00 00 00") .. "./a\0-hT\0",
                     W.event{"PROGRAM_ARGS", 0, 0, {"./a", "-hT"}})
    -- PROF_SAMPLE_COST_CENTRE: capability, tick, depth, ids innermost first
    assert.are.equal(hex("00 a7 | 00 00 00 00 00 00 00 09 | 00 15"
                         .. "| 00 00 00 01 | 00 00 00 00 00 00 00 03 | 02"
                         .. "| 00 00 00 02 | 00 00 00 01"),
                     W.event{"PROF_SAMPLE_COST_CENTRE", 9, 1, 3, {2, 1}})
  end)

  it("frames a block: marker size includes its own 24 bytes (spec §1.5)", function()
    local run = W.event{"RUN_THREAD", 10, 7}      -- 14 bytes
    local stop = W.event{"STOP_THREAD", 30, 7, 3, 0}  -- 20 bytes
    assert.are.equal(hex("00 12 | 00 00 00 00 00 00 00 0a"
                         .. "| 00 00 00 3a | 00 00 00 00 00 00 00 1e | 00 01")
                     .. run .. stop,
                     W.block{cap = 1, {"RUN_THREAD", 10, 7},
                             {"STOP_THREAD", 30, 7, 3, 0}})
    -- the global buffer is cap 0xFFFF
    assert.are.equal(hex("00 12 | 00 00 00 00 00 00 00 05"
                         .. "| 00 00 00 18 | 00 00 00 00 00 00 00 09 | ff ff"),
                     W.block{t = 5, end_t = 9})
  end)

  it("writes header, blocks and DATA_END, with block end offsets", function()
    local bytes, ends = W.eventlog{{cap = 0, {"GC_START", 1}}, {{"GC_END", 2}}}
    local h = W.header()
    assert.are.equal(hex("68 64 72 62 68 65 74 62"), h:sub(1, 8))
    assert.are.equal(hex("68 65 74 65 68 64 72 65 64 61 74 62"), h:sub(-12))
    assert.are.same({#h + 34, #h + 68}, ends)
    assert.are.equal(#h + 70, #bytes)
    assert.are.equal(hex("ff ff"), bytes:sub(-2))
    assert.are.equal(#h + 68, #W.eventlog({{cap = 0, {"GC_START", 1}},
                                            {{"GC_END", 2}}},
                                           {data_end = false}))
  end)

  it("rejects unknown types and wrong field counts", function()
    assert.has_error(function() W.event{"NO_SUCH_EVENT", 0} end)
    assert.has_error(function() W.event{"RUN_THREAD", 0} end)
    assert.has_error(function() W.event{"HEAP_SIZE", 0, 0, 1, 2} end)
  end)
end)
