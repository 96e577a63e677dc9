-- alloc_markers.lua: bytes allocated between user markers (traceMarker),
-- all capabilities together. HEAP_ALLOCATED carries each capability's
-- running total (spec eventlog-format.md §2.3); at each marker the script
-- sums the latest total of every capability and prints the growth since
-- the previous marker (the first: since the program started). Each
-- session (a restarted program: the next eventlog of a file, or an
-- eventlog-socket reconnection) counts from its own start.
--
-- This needs the events in time order: capability blocks interleave in
-- the stream, so in stream order a marker meets the totals of a capability
-- whose block arrives later as they were long before. The handlers ask for
-- time order with el.order("time") (docs/lua-api.md §2); --set order=stream
-- shows what stream order would give.
--   eventlog-live run examples/alloc_markers.lua FILE.eventlog [--set order=stream]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

el.order(el.config.order or "time")

local latest = {}      -- cap -> latest running total (bytes)
local prev_total = 0   -- process total at the previous marker
local rows = {}

local function total()
  local s = 0
  for _, b in pairs(latest) do s = s + b end
  return s
end

-- A new session is another run of the program: its totals start at 0.
el.on_header(function()
  latest, prev_total = {}, 0
end)

el.on("HEAP_ALLOCATED", function(t, cap, capset, alloc_bytes)
  latest[cap or "global"] = alloc_bytes
end, {args = "t"})

el.on("USER_MARKER", function(t, cap, text)
  local now = total()
  rows[#rows + 1] = {t = t, cap = cap or "-", text = text,
                     bytes = now - prev_total, human = fmt.bytes(now - prev_total)}
  prev_total = now
end, {args = "t"})

el.on_end(function()
  local s = el.stats()
  io.write(string.format("%d markers (order: %s; %d late, %d forced)\n", #rows,
    el.config.order or "time", s.order_late, s.order_forced))
  io.write(fmt.table(rows, {
    {key = "t", title = "time ns"}, {key = "cap", align = "right"},
    {key = "text", title = "marker", align = "left"},
    {key = "bytes", title = "allocated since previous"}, {key = "human", title = "readable", align = "right"},
  }))
end)
