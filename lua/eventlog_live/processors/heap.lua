-- Heap metric processors: heap_size, heap_live, blocks_size,
-- heap_allocated, mem_current, mem_needed, mem_returned
-- (spec/reference-behaviour.md §5.2.1), and gc_copied, gc_slop,
-- gc_fragmentation (the reference's newer GC statistics, one point per
-- GC_STATS_GHC event, bytes). Attributes evCap (omitted for
-- events outside a capability block) and heapCapset. heap_allocated is the
-- RTS's running total of bytes allocated per capability, exported as a
-- cumulative monotonic sum (DESIGN.md; the reference used DELTA).
local window = require("eventlog_live.processors.window")

local M = {}

-- A metric with "last value per attribute set" aggregation.
local function metric_proc(ctx, pc, unit, kind)
  local el = ctx.el
  local inst = el.metric{
    name = pc.name, description = pc.description, unit = unit,
    kind = kind or "gauge", temporality = "cumulative",
    monotonic = kind == "sum",
  }
  return ctx.add_acc(window.new{
    aggregate_ns = pc.aggregate_ns,
    export_ns = pc.export_ns,
    grace_ns = ctx.flush_ns,
    emit = function(p)
      local attrs = {heapCapset = p.capset}
      if p.cap ~= nil then attrs.evCap = p.cap end
      inst:point_unix(p.v, attrs, ctx.unix(p), ctx.start_unix())
    end,
  })
end

-- The grouping key of (cap, capset); written out in the handlers (no
-- call per event): (cap or -1) * 4294967296 + capset.

-- One measurement into acc: the window's point for key, filled in place
-- (window.lua Acc:item). The handlers of events that feed several
-- metrics write it out for each (acc and item(acc, k, t)): no call per
-- metric (they run per event).
local item = window.item

-- Subscribe one event type to one processor.
local function simple(ctx, key_, event, unit, kind)
  local pc = ctx.proc("metrics", key_)
  if not pc then return end
  local acc = metric_proc(ctx, pc, unit, kind)
  ctx.el.on(event, function(t, cap, capset, value)
    local p = item(acc, (cap or -1) * 4294967296 + capset, t)
    if p then p.v, p.cap, p.capset = value, cap, capset end
  end, {args = "t"})
end

-- GC_STATS_GHC feeds three gauges (By): copied, slop, fragmentation.
local function gc_stats(ctx)
  local accs, any = {}, false
  for i, k in ipairs{"gc_copied", "gc_slop", "gc_fragmentation"} do
    local pc = ctx.proc("metrics", k)
    if pc then
      accs[i] = metric_proc(ctx, pc, "By")
      any = true
    end
  end
  if not any then return end
  local a1, a2, a3 = accs[1], accs[2], accs[3]
  ctx.el.on("GC_STATS_GHC", function(t, cap, capset, _gen, copied, slop,
                                     frag)
    local k = (cap or -1) * 4294967296 + capset
    local p = a1 and item(a1, k, t)
    if p then p.v, p.cap, p.capset = copied, cap, capset end
    p = a2 and item(a2, k, t)
    if p then p.v, p.cap, p.capset = slop, cap, capset end
    p = a3 and item(a3, k, t)
    if p then p.v, p.cap, p.capset = frag, cap, capset end
  end, {args = "t"})
end

function M.install(ctx)
  simple(ctx, "heap_size", "HEAP_SIZE", "By")
  simple(ctx, "heap_live", "HEAP_LIVE", "By")
  simple(ctx, "blocks_size", "BLOCKS_SIZE", "By")
  simple(ctx, "heap_allocated", "HEAP_ALLOCATED", "By", "sum")
  -- MEM_RETURN feeds three metrics.
  local accs = {}
  for i, k in ipairs{"mem_current", "mem_needed", "mem_returned"} do
    local pc = ctx.proc("metrics", k)
    if pc then accs[i] = metric_proc(ctx, pc, "{mblock}") end
  end
  local a1, a2, a3 = accs[1], accs[2], accs[3]
  if a1 or a2 or a3 then
    ctx.el.on("MEM_RETURN", function(t, cap, capset, current, needed,
                                     returned)
      local k = (cap or -1) * 4294967296 + capset
      local p = a1 and item(a1, k, t)
      if p then p.v, p.cap, p.capset = current, cap, capset end
      p = a2 and item(a2, k, t)
      if p then p.v, p.cap, p.capset = needed, cap, capset end
      p = a3 and item(a3, k, t)
      if p then p.v, p.cap, p.capset = returned, cap, capset end
    end, {args = "t"})
  end
  gc_stats(ctx)
end

return M
