-- Thread and GC analyses (spec/reference-behaviour.md §5.2.3, §5.3):
--   metrics.capability_usage: cumulative monotonic sum (ns) per cap,
--     category (GC / Mutator / Idle) and user (GC or the thread id);
--   metrics.productivity: gauge (%) per cap, 100 x mutator / (mutator +
--     GC) of the capability's running totals, one value per span;
--   traces.capability_usage: one span per GC or Mutator interval;
--   traces.thread_state: one span per Running or Blocked interval.
-- The host's C helpers (el.cap_usage, el.threads: src/host/lua_analysis.c,
-- docs/lua-api.md §6) sort the scheduler events, run the state machines,
-- keep the per-series totals and emit the spans into the store; Lua sees
-- one call per metric series and aggregation window, none per span.
local window = require("eventlog_live.processors.window")

local M = {}

-- The accumulator of processor pc's windows: each window's points go out
-- as points of inst (attributes p.attrs); after_flush (may be nil) runs
-- after each export.
local function points_window(ctx, pc, inst, after_flush)
  return ctx.add_acc(window.new{
    aggregate_ns = pc.aggregate_ns,
    export_ns = pc.export_ns,
    grace_ns = ctx.flush_ns,
    emit = function(p)
      inst:point_unix(p.v, p.attrs, ctx.unix(p), ctx.start_unix())
    end,
    after_flush = after_flush,
  })
end

-- The capability-usage metric: the host keeps, per series (cap, category,
-- user), the running total and calls on_point only when a series moves to
-- another aggregation window, and for each changed series before every
-- tick (tracker:flush_points()); the points go into a window accumulator
-- like every other metric's.
local function usage_metric(ctx, mpc)
  local inst = ctx.el.metric{
    name = mpc.name, description = mpc.description, unit = "ns",
    kind = "sum", temporality = "cumulative", monotonic = true,
  }
  local keys = {}    -- series index -> its attributes, also its key
  local tracker
  -- The series of finished threads end once exported: the host frees
  -- them (and reuses their indexes), so a program that makes a thread per
  -- request keeps a bounded number of series.
  local acc = points_window(ctx, mpc, inst, function()
    for _, i in ipairs(tracker:release_finished()) do keys[i] = nil end
  end)
  -- Runs before every tick (first in the accumulator list).
  table.insert(ctx.accs, 1, {
    tick = function() tracker:flush_points() end,
    finish = function() tracker:flush_points() end,
    -- A new session: the host forgot every series (el.cap_usage).
    restart = function() keys = {} end,
  })
  local function on_point(i, t, v, cap, category, user)
    local a = keys[i]
    if not a then
      a = {cap = cap, category = category, user = user}
      keys[i] = a
    end
    acc:add(a, {t = t, v = v, attrs = a})
  end
  return on_point, function(tr) tracker = tr end
end

local function install_usage(ctx, mpc, tpc)
  local on_point, set_tracker
  if mpc then on_point, set_tracker = usage_metric(ctx, mpc) end
  local tr = ctx.el.cap_usage{
    on_point = on_point,
    aggregate_ns = mpc and mpc.aggregate_ns,
    -- threads with their own user series; the others share "other"
    max_users = mpc and mpc.max_threads,
    spans = tpc and tpc.name,  -- "<name> GC" / "<name> Mutator" spans
  }
  if set_tracker then set_tracker(tr) end
end

-- The productivity metric: per capability, the running totals of mutator
-- and GC time since the program started (the spans capability_usage
-- counts) give, at each Mutator or GC span's start, the value
-- mutator / (mutator + GC) x 100. The host's tracker keeps the totals in
-- C (el.cap_usage{on_productivity=}, docs/lua-api.md §6) and calls Lua
-- once per capability and aggregation window (every span without
-- aggregation) and before every tick (tracker:flush_points()). A
-- capability whose totals are both still 0 has no value yet.
local function install_productivity(ctx, ppc)
  local inst = ctx.el.metric{
    name = ppc.name, description = ppc.description, unit = "%",
    kind = "gauge",
  }
  local acc = points_window(ctx, ppc, inst)
  local attrs = {}                    -- cap -> {cap = cap}
  local tracker = ctx.el.cap_usage{
    productivity_aggregate_ns = ppc.aggregate_ns,
    on_productivity = function(cap, t, m, g)
      local a = attrs[cap]
      if not a then
        a = {cap = cap}
        attrs[cap] = a
      end
      acc:add(cap, {t = t, v = m / (m + g) * 100.0, attrs = a})
    end,
  }
  -- Values still held in C go to the accumulator before it ticks; a new
  -- session's program starts from zero.
  local function flush() tracker:flush_points() end
  table.insert(ctx.accs, 1, {tick = flush, finish = flush,
                             restart = function()
                               tracker:flush_points()
                               tracker:reset_productivity()
                             end})
end

function M.install(ctx)
  local ppc = ctx.proc("metrics", "productivity")
  if ppc then install_productivity(ctx, ppc) end
  local mpc = ctx.proc("metrics", "capability_usage")
  local tpc = ctx.proc("traces", "capability_usage")
  if mpc or tpc then install_usage(ctx, mpc, tpc) end
  local spc = ctx.proc("traces", "thread_state")
  -- "<name> Running" / "<name> Blocked" spans, emitted by the host
  if spc then ctx.el.threads{spans = spc.name} end
end

return M
