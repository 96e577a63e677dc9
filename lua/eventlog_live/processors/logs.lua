-- Log processors: thread_label, user_marker, user_message
-- (spec/reference-behaviour.md §5.1). internal_log_message is produced by
-- the daemon in C (the host's own log hook).
local M = {}

-- Records waiting for their export interval at most: more are exported at
-- once (as OpenTelemetry's batch processors do when a batch is full), so
-- a program that labels a thread per request keeps memory bounded.
local MAX_PENDING = 4096

-- A log processor: records are kept in arrival order and exported every
-- export interval, or earlier when MAX_PENDING wait. The accumulator
-- interface of window.lua (add, tick, finish, restart, failed,
-- last_error) over columns instead of a table per record: t, body and
-- the one integer attribute `ikey` (evCap or thread; nil = absent) of
-- record i, exported by one el.log_batch call.
local Logs = {}
Logs.__index = Logs

-- Export every waiting record, in arrival order; a record el.log_batch
-- rejects is dropped and counted (self.failed, the first error in
-- self.last_error), the others are still exported. The columns are kept
-- for the next records, which overwrite them from index 1 (el.log_batch
-- copies what it takes and reads only rows 1..n): tables refilled in place
-- are not grown again, 1, 2, 4, ... 4096 slots, after every export.
function Logs:flush()
  local n = self.n
  if n == 0 then return end
  self.n = 0
  local ok, dropped, err = pcall(self.log_batch, self.template, n, self.cols)
  if not ok then dropped, err = n, dropped end
  if (dropped or 0) > 0 then  -- nil: no telemetry store (as el.log's)
    self.failed = (self.failed or 0) + dropped
    self.last_error = self.last_error or err
  end
end

-- One record: eventlog time t, body, the integer attribute (or nil).
-- The event handlers (M.install) write this out: it runs per event.
function Logs:add(t, body, int)
  local n = self.n + 1
  self.n = n
  self.ts[n], self.bodies[n], self.ints[n] = t, body, int
  if n >= MAX_PENDING then
    self:flush()
    self.on_full()
  end
end

-- The batch tick (window.lua Acc:tick): export at export boundaries.
function Logs:tick(deadline)
  if deadline <= self.last_deadline then return end
  self.last_deadline = deadline
  if deadline % self.exp == 0 then self:flush() end
end

function Logs:restart() self.last_deadline = -1 end
function Logs:finish() self:flush() end

-- severity: nil (unspecified) or a number; kind: the attribute kind; ikey:
-- the name of the record's integer attribute.
local function log_proc(ctx, pc, severity, kind, ikey)
  local el = ctx.el
  assert(pc.export_ns and pc.export_ns > 0, "export_ns must be > 0")
  local ts, bodies, ints = {}, {}, {}
  return ctx.add_acc(setmetatable({
    exp = pc.export_ns, last_deadline = -1,
    ts = ts, bodies = bodies, ints = ints, n = 0,
    -- t: eventlog times, converted with the session's clock as known at
    -- export (as el.unix_ns would); observed = time.
    cols = {t = ts, body = bodies, attrs = {[ikey] = ints}},
    log_batch = el.log_batch, ikey = ikey,
    template = {severity = severity, attrs = {kind = kind}},
    on_full = function() el.flush() end,
  }, Logs))
end

function M.install(ctx)
  local el = ctx.el
  local pc = ctx.proc("logs", "thread_label")
  if pc then
    -- No severity (SEVERITY_NUMBER_UNSPECIFIED); attributes kind, thread.
    local acc = log_proc(ctx, pc, nil, "ThreadLabel", "thread")
    el.on("THREAD_LABEL", function(t, _cap, thread, label)
      local n = acc.n + 1  -- acc:add(t, label, thread), written out
      acc.n = n
      acc.ts[n], acc.bodies[n], acc.ints[n] = t, label, thread
      if n >= MAX_PENDING then
        acc:flush()
        acc.on_full()
      end
    end, {args = "t"})
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
      local acc = log_proc(ctx, pc, p.severity, p.kind, "evCap")
      el.on(p.event, function(t, cap, text)
        local n = acc.n + 1  -- acc:add(t, text, cap), written out
        acc.n = n
        acc.ts[n], acc.bodies[n], acc.ints[n] = t, text, cap
        if n >= MAX_PENDING then
          acc:flush()
          acc.on_full()
        end
      end, {args = "t"})
    end
  end
end

return M
