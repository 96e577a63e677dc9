-- Sections of your own in `eventlog-live report` (docs/report.md, "Lua
-- API"): collections per GC generation and the bytes each copied, from
-- GC_STATS_GHC (written once per collection by GHC >= 8.0 with +RTS -l).
--
--   eventlog-live report --script examples/report_gc.lua app.eventlog -o app.html
--   eventlog-live run examples/report_gc.lua app.eventlog   # prints the table
local el = require("eventlog_live")
local report = require("eventlog_live.report")
local fmt = require("eventlog_live.fmt")

local copied = report.series{
  title = "Bytes copied per collection",
  unit = "By",
  description = "GC_STATS_GHC: bytes copied by each collection, one line per generation",
}
local gens = {}   -- generation -> {n =, copied =, largest =}

el.on("GC_STATS_GHC", function(ev, capset, gen, copied_bytes)
  local g = gens[gen]
  if not g then
    g = {generation = gen, n = 0, copied = 0, largest = 0}
    gens[gen] = g
  end
  g.n = g.n + 1
  g.copied = g.copied + copied_bytes
  if copied_bytes > g.largest then g.largest = copied_bytes end
  if copied then copied:add(ev.t, copied_bytes, "generation " .. gen) end
end)

local function rows()
  local out = {}
  for _, g in pairs(gens) do
    out[#out + 1] = {g.generation, g.n, g.copied, g.largest}
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

report.table{
  title = "Collections by generation",
  description = "from GC_STATS_GHC",
  columns = {"generation", "collections", "bytes copied", "largest copy"},
  rows = rows,
}

-- Without a page (eventlog-live run), print the same table.
if not report.active then
  el.on_end(function()
    local r = {}
    for _, x in ipairs(rows()) do
      r[#r + 1] = {gen = x[1], n = x[2], copied = x[3], largest = x[4]}
    end
    print(fmt.table(r, {
      {key = "gen", title = "generation", align = "right"},
      {key = "n", title = "collections", align = "right"},
      {key = "copied", title = "bytes copied", align = "right", fmt = fmt.bytes},
      {key = "largest", title = "largest copy", align = "right", fmt = fmt.bytes},
    }))
  end)
end
