-- alloc_rate.lua: allocation rate per capability. HEAP_ALLOCATED carries
-- each capability's running total of bytes allocated (spec
-- eventlog-format.md §2.3); the rate is the growth over eventlog time.
--   eventlog-live run examples/alloc_rate.lua FILE.eventlog [--set interval_ms=100]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local interval_ms = tonumber(el.config.interval_ms)
local caps = {}   -- cap -> {first_t, first, last_t, last, samples}
local series = {}

local function key(ev) return ev.cap or "global" end

el.on("HEAP_ALLOCATED", function(ev, capset, alloc_bytes)
  local k = key(ev)
  local c = caps[k]
  if not c then
    c = {cap = k, first_t = ev.t, first = alloc_bytes, samples = 0,
         mark = alloc_bytes}
    caps[k] = c
  end
  c.last_t, c.last, c.samples = ev.t, alloc_bytes, c.samples + 1
end)

if interval_ms then
  el.every(interval_ms * 1000000, function(t)
    for k, c in pairs(caps) do
      series[#series + 1] = {t = t, cap = k, bytes = c.last - c.mark,
        rate = fmt.bytes((c.last - c.mark) * 1000 / interval_ms) .. "/s"}
      c.mark = c.last
    end
  end)
end

el.on_end(function()
  local rows, keys = {}, {}
  for k in pairs(caps) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local c = caps[k]
    local dt = c.last_t - c.first_t
    rows[#rows + 1] = {
      cap = k, samples = c.samples, allocated = c.last,
      human = fmt.bytes(c.last), span = fmt.duration(dt),
      rate = dt > 0 and (fmt.bytes((c.last - c.first) * 1e9 / dt) .. "/s") or "-",
    }
  end
  io.write("allocation per capability (HEAP_ALLOCATED running totals)\n")
  io.write(fmt.table(rows, {
    {key = "cap", align = "right"}, {key = "samples"},
    {key = "allocated", title = "allocated bytes"}, {key = "human", title = "readable", align = "right"},
    {key = "span", title = "first..last sample", align = "right"}, {key = "rate", align = "right"},
  }))
  if #series > 0 then
    io.write(string.format("\nper %d ms of eventlog time\n", interval_ms))
    io.write(fmt.table(series, {
      {key = "t", title = "until ns"}, {key = "cap", align = "right"},
      {key = "bytes", title = "bytes"}, {key = "rate", align = "right"},
    }))
  end
end)
