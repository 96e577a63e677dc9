-- markers.lua: time between user markers (traceMarker). Prints every
-- marker with the time to the next one, and the spans of START/STOP pairs:
-- a marker "start X" / "begin X" opens X, "stop X" / "end X" closes it
-- (case-insensitive; X may be empty). Markers of different sessions (the
-- next eventlog of a file, an eventlog-socket reconnection: another run)
-- are never paired: "to next" and the spans stay within a session.
-- The handler asks for time order (docs/lua-api.md "Order of events"):
-- a "stop" marker written on another capability than its "start" may
-- come first in the stream.
--   eventlog-live run examples/markers.lua FILE.eventlog
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"
el.order("time")

local marks, open, spans = {}, {}, {}
local session = 0

el.on_header(function(s)
  session, open = s.number, {}
end)

el.on("USER_MARKER", function(ev, text)
  marks[#marks + 1] = {t = ev.t, cap = ev.cap, text = text, session = session}
  local lower = text:lower()
  local verb, name = lower:match("^(%a+)%s*(.-)%s*$")
  if verb == "start" or verb == "begin" then
    open[name] = ev.t
  elseif (verb == "stop" or verb == "end") and open[name] then
    spans[#spans + 1] = {name = name == "" and "(unnamed)" or name,
                         start_t = open[name], end_t = ev.t,
                         duration_ns = ev.t - open[name]}
    open[name] = nil
  end
end)

el.on_end(function()
  -- in time order already (el.order above) unless some came late
  -- (el.stats().order_late): sort anyway
  table.sort(marks, function(a, b)
    if a.session ~= b.session then return a.session < b.session end
    return a.t < b.t
  end)
  for i, m in ipairs(marks) do
    local nxt = marks[i + 1]
    if nxt and nxt.session ~= m.session then nxt = nil end
    m.delta_ns = nxt and (nxt.t - m.t) or nil
    m.delta = nxt and fmt.duration(m.delta_ns) or ""
  end
  io.write(string.format("%d markers\n", #marks))
  io.write(fmt.table(marks, {
    {key = "t", title = "time ns"}, {key = "cap"}, {key = "text", title = "marker", align = "left"},
    {key = "delta_ns", title = "to next ns", align = "right"}, {key = "delta", title = "to next", align = "right"},
  }))
  io.write(string.format("\n%d start/stop spans\n", #spans))
  io.write(fmt.table(spans, {
    {key = "name", align = "left"}, {key = "start_t", title = "start ns"},
    {key = "end_t", title = "end ns"}, {key = "duration_ns", title = "duration ns"},
    {key = "duration_ns", title = "duration", fmt = function(v) return fmt.duration(v) end, align = "right"},
  }))
end)
