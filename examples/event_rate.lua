-- event_rate.lua: events per type per second of eventlog time. Subscribes
-- to every event ("*"), which is slow: fine for exploring a file.
-- Each session (a reconnection, or `cat a b`) has its own clock (ns since
-- its RTS started): its events are counted in its own rows, with a
-- session column when there are several, and a bucket past the end of a
-- session's events shows "-".
--   eventlog-live run examples/event_rate.lua FILE.eventlog [--set interval_ms=1000]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local interval = (tonumber(el.config.interval_ms) or 1000) * 1000000
local session = 1    -- the current session's number
local sessions = {}  -- sessions[s] = {counts[bucket][type], totals[type], last}
local last_bucket = 0  -- the largest bucket of any session

el.on_header(function(s) session = s.number end)

el.on("*", function(ev)
  local st = sessions[session]
  if not st then
    st = {counts = {}, totals = {}, last = 0}
    sessions[session] = st
  end
  local b = ev.t // interval
  if b > st.last then st.last = b end
  if b > last_bucket then last_bucket = b end
  local c = st.counts[b]
  if not c then c = {}; st.counts[b] = c end
  local ty = ev.type
  c[ty] = (c[ty] or 0) + 1
  st.totals[ty] = (st.totals[ty] or 0) + 1
end)

-- rows_of(s, st, rows): append session s's rows, one per event type, the
-- most frequent first.
local function rows_of(s, st, rows)
  local totals, types = st.totals, {}
  for ty in pairs(totals) do types[#types + 1] = ty end
  table.sort(types, function(a, b)
    if totals[a] ~= totals[b] then return totals[a] > totals[b] end
    return a < b
  end)
  for _, ty in ipairs(types) do
    local row = {session = s, type = ty, total = totals[ty]}
    for b = 0, last_bucket do
      if b > st.last then row[b] = "-"
      else row[b] = st.counts[b] and st.counts[b][ty] or 0 end
    end
    rows[#rows + 1] = row
  end
end

el.on_end(function()
  local list = {}
  for s in pairs(sessions) do list[#list + 1] = s end
  table.sort(list)
  local cols = {{key = "type", align = "left"}, {key = "total"}}
  if #list > 1 then table.insert(cols, 1, {key = "session", align = "right"}) end
  for b = 0, last_bucket do
    cols[#cols + 1] = {key = b, title = string.format("[%gs,%gs)", b * interval / 1e9, (b + 1) * interval / 1e9),
                       align = "right", fmt = tostring}
  end
  local rows = {}
  for _, s in ipairs(list) do rows_of(s, sessions[s], rows) end
  io.write(string.format("events per %g s of eventlog time%s\n", interval / 1e9,
                         #list > 1 and " (each session from its own RTS start)" or ""))
  io.write(fmt.table(rows, cols))
end)
