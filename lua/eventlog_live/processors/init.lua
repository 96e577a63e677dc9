-- eventlog_live.processors: the default processors of eventlog-live-otelcol
-- (spec/reference-behaviour.md §4-§6) over the host API (docs/lua-api.md).
--
-- The daemon (src/cmd/cmd_otelcol.c) passes the resolved configuration
-- through el.config (all values strings):
--   flush_ms, batch_ms        --eventlog-flush-interval and batch interval
--   breakdown                 -h<X> from the command line ("" if none)
--   <group>.<key>.enabled     "true" / "false"
--   <group>.<key>.name, .description, .aggregate_ms, .export_ms
-- and loads main.lua, which calls start().
--
-- Timing: one eventlog-time timer every batch interval drives every
-- processor's windows (window.lua) and then flushes the telemetry store; a
-- wall-clock timer runs the same ticks when a live stream goes quiet.
local M = {}

local GROUPS = {"logs", "metrics", "traces", "profiles"}

-- The settings of one processor from el.config, or nil when disabled.
function M.proc_config(config, group, key)
  local pre = group .. "." .. key .. "."
  if config[pre .. "enabled"] ~= "true" then return nil end
  local desc = config[pre .. "description"]
  return {
    group = group,
    key = key,
    name = config[pre .. "name"] or key,
    description = (desc ~= nil and desc ~= "") and desc or nil,
    aggregate_ns = math.tointeger(tonumber(config[pre .. "aggregate_ms"] or "0")) * 1000000,
    export_ns = math.tointeger(tonumber(config[pre .. "export_ms"] or "1000")) * 1000000,
  }
end

