-- Log processors: thread_label, user_marker, user_message
-- (spec/reference-behaviour.md §5.1). internal_log_message is produced by
-- the daemon in C (the host's own log hook).
local window = require("eventlog_live.processors.window")

local M = {}

-- Records waiting for their export interval at most: more are exported at
-- once (as OpenTelemetry's batch processors do when a batch is full), so
-- a program that labels a thread per request keeps memory bounded.
local MAX_PENDING = 4096

-- A log processor: records are kept in arrival order and exported every
-- export interval, or earlier when MAX_PENDING wait.
local function log_proc(ctx, pc, severity, kind)
  local el = ctx.el
  return ctx.add_acc(window.new{
    aggregate_ns = 0,
    export_ns = pc.export_ns,
    max_pending = MAX_PENDING,
    on_full = function() el.flush() end,
    emit = function(r)
      local u = ctx.unix(r)
      local attrs = {kind = kind}
      if r.cap ~= nil then attrs.evCap = r.cap end
      if r.thread ~= nil then attrs.thread = r.thread end
      el.log{body = r.body, severity = severity, unix_ns = u,
             observed_unix_ns = u, attrs = attrs}
    end,
  })
end

function M.install(ctx)
  local el = ctx.el
  local pc = ctx.proc("logs", "thread_label")
  if pc then
    -- No severity (SEVERITY_NUMBER_UNSPECIFIED); attributes kind, thread.
    local acc = log_proc(ctx, pc, nil, "ThreadLabel")
    el.on("THREAD_LABEL", function(ev, thread, label)
      acc:add(nil, {t = ev.t, body = label, thread = thread})
    end)
  end
  -- Attributes kind, evCap; the body is the event's string.
  for _, p in ipairs{
    {key = "user_marker", severity = 1, kind = "UserMarker",   -- TRACE
     event = "USER_MARKER"},
    {key = "user_message", severity = 5, kind = "UserMessage", -- DEBUG
     event = "USER_MSG"},
  } do
    pc = ctx.proc("logs", p.key)
    if pc then
      local acc = log_proc(ctx, pc, p.severity, p.kind)
      el.on(p.event, function(ev, text)
        acc:add(nil, {t = ev.t, body = text, cap = ev.cap})
      end)
    end
  end
end

return M
