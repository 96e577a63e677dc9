-- eventlog_live.processors: the default processors of eventlog-live-otelcol
-- (spec/reference-behaviour.md §4-§6) over the host API (docs/lua-api.md).
--
-- The daemon (src/cmd/cmd_otelcol.c, config_to_lua) passes the resolved
-- configuration as the table el.config:
--   flush_ns, batch_ns        --eventlog-flush-interval and the batch
--                             interval, ns
--   breakdown                 -h<X> from the command line (nil if none)
--   processors.<group>.<key> = {enabled = bool, name = string,
--                               description = string or nil,
--                               aggregate_ns = int, export_ns = int}
-- and loads main.lua, which calls start().
--
-- Timing: one eventlog-time timer every batch interval drives every
-- processor's windows (window.lua) and then flushes the telemetry store; in
-- a live session a wall-clock timer runs the same ticks on the session's
-- clock, so nothing waits for the next block of a quiet stream.
local M = {}

local GROUPS = {"logs", "metrics", "traces", "profiles"}

-- The settings of one processor from el.config, or nil when disabled.
function M.proc_config(config, group, key)
  local g = config.processors and config.processors[group]
  local p = g and g[key]
  if not (p and p.enabled) then return nil end
  return {
    group = group,
    key = key,
    name = p.name or key,
    description = (p.description ~= "") and p.description or nil,
    aggregate_ns = p.aggregate_ns or 0,
    export_ns = p.export_ns or 1000000000,
    max_threads = p.max_threads,  -- nil: the host's default
  }
end

