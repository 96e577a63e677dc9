-- Thread and GC analyses (spec/reference-behaviour.md §5.2.3, §5.3):
--   metrics.capability_usage: cumulative monotonic sum (ns) per cap,
--     category (GC / Mutator / Idle) and user (GC or the thread id);
--   traces.capability_usage: one span per GC or Mutator interval;
--   traces.thread_state: one span per Running or Blocked interval.
-- The host's C helpers (el.cap_usage, el.threads) sort the scheduler
-- events and track the state machines; Lua sees one call per span.
local window = require("eventlog_live.processors.window")

local M = {}

-- Spans are due at once (reference §5.3.2: released every tick), so the
-- store is flushed every SPANS_PER_FLUSH spans too: that bounds the memory
-- a burst of scheduler activity takes before the next batch tick.
local SPANS_PER_FLUSH = 8192

-- Per-thread trace ids kept at most (memory bound for long runs).
local MAX_TRACE_IDS = 65536

local function span_emitter(el)
  local n = 0
  local fmt, rand, maxint = string.format, math.random, math.maxinteger
  return function(span)
    -- Random span ids from Lua's PRNG (xoshiro256**, seeded at random by
    -- Lua 5.4): one getrandom system call per span costs more than the
    -- rest of the span.
    span.span_id = fmt("%016x", rand(1, maxint))
    el.span(span)
    n = n + 1
    if n >= SPANS_PER_FLUSH then
      n = 0
      el.flush()
    end
  end
end

-- The capability-usage metric's instrument (a cumulative monotonic sum in
-- ns) and its window accumulator, shared by the Lua and native paths.
local function usage_accumulator(ctx, mpc)
  local inst = ctx.el.metric{
    name = mpc.name, description = mpc.description, unit = "ns",
    kind = "sum", temporality = "cumulative", monotonic = true,
  }
  return ctx.add_acc(window.new{
    aggregate_ns = mpc.aggregate_ns,
    export_ns = mpc.export_ns,
    grace_ns = ctx.flush_ns,
    emit = function(p)
      inst:point_unix(p.v, p.attrs, ctx.unix(p), ctx.start_unix())
    end,
  })
end

-- Per (cap, category, user) state of the metric: the running total and
-- the time of the latest span. To avoid a table per span (the host calls
-- once per span: hundreds of thousands per second), a snapshot goes into
-- the window accumulator only when a key's span moves to another
-- aggregation window, and for every changed key before each tick.
local function usage_metric(ctx, mpc)
  local acc = usage_accumulator(ctx, mpc)
  local agg = mpc.aggregate_ns
  local states = {}    -- cap -> category -> user -> state
  local dirty = {}     -- states changed since the last snapshot
  local ndirty = 0
  local function snapshot(st)
    acc:add(st, {t = st.t, v = st.total, attrs = st.attrs})
    st.dirty = false
  end
  -- Runs before every tick (added to the accumulator list first).
  local flusher = {tick = function()
    for i = 1, ndirty do
      local st = dirty[i]
      if st.dirty then snapshot(st) end
      dirty[i] = nil
    end
    ndirty = 0
  end, finish = function(self) self.tick() end}
  table.insert(ctx.accs, 1, flusher)
  return function(cap, category, user, start_t, end_t)
    local bycat = states[cap]
    if not bycat then bycat = {}; states[cap] = bycat end
    local byuser = bycat[category]
    if not byuser then byuser = {}; bycat[category] = byuser end
    local u = user or ""
    local st = byuser[u]
    if not st then
      st = {total = 0, t = 0, win = -1, dirty = false,
            attrs = {cap = cap, category = category, user = user}}
      byuser[u] = st
    end
    st.total = st.total + (end_t > start_t and end_t - start_t or 0)
    if agg == 0 then   -- every span is a data point
      st.t = start_t
      acc:add(st, {t = start_t, v = st.total, attrs = st.attrs})
      return
    end
    local w = start_t // agg
    if st.dirty and w ~= st.win then
      -- the previous window's last value, without this span
      acc:add(st, {t = st.t, v = st.total -
                   (end_t > start_t and end_t - start_t or 0),
                   attrs = st.attrs})
      st.dirty = false
    end
    st.t = start_t   -- an Idle span starts where the previous one ended
    st.win = w
    if not st.dirty then
      st.dirty = true
      ndirty = ndirty + 1
      dirty[ndirty] = st
    end
  end
