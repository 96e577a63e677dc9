-- eventlog_live.processors.window: aggregation and export windows in
-- eventlog time for the default processors.
--
-- Spec: ../shared/spec/reference-behaviour.md §3.3, §6.2-§6.3, with the
-- decision of DESIGN.md that windows are measured in eventlog time. A
-- measurement belongs to the aggregation window floor(t / aggregate) of its
-- own timestamp, so the result does not depend on how capability blocks
-- interleave in the stream. A window closes once the stream time has
-- passed its end by `grace` (one flush interval: later events of other
-- capabilities may still belong to it). A measurement for a window that
-- has already closed is counted as late and reopens that window: late
-- measurements are aggregated like the others (the last per window and
-- key) and released at the next tick. (GHC 9.0 writes a capability's
-- events only when its 2 MiB buffer fills: the other capabilities' blocks
-- of a live stream can arrive long after their windows closed.)
-- Closed windows are exported at the next export boundary (multiples of
-- the export interval).
--
-- Pure Lua: the caller passes the functions that emit, so this module can
-- be tested without the host.
local M = {}

local Acc = {}
Acc.__index = Acc

-- Create an accumulator.
--   opts.aggregate_ns: aggregation window (0 = keep every measurement)
--   opts.export_ns:    export interval (> 0)
--   opts.grace_ns:     how long after its end a window stays open
--   opts.emit(item):   called for each item at export time, in order
--   opts.after_flush(): called after each export (even of nothing), e.g.
--                      to release what the exported items kept alive
--   opts.max_pending:  without aggregation, export as soon as this many
--                      items wait (memory stays bounded however many come
--                      in one export interval), then call opts.on_full()
-- Items are opaque tables with a field `t` (eventlog ns).
function M.new(opts)
  assert(opts.export_ns and opts.export_ns > 0, "export_ns must be > 0")
  return setmetatable({
    agg = opts.aggregate_ns or 0,
    exp = opts.export_ns,
    grace = opts.grace_ns or 0,
    emit = opts.emit,
    after_flush = opts.after_flush,
    max_pending = opts.max_pending,
    on_full = opts.on_full,
    windows = {},      -- [w] = {keys = {k1, k2, ...}, items = {[k] = item}}
    nwindows = 0,
    closed_below = 0,  -- windows < closed_below are closed
    out = {},          -- items ready for export, in order
    late = 0,          -- measurements that arrived after their window closed
    last_deadline = -1,
  }, Acc)
end

