-- thread_times.lua: per-thread running time and blocked reasons, from the
-- host's C thread-state machine (el.threads; reference §5.2.3), so no
-- RUN_THREAD/STOP_THREAD event enters Lua. The tracker starts afresh with
-- each session (another run of the program: a reconnection, the next
-- eventlog of a file; docs/lua-api.md §6), so each session's threads are
-- taken at its end; with several sessions a session column comes first
-- and `top` applies to each.
--   eventlog-live run examples/thread_times.lua FILE.eventlog [--set top=20]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"
local status = require("eventlog_live.status")

local threads = el.threads()
local top = tonumber(el.config.top) or 1e9
local sessions = {} -- {number =, list = tracker:list() at its end}

el.on_session_end(function(s)
  sessions[#sessions + 1] = {number = s.number, list = threads:list()}
end)

-- The status a thread was blocked on longest, and for how long.
local function main_reason(t)
  local reason, most = nil, -1
  for code, ns in pairs(t.blocked) do
    if ns > most or (ns == most and code < reason) then reason, most = code, ns end
  end
  return reason and string.format("%s (%s)", status.name(reason), fmt.duration(most)) or ""
end

-- One session's rows: by running time, longest first, at most `top`.
local function session_rows(rows, s)
  table.sort(s.list, function(a, b)
    if a.running_ns ~= b.running_ns then return a.running_ns > b.running_ns end
    return a.thread < b.thread
  end)
  for i, t in ipairs(s.list) do
    if i > top then break end
    rows[#rows + 1] = {
      session = s.number, thread = t.thread, label = t.label or "", state = t.state,
      runs = t.runs, running_ns = t.running_ns, running = fmt.duration(t.running_ns),
      blocked_ns = t.blocked_ns, blocked = fmt.duration(t.blocked_ns),
      reason = main_reason(t),
    }
  end
end

el.on_end(function()
  -- A session whose end hook did not run (a run stopped early) still counts.
  local cur, last = el.session, sessions[#sessions]
  if cur and cur.number and (not last or last.number ~= cur.number) then
    sessions[#sessions + 1] = {number = cur.number, list = threads:list()}
  end
  local rows, n, counts = {}, 0, {}
  for _, s in ipairs(sessions) do
    session_rows(rows, s)
    n = n + #s.list
    counts[#counts + 1] = string.format("session %d: %d", s.number, #s.list)
  end
  local cols = {
    {key = "thread"}, {key = "label", align = "left"}, {key = "state", align = "left"},
    {key = "runs"}, {key = "running_ns", title = "running ns"},
    {key = "running", align = "right"}, {key = "blocked_ns", title = "blocked ns"},
    {key = "blocked", align = "right"},
    {key = "reason", title = "main blocked reason", align = "left"},
  }
  if #sessions > 1 then
    table.insert(cols, 1, {key = "session"})
    io.write(string.format("%d threads in %d sessions (%s)\n", n, #sessions,
                           table.concat(counts, ", ")))
  else
    io.write(string.format("%d threads\n", n))
  end
  io.write(fmt.table(rows, cols))
end)
