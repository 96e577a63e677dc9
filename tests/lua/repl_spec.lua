-- busted specs for lua/eventlog_live/repl.lua (the REPL helpers): in pure
-- Lua with a stand-in host module and hand-made events (expected values
-- are hand computations), then through the real binary with the REPL's
-- input piped (expected values counted in the ghc-events references).
local src = os.getenv("EL_SOURCE_DIR") or "."
package.path = src .. "/lua/?.lua;" .. package.path

-- A stand-in for the host's eventlog_live module and the C event store.
local function fake_host()
  local el = {handlers = {}, session = {caps = {0, 1}}, config = {}}
  function el.on(name, fn)
    el.handlers[name] = el.handlers[name] or {}
    table.insert(el.handlers[name], fn)
  end
  -- The trackers list what el._fake.threads / el._fake.gc hold (a test
  -- sets them); el._fake.end_session() runs the on_session_end hooks.
  local fake = {threads = {}, gc = {count = 0}, hooks = {}}
  el._fake = fake
  function el.threads()
    return {list = function()
      local l = {}
      for i, t in ipairs(fake.threads) do
        l[i] = {}
        for k, v in pairs(t) do l[i][k] = v end
      end
      return l
    end}
  end
  function el.gc(opts) el.gc_span = opts.on_span
    return {stats = function() return fake.gc end} end
  function el.on_session_end(fn) table.insert(fake.hooks, fn) end
  function fake.end_session()
    for _, fn in ipairs(fake.hooks) do fn(el.session) end
  end
  function el.type_info(name)
    local ids = {[1] = "RUN_THREAD", [58] = "USER_MARKER"}
    name = ids[name] or name
    local t = {RUN_THREAD = {"thread"}, USER_MARKER = {"marker"}}
    return t[name] and {name = name, fields = t[name]} or nil
  end
  function el.fire(name, ev, ...)
    for _, fn in ipairs(el.handlers[name] or {}) do fn(ev, ...) end
  end
  local store = {queries = {}}
  function store.stats()
    return {events = 7, stored = 5, dropped = 2, sessions = 1, min_t = 100,
            max_t = 1100, max_bytes = 1024, first_seq = 3}
  end
  function store.counts() return {RUN_THREAD = 4, USER_MARKER = 3} end
  function store.query(q)
    table.insert(store.queries, q)
    return {{seq = 3, t = 300, type = "RUN_THREAD", cap = 0, thread = 7}}, 9
  end
  return el, store
end

local function fresh()
  for _, m in ipairs({"eventlog_live", "eventlog_live.repl"}) do
    package.loaded[m] = nil
  end
  local el, store = fake_host()
  package.loaded["eventlog_live"] = el
  local repl = require("eventlog_live.repl")
  repl.install({store = store, source = "test.eventlog"})
  return repl, el, store
end