end

-- The same metric with the per-span work in C (el.native_helpers): the
-- host keeps the per-series totals and calls on_point only when a series
-- moves to another aggregation window and for each changed series before
-- every tick (tracker:flush_points()).
local function usage_metric_native(ctx, mpc)
  local acc = usage_accumulator(ctx, mpc)
  local keys = {}    -- series index -> accumulator key {attrs = ...}
  local tracker
  table.insert(ctx.accs, 1, {
    tick = function() tracker:flush_points() end,
    finish = function() tracker:flush_points() end,
  })
  local function on_point(i, t, v, cap, category, user)
    local k = keys[i]
    if not k then
      k = {attrs = {cap = cap, category = category, user = user}}
      keys[i] = k
    end
    acc:add(k, {t = t, v = v, attrs = k.attrs})
  end
  return on_point, function(tr) tracker = tr end
end

local function install_usage(ctx, mpc, tpc)
  local el = ctx.el
  if el.native_helpers then
    local on_point, set_tracker
    if mpc then on_point, set_tracker = usage_metric_native(ctx, mpc) end
    local tr = el.cap_usage{
      on_point = on_point,
      aggregate_ns = mpc and mpc.aggregate_ns,
      spans = tpc and tpc.name,  -- "<name> GC" / "<name> Mutator" spans
    }
    if set_tracker then set_tracker(tr) end
    return
  end
  local metric = mpc and usage_metric(ctx, mpc)
  local trace_ids = {}
  local gc_name = tpc and (tpc.name .. " GC")
  local mut_name = tpc and (tpc.name .. " Mutator")
  local on_span
  if tpc then
    local emit = span_emitter(el)
    -- el.span copies its argument: one table is reused for every span.
    local attrs = {}
    local span = {attrs = attrs}  -- kind internal, status ok: the defaults
    on_span = function(cap, category, user, start_t, end_t)
      if metric then metric(cap, category, user, start_t, end_t) end
      if category == "Idle" then return end
      local tid = trace_ids[cap]
      if not tid then
        tid = el.random_id(16)
        trace_ids[cap] = tid
      end
      span.name = category == "GC" and gc_name or mut_name
      span.trace_id, span.start_t, span.end_t = tid, start_t, end_t
      attrs.capability, attrs.user = cap, user
      emit(span)
    end
  else
    on_span = metric
  end
  el.cap_usage{on_span = on_span}
end

local function install_threads(ctx, pc)
  local el = ctx.el
  if el.native_helpers then  -- spans emitted by the host, in C
    el.threads{spans = pc.name}  -- "<name> Running" / "<name> Blocked"
    return
  end
  local status = require("eventlog_live.status")
  local trace_ids = {}
  local running = pc.name .. " Running"
  local blocked = pc.name .. " Blocked"
  local emit = span_emitter(el)
  -- el.span copies its argument: one table is reused for every span.
  local attrs = {}
  local span = {attrs = attrs}  -- kind internal, status ok: the defaults
  local names = {}   -- thread id -> decimal string
  local nthreads = 0
  el.threads{on_span = function(thread, state, code, cap, start_t, end_t,
                                info)
    local tid = trace_ids[thread]
    if not tid then
      -- A long-running program creates threads without end: forget the
      -- trace ids once there are many (old threads get new ones).
      if nthreads >= MAX_TRACE_IDS then
        trace_ids, names, nthreads = {}, {}, 0
      end
      nthreads = nthreads + 1
      tid = el.random_id(16)
      trace_ids[thread] = tid
      names[thread] = tostring(thread)
    end
    attrs.thread = names[thread]
    if state == "running" then
      attrs.capability, attrs.status = cap, nil
      span.name = running
    else
      attrs.capability, attrs.status = nil, status.name(code, info)
      span.name = blocked
    end
    span.trace_id, span.start_t, span.end_t = tid, start_t, end_t
    emit(span)
  end}
end

function M.install(ctx)
  local mpc = ctx.proc("metrics", "capability_usage")
  local tpc = ctx.proc("traces", "capability_usage")
  if mpc or tpc then install_usage(ctx, mpc, tpc) end
  local spc = ctx.proc("traces", "thread_state")
  if spc then install_threads(ctx, spc) end
end

return M
