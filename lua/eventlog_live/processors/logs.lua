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
-- record i. el.log copies what it is given, so one record table and one
-- attribute table serve every record.
local Logs = {}
Logs.__index = Logs

-- Emit records self.pos .. n, advancing self.pos past each record before
-- it is emitted (after an error the flush resumes with the next one).
local function emit_from(self, ts, bodies, ints, n)
  local log, rec, attrs, ikey = self.log, self.rec, self.attrs, self.ikey
  for i = self.pos, n do
    self.pos = i + 1
    rec.t, rec.body, attrs[ikey] = ts[i], bodies[i], ints[i]
    log(rec)
  end
end

-- Export every waiting record, in arrival order; a record el.log rejects
-- is dropped and counted (self.failed, the first error in
-- self.last_error), the others are still exported.
function Logs:flush()
  local n = self.n
  if n == 0 then return end
  local ts, bodies, ints = self.ts, self.bodies, self.ints
  self.ts, self.bodies, self.ints, self.n = {}, {}, {}, 0
  self.pos = 1
  while self.pos <= n do
    local ok, err = pcall(emit_from, self, ts, bodies, ints, n)
    if not ok then
      self.failed = (self.failed or 0) + 1
      self.last_error = self.last_error or err
    end
  end
end

-- One record: eventlog time t, body, the integer attribute (or nil).
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
  local attrs = {kind = kind}
  return ctx.add_acc(setmetatable({
    exp = pc.export_ns, last_deadline = -1,
    ts = {}, bodies = {}, ints = {}, n = 0,
    log = el.log, ikey = ikey, attrs = attrs,
    -- t: eventlog time, converted by el.log with the session's clock as
    -- known at export (as el.unix_ns would); observed = time.
    rec = {severity = severity, attrs = attrs},
    on_full = function() el.flush() end,
  }, Logs))
end

function M.install(ctx)
  local el = ctx.el
  local pc = ctx.proc("logs", "thread_label")
  if pc then
    -- No severity (SEVERITY_NUMBER_UNSPECIFIED); attributes kind, thread.
    local acc = log_proc(ctx, pc, nil, "ThreadLabel", "thread")
    el.on("THREAD_LABEL", function(ev, thread, label)
      acc:add(ev.t, label, thread)
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
      local acc = log_proc(ctx, pc, p.severity, p.kind, "evCap")
      el.on(p.event, function(ev, text)
        acc:add(ev.t, text, ev.cap)
      end)
    end
  end
end

return M
