-- busted specs for eventlog-time timers (el.at, el.every; docs/lua-api.md
-- §4, src/host/lua_time.c) created while events are dispatched: from a
-- handler of a batched type (RUN_THREAD with args = "t", replayed from the
-- batch queue, src/host/lua_events.c) and with a deadline already behind
-- the stream time. Run on real hosts (tests/tools/el_spec) over eventlogs
-- written by tests/lua/eventlog_writer.lua; the expected windows are
-- counted by hand from the events below.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- One capability, RUN_THREAD at 10, 20, ..., 100 ns, at 250, 260 and at
-- 520 ns: the deadlines of every 100 ns fire before the runs at 100 (9
-- runs before it), 250 (1: 100), 520 (2: 250, 260; then 0 and 0 for the
-- deadlines 400 and 500, due at the same run).
local function runs()
  local b = {cap = 0}
  for t = 10, 100, 10 do b[#b + 1] = {"RUN_THREAD", t, 1} end
  b[#b + 1] = {"RUN_THREAD", 250, 1}
  b[#b + 1] = {"RUN_THREAD", 260, 1}
  b[#b + 1] = {"RUN_THREAD", 520, 1}
  return W.eventlog{b}
end

-- The host's log lines that start with "w=" or "at=", in order.
local function lines(h)
  local r = {}
  for _, m in ipairs(h:messages()) do
    if m.text:match("^w=") or m.text:match("^at=") then r[#r + 1] = m.text end
  end
  return r
end

local function run(code)
  local h = el_spec.host{code = code}
  assert(h:feed(runs()))
  assert(h:finish())
  return lines(h)
end

-- Counts the runs per 100 ns window; the timer starts at load (lazy =
-- false) or in the first handler call (lazy = true).
local function window_script(lazy)
  return ([[
  local el = require("eventlog_live")
  local n, started = 0, false
  local function tick(d)
    el.host_log("warn", "w=" .. d .. ":" .. n)
    n = 0
  end
  if not %s then el.every(100, tick); started = true end
  el.on("RUN_THREAD", function(t)
    if not started then started = true; el.every(100, tick) end
    n = n + 1
  end, {args = "t"})
]]):format(tostring(lazy))
end

describe("timers created during dispatch", function()
  local WINDOWS = {"w=100:9", "w=200:1", "w=300:2", "w=400:0", "w=500:0"}

  it("every 100 ns at load: 9, 1, 2, 0, 0 runs per window", function()
    assert.same(WINDOWS, run(window_script(false)))
  end)

  it("the same windows when the timer starts in a batched handler",
     function()
    -- The timer was created while the batch of all 12 runs was replayed:
    -- it used to fire only after the whole batch (w=100:12).
    assert.same(WINDOWS, run(window_script(true)))
  end)

  it("a deadline already passed fires before the next event", function()
    -- At the run at 30 ns: el.at(5) is behind the stream time and
    -- el.at(45) is ahead; each fires before the first later run at or
    -- past it (40 and 50 ns), each seeing the stream time then.
    local got = run([[
      local el = require("eventlog_live")
      el.on("RUN_THREAD", function(t)
        el.host_log("warn", "at=run " .. t)
        if t == 30 then
          el.at(5, function(d) el.host_log("warn", "at=" .. d .. " now " .. el.now()) end)
          el.at(45, function(d) el.host_log("warn", "at=" .. d .. " now " .. el.now()) end)
        end
      end, {args = "t"})
    ]])
    assert.same({"at=run 10", "at=run 20", "at=run 30", "at=5 now 40",
                 "at=run 40", "at=45 now 50", "at=run 50"},
                {table.unpack(got, 1, 7)})
  end)

  it("errors of timers and hooks name where the script made them",
     function()
    -- A timer's error was labelled "timer (timer)" and a hook's
    -- "on_end (hook)", where a handler's names its file:line; with a
    -- shared tick function, or error(x, 0), nothing told them apart.
    local h = el_spec.host{fail_fast = false, code = [[
local el = require("eventlog_live")
local function tick() error("no position", 0) end
el.at(15, tick)
el.at(25, tick)
el.on_session_end(tick)
el.on_end(tick)
el.on_end(function()
  for _, f in ipairs{"every", "at", "every_wall", "after_wall"} do
    local ok, err = pcall(el[f], 1, function() end)
    el.host_log("warn", "late " .. tostring(ok) .. " " .. err)
  end
end)]]}
    assert(h:feed(runs()))
    assert(h:finish())
    local got = {}
    for _, m in ipairs(h:messages()) do
      got[#got + 1] = m.text:match("^[^\n]*")
    end
    local late = " the input has ended (on_end or later): no event or " ..
                 "wall-clock tick will come, the timer would never fire"
    assert.same({
      "timer (spec:3): no position",
      "timer (spec:4): no position",
      "on_session_end (spec:5): no position",
      "on_end (spec:6): no position",
      "late false el.every:" .. late,
      "late false el.at:" .. late,
      "late false el.every_wall:" .. late,
      "late false el.after_wall:" .. late,
    }, got)
  end)

  it("a timer made in the last on_session_end is said never to fire",
     function()
    -- h60: it was accepted and never fired, silently (the host learns that
    -- no session follows only after that hook). Two sessions (runs()
    -- twice): the timers made in session 1's on_session_end fire in
    -- session 2 (at=0 before its first run; every 100 at its deadlines),
    -- those made in session 2's are named (lines 7 and 8 of the script);
    -- a cancelled one (line 9) is not.
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
local function say(what)
  return function(d) el.host_log("warn", what .. d) end
end
el.on_session_end(function(s)
  local n = s.number
  el.at(0, say("at" .. n .. "="))
  el.every(100, say("every" .. n .. "="))
  el.at(5, function() end):cancel()
end)]]}
    assert(h:feed(runs() .. runs()))
    assert(h:finish())
    local got, fired = {}, {}
    for _, m in ipairs(h:messages()) do
      if m.text:match("^timer") then
        got[#got + 1] = m.level .. " " .. m.text
      else
        fired[m.text] = true
      end
    end
    assert.is_true(fired["at1=0"])
    assert.is_true(fired["every1=100"])
    table.sort(got)
    local tail = ": made in on_session_end, never fired: no session " ..
                 "followed before the input ended (end-of-input work goes " ..
                 "in on_end)"
    assert.same({"warn timer (spec:7)" .. tail, "warn timer (spec:8)" .. tail},
                got)
  end)
end)