-- Shared context given to every processor module.
local function make_ctx(el)
  local config = el.config or {}
  local ctx = {
    el = el,
    config = config,
    flush_ns = math.tointeger(tonumber(config.flush_ms or "1000")) * 1000000,
    batch_ns = math.tointeger(tonumber(config.batch_ms or config.flush_ms or "1000")) * 1000000,
    breakdown = (config.breakdown ~= nil and config.breakdown ~= "") and config.breakdown or nil,
    accs = {},        -- every window accumulator, ticked together
    finishers = {},   -- functions run at end of input
    -- Longest wait for an idle capability before windows close anyway.
    max_grace_ns = 10 * math.max(1000000000,
      math.tointeger(tonumber(config.flush_ms or "1000")) * 1000000),
  }
  function ctx.proc(group, key) return M.proc_config(config, group, key) end
  -- Unix time of an item {t=, u=}: its own, else from the session start.
  -- The start is remembered past the end of its session, since windows
  -- are exported after the session ended (end of input, reconnection).
  local last_start = nil
  local function start()
    local s = el.session and el.session.start_unix_ns
    if s then last_start = s end
    return last_start
  end
  function ctx.unix(item)
    if item.u and item.u ~= 0 then return item.u end
    local s = start()
    if s then return s + item.t end
    return 0
  end
  function ctx.start_unix() return start() or 0 end
  if el.on_session_end then el.on_session_end(function() start() end) end
  -- Resource attributes of the observed process, from the session's init
  -- events (OpenTelemetry process semantic conventions): set before the
  -- session's windows close, so every record of the session carries them.
  local function set_process_resource(sess)
    if not (el.set_resource and sess) then return end
    if sess.pid then el.set_resource("process.pid", sess.pid) end
    if sess.args and #sess.args > 0 then
      el.set_resource("process.command_args", sess.args)
      el.set_resource("process.executable.name",
                      (sess.args[1]:match("([^/]*)$")))
    end
    el.set_resource("process.runtime.name", "GHC")
    if sess.ghc_version then
      el.set_resource("process.runtime.version", sess.ghc_version)
    end
    if sess.rts_version then
      el.set_resource("process.runtime.description", sess.rts_version)
    end
  end
  if el.on_session then
    el.on_session(function(sess)
      start()
      set_process_resource(sess or el.session)
    end)
  end
  -- Warnings: each distinct message at most 3 times; the rest are counted
  -- and summarised at the end of input.
  local warned, suppressed = {}, 0
  function ctx.warn(msg)
    local n = (warned[msg] or 0) + 1
    warned[msg] = n
    if n <= 3 then
      el.host_log("warn", msg)
    else
      suppressed = suppressed + 1
    end
  end
  function ctx.warn_summary()
    if suppressed > 0 then
      el.host_log("warn", ("%d repeated warnings not shown"):format(suppressed))
    end
  end
  -- Exports wait for the session's WALL_CLOCK_TIME, which may come after
  -- capability blocks holding later events in the stream.
  function ctx.add_acc(acc)
    acc.ready = function() return start() ~= nil end
    ctx.accs[#ctx.accs + 1] = acc
    return acc
  end
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

  -- Watermark from block markers: each capability's blocks arrive in time
  -- order, so once a block of capability c is complete (a later block
  -- marker arrived) no event of c older than its end can come; while it
  -- is being read, none older than its start.
  local blocks = {}   -- cap -> {start, end}
  local current = nil -- the block being read
  local advance       -- defined below
  el.on("BLOCK_MARKER", function(ev, size, end_time, cap)
    if current then current.done = true end
    current = {s = ev.t, e = end_time}
    blocks[cap] = current
    advance(ev.t)
  end)
  local function watermark()
    local w = nil
    for _, b in pairs(blocks) do
      local x = b.done and b.e or b.s
      if w == nil or x < w then w = x end
    end
    return w
  end
  ctx.watermark = watermark

  local last = -1
  local function tick(deadline)
    if deadline <= last then return end
    last = deadline
    local wm = watermark()
    for _, acc in ipairs(ctx.accs) do acc:tick(deadline, wm) end
    el.flush()
  end
  ctx.tick = tick
  -- Keep the timer handles referenced: the host frees a timer whose handle
  -- was collected while the timer's own callback runs, and then uses it
  -- (src/host/lua_time.c). ctx stays reachable through tick.
  ctx.timers = {el.every(ctx.batch_ns, tick)}

  -- Block markers also drive the ticks (a block's start time is reached):
  -- after a reconnection to a restarted program, whose clock starts again
  -- at 0, the host's eventlog-time timer waits for the old stream time,
  -- but block markers come at once.
  advance = function(t)
    local d = (t // ctx.batch_ns) * ctx.batch_ns
    if d <= last then return end
    local k = last < 0 and d or last + ctx.batch_ns
    if (d - k) // ctx.batch_ns > 10000 then k = d end
    while k <= d do
      tick(k)
      k = k + ctx.batch_ns
    end
  end

  -- A new session (reconnection): export what the old one left, then
  -- measure windows on the new session's clock.
  if el.on_header then
    el.on_header(function(session)
      blocks, current = {}, nil
      if (session and session.number or 1) <= 1 then return end
      for _, acc in ipairs(ctx.accs) do acc:finish() end
      el.flush()
      last = -1
      for _, acc in ipairs(ctx.accs) do
        if acc.restart then acc:restart() end
      end
    end)
  end

  -- Quiet live stream: when no event has moved the stream time for two
  -- flush intervals of wall time, let time advance with the wall clock.
  if el.every_wall then
    local seen_now, quiet_since = -1, nil
    local batch_ms = ctx.batch_ns // 1000000
    ctx.timers[#ctx.timers + 1] = el.every_wall(batch_ms, function(unix_ns)
      local now = el.now()
      if now ~= seen_now then
        seen_now, quiet_since = now, unix_ns
        return
      end
      local quiet_ns = unix_ns - quiet_since
      if quiet_ns < 2 * ctx.flush_ns then return end
      local virtual = now + quiet_ns - ctx.flush_ns
      local d = (last < 0) and (virtual // ctx.batch_ns) * ctx.batch_ns
                or last + ctx.batch_ns
      while d <= virtual do
        tick(d)
        d = d + ctx.batch_ns
      end
    end)
  end

  -- For --stats: Unix time of the stream's latest event (0 if unknown).
  rawset(_G, "eventlog_live_otelcol_stream_unix_ns", function()
    local s = ctx.start_unix()
    return s ~= 0 and (s + el.now()) or 0
  end)

  el.on_end(function()
    for _, fn in ipairs(ctx.finishers) do fn() end
    ctx.warn_summary()
    for _, acc in ipairs(ctx.accs) do acc:finish() end
    el.flush()
  end)
  return ctx
end

M.GROUPS = GROUPS
return M