-- Shared context given to every processor module.
local function make_ctx(el)
  local config = el.config or {}
  local ctx = {
    el = el,
    config = config,
    flush_ns = config.flush_ns or 1000000000,
    batch_ns = config.batch_ns or config.flush_ns or 1000000000,
    breakdown = config.breakdown,
    accs = {},        -- every window accumulator, ticked together
    finishers = {},   -- functions run at the end of each session
  }
  function ctx.proc(group, key) return M.proc_config(config, group, key) end
  -- Unix time of an item {t=}, converted when it is exported with the
  -- session's clock as then known (docs/lua-api.md §3: exact once
  -- WALL_CLOCK_TIME was seen, estimated from the arrival of the stream's
  -- bytes before). Items are exported before their session's clock is
  -- replaced by the next session's (windows are finished at session end).
  function ctx.unix(item) return el.unix_ns(item.t) end
  -- The start of the session's cumulative sums: its RTS start as first
  -- known with the clock's current kind, kept while the kind stays. A live
  -- session's estimated clock is refined as its bytes arrive (a change of
  -- start would read as a counter reset in a backend, docs/differences.md):
  -- the first estimate stays until the clock turns exact (WALL_CLOCK_TIME),
  -- where the start changes once, to the exact one, which the points' times
  -- follow too. Reset at each header.
  local pinned_start, pinned_kind = nil, nil
  function ctx.start_unix()
    local sess = el.session
    local s = sess and sess.start_unix_ns
    if not (s and s > 0) then return 0 end
    local kind = sess.clock == "exact" and "exact" or sess.clock_from
    if pinned_start and pinned_kind == kind then return pinned_start end
    pinned_start, pinned_kind = s, kind
    return s
  end
  function ctx.unpin_start() pinned_start, pinned_kind = nil, nil end
  -- Resource attributes of the observed process, set as they become known
  -- (OpenTelemetry process semantic conventions), never waited for: the
  -- session's init events may come late (GHC 9.0 writes them in its global
  -- buffer) or never (eventlog-socket does not repeat them after a
  -- reconnection). eventlog_live.clock marks records whose times are
  -- estimated (docs/differences.md): "arrival", "file_mtime" or
  -- "next_session"; absent once the session's WALL_CLOCK_TIME is known.
  local shown = {}    -- resource key -> value last set (false = unset)
  local PROCESS_KEYS = {"process.pid", "process.command_args",
                        "process.executable.name", "process.runtime.name",
                        "process.runtime.version",
                        "process.runtime.description", "eventlog_live.clock"}
  local function put(key, value)
    if value == nil then value = false end
    if shown[key] == value then return end
    shown[key] = value
    if el.set_resource then
      if value == false then el.set_resource(key, nil)
      else el.set_resource(key, value) end
    end
  end
  function ctx.sync_resource()
    local sess = el.session
    if not sess or (sess.number or 0) == 0 then return end
    put("process.pid", sess.pid)
    local args = sess.args
    if args and #args > 0 then
      put("process.command_args", args)
      put("process.executable.name", (args[1]:match("([^/]*)$")))
    else
      put("process.command_args", nil)
      put("process.executable.name", nil)
    end
    put("process.runtime.name", "GHC")
    put("process.runtime.version", sess.ghc_version)
    put("process.runtime.description", sess.rts_version)
    put("eventlog_live.clock",
        sess.clock == "estimated" and sess.clock_from or nil)
  end
  -- A new session: nothing of the old program's identity carries over.
  function ctx.reset_resource()
    for _, k in ipairs(PROCESS_KEYS) do put(k, nil) end
  end
  -- Warnings: each distinct message at most 3 times; the rest are counted
  -- and summarised at the end of input. At most MAX_WARNED distinct
  -- messages are remembered (a stream can name ids without end).
  local MAX_WARNED = 10000
  local warned, nwarned, suppressed = {}, 0, 0
  function ctx.warn(msg)
    local n = warned[msg]
    if n == nil then
      if nwarned >= MAX_WARNED then
        suppressed = suppressed + 1
        return
      end
      nwarned = nwarned + 1
      n = 0
    end
    n = n + 1
    warned[msg] = n
    if n <= 3 then
      el.host_log("warn", msg)
    else
      suppressed = suppressed + 1
    end
  end
  -- Tables of one session's definitions (cost centres, IPEs,
  -- ghc-stack-profiler strings, ...): at most `max` entries; definitions
  -- past that are dropped and counted (reported at the end of input); all
  -- cleared when a new session begins (another program's ids mean nothing
  -- there). d.t is the table itself; d.put(k, v) adds or replaces.
  ctx.defs_list = {}
  function ctx.defs(what, max)
    local d = {t = {}, n = 0, max = max, dropped = 0, what = what}
    function d.put(k, v)
      local t = d.t
      if t[k] == nil then
        if d.n >= d.max then
          d.dropped = d.dropped + 1
          return
        end
        d.n = d.n + 1
      end
      t[k] = v
    end
    function d.clear()
      d.t, d.n = {}, 0
    end
    ctx.defs_list[#ctx.defs_list + 1] = d
    return d
  end
  function ctx.warn_summary()
    if suppressed > 0 then
      el.host_log("warn", ("%d repeated warnings not shown"):format(suppressed))
    end
  end
  function ctx.add_acc(acc)
    ctx.accs[#ctx.accs + 1] = acc
    return acc
  end
  -- Run f(...) so that an error in one processor (a bug, a malformed
  -- value) never stops the others' ticks and flushes: it is logged with
  -- its traceback (at most 3 times per message) and counted in
  -- ctx.errors.
  ctx.errors = 0
  local traceback = debug.traceback
  function ctx.protect(what, f, ...)
    local ok, err = xpcall(f, traceback, ...)
    if not ok then
      ctx.errors = ctx.errors + 1
      ctx.warn(what .. ": " .. tostring(err))
    end
  end
  -- fn runs at the end of each session (and of input), before the windows
  -- are finished: e.g. close a heap census left open.
  function ctx.on_finish(fn) ctx.finishers[#ctx.finishers + 1] = fn end
  return ctx
end

local MODULES = {
  "eventlog_live.processors.logs",
  "eventlog_live.processors.heap",
  "eventlog_live.processors.heap_prof",
  "eventlog_live.processors.capability",
  "eventlog_live.processors.profiles",
}

-- Install every enabled processor and the timers. Returns the context
-- (tests look at it).
function M.start(el)
  el = el or require("eventlog_live")
  local ctx = make_ctx(el)
  -- Span ids come from math.random: seed it from the system's entropy.
  if el.random_id then
    math.randomseed(tonumber(el.random_id(7), 16), tonumber(el.random_id(7), 16))
  end
  for _, name in ipairs(MODULES) do require(name).install(ctx) end

  -- The watermark (el.watermark, src/host/host_clock.c): no event of a
  -- capability still waited for is older; nil when none is waited for.
  ctx.watermark = el.watermark

  -- One tick per batch interval of the session's eventlog time: windows
  -- that ended at least one flush interval ago and lie below the watermark
  -- close; at export boundaries closed windows are exported.
  local last = -1
  local function tick(deadline)
    if deadline <= last then return end
    last = deadline
    ctx.sync_resource()
    local wm = el.watermark()
    for _, acc in ipairs(ctx.accs) do
      ctx.protect("processor tick", acc.tick, acc, deadline, wm)
    end
    el.flush()
  end
  ctx.tick = tick
  -- Keep the timer handles referenced: the host frees a timer whose handle
  -- was collected while the timer's own callback runs. ctx stays reachable
  -- through tick.
  ctx.timers = {el.every(ctx.batch_ns, tick)}

  -- The end of a session (end of input, a closed connection, the next
  -- header of a file): export everything it left, with its clock.
  local function finish()
    for _, fn in ipairs(ctx.finishers) do ctx.protect("processor finish", fn) end
    ctx.sync_resource()
    for _, acc in ipairs(ctx.accs) do
      ctx.protect("processor finish", acc.finish, acc)
    end
    el.flush()
  end
  if el.on_session_end then el.on_session_end(finish) end
  -- The program's identity is known (live input whose init events come
  -- first, GHC >= 9.2): the records from now on carry it, not only those
  -- after the next tick.
  if el.on_session then el.on_session(ctx.sync_resource) end

  -- The wall-clock tick's memory of a clockless stream (below): the
  -- stream time it last saw and since when (Unix ns) it has not moved.
  local seen_now, quiet_since = -1, nil

  -- A new session (reconnection, or the next session of a file): its clock
  -- and program are new; windows are measured on its own eventlog time.
  -- So is its quiet: the previous session's must not count (its stream
  -- time was 0 too when it began, before its clock was known).
  if el.on_header then
    el.on_header(function(session)
      ctx.reset_resource()
      -- A recorded file's scan found the init events (on GHC 9.0 at its
      -- end): the resource is complete from the first record. Live input
      -- gets it when the events come.
      if session.init_scanned then ctx.sync_resource() end
      for _, d in ipairs(ctx.defs_list) do d.clear() end
      last = -1
      seen_now, quiet_since = -1, nil
      ctx.unpin_start()
      for _, acc in ipairs(ctx.accs) do
        if acc.restart then ctx.protect("processor restart", acc.restart, acc) end
      end
    end)
  end

  -- Live streams: the wall clock moves the session's time too, so windows
  -- close and exports go out while the stream is quiet (GHC 9.0 writes a
  -- capability's events only when its 2 MiB buffer fills). el.wall_t() is
  -- the wall clock now in the session's eventlog time (live sessions with
  -- a clock, exact or estimated). A live stream without block markers has
  -- no clock: there, once no event has moved the stream time for two
  -- flush intervals, time advances with the wall clock.
  if el.every_wall then
    local batch_ms = ctx.batch_ns // 1000000
    ctx.timers[#ctx.timers + 1] = el.every_wall(batch_ms, function(unix_ns)
      local target = el.wall_t and el.wall_t()
      if not target then
        local now = el.now()
        if now ~= seen_now then
          seen_now, quiet_since = now, unix_ns
          return
        end
        local quiet_ns = unix_ns - quiet_since
        if quiet_ns < 2 * ctx.flush_ns then return end
        target = now + quiet_ns - ctx.flush_ns
      end
      local d = (target // ctx.batch_ns) * ctx.batch_ns
      if d <= last then return end
      -- One tick for the latest boundary, and one for the latest export
      -- boundary of each processor that lies between (so exports are not
      -- skipped when the stream time jumps).
      local k = last < 0 and d or last + ctx.batch_ns
      if (d - k) // ctx.batch_ns > 100 then k = d - 100 * ctx.batch_ns end
      while k <= d do
        tick(k)
        k = k + ctx.batch_ns
      end
    end)
  end

  el.on_end(function()
    finish()
    for _, d in ipairs(ctx.defs_list) do
      if d.dropped > 0 then
        ctx.warn(("%d %s dropped: more than %d in one session")
                 :format(d.dropped, d.what, d.max))
      end
    end
    for _, acc in ipairs(ctx.accs) do
      if (acc.failed or 0) > 0 then
        ctx.warn(("%d records could not be made and were dropped: %s")
                 :format(acc.failed, tostring(acc.last_error)))
      end
    end
    ctx.warn_summary()
  end)
  return ctx
end

M.GROUPS = GROUPS
return M
