-- A stand-in for the host's eventlog_live module, enough to drive the
-- default processors from busted specs with hand-made events. Emitted
-- telemetry is recorded in el.out.
local M = {}

function M.new(config, start_unix_ns)
  local el = {
    config = config or {},
    session = {start_unix_ns = start_unix_ns},
    handlers = {}, warnings = {}, now_t = 0, timers = {},
    out = {metrics = {}, logs = {}, spans = {}, profiles = {}},
  }
  -- Like the host, copy what is emitted (callers may reuse their tables).
  local function copy(t)
    if type(t) ~= "table" then return t end
    local c = {}
    for k, v in pairs(t) do c[k] = copy(v) end
    return c
  end
  function el.on(name, fn)
    el.handlers[name] = el.handlers[name] or {}
    table.insert(el.handlers[name], fn)
  end
  function el.every(interval, fn)
    table.insert(el.timers, {interval = interval, fn = fn, next = interval})
  end
  function el.every_wall() end
  function el.on_end(fn) el.end_fn = fn end
  function el.on_header() end
  function el.on_session() end
  function el.on_session_end() end
  function el.metric(desc)
    local m = {desc = desc, points = {}}
    function m:point_unix(v, a, u, s)
      table.insert(self.points, {v = v, a = a, u = u, s = s})
    end
    el.out.metrics[desc.name] = m
    return m
  end
  function el.log(r) table.insert(el.out.logs, copy(r)) end
  function el.span(s) table.insert(el.out.spans, copy(s)) end
  function el.profile_sample(p) table.insert(el.out.profiles, copy(p)) end
  function el.flush() el.flushes = (el.flushes or 0) + 1 end
  function el.host_log(level, msg) table.insert(el.warnings, msg) end
  local ids = 0
  function el.random_id(n)
    ids = ids + 1
    return string.format("%0" .. (2 * n) .. "x", ids)
  end
  function el.now() return el.now_t end
  -- The host's clock and watermark (src/host/host_clock.c): a recorded
  -- stream with a known start and no capability to wait for.
  function el.unix_ns(t)
    local s = el.session.start_unix_ns
    return s and (s + t) or 0
  end
  function el.watermark() return el.watermark_t end
  function el.wall_t() return nil end
  function el.cap_usage(o) el.cap_usage_cb = o.on_span end
  function el.threads(o) el.threads_cb = o.on_span end
  -- Deliver one event: eventlog-time timers first, as the host does.
  function el.event(name, t, cap, ...)
    for _, tm in ipairs(el.timers) do
      while t >= tm.next do
        tm.fn(tm.next)
        tm.next = tm.next + tm.interval
      end
    end
    if t > el.now_t then el.now_t = t end
    local s = el.session.start_unix_ns
    local ev = {t = t, cap = cap, unix_ns = s and (s + t) or 0}
    for _, fn in ipairs(el.handlers[name] or {}) do fn(ev, ...) end
  end
  function el.finish() if el.end_fn then el.end_fn() end end
  return el
end

-- el.config for the given processors ({"metrics.heap_size" = {agg, exp}}),
-- as the daemon builds it (src/cmd/cmd_otelcol.c, config_to_lua).
function M.config(procs, flush_ms, batch_ms)
  local c = {flush_ns = (flush_ms or 1000) * 1000000,
             batch_ns = (batch_ms or flush_ms or 1000) * 1000000,
             processors = {}}
  for k, v in pairs(procs) do
    local group, key = k:match("^(%w+)%.(.+)$")
    c.processors[group] = c.processors[group] or {}
    c.processors[group][key] = {
      enabled = true, name = v.name or k,
      aggregate_ns = (v.aggregate_ms or 0) * 1000000,
      export_ns = (v.export_ms or 1000) * 1000000,
    }
  end
  return c
end

return M
