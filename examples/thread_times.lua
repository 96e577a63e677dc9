-- thread_times.lua: per-thread running time and blocked reasons, from the
-- host's C thread-state machine (el.threads; reference §5.2.3), so no
-- RUN_THREAD/STOP_THREAD event enters Lua.
--   eventlog-live run examples/thread_times.lua FILE.eventlog [--set top=20]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"
local status = require("eventlog_live.status")

local threads = el.threads()
local top = tonumber(el.config.top) or 1e9

el.on_end(function()
  local list = threads:list()
  table.sort(list, function(a, b)
    if a.running_ns ~= b.running_ns then return a.running_ns > b.running_ns end
    return a.thread < b.thread
  end)
  local rows = {}
  for i, t in ipairs(list) do
    if i > top then break end
    local reason, most = nil, -1
    for code, ns in pairs(t.blocked) do
      if ns > most or (ns == most and code < reason) then reason, most = code, ns end
    end
    rows[#rows + 1] = {
      thread = t.thread, label = t.label or "", state = t.state,
      runs = t.runs, running_ns = t.running_ns, running = fmt.duration(t.running_ns),
      blocked_ns = t.blocked_ns, blocked = fmt.duration(t.blocked_ns),
      reason = reason and string.format("%s (%s)", status.name(reason), fmt.duration(most)) or "",
    }
  end
  io.write(string.format("%d threads\n", #list))
  io.write(fmt.table(rows, {
    {key = "thread"}, {key = "label", align = "left"}, {key = "state", align = "left"},
    {key = "runs"}, {key = "running_ns", title = "running ns"},
    {key = "running", align = "right"}, {key = "blocked_ns", title = "blocked ns"},
    {key = "blocked", align = "right"},
    {key = "reason", title = "main blocked reason", align = "left"},
  }))
end)
