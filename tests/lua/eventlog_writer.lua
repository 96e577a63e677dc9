-- eventlog_writer: write GHC eventlogs from Lua tables, so that specs read
-- like the events they describe and run through the real decoder.
--
-- Layout from spec/eventlog-format.md §1-§3 (big-endian throughout):
--   header  := "hdrb" "hetb" (ET_BEGIN id:u16 size:u16 desc_len:u32 desc
--              extra_len:u32 ET_END)* "hete" "hdre" "datb"
--   event   := type:u16 t:u64 [payload_size:u16 if variable] payload
--   block   := BLOCK_MARKER event (block_size:u32 incl. its own 24 bytes,
--              end_time:u64, cap:u16, 0xFFFF = global) then its events
--   DATA_END:= 0xFFFF
--
-- Use:
--   local W = require("eventlog_writer")
--   local bytes, ends = W.eventlog{
--     {  -- a global block (no cap)
--       {"WALL_CLOCK_TIME", 0, 1, 1700000000, 0},
--     },
--     {cap = 0,
--       {"RUN_THREAD", 100, 7},
--       {"STOP_THREAD", 250, 7, 3, 0},
--     },
--   }
-- An event is {NAME, t_ns, field1, field2, ...} with the fields in the
-- order of the spec's payload column (§2.1); a block is an array of events
-- with optional keys cap (nil = the global buffer), t (the marker's time,
-- default: the earliest event's) and end_t (default: the latest event's).
-- `ends[i]` is the byte offset just after block i, for feeding a log in
-- pieces. The header declares every type in W.TYPES, as GHC declares every
-- type it knows.
local M = {}

