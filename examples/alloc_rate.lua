-- alloc_rate.lua: allocation rate per capability. HEAP_ALLOCATED carries
-- each capability's running total of bytes allocated (spec
-- eventlog-format.md §2.3); the rate is the growth over eventlog time.
-- Each session (a reconnection, or `cat a b`) counts from 0 again on its
-- own clock: its capabilities are its own rows, with a session column
-- when there are several.
--   eventlog-live run examples/alloc_rate.lua FILE.eventlog [--set interval_ms=100]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local interval_ms = tonumber(el.config.interval_ms)
local interval_ns = interval_ms and math.floor(interval_ms * 1000000)
if interval_ns and interval_ns < 1 then interval_ns = nil end
local session = 1  -- the current session's number
local caps = {}    -- session .. "/" .. cap -> {session, cap, first_t,
                   -- first, last_t, last, samples; with interval_ms
                   -- at_end[b], first_b, last_b: the total at the last
                   -- sample of each interval b}
local series = {}
local sessions = {}  -- the session numbers that had samples

el.on_header(function(s) session = s.number end)

local function key(ev) return session .. "/" .. tostring(ev.cap or "global") end

el.on("HEAP_ALLOCATED", function(ev, capset, alloc_bytes)
  local k = key(ev)
  local c = caps[k]
  if not c then
    c = {session = session, cap = ev.cap or "global", first_t = ev.t,
         first = alloc_bytes, samples = 0}
    caps[k] = c
    sessions[session] = true
  end
  c.last_t, c.last, c.samples = ev.t, alloc_bytes, c.samples + 1
  if interval_ns then
    -- the interval (b * interval_ns, (b + 1) * interval_ns] holding ev.t
    local b = ev.t > 0 and (ev.t - 1) // interval_ns or 0
    if not c.at_end then c.at_end, c.first_b = {}, b end
    c.at_end[b], c.last_b = alloc_bytes, b
  end
end)

-- Per interval: each capability's samples are bucketed by their own time
-- (a timer would fire as the stream's time passes, before the blocks of
-- a capability that GHC wrote later were read, and miss its samples).

local function add_series(c)
  local mark = c.first
  for b = c.first_b, c.last_b do
    local v = c.at_end[b] or mark  -- no sample in it: no growth
    series[#series + 1] = {t = (b + 1) * interval_ns, session = c.session,
      cap = c.cap, bytes = v - mark,
      rate = fmt.bytes((v - mark) * 1e9 / interval_ns) .. "/s"}
    mark = v
  end
end

el.on_end(function()
  local rows, list, nsess = {}, {}, 0
  for _ in pairs(sessions) do nsess = nsess + 1 end
  for _, c in pairs(caps) do list[#list + 1] = c end
  table.sort(list, function(a, b)
    if a.session ~= b.session then return a.session < b.session end
    return tostring(a.cap) < tostring(b.cap)
  end)
  for _, c in ipairs(list) do
    if c.at_end then add_series(c) end
    local dt = c.last_t - c.first_t
    rows[#rows + 1] = {
      session = c.session, cap = c.cap, samples = c.samples,
      allocated = c.last,
      human = fmt.bytes(c.last), span = fmt.duration(dt),
      rate = dt > 0 and (fmt.bytes((c.last - c.first) * 1e9 / dt) .. "/s") or "-",
    }
  end
  io.write("allocation per capability (HEAP_ALLOCATED running totals)\n")
  local scol = nsess > 1 and {{key = "session", align = "right"}} or {}
  local function cols(list)
    for i = #scol, 1, -1 do table.insert(list, 1, scol[i]) end
    return list
  end
  io.write(fmt.table(rows, cols{
    {key = "cap", align = "right"}, {key = "samples"},
    {key = "allocated", title = "allocated bytes"}, {key = "human", title = "readable", align = "right"},
    {key = "span", title = "first..last sample", align = "right"}, {key = "rate", align = "right"},
  }))
  if #series > 0 then
    io.write(string.format("\nper %d ms of eventlog time\n", interval_ms))
    io.write(fmt.table(series, cols{
      {key = "t", title = "until ns"}, {key = "cap", align = "right"},
      {key = "bytes", title = "bytes"}, {key = "rate", align = "right"},
    }))
  end
end)
