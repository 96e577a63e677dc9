-- Decoder of ghc-stack-profiler messages carried in USER_BINARY_MSG
-- events (spec/reference-behaviour.md §5.4.3, protocol 0.3). Big-endian.
--   u16 tag: 0xFFCA CallStackFinal(STACK), 0xFFCB CallStackChunk(STACK),
--            0xFFCC StringDef(u64 id, u16 nchars, UTF-8 chars),
--            0xFFCD SourceLocationDef(u64 id, u32 line, u32 column,
--                                     u64 file string id)
--   STACK = u32 capability, u32 thread, u16 n, n items:
--            0x01 u64 IPE id | 0x02 u64 string id
--            | 0x03 u64 string id, u64 srcloc id
-- Trailing bytes are ignored. Pure Lua.
local M = {}

local function read_stack(s, pos)
  local cap, thread, n
  cap, thread, n, pos = string.unpack(">I4I4I2", s, pos)
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

-- Decode one payload. Returns a message table:
--   {tag = "final"|"chunk", cap=, thread=, items={...}}
--   {tag = "string", id=, text=}
--   {tag = "srcloc", id=, line=, column=, file=}
-- or nil, error message.
function M.decode(s)
  local ok, res = pcall(function()
    local tag, pos = string.unpack(">I2", s, 1)
    if tag == 0xFFCA or tag == 0xFFCB then
      local st = read_stack(s, pos)
      st.tag = tag == 0xFFCA and "final" or "chunk"
      return st
    elseif tag == 0xFFCC then
      local id, n
      id, n, pos = string.unpack(">I8I2", s, pos)
      local stop = n == 0 and pos or utf8.offset(s, n + 1, pos)
      if not stop then
        if #s - pos + 1 < n then error("string too short", 0) end
        stop = #s + 1
      end
      return {tag = "string", id = id, text = s:sub(pos, stop - 1)}
    elseif tag == 0xFFCD then
      local id, line, col, file
      id, line, col, file = string.unpack(">I8I4I4I8", s, pos)
      return {tag = "srcloc", id = id, line = line, column = col, file = file}
    end
    error(("unknown message tag 0x%04x"):format(tag), 0)
  end)
  if ok then return res end
  return nil, tostring(res)
end

return M
