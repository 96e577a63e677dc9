-- eventlog_live.report: sections that scripts add to the page of
-- `eventlog-live report --script SCRIPT.lua` (docs/report.md "Lua API").
--
--   local report = require("eventlog_live.report")
--   local s = report.series{title = "Allocation per GC", unit = "By"}
--   el.on("HEAP_ALLOCATED", function(ev, capset, bytes) s:add(ev.t, bytes) end)
--   report.table{title = "Threads by label", columns = {"label", "count"},
--                rows = function() return rows end}
--
-- Under `eventlog-live run` (or outside the host) there is no page:
-- report.active is false and every function accepts its arguments and does
-- nothing, so one script serves both commands.
local M = {}

local ok, native = pcall(require, "eventlog_live.report.native")
if not ok then native = nil end
local el_ok, el = pcall(require, "eventlog_live")
if not el_ok then el = nil end

-- true when the page is being made (eventlog-live report).
M.active = native ~= nil

-- The options of what (report.series, report.table): a table with a
-- title and only the keys in known (an unknown key is an error, as in
-- the host's API: docs/lua-api.md §9).
local function check_opts(opts, what, known)
  if type(opts) ~= "table" then
    error(what .. ": expected a table of options", 3)
  end
  for k in pairs(opts) do
    local ok = false
    for _, n in ipairs(known) do ok = ok or n == k end
    if not ok then
      error(("%s: unknown option '%s' (known: %s)"):format(what, tostring(k),
            table.concat(known, ", ")), 3)
    end
  end
  if type(opts.title) ~= "string" or opts.title == "" then
    error(what .. ": title (a string) is required", 3)
  end
end

local Series = {}
Series.__index = Series

-- report.series{title=, unit=, description=} -> series
-- A time series section: a chart of one or more lines. unit: UCUM as the
-- telemetry's ("By" bytes, "ns", "s", "1", "By/s", ...): the page formats
-- By and ns values. Values are downsampled per pixel column like the
-- report's own charts (min, max, mean, last per column).
-- Returns nil, message when the page cannot take another section (64).
function M.series(opts)
  check_opts(opts, "report.series", {"title", "unit", "description"})
  local s = setmetatable({}, Series)
  if native then
    local id, err = native.series(opts.title, opts.unit, opts.description)
    if not id then return nil, err end
    s.id = id
  end
  return s
end

-- series:add(t, value [, line]): value (a number) at eventlog time t (ns
-- since the RTS start of the current session). line: the line's name
-- (default "value"; at most 16 lines per series).
function Series:add(t, value, line)
  if math.type(t) ~= "integer" or t < 0 then
    error("series:add: t must be an integer time >= 0 (ns), got "
          .. tostring(t), 2)
  end
  if type(value) ~= "number" then
    error("series:add: value must be a number, got " .. type(value), 2)
  end
  if not self.id then return end
  native.point(self.id, line or "value", el.unix_ns(t), value)
end

-- series:add_unix(unix_ns, value [, line]): the same at a Unix time (ns).
function Series:add_unix(unix_ns, value, line)
  if not self.id then return end
  native.point(self.id, line or "value", unix_ns, value)
end

-- report.table{title=, description=, columns = {...}, rows = ...}
-- A table section. rows: an array of arrays (cells: numbers, strings,
-- nil), or a function returning one; either way it is read at the end of
-- input, so a script may fill it as events arrive. At most 32 columns and
-- 10000 rows are kept (the rest counted).
function M.table(opts)
  check_opts(opts, "report.table", {"title", "description", "columns",
                                    "rows"})
  if type(opts.columns) ~= "table" then
    error("report.table: columns (an array of names) is required", 2)
  end
  local rows = opts.rows or {}
  if type(rows) ~= "table" and type(rows) ~= "function" then
    error("report.table: rows must be a table or a function", 2)
  end
  if not native then return end
  el.on_end(function()
    local r = rows
    if type(r) == "function" then r = r() end
    native.table(opts.title, opts.description, opts.columns, r or {})
  end)
end

return M
