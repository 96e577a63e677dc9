-- Thread and GC analyses (spec/reference-behaviour.md §5.2.3, §5.3):
--   metrics.capability_usage: cumulative monotonic sum (ns) per cap,
--     category (GC / Mutator / Idle) and user (GC or the thread id);
--   traces.capability_usage: one span per GC or Mutator interval;
--   traces.thread_state: one span per Running or Blocked interval.
-- The host's C helpers (el.cap_usage, el.threads) sort the scheduler
-- events and track the state machines; Lua sees one call per span.
local window = require("eventlog_live.processors.window")

local M = {}

local function install_usage(ctx, mpc, tpc)
  local el = ctx.el
  local acc, totals
  if mpc then
    local inst = el.metric{
      name = mpc.name, description = mpc.description, unit = "ns",
      kind = "sum", temporality = "cumulative", monotonic = true,
    }
    totals = {}
    acc = ctx.add_acc(window.new{
      aggregate_ns = mpc.aggregate_ns,
      export_ns = mpc.export_ns,
      grace_ns = ctx.flush_ns,
      max_grace_ns = ctx.max_grace_ns,
      emit = function(p)
        inst:point_unix(p.v, p.attrs, ctx.unix(p), ctx.start_unix())
      end,
    })
  end
  local trace_ids = {}
  local gc_name = tpc and (tpc.name .. " GC")
  local mut_name = tpc and (tpc.name .. " Mutator")
  el.cap_usage{on_span = function(cap, category, user, start_t, end_t)
    if acc then
      local key = cap .. "\0" .. category .. "\0" .. (user or "")
      local d = end_t > start_t and end_t - start_t or 0
      local total = (totals[key] or 0) + d
      totals[key] = total
      -- An Idle span starts where the previous span ended (§5.2.3).
      acc:add(key, {t = start_t, v = total,
                    attrs = {cap = cap, category = category, user = user}})
    end
    if tpc and category ~= "Idle" then
      local tid = trace_ids[cap]
      if not tid then
        tid = el.random_id(16)
        trace_ids[cap] = tid
      end
      el.span{
        name = category == "GC" and gc_name or mut_name,
        trace_id = tid, start_t = start_t, end_t = end_t,
        kind = "internal", status = "ok",
        attrs = {capability = cap, user = user},
      }
    end
  end}
end

local function install_threads(ctx, pc)
  local el = ctx.el
  local status = require("eventlog_live.status")
  local trace_ids = {}
  local running = pc.name .. " Running"
  local blocked = pc.name .. " Blocked"
  el.threads{on_span = function(thread, state, code, cap, start_t, end_t,
                                info)
    local tid = trace_ids[thread]
    if not tid then
      tid = el.random_id(16)
      trace_ids[thread] = tid
    end
    local attrs
    if state == "running" then
      attrs = {capability = cap, thread = tostring(thread)}
    else
      attrs = {thread = tostring(thread), status = status.name(code, info)}
    end
    el.span{
      name = state == "running" and running or blocked,
      trace_id = tid, start_t = start_t, end_t = end_t,
      kind = "internal", status = "ok", attrs = attrs,
    }
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
