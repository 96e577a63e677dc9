-- eventlog_live.fmt: readable numbers and aligned text tables.
-- Pure Lua; usable outside the host. docs/lua-api.md §8.
local M = {}

-- "text" (aligned columns) or "tsv" (tab-separated raw values with a
-- header line: for tests and other programs). Examples set it from
-- `--set format=tsv`.
M.mode = "text"

-- "812 ns", "12.3 us", "1.50 ms", "2.000 s"
function M.duration(ns)
  if ns == nil then return "-" end
  local a = math.abs(ns)
  if a < 1000 then return string.format("%d ns", math.floor(ns)) end
  if a < 1e6 then return string.format("%.1f us", ns / 1e3) end
  if a < 1e9 then return string.format("%.2f ms", ns / 1e6) end
  return string.format("%.3f s", ns / 1e9)
end

-- "512 B", "1.5 KiB", "3.25 MiB", "1.00 GiB"
function M.bytes(n)
  if n == nil then return "-" end
  local a = math.abs(n)
  if a < 1024 then return string.format("%d B", math.floor(n)) end
  if a < 1024 ^ 2 then return string.format("%.1f KiB", n / 1024) end
  if a < 1024 ^ 3 then return string.format("%.2f MiB", n / 1024 ^ 2) end
  if a < 1024 ^ 4 then return string.format("%.2f GiB", n / 1024 ^ 3) end
  return string.format("%.2f TiB", n / 1024 ^ 4)
end

-- Columns a string takes on a terminal: one per UTF-8 character, two for
-- the East Asian wide and fullwidth ranges (CJK, Hangul, fullwidth forms,
-- emoji); bytes when s is not valid UTF-8.
local WIDE = {{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF},
              {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
              {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F},
              {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
              {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD}}
function M.width(s)
  if not utf8.len(s) then return #s end
  local w = 0
  for _, c in utf8.codes(s) do
    local two = false
    if c >= 0x1100 then
      for _, r in ipairs(WIDE) do
        if c >= r[1] and c <= r[2] then two = true; break end
      end
    end
    w = w + (two and 2 or 1)
  end
  return w
end

local function cell(col, row)
  local v = row[col.key]
  if col.fmt then return col.fmt(v, row) end
  if v == nil then return "" end
  if math.type(v) == "float" then return string.format("%.3f", v) end
  return tostring(v)
end

-- Aligned text table. rows: array of tables; columns: array of
-- {key=, title=, align="left"|"right", fmt=function(value, row)}.
-- Numbers align right by default. Returns a string ending in "\n".
function M.table(rows, columns)
  if M.mode == "tsv" then return M.tsv(rows, columns) end
  local cells, width = {}, {}
  for j, col in ipairs(columns) do
    width[j] = M.width(col.title or col.key)
  end
  for i, row in ipairs(rows) do
    cells[i] = {}
    for j, col in ipairs(columns) do
      local s = cell(col, row)
      cells[i][j] = s
      local w = M.width(s)
      if w > width[j] then width[j] = w end
    end
  end
  local function right(j)
    local col = columns[j]
    if col.align then return col.align == "right" end
    local v = rows[1] and rows[1][col.key]
    return type(v) == "number"
  end
  local out = {}
  local function line(values)
    local parts = {}
    for j = 1, #columns do
      local s = values[j]
      local pad = string.rep(" ", width[j] - M.width(s))
      parts[j] = right(j) and (pad .. s) or (s .. pad)
    end
    out[#out + 1] = (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  local titles, rules = {}, {}
  for j, col in ipairs(columns) do
    titles[j] = col.title or col.key
    rules[j] = string.rep("-", width[j])
  end
  line(titles)
  line(rules)
  for i = 1, #rows do line(cells[i]) end
  return table.concat(out, "\n") .. "\n"
end

-- Tab-separated: header of titles, then raw values (no fmt), "" for nil.
function M.tsv(rows, columns)
  local out, t = {}, {}
  for j, col in ipairs(columns) do t[j] = col.title or tostring(col.key) end
  out[1] = table.concat(t, "\t")
  for i, row in ipairs(rows) do
    local c = {}
    for j, col in ipairs(columns) do
      local v = row[col.key]
      c[j] = v == nil and "" or tostring(v)
    end
    out[i + 1] = table.concat(c, "\t")
  end
  return table.concat(out, "\n") .. "\n"
end

return M