-- Add item under grouping key `key`; within one window the item with the
-- largest t wins (ties: the later arrival). Without aggregation every item
-- is kept.
function Acc:add(key, item)
  local agg = self.agg
  if agg == 0 then
    local out = self.out
    out[#out + 1] = item
    if self.max_pending and #out >= self.max_pending then
      self:flush()
      if self.on_full then self.on_full() end
    end
    return
  end
  -- Window w, made when there is none; a window already closed is
  -- reopened (counted in self.late; closed again at the next tick).
  -- Written out here and in item, not called: they run per measurement.
  local w = item.t // agg
  if w < self.closed_below then self.late = self.late + 1 end
  local win = self.windows[w]
  if not win then
    win = {keys = {}, items = {}}
    self.windows[w] = win
    self.nwindows = self.nwindows + 1
  end
  local old = win.items[key]
  if old == nil then
    win.keys[#win.keys + 1] = key
    win.items[key] = item
  elseif item.t >= old.t then
    win.items[key] = item
  end
end

-- The item to fill in place for a measurement at eventlog time t under
-- grouping key `key`: add's result without a new table per measurement.
-- Returns the window's item for key (its t set to t: the caller sets
-- every other field) when t is not older than it, a new table {t = t}
-- when the window has none for key, or nil when the window holds a newer
-- item (the measurement loses, as with add). The window's item is never
-- exported before the window closes, so refilling it is safe. Without
-- aggregation: a new table, kept like add's (not with max_pending: the
-- item must be filled before it can be exported).
function Acc:item(key, t)
  local agg = self.agg
  if agg == 0 then
    assert(not self.max_pending, "item: not with max_pending")
    local it = {t = t}
    local out = self.out
    out[#out + 1] = it
    return it
  end
  local w = t // agg  -- the window, as in add
  if w < self.closed_below then self.late = self.late + 1 end
  local win = self.windows[w]
  if not win then
    win = {keys = {}, items = {}}
    self.windows[w] = win
    self.nwindows = self.nwindows + 1
  end
  local items = win.items
  local old = items[key]
  if old == nil then
    old = {t = t}
    local keys = win.keys
    keys[#keys + 1] = key
    items[key] = old
    return old
  elseif t >= old.t then
    old.t = t
    return old
  end
  return nil
end

-- The method itself, for hot callers: item(acc, key, t) skips the
-- metatable lookup of acc:item(key, t).
M.item = Acc.item

-- Move every window with index < upto (and every window reopened by a
-- late item) into the export list, in window order, groups in first-seen
-- order.
function Acc:close_below(upto)
  if upto < self.closed_below then upto = self.closed_below end
  if self.nwindows > 0 then
    local ws = {}
    for w in pairs(self.windows) do
      if w < upto then ws[#ws + 1] = w end
    end
    table.sort(ws)
    local out = self.out
    for _, w in ipairs(ws) do
      local win = self.windows[w]
      for _, k in ipairs(win.keys) do out[#out + 1] = win.items[k] end
      self.windows[w] = nil
      self.nwindows = self.nwindows - 1
    end
  end
  self.closed_below = upto
end

-- Emit out[at.pos .. n] in order, advancing at.pos past each item before
-- it is emitted (so that after an error the caller resumes with the next
-- item). at is the flush's own: an emit that flushes again cannot move it.
local function emit_from(emit, out, n, at)
  for i = at.pos, n do
    at.pos = i + 1
    emit(out[i])
  end
end

-- Export everything collected so far. An item whose emit raises an error
-- (a malformed value) is dropped and counted in self.failed, with the
-- first error kept in self.last_error; the others are still exported.
-- One protected call runs the whole list (and one more after each error),
-- not one per item.
function Acc:flush()
  local out = self.out
  local n = #out
  if n == 0 then
    if self.after_flush then self.after_flush() end
    return
  end
  self.out = {}
  local at = {pos = 1}
  while at.pos <= n do
    local ok, err = pcall(emit_from, self.emit, out, n, at)
    if not ok then
      self.failed = (self.failed or 0) + 1
      self.last_error = self.last_error or err
    end
  end
  if self.after_flush then self.after_flush() end
end

-- The batch tick at eventlog time `deadline` (a multiple of the batch
-- interval): close the windows that ended at least `grace` ago; export at
-- export boundaries. Deadlines at or before one already handled are
-- ignored (the wall-clock timer may have run them first).
-- watermark (optional, el.watermark()): no event older than it can arrive
-- any more from a capability still waited for; a window also waits for it
-- (the host stops waiting for a capability silent past its horizon).
function Acc:tick(deadline, watermark)
  if deadline <= self.last_deadline then return end
  self.last_deadline = deadline
  local agg = self.agg
  if agg > 0 and deadline >= self.grace then
    local upto = (deadline - self.grace) // agg
    if watermark and watermark // agg < upto then upto = watermark // agg end
    self:close_below(upto)
  end
  if deadline % self.exp == 0 then self:flush() end
end

-- A new session whose clock starts again (a restarted program): the
-- caller finished the accumulator; start the window clock afresh.
function Acc:restart()
  self.closed_below = 0
  self.last_deadline = -1
end

-- End of input: close every window and export.
function Acc:finish()
  self:close_below(math.maxinteger)
  self:flush()
end

return M
