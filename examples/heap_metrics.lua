-- heap_metrics.lua: emit OpenTelemetry metrics from an eventlog: heap size
-- and live bytes as gauges, each capability's allocation running total as
-- a cumulative monotonic sum. With `eventlog-live run` they are printed
-- as OTLP/JSON lines (console exporter); a summary goes to stderr.
--   eventlog-live run examples/heap_metrics.lua FILE.eventlog
--
-- Unix timestamps need the session's WALL_CLOCK_TIME, which a file may
-- carry after the capability blocks (docs/lua-api.md §3): points are
-- kept with their eventlog time until the session is ready, then emitted.
local el = require("eventlog_live")

local size = el.metric{name = "ghc_eventlog_HeapSize", unit = "By",
                       description = "heap size (megablocks in use)"}
local live = el.metric{name = "ghc_eventlog_HeapLive", unit = "By",
                       description = "live bytes after a major GC"}
local alloc = el.metric{name = "ghc_eventlog_HeapAllocated", unit = "By",
                        kind = "sum", temporality = "cumulative",
                        monotonic = true,
                        description = "bytes allocated, running total per capability"}

local pending, counts = {}, {}

local function point(inst, name, value, attrs, t)
  counts[name] = (counts[name] or 0) + 1
  if el.session.ready then
    inst:point(value, attrs, t, el.session.start_unix_ns)
  else
    pending[#pending + 1] = {inst, value, attrs, t}
  end
end

el.on_session(function(s)
  -- the resource first: records keep the resource they were emitted under
  el.set_resource("service.name", (s.args and s.args[1] or "ghc"):match("[^/]*$"))
  if s.pid then el.set_resource("process.pid", s.pid) end
  for _, p in ipairs(pending) do p[1]:point(p[2], p[3], p[4], s.start_unix_ns) end
  pending = {}
end)

el.on("HEAP_SIZE", function(ev, capset, bytes)
  point(size, "HeapSize", bytes, {evCap = ev.cap, heapCapset = capset}, ev.t)
end)
el.on("HEAP_LIVE", function(ev, capset, bytes)
  point(live, "HeapLive", bytes, {evCap = ev.cap, heapCapset = capset}, ev.t)
end)
el.on("HEAP_ALLOCATED", function(ev, capset, bytes)
  point(alloc, "HeapAllocated", bytes, {evCap = ev.cap, heapCapset = capset}, ev.t)
end)

el.on_end(function()
  local names = {}
  for k in pairs(counts) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    io.stderr:write(string.format("%-14s %d points\n", k, counts[k]))
  end
end)
