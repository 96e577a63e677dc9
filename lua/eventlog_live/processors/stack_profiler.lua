-- Decoder of ghc-stack-profiler messages carried in USER_BINARY_MSG
-- events (spec/reference-behaviour.md §5.4.3; the wire layouts as the
-- profiler's ghc-stack-profiler-core writes them). Big-endian.
--
--   u16 tag: 0xFFC0 ProtocolVersion(u8 version; 0.5 writes 0)
--            0xFFCA CallStackFinal(STACK), 0xFFCB CallStackChunk(STACK),
--            0xFFCC StringDef(u64 id, u16 length, UTF-8 text),
--            0xFFCD SourceLocationDef(u64 id, u32 line, u32 column,
--                                     u64 file string id)
--   STACK = u32 capability, THREAD, u16 n, n items:
--            0x01 u64 IPE id | 0x02 u64 string id
--            | 0x03 u64 string id, u64 srcloc id
--
-- Two layouts differ in THREAD and in what the StringDef length counts:
--   M.LAYOUT_04 (0.3 and 0.4, no ProtocolVersion message): THREAD = u32,
--     length = characters (code points);
--   M.LAYOUT_05 (0.5, after ProtocolVersion 0): THREAD = u64, length =
--     bytes of UTF-8.
-- M.PROTOCOLS maps a ProtocolVersion to its layout; a version not there is
-- unknown (the caller skips what follows it). Trailing bytes are ignored.
-- Pure Lua.
local M = {}

M.LAYOUT_04 = "0.4"
M.LAYOUT_05 = "0.5"
M.PROTOCOLS = {[0] = M.LAYOUT_05}

local function read_stack(s, pos, layout)
  local cap, thread, n
  if layout == M.LAYOUT_05 then
    cap, thread, n, pos = string.unpack(">I4I8I2", s, pos)
  else
    cap, thread, n, pos = string.unpack(">I4I4I2", s, pos)
  end
  local items = {}
  for i = 1, n do
    local tag
    tag, pos = string.unpack("B", s, pos)
    if tag == 1 then
      local id
      id, pos = string.unpack(">I8", s, pos)
      items[i] = {kind = "ipe", id = id}
    elseif tag == 2 then
      local sid
      sid, pos = string.unpack(">I8", s, pos)
      items[i] = {kind = "string", string = sid}
    elseif tag == 3 then
      local sid, lid
      sid, lid, pos = string.unpack(">I8I8", s, pos)
      items[i] = {kind = "srcloc", string = sid, srcloc = lid}
    else
      error(("unknown stack item tag 0x%02x"):format(tag), 0)
    end
  end
  return {cap = cap, thread = thread, items = items}
end

-- The StringDef text: n characters (0.4) or n bytes (0.5) from pos.
local function read_text(s, pos, n, layout)
  if layout == M.LAYOUT_05 then
    if #s - pos + 1 < n then error("string too short", 0) end
    return s:sub(pos, pos + n - 1)
  end
  local stop = n == 0 and pos or utf8.offset(s, n + 1, pos)
  if not stop then
    if #s - pos + 1 < n then error("string too short", 0) end
    stop = #s + 1
  end
  return s:sub(pos, stop - 1)
end

-- Decode one payload s (a string) in layout (M.LAYOUT_04 when nil).
-- Returns a message table:
--   {tag = "version", version = 0..255}
--   {tag = "final"|"chunk", cap=, thread=, items={...}}
--   {tag = "string", id=, text=}
--   {tag = "srcloc", id=, line=, column=, file=}
-- or nil, an error message, and the unknown message tag (a number) when
-- the payload's tag is not one of the above (nil for other errors).
-- Thread ids of 2^63 and above come out negative (Lua integers).
function M.decode(s, layout)
  layout = layout or M.LAYOUT_04
  local unknown
  local ok, res = pcall(function()
    local tag, pos = string.unpack(">I2", s, 1)
    if tag == 0xFFCA or tag == 0xFFCB then
      local st = read_stack(s, pos, layout)
      st.tag = tag == 0xFFCA and "final" or "chunk"
      return st
    elseif tag == 0xFFCC then
      local id, n
      id, n, pos = string.unpack(">I8I2", s, pos)
      return {tag = "string", id = id, text = read_text(s, pos, n, layout)}
    elseif tag == 0xFFCD then
      local id, line, col, file
      id, line, col, file = string.unpack(">I8I4I4I8", s, pos)
      return {tag = "srcloc", id = id, line = line, column = col, file = file}
    elseif tag == 0xFFC0 then
      local v = string.unpack("B", s, pos)
      return {tag = "version", version = v}
    end
    unknown = tag
    error(("unknown message tag 0x%04x"):format(tag), 0)
  end)
  if ok then return res end
  return nil, tostring(res), unknown
end

return M