-- Field encoders: kind -> function(value) -> bytes.
local ENC = {
  u8 = function(v) return string.pack(">I1", v) end,
  u16 = function(v) return string.pack(">I2", v) end,
  u32 = function(v) return string.pack(">I4", v) end,
  u64 = function(v) return string.pack(">i8", v) end,
  -- text to the end of the payload, no terminator (§3.1)
  text = function(v) return v end,
  -- NUL-terminated string (§3.1)
  cstr = function(v) return v .. "\0" end,
  -- each string followed by NUL, the last one too (PROGRAM_ARGS, §3.1)
  strlist = function(v)
    local out = {}
    for i, s in ipairs(v) do out[i] = s .. "\0" end
    return table.concat(out)
  end,
  -- depth:u8 then depth x cc_id:u32, innermost first (§3.2)
  stack = function(v)
    local out = {string.pack(">I1", #v)}
    for i, id in ipairs(v) do out[i + 1] = string.pack(">I4", id) end
    return table.concat(out)
  end,
  -- raw bytes, the whole rest of the payload (USER_BINARY_MSG)
  bytes = function(v) return v end,
}

-- The event types the writer knows: name -> {id, size (nil = variable),
-- fields, desc}. spec/eventlog-format.md §2.1.
M.TYPES = {
  CREATE_THREAD = {0, 4, {"u32"}, "Create thread"},
  RUN_THREAD = {1, 4, {"u32"}, "Run thread"},
  STOP_THREAD = {2, 10, {"u32", "u16", "u32"}, "Stop thread"},
  MIGRATE_THREAD = {4, 6, {"u32", "u16"}, "Migrate thread"},
  THREAD_WAKEUP = {8, 6, {"u32", "u16"}, "Wakeup thread"},
  GC_START = {9, 0, {}, "Start GC"},
  GC_END = {10, 0, {}, "Stop GC"},
  LOG_MSG = {16, nil, {"text"}, "Log message"},
  BLOCK_MARKER = {18, 14, {"u32", "u64", "u16"}, "Block marker"},
  USER_MSG = {19, nil, {"text"}, "User message"},
  CAPSET_CREATE = {25, 6, {"u32", "u16"}, "Create capability set"},
  CAPSET_ASSIGN_CAP = {27, 6, {"u32", "u16"}, "Add capability to set"},
  RTS_IDENTIFIER = {29, nil, {"u32", "text"}, "RTS name and version"},
  PROGRAM_ARGS = {30, nil, {"u32", "strlist"}, "Program arguments"},
  OSPROCESS_PID = {32, 8, {"u32", "u32"}, "Process ID"},
  WALL_CLOCK_TIME = {43, 16, {"u32", "u64", "u32"}, "Wall clock time"},
  THREAD_LABEL = {44, nil, {"u32", "text"}, "Thread label"},
  CAP_CREATE = {45, 2, {"u16"}, "Create capability"},
  HEAP_ALLOCATED = {49, 12, {"u32", "u64"}, "Total heap mem ever allocated"},
  HEAP_SIZE = {50, 12, {"u32", "u64"}, "Current heap size"},
  HEAP_LIVE = {51, 12, {"u32", "u64"}, "Current heap live data"},
  USER_MARKER = {58, nil, {"text"}, "User marker"},
  MEM_RETURN = {90, 16, {"u32", "u32", "u32", "u32"}, "The RTS attempted to return heap memory to the OS"},
  BLOCKS_SIZE = {91, 12, {"u32", "u64"}, "Report the size of the heap in blocks"},
  HEAP_PROF_BEGIN = {160, nil, {"u8", "u64", "u32", "cstr", "cstr", "cstr",
                                "cstr", "cstr", "cstr", "cstr"},
                     "Start of heap profile"},
  HEAP_PROF_COST_CENTRE = {161, nil, {"u32", "cstr", "cstr", "cstr", "u8"},
                           "Cost centre definition"},
  HEAP_PROF_SAMPLE_BEGIN = {162, 8, {"u64"}, "Start of heap profile sample"},
  HEAP_PROF_SAMPLE_COST_CENTRE = {163, nil, {"u8", "u64", "stack"},
                                  "Heap profile cost-centre sample"},
  HEAP_PROF_SAMPLE_STRING = {164, nil, {"u8", "u64", "cstr"},
                             "Heap profile string sample"},
  HEAP_PROF_SAMPLE_END = {165, 8, {"u64"}, "End of heap profile sample"},
  HEAP_BIO_PROF_SAMPLE_BEGIN = {166, 16, {"u64", "u64"},
                                "Start of heap profile (biographical) sample"},
  PROF_SAMPLE_COST_CENTRE = {167, nil, {"u32", "u64", "stack"},
                             "Time profile cost-centre stack"},
  PROF_BEGIN = {168, 8, {"u64"}, "Start of a time profile"},
  IPE = {169, nil, {"u64", "cstr", "cstr", "cstr", "cstr", "cstr", "cstr"},
         "An IPE entry"},
  USER_BINARY_MSG = {181, nil, {"bytes"}, "User binary message"},
}

local function type_of(name)
  local ty = M.TYPES[name]
  if not ty then error("eventlog_writer: unknown event type " .. tostring(name), 3) end
  return ty
end

-- The payload of an event of type `name` with the given field values.
function M.payload(name, ...)
  local ty = type_of(name)
  local kinds, n = ty[3], select("#", ...)
  if n ~= #kinds then
    error(("eventlog_writer: %s takes %d fields, got %d"):format(name, #kinds, n), 2)
  end
  local out = {}
  for i, kind in ipairs(kinds) do out[i] = ENC[kind]((select(i, ...))) end
  local p = table.concat(out)
  if ty[2] and #p ~= ty[2] then
    error(("eventlog_writer: %s payload is %d bytes, declared %d"):format(
      name, #p, ty[2]), 2)
  end
  return p
end

-- One event record: {NAME, t, fields...}.
function M.event(ev)
  local name, t = ev[1], ev[2]
  local ty = type_of(name)
  local p = M.payload(name, table.unpack(ev, 3, #ev))
  if ty[2] then return string.pack(">I2i8", ty[1], t) .. p end
  if #p > 0xFFFF then
    error(("eventlog_writer: %s payload of %d bytes is too long"):format(
      name, #p), 2)
  end
  return string.pack(">I2i8I2", ty[1], t, #p) .. p
end

-- One declaration of the header (§1.3).
function M.declaration(name)
  local ty = type_of(name)
  return string.pack(">I4I2I2s4I4I4", 0x65746200, ty[1], ty[2] or 0xFFFF,
                     ty[4], 0, 0x65746500)
end

-- The header declaring every known type, in ascending id, and DATA_BEGIN.
function M.header()
  local names = {}
  for name in pairs(M.TYPES) do names[#names + 1] = name end
  table.sort(names, function(a, b) return M.TYPES[a][1] < M.TYPES[b][1] end)
  local out = {string.pack(">I4I4", 0x68647262, 0x68657462)}
  for _, name in ipairs(names) do out[#out + 1] = M.declaration(name) end
  out[#out + 1] = string.pack(">I4I4I4", 0x68657465, 0x68647265, 0x64617462)
  return table.concat(out)
end

-- One block: its BLOCK_MARKER and its events (§1.5).
function M.block(blk)
  local body, lo, hi = {}, nil, nil
  for i, ev in ipairs(blk) do
    body[i] = M.event(ev)
    local t = ev[2]
    if not lo or t < lo then lo = t end
    if not hi or t > hi then hi = t end
  end
  local t0 = blk.t or lo or 0
  local t1 = blk.end_t or hi or t0
  local data = table.concat(body)
  local marker = M.event{"BLOCK_MARKER", t0, 24 + #data, t1,
                         blk.cap or 0xFFFF}
  return marker .. data
end

M.DATA_END = "\xff\xff"

-- A whole eventlog: header, the blocks, DATA_END (opts.data_end = false
-- leaves it out, a stream cut after its last block). Returns the bytes and
-- the offset just after each block.
function M.eventlog(blocks, opts)
  local out, ends = {M.header()}, {}
  local len = #out[1]
  for i, blk in ipairs(blocks) do
    local b = M.block(blk)
    out[#out + 1] = b
    len = len + #b
    ends[i] = len
  end
  if not (opts and opts.data_end == false) then out[#out + 1] = M.DATA_END end
  return table.concat(out), ends
end

return M