-- Run fn with io.write captured; returns what was written. With err,
-- also what went to stderr (errors: repl.err), as a second result.
local function capture(fn)
  local out, errs, old, olderr = {}, {}, io.write, io.stderr
  io.write = function(...)
    for _, s in ipairs({...}) do out[#out + 1] = tostring(s) end
  end
  io.stderr = {write = function(self, ...)
    for _, s in ipairs({...}) do errs[#errs + 1] = tostring(s) end
    return self
  end}
  local ok, err = pcall(fn)
  io.write, io.stderr = old, olderr
  assert(ok, err)
  return table.concat(out), table.concat(errs)
end

describe("eventlog_live.repl", function()
  it("parses times in ns and as durations", function()
    local repl = fresh()
    assert.are.equal(5, repl.time(5))
    assert.are.equal(1.5e9, repl.time("1.5s"))
    assert.are.equal(2e8, repl.time("200ms"))
    assert.are.equal(3000, repl.time("3us"))
    assert.are.equal(42, repl.time("42"))
    assert.has_error(function() repl.time("soon") end)
  end)

  it("summarises from the store and the session", function()
    local repl, el = fresh()
    el.session.rts_version = "GHC-9.0.2 rts_thr_l"
    el.session.args = {"./a", "1"}
    el.session.pid = 42
    local s = repl.summary()
    assert.are.equal(1000, s.duration_ns)
    assert.are.equal(7, s.events)
    assert.are.same({0, 1}, s.caps)
    assert.are.same({type = "RUN_THREAD", count = 4}, s.counts[1])
    local text = tostring(s)
    assert.truthy(text:find("duration +1%.0 us %(1000 ns, from 100 to 1100 ns%)"))
    assert.truthy(text:find("capabilities +2: 0, 1"))
    assert.truthy(text:find("program args +%./a 1"))
    assert.truthy(text:find("RUN_THREAD +4 +57%.1%%"))
  end)

  it("passes filters to the store, upper-casing types and parsing times", function()
    local repl, _, store = fresh()
    local l = repl.events{type = "run_thread", cap = 0, from = "1s", to = 2e9}
    local q = store.queries[#store.queries]
    assert.are.same({type = "RUN_THREAD", cap = 0, from = 1e9, to = 2e9,
                     limit = 100000}, q)
    assert.are.equal(9, l.matched)
    local text = tostring(l)
    assert.truthy(text:find("RUN_THREAD +thread=7"))
    assert.truthy(text:find("1 events %(of 9 matching%)"))
    assert.truthy(text:find("2 older events were dropped"))
    repl.tail(4)
    assert.are.same({last = 4}, store.queries[#store.queries])
    repl.head()
    assert.are.same({limit = 10}, store.queries[#store.queries])
    -- a misspelt filter or a count below 1 is an error, not everything
    local ok, err = pcall(repl.events, {tyep = "USER_MARKER"})
    assert.is_false(ok)
    assert.truthy(err:find("events: unknown filter 'tyep' (use type, cap, ",
                           1, true))
    for _, f in ipairs({{limit = -1}, {last = 0}, {last = 1.5}}) do
      ok, err = pcall(repl.events, f)
      assert.is_false(ok)
      assert.truthy(err:find("expected a whole number from 1 to 2^63-1 (math.maxinteger)", 1, true))
    end
  end)

  it("keeps heap censuses and finds the nearest", function()
    local repl, el = fresh()
    el.fire("HEAP_PROF_SAMPLE_BEGIN", {t = 100}, 0)
    el.fire("HEAP_PROF_SAMPLE_STRING", {t = 100}, 0, 300, "ARR_WORDS")
    el.fire("HEAP_PROF_SAMPLE_STRING", {t = 100}, 0, 100, "STACK")
    el.fire("HEAP_PROF_SAMPLE_END", {t = 101}, 0)
    el.fire("HEAP_PROF_SAMPLE_BEGIN", {t = 1000}, 1)
    el.fire("HEAP_PROF_SAMPLE_STRING", {t = 1000}, 0, 50, "STACK")
    el.fire("HEAP_PROF_SAMPLE_END", {t = 1001}, 1)
    el.fire("HEAP_PROF_SAMPLE_STRING", {t = 1002}, 0, 999, "late")
    local c = repl.census(400)
    assert.are.equal(100, c.t)
    assert.are.equal(400, c.total)
    assert.are.same({label = "ARR_WORDS", bytes = 300}, c.samples[1])
    assert.truthy(tostring(c):find("ARR_WORDS +300 +300 B +75%.0%%"))
    assert.are.equal(1000, repl.census(700).t)
    assert.are.equal(1000, repl.census().t)
    assert.are.equal(50, repl.census().total)  -- the late sample is outside
    -- far beyond the run: the last census (float distances there are all
    -- equal); before it: the first; not a number: an error
    assert.are.equal(1000, repl.census(1e30).t)
    assert.are.equal(1000, repl.census("1e20s").t)
    assert.are.equal(100, repl.census(-1e30).t)
    assert.has_error(function() repl.census(1 / 0) end,
      "census: the time must be a finite number, got inf")
    assert.has_error(function() repl.census(0 / 0) end)
    assert.has_error(function() repl.census(nil, 0) end,
      "census: expected a whole number from 1 to 2^63-1 (math.maxinteger), got 0")
  end)

  -- Each run of the program starts again at time 0: a census of session 1
  -- at 900 ns is not "the last" after session 2's at 500 ns, nor the
  -- nearest to 850 in session 2 (h56: census() compared times across
  -- sessions). By hand: session 1 has censuses at 100 and 900, session 2
  -- at 500.
  it("finds censuses within one session", function()
    local repl, el = fresh()
    local function census(t, bytes)
      el.fire("HEAP_PROF_SAMPLE_BEGIN", {t = t}, 0)
      el.fire("HEAP_PROF_SAMPLE_STRING", {t = t}, 0, bytes, "STACK")
      el.fire("HEAP_PROF_SAMPLE_END", {t = t + 1}, 0)
    end
    el.session.number = 1
    census(100, 10)
    census(900, 90)
    el.session.number = 2
    census(500, 50)
    local c = repl.census()
    assert.are.same({2, 500, 50}, {c.session, c.t, c.total})
    assert.are.equal(500, repl.census(850).t)
    assert.truthy(tostring(c):find("census at 500 ns %(.- of session 2%)"))
    assert.are.same({1, 900}, {repl.census(850, 5, 1).session,
                               repl.census(850, 5, 1).t})
    assert.are.equal(900, repl.census(nil, 5, 1).t)
    assert.are.equal(100, repl.census(200, 5, 1).t)
    assert.are.equal("no heap census seen in session 3\n",
                     tostring(repl.census(nil, 5, 3)))
    assert.has_error(function() repl.census(nil, 5, 1.5) end,
      "census: the session must be a whole number, got 1.5")
  end)

  it("rejects counts that are not whole numbers from 1 to 2^63-1", function()
    local repl, _, store = fresh()
    for _, f in ipairs({"head", "tail", "heap"}) do
      assert.has_error(function() repl[f](-3) end,
        f .. ": expected a whole number from 1 to 2^63-1 (math.maxinteger), got -3")
      assert.has_error(function() repl[f](0) end)
      assert.has_error(function() repl[f](2.5) end)
      -- whole but beyond the bound: the message names the bound, not ">= 1"
      assert.has_error(function() repl[f](1e20) end,
        f .. ": expected a whole number from 1 to 2^63-1 (math.maxinteger), got 1e+20")
    end
    -- a whole float within the bound is taken, as the integer
    repl.head(2^53)
    assert.are.equal(9007199254740992, store.queries[#store.queries].limit)
    assert.are.equal("integer", math.type(store.queries[#store.queries].limit))
    repl.tail(2^62)
    assert.are.equal(1 << 62, store.queries[#store.queries].last)
  end)

  it("refuses a repl.max_rows that is not a whole number >= 1", function()
    local repl = fresh()
    for _, v in ipairs({-1, 0, 2.5, "10", false}) do
      local ok, err = pcall(function() repl.max_rows = v end)
      assert.is_false(ok)
      assert.truthy(err:find("repl.max_rows: expected a whole number from 1 to 2^63-1 (math.maxinteger), got "
        .. tostring(v), 1, true), err)
      assert.are.equal(200, repl.max_rows)
    end
    local ok = pcall(function() repl.max_rows = nil end)
    assert.is_false(ok)
    -- 3 rows under max_rows = 2: 2 printed, "1 more" (a hand count)
    repl.max_rows = 2.0
    assert.are.equal(2, repl.max_rows)
    assert.are.equal("integer", math.type(repl.max_rows))
    local ev = {seq = 1, t = 1, type = "RUN_THREAD", cap = 0, thread = 7}
    local l = repl.events{}
    l[1], l[2], l[3], l.matched = ev, ev, ev, 3
    local text = tostring(l)
    assert.truthy(text:find("... 1 more rows not shown (repl.max_rows = 2;",
                            1, true), text)
    local _, shown = text:gsub("RUN_THREAD", "")
    assert.are.equal(2, shown)
    -- other fields of the module are still plain fields
    repl.extra = 5
    assert.are.equal(5, rawget(repl, "extra"))
  end)

  it("shows heap(n) as exactly n rows, the first and last included", function()
    local repl, el = fresh()
    for i = 1, 100 do el.fire("HEAP_SIZE", {t = i * 10}, 0, i * 1000) end
    -- the "time ns" column of the table's rows
    local function times(h)
      local out = {}
      for line in tostring(h):gmatch("[^\n]+") do
        local t = line:match("^%s*(%d+)%s+%S")
        if t and not line:find("points") then out[#out + 1] = tonumber(t) end
      end
      return out
    end
    for _, n in ipairs({1, 2, 5, 7, 25, 99, 100, 150}) do
      local h = repl.heap(n)
      local rows = times(h)
      assert.are.equal(math.min(n, 100), #rows)
      assert.truthy(tostring(h):find(string.format("100 points %%(showing %d%%)",
                                                   math.min(n, 100))))
      assert.are.equal(1000, rows[#rows])
      if n >= 2 then assert.are.equal(10, rows[1]) end
    end
    -- 5 of 100 points (t = 10..1000): indexes 1, 26 (25.75 rounded),
    -- 51 (50.5), 75 (75.25), 100
    assert.are.same({10, 260, 510, 750, 1000}, times(repl.heap(5)))
  end)

  it("merges heap series on time", function()
    local repl, el = fresh()
    el.fire("HEAP_SIZE", {t = 10}, 0, 4096)
    el.fire("HEAP_LIVE", {t = 10}, 0, 1000)
    el.fire("HEAP_SIZE", {t = 20}, 0, 8192)
    local h = repl.heap()
    assert.are.equal(2, #h.rows)
    assert.are.same({session = 0, t = 10, heap_size = 4096, heap_live = 1000},
                    h.rows[1])
    assert.are.same({session = 0, t = 20, heap_size = 8192, heap_live = 1000},
                    h.rows[2])
    assert.are.equal(8192, h.max_heap_size)
  end)

  it("keeps heap series of different sessions apart", function()
    local repl, el = fresh()
    -- By hand: session 1 (a run) has heap 4096 at 10, live 1000 at 20,
    -- heap 8192 at 30; session 2 (the next run, times from 0 again) heap
    -- 2048 at 5, no live value yet: not session 1's, and after it.
    el.session.number = 1
    el.fire("HEAP_SIZE", {t = 10}, 0, 4096)
    el.fire("HEAP_LIVE", {t = 20}, 0, 1000)
    el.fire("HEAP_SIZE", {t = 30}, 0, 8192)
    el.session.number = 2
    el.fire("HEAP_SIZE", {t = 5}, 0, 2048)
    local h = repl.heap()
    assert.are.same({
      {session = 1, t = 10, heap_size = 4096},
      {session = 1, t = 20, heap_size = 4096, heap_live = 1000},
      {session = 1, t = 30, heap_size = 8192, heap_live = 1000},
      {session = 2, t = 5, heap_size = 2048},
    }, h.rows)
    local text = tostring(h)
    assert.truthy(text:find("session"), text)
    assert.truthy(text:find("4 points"), text)
  end)

  it("computes GC pause percentiles per capability and overall", function()
    local repl, el = fresh()
    for i, d in ipairs({10, 20, 30, 40}) do el.gc_span(0, i * 100, i * 100 + d) end
    el.gc_span(1, 0, 100)
    local g = repl.gc()
    assert.are.same({cap = 0, count = 4, total_ns = 100, mean_ns = 25,
                     p50_ns = 20, p90_ns = 40, p99_ns = 40, max_ns = 40},
                    g.rows[1])
    assert.are.equal("all", g.rows[3].cap)
    assert.are.equal(5, g.rows[3].count)
    assert.are.equal(100, g.rows[3].max_ns)
  end)

  it("lists the threads of every session, each at its session's end", function()
    local repl, el = fresh()
    -- By hand: the tracker starts afresh with each session (the host's);
    -- session 1 ends with threads 1 and 2, session 2 (thread 1 again,
    -- another thread of another run) goes on: 3 rows, by session.
    el.session = {number = 1}
    el._fake.threads = {{thread = 1, state = "finished", runs = 3,
                       running_ns = 100, blocked_ns = 0, blocked = {}},
                      {thread = 2, state = "finished", runs = 1,
                       running_ns = 50, blocked_ns = 0, blocked = {}}}
    el._fake.end_session()
    el.session = {number = 2}
    el._fake.threads = {{thread = 1, state = "running", runs = 7,
                       running_ns = 700, blocked_ns = 0, blocked = {}}}
    local t = repl.threads()
    assert.are.same({{1, 1, 3, 100}, {1, 2, 1, 50}, {2, 1, 7, 700}},
      {{t[1].session, t[1].thread, t[1].runs, t[1].running_ns},
       {t[2].session, t[2].thread, t[2].runs, t[2].running_ns},
       {t[3].session, t[3].thread, t[3].runs, t[3].running_ns}})
    local text = tostring(t)
    assert.truthy(text:find("^ *session +thread"), text)
    assert.truthy(text:find("\n3 threads %(session 1: 2, session 2: 1%)\n$"),
                  text)
    -- Session 2 ends: its threads are listed once, not again from the
    -- tracker (which keeps them until the next session's header).
    el._fake.end_session()
    assert.are.equal(3, #repl.threads())
    -- One session: no session column, the count alone.
    repl, el = fresh()
    el.session = {number = 1}
    el._fake.threads = {{thread = 4, state = "new", runs = 0, running_ns = 0,
                       blocked_ns = 0, blocked = {}}}
    text = tostring(repl.threads())
    assert.is_nil(text:find("session"), text)
    assert.truthy(text:find("\n1 threads\n$"), text)
  end)

  it("sums the GC helper's totals over the sessions", function()
    local repl, el = fresh()
    -- By hand: session 1: 2 pauses, 30 ns, max 20 on cap 0; session 2
    -- (the helper afresh): 1 pause of 50 ns on cap 0, 1 of 5 on cap 1.
    el.session = {number = 1}
    el._fake.gc = {count = 2, total_ns = 30, max_ns = 20,
                   caps = {[0] = {count = 2, total_ns = 30, max_ns = 20}}}
    el._fake.end_session()
    el.session = {number = 2}
    el._fake.gc = {count = 2, total_ns = 55, max_ns = 50,
                   caps = {[0] = {count = 1, total_ns = 50, max_ns = 50},
                           [1] = {count = 1, total_ns = 5, max_ns = 5}}}
    assert.are.same({count = 4, total_ns = 85, max_ns = 50,
                     caps = {[0] = {count = 3, total_ns = 80, max_ns = 50},
                             [1] = {count = 1, total_ns = 5, max_ns = 5}}},
                    repl.gc().stats)
    el._fake.end_session()
    assert.are.equal(4, repl.gc().stats.count)
  end)

  it("lists markers in time order with the time to the next", function()
    local repl, el = fresh()
    el.fire("USER_MARKER", {t = 500, cap = 1}, "b")
    el.fire("USER_MARKER", {t = 200, cap = 0}, "a")
    el.fire("USER_MSG", {t = 300, cap = 0}, "hello")
    local m = repl.markers()
    assert.are.same({"a", "b"}, {m[1].text, m[2].text})
    assert.truthy(tostring(m):find("a +300 ns"))
    assert.are.equal("hello", repl.messages()[1].text)
  end)

  it("keeps markers of different sessions apart", function()
    -- h43: two runs' markers were merged into one time order ("to next"
    -- between runs). By hand: session 1 has a at 200 and b at 500;
    -- session 2 (another run, times from 0 again) c at 100.
    local repl, el = fresh()
    el.session.number = 1
    el.fire("USER_MARKER", {t = 500, cap = 1}, "b")
    el.fire("USER_MARKER", {t = 200, cap = 0}, "a")
    el.session.number = 2
    el.fire("USER_MARKER", {t = 100, cap = 0}, "c")
    local m = repl.markers()
    assert.are.same({"a", "b", "c"}, {m[1].text, m[2].text, m[3].text})
    local text = tostring(m)
    assert.truthy(text:find("session"))
    assert.truthy(text:find("1 +200 +0 +a +300 ns"))
    assert.truthy(text:find("1 +500 +1 +b *\n"))
    assert.truthy(text:find("2 +100 +0 +c *\n"))
  end)

  it("counts what its bounds drop", function()
    local repl, el = fresh()
    repl.limits.markers = 2
    for i = 1, 5 do el.fire("USER_MARKER", {t = i}, "m") end
    assert.are.equal(2, #repl.markers())
    assert.are.equal(3, repl.dropped.markers)
  end)

  it("completes globals, fields and commands", function()
    local repl = fresh()
    assert.are.same({":load "}, repl.complete(":lo"))
    assert.are.same({":help"}, repl.complete(":h"))
    assert.are.same({"summary"}, repl.complete("summ"))
    assert.are.same({"el.on", "el.on_session_end"}, repl.complete("el.o"))
    assert.are.same({"el.threads", "el.type_info"}, repl.complete("el.t"))
    assert.are.same({"string.format"}, repl.complete("string.form"))
    assert.are.same({"string:format"}, repl.complete("string:form"))
    -- h66: a string's methods, through its metatable's __index (string)
    capture(function() repl.eval("s_spec = 'x'") end)
    assert.are.same({"s_spec:upper"}, repl.complete("s_spec:up"))
    assert.are.same({"s_spec:byte"}, repl.complete("s_spec:by"))
    capture(function() repl.eval("s_spec = nil") end)
    -- h67: a NaN (no table key) and a table that is its own __index
    -- (an endless chain) complete to nothing, without an error or a hang
    capture(function() repl.eval("n_spec = 0/0") end)
    assert.are.same({}, repl.complete("n_spec:x"))
    capture(function()
      repl.eval("c_spec = {} c_spec.__index = c_spec setmetatable(c_spec, c_spec)")
    end)
    assert.are.same({}, repl.complete("c_spec.x.y"))
    assert.are.same({"c_spec.__index"}, repl.complete("c_spec.__in"))
    capture(function() repl.eval("n_spec, c_spec = nil, nil") end)
    assert.are.same({}, repl.complete("nosuch.x"))
    -- repl.max_rows lives behind the module's __index table
    assert.are.same({"repl.max_rows"}, repl.complete("repl.max_r"))
    assert.are.same({"while"}, repl.complete("whil"))
    assert.are.same({"USER_MARKER"}, repl.complete("USER_M"))
    assert.are.same({"RUN_THREAD"}, repl.complete("RUN", "events{type='RUN", 13))
    local none, files = repl.complete("ex", ":load ex", 6)
    assert.is_nil(none)
    assert.are.equal("files", files)
  end)

  it("evaluates expressions and statements, and reports errors", function()
    local repl = fresh()
    local st
    assert.are.equal("2\n", capture(function() st = repl.eval("1 + 1") end))
    assert.are.equal("ok", st)
    assert.are.equal("", capture(function() st = repl.eval("x_spec = 5") end))
    assert.are.equal(5, x_spec)
    assert.are.equal("1\t{2, 3, k = \"v\"}\n",
      capture(function() repl.eval("1, {2, 3, k = 'v'}") end))
    local out, err = capture(function() st = repl.eval("error('boom')") end)
    assert.are.equal("error", st)
    assert.are.equal("", out)
    assert.truthy(err:find("^stdin:1: boom\nstack traceback:"))
    assert.is_nil(err:find("xpcall"))
    assert.are.equal("incomplete", repl.eval("for i = 1, 2 do"))
    assert.are.equal("incomplete", repl.eval("1 +"))
    out = capture(function() st = repl.eval("1 )") end)
    assert.are.equal("error", st)
    assert.are.equal("quit", repl.eval(":quit"))
    -- A command after unfinished lines: their syntax error, then the
    -- command (Lua's own message for "x = " at its end); the input failed.
    out, err = capture(function() st = repl.eval("x = \n:quit") end)
    assert.are.equal("error_quit", st)
    assert.are.equal("stdin:1: unexpected symbol near <eof>\n", err)
    out, err = capture(function() st = repl.eval("for i = 1, 2 do\n  :help") end)
    assert.are.equal("error", st)
    assert.truthy(err:find("^stdin:1: 'end' expected near <eof>\n"))
    assert.truthy(out:find("heap"))
    out, err = capture(function() st = repl.eval(":frob") end)
    assert.are.equal("error", st)
    assert.truthy(err:find("unknown command :frob"))
    x_spec = nil
  end)

  -- A helper's error for its caller (error(msg, 2)) names the input's
  -- line: an expression runs as an argument, not as `return f(x)`, a
  -- tail call whose frame is gone (h69: "head: expected ..." with no
  -- "stdin:1:"). Every value still comes back, none when there is none.
  it("names the input's line in a helper's error, and keeps all values", function()
    local repl = fresh()
    local st
    local out, err = capture(function() st = repl.eval("head('x')") end)
    assert.are.equal("error", st)
    assert.are.equal("", out)
    assert.truthy(err:find("^stdin:1: head: expected a whole number"))
    assert.are.equal("1\tnil\t3\n", capture(function()
      repl.eval("(function() return 1, nil, 3 end)()") end))
    assert.are.equal("", capture(function()
      st = repl.eval("(function() end)()") end))
    assert.are.equal("ok", st)
    assert.are.equal("7\n", capture(function() repl.eval("7; -- a comment") end))
    -- the input's own varargs, none, as in `lua -i`; no name added (h72)
    assert.are.equal("0\n", capture(function() repl.eval("select('#', ...)") end))
    assert.are.equal("", capture(function() repl.eval("...") end))
    repl.eval("__pack = 5")
    assert.are.equal("6\n", capture(function() repl.eval("__pack + 1") end))
    __pack = nil
  end)
end)

local bin = os.getenv("EL_BIN")
local logs = os.getenv("EL_EVENTLOGS") or (src .. "/tests/data/eventlogs")
local describe_bin = bin and describe or pending

-- Run the REPL with `input` piped as its commands (not a terminal).
-- The repl on args with input piped in: stdout and stderr together, the
-- exit status, and stderr alone.
local function repl_run(args, input)
  local f, e = os.tmpname(), os.tmpname()
  local h = assert(io.open(f, "w"))
  h:write(input)
  h:close()
  local p = io.popen(string.format("%q repl --no-history %s < %q 2>%q", bin,
                                   args, f, e))
  local out = p:read("a")
  local ok, _, code = p:close()
  h = assert(io.open(e))
  local err = h:read("a")
  h:close()
  os.remove(f)
  os.remove(e)
  return out .. err, ok and 0 or code, err
end

local function ref_events(name)
  local n, on = 0, false
  for line in io.lines(logs .. "/" .. name .. ".reference") do
    if line == "Events:" then on = true
    elseif on and line:match("^%d+: ") then n = n + 1 end
  end
  return n
end

describe_bin("eventlog-live repl (piped input)", function()
  it("drops the oldest events beyond --store-mb and says so", function()
    local n = ref_events("ghc-9.0/threads.eventlog")
    local out, code = repl_run("--store-mb 1 " .. logs .. "/ghc-9.0/threads.eventlog",
      "st = require('eventlog_live.repl_store').stats()\n" ..
      "st.events, st.stored + st.dropped, st.dropped > 0, st.bytes <= st.max_bytes\n" ..
      "head(1)[1].seq == st.dropped + 1, tail(1)[1].seq == st.events\n" ..
      "tostring(head(1)):match('older events were dropped') ~= nil\n")
    assert.are.equal(0, code)
    assert.truthy(out:find(string.format("\n%d\t%d\ttrue\ttrue\n", n, n), 1, true), out)
    assert.truthy(out:find("\ntrue\ttrue\n", 1, true), out)
    assert.truthy(out:find("\ntrue\n", 1, true), out)
  end)

  it("summarises each session with its own identity and counts", function()
    -- h60: with several sessions summary() showed the last session's pid,
    -- RTS and arguments next to every session's counts. Two eventlogs one
    -- after the other (two sessions); pids, event counts and RUN_THREAD
    -- counts from each file's ghc-events reference.
    local function ref(name, pat)
      local n, v = 0, nil
      for line in io.lines(logs .. "/ghc-9.0/" .. name .. ".reference") do
        if line:find(": running thread ", 1, true) then n = n + 1 end
        v = v or line:match("capset 0: pid (%d+)$")
      end
      return pat == "pid" and tonumber(v) or n
    end
    local two = os.tmpname()
    assert(os.execute(string.format("cat %q %q > %q",
      logs .. "/ghc-9.0/threads.eventlog", logs .. "/ghc-9.0/heapy-hT.eventlog",
      two)))
    local out, code = repl_run(two,
      "s = summary()\n" ..
      "print(#s.per_session, s.sessions)\n" ..
      "for _, p in ipairs(s.per_session) do local r = 0 " ..
      "for _, c in ipairs(p.counts) do if c.type == 'RUN_THREAD' then " ..
      "r = c.count end end print('S', p.number, p.pid, p.events, r, " ..
      "p.args[1]) end\n" ..
      "local d = 0 for _, p in ipairs(s.per_session) do " ..
      "d = d + p.duration_ns end " ..
      "print('D', s.duration_ns == d, s.first_t, s.last_t)\n" ..
      "print(tostring(s))\n")
    os.remove(two)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("\n2\t2\n", 1, true), out)
    -- h62: each session has its own clock: the duration is the sum of the
    -- sessions' own, with no first_t/last_t across them
    assert.truthy(out:find("\nD\ttrue\tnil\tnil\n", 1, true), out)
    assert.truthy(out:find("the sum of the 2 sessions' own durations", 1,
                           true), out)
    local want = string.format("S\t1\t%d\t%d\t%d\t./Threads\n" ..
      "S\t2\t%d\t%d\t%d\t./Heapy\n",
      ref("threads.eventlog", "pid"), ref_events("ghc-9.0/threads.eventlog"),
      ref("threads.eventlog"), ref("heapy-hT.eventlog", "pid"),
      ref_events("ghc-9.0/heapy-hT.eventlog"), ref("heapy-hT.eventlog"))
    assert.truthy(out:find(want, 1, true), want .. " in:\n" .. out)
    -- printed: session 1's block names its pid and its own RUN_THREAD count
    -- before session 2's begins
    local b1 = out:match("\nsession 1 (.-)\nsession 2 ")
    assert.truthy(b1, out)
    assert.truthy(b1:find("\npid +" .. ref("threads.eventlog", "pid") .. " "),
                  b1)
    assert.truthy(b1:find("\nRUN_THREAD +" .. ref("threads.eventlog") .. " "),
                  b1)
    assert.falsy(b1:find(tostring(ref("heapy-hT.eventlog", "pid")), 1, true),
                 b1)
  end)

  it("says when the start time is an estimate", function()
    -- h66: a stream without WALL_CLOCK_TIME (eventlog-socket on GHC 9.0,
    -- a log cut before it) showed its estimated start as if exact. The
    -- first 400 kB of threads.eventlog end before its WALL_CLOCK_TIME
    -- (the reference has it in the global block, written at the end).
    local cut = os.tmpname()
    assert(os.execute(string.format("head -c 400000 %q > %q",
      logs .. "/ghc-9.0/threads.eventlog", cut)))
    local out = repl_run(cut, "print(tostring(summary()))\n")
    os.remove(cut)
    assert.truthy(out:find("\nstarted +%d+%-%d+%-%d+ [%d:]+ UTC %(estimated "
      .. "from the file's time: no WALL_CLOCK_TIME%)\n"), out)
    out = repl_run(logs .. "/ghc-9.0/threads.eventlog",
      "print(tostring(summary()))\n")
    assert.truthy(out:find("\nstarted +%d+%-%d+%-%d+ [%d:]+ UTC\n"), out)
  end)

  it("filters on text, session and the last matches", function()
    local out, code = repl_run(logs .. "/ghc-9.0/oddball-hT.eventlog",
      "#events{text='Summing 24'}\n" ..
      "events{type='USER_MARKER', last=2}[2].marker\n" ..
      "#events{session=2}\n")
    assert.are.equal(0, code)
    -- two markers of oddball-hT say "Summing 24..." (the reference)
    assert.truthy(out:find("\n2\nSumming 240086 numbers\n0\n", 1, true), out)
  end)

  it("names the filter and what it expects when a filter is wrong", function()
    local _, code, err = repl_run(logs .. "/ghc-9.0/oddball-hT.eventlog",
      "events{thread='x'}\nevents{thread=2.5}\nevents{cap={}}\n" ..
      "events{text=5}\nevents{type={}}\nevents{type={'USER_MSG', true}}\n" ..
      "events{type=70000}\nevents{session='a'}\n" ..
      "require('eventlog_live.repl_store').query{from='1s'}\n")
    assert.are.equal(1, code)
    for _, want in ipairs({
      "events: thread must be a thread id (integer), got string\n",
      "events: thread must be a thread id (integer), got 2.5\n",
      'events: cap must be a capability (integer) or "none", got table\n',
      "events: text must be a string, got 5\n",
      "events: type is an empty list: give at least one event type\n",
      "events: type must be an event type name or id (0..65535), or a list "
        .. "of them, got boolean\n",
      "events: type must be an event type name or id (0..65535), or a list "
        .. "of them, got 70000\n",
      "events: session must be a session (integer), got string\n",
      "from must be a time in ns, got string\n",
    }) do
      assert.truthy(err:find(want, 1, true), want .. " in:\n" .. err)
    end
    assert.is_nil(err:find("bad argument", 1, true), err)
  end)

  it("reports a failing input on stderr, goes on, and exits 1", function()
    local out, code, err = repl_run(logs .. "/ghc-9.0/oddball-hT.eventlog",
      "heap(-5)\n1 + 1\ncensus(1 / 0)\n#heap(3).rows > 0\n")
    assert.are.equal(1, code)
    assert.truthy(err:find("heap: expected a whole number from 1 to 2^63-1 (math.maxinteger), got -5", 1, true), err)
    assert.truthy(err:find("census: the time must be a finite number, got inf",
                           1, true), err)
    assert.is_nil(err:find("attempt to index"), err)
    -- the lines after each error still ran, their results on stdout
    assert.truthy(out:find("\n2\n", 1, true), out)
    assert.truthy(out:find("\ntrue\n", 1, true), out)
    local _, ok_code = repl_run(logs .. "/ghc-9.0/oddball-hT.eventlog", "1 + 1\n")
    assert.are.equal(0, ok_code)
  end)

  it("refuses a terminal-less stdin source and bad options", function()
    local _, code = repl_run("--store-mb 0 x.eventlog", "")
    assert.are.equal(2, code)
    _, code = repl_run("--frob " .. logs .. "/ghc-9.0/oddball-hT.eventlog", "")
    assert.are.equal(2, code)
  end)
end)
