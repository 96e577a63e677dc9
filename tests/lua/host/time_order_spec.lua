-- busted specs for time-ordered dispatch (el.on(name, fn, {order =
-- "time"}), el.order; src/host/lua_order.c, docs/lua-api.md "Order of
-- events") and the args = "t" calling convention, on real hosts (run by
-- tests/tools/el_spec) over eventlogs written by
-- tests/lua/eventlog_writer.lua. The expected orders are written out by
-- hand from the blocks below.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- A script that records what its handlers see and reports it at the end
-- through the host's log: "<name>=<t1>,<t2>,..." per list, and the
-- order_* counters.
local RECORDER = [[
  local el = require("eventlog_live")
  local seen = {time = {}, stream = {}, args = {}}
  local function add(list, v) seen[list][#seen[list] + 1] = v end
  el.on("USER_MARKER", function(t, cap, text) add("time", text .. "@" .. t) end,
        {args = "t", order = "time"})
  el.on("HEAP_ALLOCATED", function(t, cap, capset, b) add("time", b .. "@" .. t) end,
        {args = "t", order = "time"})
  el.on("USER_MARKER", function(ev, text) add("stream", text) end)
  el.on("HEAP_ALLOCATED", function(t, cap, capset, b)
    add("args", (cap or -1) .. ":" .. b .. ":" .. tostring(el.event().t == t))
  end, {args = "t"})
  el.on_end(function()
    for _, k in ipairs({"time", "stream", "args"}) do
      el.host_log("warn", k .. "=" .. table.concat(seen[k], ","))
    end
    local s = el.stats()
    el.host_log("warn", string.format("late=%d forced=%d held=%d",
      s.order_late, s.order_forced, s.order_held))
  end)
]]

-- The init block GHC writes first: both capabilities exist from t = 0, so
-- the watermark waits for each from the start (docs/lua-api.md §6).
local INIT = {{"CAP_CREATE", 0, 0}, {"CAP_CREATE", 0, 1}}

local function report(h)
  local r = {}
  for _, m in ipairs(h:messages()) do
    local k, v = m.text:match("([%w]+)=(.*)$")
    if k == "forced" or k == "held" then k = nil end
    if m.text:match("^late=") then r.counters = m.text elseif k then r[k] = v end
  end
  return r
end

local function run(blocks, opts)
  opts = opts or {}
  local h = el_spec.host{code = opts.code or RECORDER, horizon_ns = opts.horizon_ns,
                         fail_fast = opts.fail_fast}
  assert(h:feed(W.eventlog(blocks)))
  assert(h:finish())
  return report(h)
end

describe("time order", function()
  it("merges the capabilities' blocks by time; stream handlers keep stream order", function()
    local r = run{
      INIT,
      {cap = 0, {"USER_MARKER", 100, "a"}, {"HEAP_ALLOCATED", 300, 0, 30}},
      {cap = 1, {"HEAP_ALLOCATED", 50, 0, 5}, {"USER_MARKER", 200, "b"}},
      {cap = 0, {"USER_MARKER", 400, "c"}},
      {cap = 1, {"HEAP_ALLOCATED", 350, 0, 35}},
    }
    assert.are.equal("5@50,a@100,b@200,30@300,35@350,c@400", r.time)
    assert.are.equal("a,b,c", r.stream)
    assert.are.equal("0:30:true,1:5:true,1:35:true", r.args)
    assert.are.equal("late=0 forced=0 held=0", r.counters)
  end)

  it("breaks ties between capabilities by arrival", function()
    local r = run{
      {cap = 1, {"USER_MARKER", 100, "first"}},
      {cap = 0, {"USER_MARKER", 100, "second"}},
    }
    assert.are.equal("first@100,second@100", r.time)
  end)

  -- cap 0's blocks run far ahead of cap 1's (a GHC 9.0 capability writes
  -- a block only when its buffer fills): in a recorded file cap 1 is waited
  -- for however long its silence in eventlog time (docs/lua-api.md §6).
  local AHEAD = {
    {cap = 0, {"USER_MARKER", 100, "a"}},
    {cap = 1, {"USER_MARKER", 150, "b"}},
    {cap = 0, {"USER_MARKER", 5000, "c"}, {"USER_MARKER", 9000, "d"}},
    {cap = 0, {"USER_MARKER", 20000, "e"}},
    {cap = 1, {"USER_MARKER", 300, "late"}},
  }

  it("waits in a recorded file for a capability silent past the horizon", function()
    local r = run(AHEAD, {horizon_ns = 1000})
    assert.are.equal("a@100,b@150,late@300,c@5000,d@9000,e@20000", r.time)
    assert.are.equal("late=0 forced=0 held=0", r.counters)
  end)

  it("live: dispatches an event of a capability silent past the horizon in wall time at once and counts it late", function()
    -- cap 1's blocks arrived 120 s ago, past the 60 s horizon; cap 0's
    -- arrive now: the watermark follows cap 0 alone (up to e's block,
    -- which begins at 20000), so c, d and e are released before cap 1's
    -- block comes, and its event is behind them.
    local h = el_spec.host{code = RECORDER, horizon_ns = 60000000000}
    local now = os.time() * 1000000000
    h:received(now - 120000000000, true)
    assert(h:feed(W.header() .. W.block(AHEAD[1]) .. W.block(AHEAD[2])))
    h:received(now, true)
    assert(h:feed(W.block(AHEAD[3]) .. W.block(AHEAD[4])))
    assert(h:feed(W.block(AHEAD[5]) .. W.DATA_END))
    assert(h:finish())
    local r = report(h)
    assert.are.equal("a@100,b@150,c@5000,d@9000,e@20000,late@300", r.time)
    assert.are.equal("late=1 forced=0 held=0", r.counters)
  end)

  it("counts an event far behind its own capability as late, and loses nothing", function()
    -- cap 1 holds the watermark at 1, so cap 0's events are held
    local blk = {cap = 0}
    for i = 1, 1100 do blk[#blk + 1] = {"HEAP_ALLOCATED", 1000 + i, 0, i} end
    blk[#blk + 1] = {"HEAP_ALLOCATED", 10, 0, 0}  -- 1100 places back
    local r = run({INIT, {cap = 1, {"USER_MARKER", 1, "s"}}, blk,
                   {cap = 1, {"USER_MARKER", 5000, "end"}}}, {code = [[
      local el = require("eventlog_live")
      el.order("time")
      local seen = {}
      el.on("USER_MARKER", function(ev, text) seen[#seen + 1] = text .. "@" .. ev.t end)
      el.on("HEAP_ALLOCATED", function(ev, capset, b) seen[#seen + 1] = b .. "@" .. ev.t end)
      el.on_end(function()
        local n = #seen
        el.host_log("warn", string.format("time=%d:%s,%s,%s,%s...%s,%s", n,
          seen[1], seen[2], seen[3], seen[4], seen[n - 1], seen[n]))
        local s = el.stats()
        el.host_log("warn", string.format("late=%d forced=%d held=%d",
          s.order_late, s.order_forced, s.order_held))
      end)
    ]]})
    assert.are.equal("1103:s@1,0@10,1@1001,2@1002...1100@2100,end@5000", r.time)
    assert.are.equal("late=1 forced=0 held=0", r.counters)
  end)

  it("el.order sets the default for later el.on calls, and a handler error is counted",
     function()
    local r = run({
      INIT,
      {cap = 0, {"USER_MARKER", 200, "x"}},
      {cap = 1, {"USER_MARKER", 100, "y"}},
    }, {code = [[
      local el = require("eventlog_live")
      local seen = {}
      assert(el.order("time") == "stream")
      assert(el.order() == "time")
      el.on("USER_MARKER", function(ev, text)
        if text == "y" then error("boom") end
        seen[#seen + 1] = text .. "@" .. ev.t
      end)
      el.on("USER_MARKER", function(ev, text) seen[#seen + 1] = "2:" .. text end)
      el.on_end(function()
        el.host_log("warn", "time=" .. table.concat(seen, ","))
        el.host_log("warn", "late=" .. el.stats().handler_errors)
      end)
    ]], fail_fast = false})
    assert.are.equal("2:y,x@200,2:x", r.time)
    assert.are.equal("late=1", r.counters)
  end)
  it("calls a time-order \"*\" handler and a type's once per event, and el.off from a handler stops it",
     function()
    -- time order: y@100 (cap 1), x@200, the allocation at 300, z@400;
    -- the USER_MARKER handler removes itself at x, so z reaches "*" only
    local r = run({
      INIT,
      {cap = 0, {"USER_MARKER", 200, "x"}, {"HEAP_ALLOCATED", 300, 0, 7}},
      {cap = 1, {"USER_MARKER", 100, "y"}},
      {cap = 0, {"USER_MARKER", 400, "z"}},
    }, {code = [[
      local el = require("eventlog_live")
      local seen = {}
      local id
      id = el.on("USER_MARKER", function(t, cap, text)
        seen[#seen + 1] = "m:" .. text
        if text == "x" then el.off(id) end
      end, {order = "time", args = "t"})
      el.on("*", function(ev)
        if ev.type ~= "CAP_CREATE" and ev.type ~= "BLOCK_MARKER" then
          seen[#seen + 1] = ev.type .. "@" .. ev.t
        end
      end, {order = "time"})
      el.on_end(function()
        el.host_log("warn", "time=" .. table.concat(seen, ","))
        el.host_log("warn", "late=" .. el.stats().dispatched)
      end)
    ]]})
    assert.are.equal("m:y,USER_MARKER@100,m:x,USER_MARKER@200,"
      .. "HEAP_ALLOCATED@300,USER_MARKER@400", r.time)
  end)
  -- Integer-only events released in time order are replayed in runs of up
  -- to 256 (src/host/lua_order.c): these cross that size and expect what
  -- an event-at-a-time dispatch gives, written out by a loop over the
  -- times. Cap 0 holds the even times 2..600, cap 1 the odd ones 3..601,
  -- each in one block, so time order alternates between them. Handlers log
  -- each call; handler A raises at 150 and adds a time-order "*" handler
  -- (S) while 301 is dispatched.
  local function alternating()
    local c0, c1 = {cap = 0}, {cap = 1}
    for i = 1, 300 do
      c0[#c0 + 1] = {"HEAP_ALLOCATED", 2 * i, 0, 2 * i}
      c1[#c1 + 1] = {"HEAP_ALLOCATED", 2 * i + 1, 0, 2 * i + 1}
    end
    return W.eventlog{INIT, c0, c1, {cap = 0, {"USER_MARKER", 10000, "x"}},
                      {cap = 1, {"USER_MARKER", 10001, "y"}}}
  end
  local RUNS = [[
    local el = require("eventlog_live")
    el.on("HEAP_ALLOCATED", function(t, cap, capset, bytes)
      el.host_log("warn", "A" .. bytes)
      if bytes == 301 then
        el.on("*", function(ev)
          if ev.type == "HEAP_ALLOCATED" then el.host_log("warn", "S" .. ev.t) end
        end, {order = "time"})
      end
      if bytes == 150 then error("boom") end
    end, {order = "time", args = "t"})
    el.on("HEAP_ALLOCATED", function(ev, capset, bytes)
      el.host_log("warn", "B" .. ev.t .. ":" .. ev.cap .. ":" .. bytes)
    end, {order = "time"})
  ]]
  local function calls(h)
    local r = {}
    for _, m in ipairs(h:messages()) do
      if m.level == "warn" and m.text:match("^[ABS]%d") then r[#r + 1] = m.text end
    end
    return table.concat(r, ",")
  end

  it("replays integer events in runs: time order, a handler error, a \"*\" handler added midway", function()
    local h = el_spec.host{code = RUNS, fail_fast = false}
    assert(h:feed(alternating()))
    assert(h:finish())
    local want = {}
    for t = 2, 601 do
      want[#want + 1] = "A" .. t
      want[#want + 1] = "B" .. t .. ":" .. (t % 2) .. ":" .. t -- after A's error too
      if t >= 301 then want[#want + 1] = "S" .. t end
    end
    assert.are.equal(table.concat(want, ","), calls(h))
    assert.are.equal(1, h:stats().handler_errors)
  end)

  it("replays nothing after a handler error stops the host (fail_fast)", function()
    local h = el_spec.host{code = RUNS, fail_fast = true}
    local ok, err = pcall(h.feed, h, alternating())
    assert.is_false(ok)
    assert.truthy(tostring(err):match("boom"))
    local want = {}
    for t = 2, 150 do
      want[#want + 1] = "A" .. t
      if t < 150 then want[#want + 1] = "B" .. t .. ":" .. (t % 2) .. ":" .. t end
    end
    assert.are.equal(table.concat(want, ","), calls(h))
  end)
end)
