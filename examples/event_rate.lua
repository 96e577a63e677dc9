-- event_rate.lua: events per type per second of eventlog time. Subscribes
-- to every event ("*"), which is slow: fine for exploring a file.
--   eventlog-live run examples/event_rate.lua FILE.eventlog [--set interval_ms=1000]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local interval = (tonumber(el.config.interval_ms) or 1000) * 1000000
local counts, totals = {}, {}   -- counts[bucket][type], totals[type]
local last_bucket = 0

el.on("*", function(ev)
  local b = ev.t // interval
  if b > last_bucket then last_bucket = b end
  local c = counts[b]
  if not c then c = {}; counts[b] = c end
  local ty = ev.type
  c[ty] = (c[ty] or 0) + 1
  totals[ty] = (totals[ty] or 0) + 1
end)

el.on_end(function()
  local types = {}
  for ty in pairs(totals) do types[#types + 1] = ty end
  table.sort(types, function(a, b)
    if totals[a] ~= totals[b] then return totals[a] > totals[b] end
    return a < b
  end)
  local cols = {{key = "type", align = "left"}, {key = "total"}}
  for b = 0, last_bucket do
    cols[#cols + 1] = {key = b, title = string.format("[%gs,%gs)", b * interval / 1e9, (b + 1) * interval / 1e9),
                       align = "right", fmt = function(v) return v and tostring(v) or "0" end}
  end
  local rows = {}
  for _, ty in ipairs(types) do
    local row = {type = ty, total = totals[ty]}
    for b = 0, last_bucket do row[b] = counts[b] and counts[b][ty] end
    rows[#rows + 1] = row
  end
  io.write(string.format("events per %g s of eventlog time\n", interval / 1e9))
  io.write(fmt.table(rows, cols))
end)
