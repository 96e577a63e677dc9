-- gc_pauses.lua: GC pause histogram and percentiles, per capability and
-- overall. A pause is GC_START..GC_END on one capability (the host's C
-- helper el.gc pairs them; reference-behaviour.md §5.2.3 "GC spans").
--   eventlog-live run examples/gc_pauses.lua FILE.eventlog
local el = require("eventlog_live")
local stats = require("eventlog_live.stats")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local pauses, by_cap = {}, {}
el.gc{on_span = function(cap, start_t, end_t)
  local d = end_t - start_t
  pauses[#pauses + 1] = d
  by_cap[cap] = by_cap[cap] or {}
  table.insert(by_cap[cap], d)
end}

el.on_end(function()
  local rows = {}
  local caps = {}
  for cap in pairs(by_cap) do caps[#caps + 1] = cap end
  table.sort(caps)
  local function row(name, values)
    local s = stats.summary(values)
    return {cap = name, n = s.n, total_ns = s.sum, p50 = s.p50, p90 = s.p90,
            p99 = s.p99, max = s.max}
  end
  for _, cap in ipairs(caps) do rows[#rows + 1] = row(cap, by_cap[cap]) end
  rows[#rows + 1] = row("all", pauses)
  local d = function(v) return fmt.duration(v) end
  io.write("GC pauses\n")
  io.write(fmt.table(rows, {
    {key = "cap", align = "right"}, {key = "n", title = "count"},
    {key = "total_ns", title = "total ns", align = "right"},
    {key = "p50", fmt = d, align = "right"}, {key = "p90", fmt = d, align = "right"},
    {key = "p99", fmt = d, align = "right"}, {key = "max", fmt = d, align = "right"},
  }))
  io.write("\nHistogram (all capabilities)\n")
  local hist = {}
  for _, b in ipairs(stats.log2_histogram(pauses)) do
    hist[#hist + 1] = {range = fmt.duration(b.lo) .. " .. " .. fmt.duration(b.hi),
                       count = b.count,
                       bar = string.rep("#", math.ceil(b.count * 40 / #pauses))}
  end
  io.write(fmt.table(hist, {{key = "range", align = "right"}, {key = "count"},
                            {key = "bar", align = "left"}}))
end)
