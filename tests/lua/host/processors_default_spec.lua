-- busted specs for the default processors (lua/eventlog_live/processors),
-- run by tests/tools/el_spec on real hosts: the script the daemon loads
-- (eventlog_live.processors.main) with el.config as the daemon builds it,
-- over binary eventlogs written by tests/lua/eventlog_writer.lua, through
-- the real decoder, dispatch, watermark, session clock, C helpers and
-- telemetry store. Expected telemetry follows
-- spec/reference-behaviour.md §5 and is written out by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

local S = 1000000000
local MS = 1000000
local START = 1700000000 * S    -- Unix ns of RTS time 0 in every log here

-- el.config for the given processors ({["metrics.heap_size"] =
-- {aggregate_ms =, export_ms =, name =}}), as the daemon builds it
-- (src/cmd/daemon.c, config_to_lua).
local function config(procs, opts)
  opts = opts or {}
  local c = {flush_ns = (opts.flush_ms or 1000) * MS,
             batch_ns = (opts.batch_ms or opts.flush_ms or 1000) * MS,
             breakdown = opts.breakdown, processors = {}}
  for k, v in pairs(procs) do
    local group, key = k:match("^(%w+)%.(.+)$")
    c.processors[group] = c.processors[group] or {}
    c.processors[group][key] = {
      enabled = true, name = v.name or k,
      aggregate_ns = (v.aggregate_ms or 0) * MS,
      export_ns = (v.export_ms or 1000) * MS,
      max_threads = opts.max_threads,
    }
  end
  return c
end

-- The init events GHC writes into the global buffer at startup (spec
-- eventlog-format.md §2.4): WALL_CLOCK_TIME at t = 0 makes the session's
-- clock START + t exactly (§3.5).
local function init_block(args, rts)
  return {
    {"WALL_CLOCK_TIME", 0, 1, START // S, 0},
    {"OSPROCESS_PID", 0, 0, 4242},
    {"RTS_IDENTIFIER", 0, 0, rts or "GHC-9.2.8 rts_thr"},
    {"PROGRAM_ARGS", 0, 0, args or {"./prog"}},
  }
end

local function new_host(procs, opts)
  return el_spec.host{config = config(procs, opts),
                      load = "eventlog_live.processors.main",
                      service_name = "spec",
                      horizon_ns = opts and opts.horizon_ns}
end

-- The host's own warnings (the processors' el.host_log("warn", ...)).
-- The processors also report their own errors this way (an error in one
-- processor's tick, finish or record is caught so that the others go on),
-- so every spec checks them.
local function warnings(h)
  local out = {}
  for _, m in ipairs(h:messages()) do
    if m.level == "warn" or m.level == "error" then out[#out + 1] = m.text end
  end
  return out
end

-- Run the default processors over a recorded eventlog: the init block,
-- then `blocks`. Read as the daemon reads a file (scanned ahead, fed,
-- ended). The host's warnings must be opts.warnings (default: none).
-- Returns the exported records and the host.
local function run(procs, blocks, opts)
  opts = opts or {}
  local h = new_host(procs, opts)
  local all = {init_block(opts.args, opts.rts)}
  for _, b in ipairs(blocks) do all[#all + 1] = b end
  local bytes = W.eventlog(all)
  h:scan(bytes)
  assert(h:feed(bytes))
  assert(h:finish())
  assert.are.same(opts.warnings or {}, warnings(h))
  return h:records(), h
end

-- The data points of metric `name`: {v =, a =, u =, s =}.
local function points(rec, name)
  local out = {}
  for _, p in ipairs(rec.metrics) do
    if p.name == name then
      out[#out + 1] = {v = p.value, a = p.attrs, u = p.time_unix_ns,
                       s = p.start_unix_ns}
    end
  end
  return out
end

-- The first data point of `name` with its description fields.
local function metric(rec, name)
  for _, p in ipairs(rec.metrics) do
    if p.name == name then return p end
  end
end

describe("log processors", function()
  it("user markers are TRACE, user messages DEBUG, labels unset", function()
    local rec = run({["logs.user_marker"] = {}, ["logs.user_message"] = {},
                     ["logs.thread_label"] = {}},
                    {{cap = 1, {"USER_MARKER", 5, "Summing 3 numbers"}},
                     {cap = 0, {"USER_MSG", 6, "round 1 done"}},
                     {cap = 1, {"THREAD_LABEL", 7, 42, "worker"}}})
    local l = {}
    for _, r in ipairs(rec.logs) do
      local i = ({UserMarker = 1, UserMessage = 2, ThreadLabel = 3})[r.attrs.kind]
      l[i] = {body = r.body, severity = r.severity, unix_ns = r.time_unix_ns,
              observed_unix_ns = r.observed_unix_ns, attrs = r.attrs}
    end
    assert.are.equal(3, #rec.logs)
    assert.are.same({body = "Summing 3 numbers", severity = 1,
                     unix_ns = START + 5, observed_unix_ns = START + 5,
                     attrs = {kind = "UserMarker", evCap = 1}}, l[1])
    assert.are.equal(5, l[2].severity)
    assert.are.same({kind = "UserMessage", evCap = 0}, l[2].attrs)
    assert.is_nil(l[3].severity)
    assert.are.equal("worker", l[3].body)
    assert.are.same({kind = "ThreadLabel", thread = 42}, l[3].attrs)
  end)

  it("exports logs at the export interval", function()
    local h = new_host({["logs.user_marker"] = {export_ms = 2000}})
    local bytes, ends = W.eventlog{
      init_block(),
      {cap = 0, {"USER_MARKER", 10, "a"}},
      {cap = 0, {"USER_MARKER", S + 1, "b"}},
      {cap = 0, {"USER_MARKER", 2 * S + 1, "c"}},
    }
    assert(h:feed(bytes:sub(1, ends[3])))
    assert.are.equal(0, #h:records().logs)  -- 1 s is not an export boundary
    assert(h:feed(bytes:sub(ends[3] + 1, ends[4])))
    local logs = h:records().logs
    assert.are.same({"a", "b"}, {logs[1].body, logs[2].body})
    assert(h:feed(bytes:sub(ends[4] + 1)))
    assert(h:finish())
    logs = h:records().logs
    assert.are.equal(3, #logs)
    assert.are.same({1, 1, 2}, {logs[1].batch, logs[2].batch, logs[3].batch})
    assert.are.same({}, warnings(h))
  end)
end)

describe("heap metrics", function()
  it("heap_size keeps the last value per window and attribute set", function()
    local rec = run({["metrics.heap_size"] = {aggregate_ms = 1000}},
                    {{cap = 0, {"HEAP_SIZE", 100, 0, 1000},
                               {"HEAP_SIZE", 200, 0, 2000}},
                     {cap = 1, {"HEAP_SIZE", 150, 0, 3000}},
                     {cap = 0, {"HEAP_SIZE", S + 5, 0, 4000}}})
    local p = points(rec, "metrics.heap_size")
    assert.are.equal(3, #p)
    assert.are.same({v = 2000, a = {evCap = 0, heapCapset = 0},
                     u = START + 200, s = START}, p[1])
    assert.are.same({v = 3000, a = {evCap = 1, heapCapset = 0},
                     u = START + 150, s = START}, p[2])
    assert.are.same({v = 4000, a = {evCap = 0, heapCapset = 0},
                     u = START + S + 5, s = START}, p[3])
    local m = metric(rec, "metrics.heap_size")
    assert.are.same({"By", "gauge"}, {m.unit, m.kind})
  end)

  it("heap_allocated is a cumulative monotonic sum", function()
    local rec = run({["metrics.heap_allocated"] = {}},
                    {{cap = 0, {"HEAP_ALLOCATED", 1, 0, 568}}})
    local m = metric(rec, "metrics.heap_allocated")
    assert.are.same({"sum", "cumulative", true},
                    {m.kind, m.temporality, m.monotonic})
    assert.are.equal(568, m.value)
  end)

  it("MEM_RETURN feeds three metrics in {mblock}", function()
    local rec = run({["metrics.mem_current"] = {}, ["metrics.mem_needed"] = {},
                     ["metrics.mem_returned"] = {}},
                    {{{"MEM_RETURN", 1, 0, 10, 8, 2}}})   -- global block
    assert.are.equal(10, points(rec, "metrics.mem_current")[1].v)
    assert.are.equal(8, points(rec, "metrics.mem_needed")[1].v)
    assert.are.equal(2, points(rec, "metrics.mem_returned")[1].v)
    assert.are.same({heapCapset = 0},
                    points(rec, "metrics.mem_current")[1].a)
    assert.are.equal("{mblock}", metric(rec, "metrics.mem_needed").unit)
  end)

  it("records carry the observed program's resource attributes", function()
    local rec = run({["metrics.heap_size"] = {}},
                    {{cap = 0, {"HEAP_SIZE", 1, 0, 8}}},
                    {args = {"/bin/prog", "+RTS", "-l", "-RTS"}})
    assert.are.same({["service.name"] = "spec", ["process.pid"] = 4242,
                     ["process.command_args"] = {"/bin/prog", "+RTS", "-l",
                                                 "-RTS"},
                     ["process.executable.name"] = "prog",
                     ["process.runtime.name"] = "GHC",
                     ["process.runtime.version"] = "9.2.8",
                     ["process.runtime.description"] = "GHC-9.2.8 rts_thr"},
                    rec.metrics[1].resource)
  end)
end)

describe("heap_prof_sample", function()
  local census = {
    {"HEAP_PROF_SAMPLE_BEGIN", 10, 1},
    {"HEAP_PROF_SAMPLE_STRING", 11, 0, 100, "THUNK"},
    {"HEAP_PROF_SAMPLE_STRING", 12, 0, 200, "ARR_WORDS"},
    {"HEAP_PROF_SAMPLE_STRING", 13, 0, 300, "THUNK"},  -- replaces
    {"HEAP_PROF_SAMPLE_END", 14, 1},
  }
  -- spec §5.2.2 (HEAD): a duplicate label with another value warns.
  local dup = {"Duplicate sample for THUNK within census (old: 100, new: 300)."}

  it("emits one point per label with the census attributes", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {census},
                    {breakdown = "-hT", warnings = dup})
    local p = points(rec, "metrics.heap_prof_sample")
    assert.are.equal(2, #p)
    assert.are.same({v = 300, u = START + 13, s = START, a = {
      heapProfBreakdown = "-hT", heapProfId = 0, heapProfLabel = "THUNK",
      heapProfSampleEra = 1}}, p[1])
    assert.are.equal("ARR_WORDS", p[2].a.heapProfLabel)
  end)

  it("does not warn about a duplicate label with the same value", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      {"HEAP_PROF_SAMPLE_BEGIN", 10, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, 0, 100, "THUNK"},
      {"HEAP_PROF_SAMPLE_STRING", 13, 0, 100, "THUNK"},
      {"HEAP_PROF_SAMPLE_END", 14, 1},
    }}, {breakdown = "-hT"})   -- and no warning
    assert.are.equal(1, #points(rec, "metrics.heap_prof_sample"))
  end)

  it("takes the breakdown from -h<X> in the program's arguments", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {census},
                    {args = {"./prog", "+RTS", "-hy", "-l", "-RTS"},
                     warnings = dup})
    assert.are.equal("-hy", points(rec, "metrics.heap_prof_sample")[1]
                              .a.heapProfBreakdown)
  end)

  it("takes the breakdown from HEAP_PROF_BEGIN", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      -- breakdown 4 = TYPE_DESCR, -hy (spec eventlog-format.md §2.5)
      {"HEAP_PROF_BEGIN", 1, 0, 100000000, 4, "", "", "", "", "", "", ""},
      table.unpack(census)}}, {warnings = dup})
    assert.are.equal("-hy", points(rec, "metrics.heap_prof_sample")[1]
                              .a.heapProfBreakdown)
  end)

  -- The command line's -h<X> wins (as the reference's), a difference from
  -- the program's said once (h68).
  it("says once when the given breakdown differs from the program's", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      -- breakdown 4 = TYPE_DESCR, -hy (spec eventlog-format.md §2.5)
      {"HEAP_PROF_BEGIN", 1, 0, 100000000, 4, "", "", "", "", "", "", ""},
      {"HEAP_PROF_SAMPLE_BEGIN", 10, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, 0, 100, "A"},
      {"HEAP_PROF_SAMPLE_STRING", 12, 0, 200, "B"},
      {"HEAP_PROF_SAMPLE_END", 14, 1}}},
      {breakdown = "-hT", warnings = {
        "The heap profile breakdown -hT given here differs from the"
        .. " program's -hy (its HEAP_PROF_BEGIN or +RTS arguments): its"
        .. " samples are labelled -hT; give -hy, or no -h<X> to take the"
        .. " program's"}})
    local p = points(rec, "metrics.heap_prof_sample")
    assert.are.same({"-hT", "-hT"},
                    {p[1].a.heapProfBreakdown, p[2].a.heapProfBreakdown})
  end)

  it("drops samples and warns once without a breakdown, or for -hb", function()
    local dropped = "3 heap profile samples dropped: no supported heap"
      .. " profile breakdown (pass -h<X> as given to the program)"
    local rec = run({["metrics.heap_prof_sample"] = {}}, {census},
                    {warnings = {
                      "Cannot infer heap profile breakdown.\nIf your program"
                      .. " uses GHC < 9.14, you must also pass the heap"
                      .. " profile type to this executable.\nSee:"
                      .. " https://gitlab.haskell.org/ghc/ghc/-/commit/76d392a",
                      dropped}})
    assert.are.equal(0, #points(rec, "metrics.heap_prof_sample"))
    rec = run({["metrics.heap_prof_sample"] = {}}, {census},
              {breakdown = "-hb", warnings = {
                "Unsupported heap profile breakdown -hb",
                "3 heap profile samples dropped: the breakdown -hb is not"
                .. " supported"}})
    assert.are.equal(0, #points(rec, "metrics.heap_prof_sample"))
  end)

  -- A biographical census (HEAP_BIO_PROF_SAMPLE_BEGIN, GHC writes them all
  -- at the end) opens its era: its HEAP_PROF_SAMPLE_END is no "closed era
  -- 3, but there is no current era" (h68: one such warning per census).
  -- Its samples are dropped as -hb's are, said once with the breakdown.
  it("takes a -hb census's era, its samples dropped", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      {"HEAP_BIO_PROF_SAMPLE_BEGIN", 50, 3, 10},
      {"HEAP_PROF_SAMPLE_STRING", 51, 0, 100, "VOID"},
      {"HEAP_PROF_SAMPLE_END", 52, 3},
    }}, {breakdown = "-hb", warnings = {
      "Unsupported heap profile breakdown -hb",
      "1 heap profile samples dropped: the breakdown -hb is not supported"}})
    assert.are.equal(0, #points(rec, "metrics.heap_prof_sample"))
  end)

  it("resolves -hi labels through IPE events", function()
    -- spec §5.2.2 (HEAD): unresolved ids warn (not id 0), and a label that
    -- is no info pointer warns too.
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      {"IPE", 1, 0x4a10, "Foo_con_info", "1", "Foo", "MkFoo", "Main",
       "src/Main.hs:10:5-12"},
      {"HEAP_PROF_SAMPLE_BEGIN", 10, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, 0, 64, "0x4a10"},
      {"HEAP_PROF_SAMPLE_STRING", 12, 0, 32, "0x9999"},
      {"HEAP_PROF_SAMPLE_END", 14, 1},
    }}, {breakdown = "-hi", warnings = {"Could not resolve IPE for 0x9999."}})
    local p = points(rec, "metrics.heap_prof_sample")
    assert.are.same({heapProfBreakdown = "-hi", heapProfId = 0,
      heapProfLabel = "0x4a10", heapProfSampleEra = 1, ipName = "Foo_con_info",
      ipClosureDesc = 1, ipTyDesc = "Foo", ipLabel = "MkFoo",
      ipModule = "Main", ipSrcLoc = "src/Main.hs:10:5-12"}, p[1].a)
    assert.is_nil(p[2].a.ipName)
    rec = run({["metrics.heap_prof_sample"] = {}}, {{
      {"HEAP_PROF_SAMPLE_BEGIN", 10, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, 0, 64, "0x0"},
      {"HEAP_PROF_SAMPLE_STRING", 12, 0, 32, "THUNK"},
      {"HEAP_PROF_SAMPLE_END", 14, 1},
    }}, {breakdown = "-hi", warnings = {
      "Expected InfoProv ID, found 'THUNK' for HeapProfSampleString."}})
    assert.are.equal(2, #points(rec, "metrics.heap_prof_sample"))
  end)

  it("closes censuses at the next BEGIN when the RTS writes no END (GHC < 8.10)", function()
    local rec = run({["metrics.heap_prof_sample"] = {}}, {{
      {"HEAP_PROF_SAMPLE_BEGIN", 10, 0},
      {"HEAP_PROF_SAMPLE_STRING", 11, 0, 100, "A"},
      {"HEAP_PROF_SAMPLE_BEGIN", 20, 0},
      {"HEAP_PROF_SAMPLE_STRING", 21, 0, 200, "A"},
    }}, {breakdown = "-hT", rts = "GHC-8.8.4 rts_thr"})   -- and no warning
    local p = points(rec, "metrics.heap_prof_sample")
    assert.are.same({100, 200}, {p[1].v, p[2].v})
  end)

  -- From a GHC that ends each census (8.10 and later, or once an END was
  -- seen), a census the input ends inside is a part of one: dropped and
  -- said, the complete ones before it kept (h68: a cut log's last census
  -- read as a heap that shrank).
  for _, c in ipairs{
    {rts = "GHC-9.0.2 rts_thr", what = "from GHC 9.0"},
    {rts = "GHC-8.8.4 rts_thr", what = "after an END was seen"},
  } do
    it("drops a census the input ends inside, " .. c.what, function()
      local rec = run({["metrics.heap_prof_sample"] = {}}, {{
        {"HEAP_PROF_SAMPLE_BEGIN", 10, 0},
        {"HEAP_PROF_SAMPLE_STRING", 11, 0, 100, "A"},
        {"HEAP_PROF_SAMPLE_STRING", 12, 0, 50, "B"},
        {"HEAP_PROF_SAMPLE_END", 13, 0},
        {"HEAP_PROF_SAMPLE_BEGIN", 2 * S, 0},
        {"HEAP_PROF_SAMPLE_STRING", 2 * S + 1, 0, 300, "A"},
      }}, {breakdown = "-hT", rts = c.rts, warnings = {
        "The heap census begun at 2.000 s has no HEAP_PROF_SAMPLE_END: the"
        .. " eventlog ends inside it; its 1 sample(s) are dropped (a part of"
        .. " a census)"}})
      local p = points(rec, "metrics.heap_prof_sample")
      table.sort(p, function(x, y) return x.v < y.v end)
      assert.are.same({50, 100}, {p[1].v, p[2].v})
      assert.are.equal(2, #p)
    end)
  end
end)

-- Capability usage and thread-state spans come from the host's C helpers
-- (el.cap_usage, el.threads: src/host/lua_analysis.c), the only
-- implementation. Expected values are worked out by hand from the state
-- machines of spec/reference-behaviour.md §5.2.3.
describe("capability usage and thread spans", function()
  -- Thread 7: runs on cap 0 [0, 100], yields, runs [150, 400], blocks on
  -- an MVar while cap 0 collects garbage [400, 450], runs on cap 1
  -- [500, 600] and finishes.
  local blocks = {
    {cap = 0, {"RUN_THREAD", 0, 7},
              {"STOP_THREAD", 100, 7, 3, 0},      -- ThreadYielding
              {"RUN_THREAD", 150, 7},
              {"STOP_THREAD", 400, 7, 7, 0},      -- BlockedOnMVar
              {"GC_START", 400},
              {"GC_END", 450}},
    {cap = 1, {"RUN_THREAD", 500, 7},
              {"STOP_THREAD", 600, 7, 5, 0}},     -- ThreadFinished
  }
  local procs = {["metrics.capability_usage"] = {name = "cu_ns"},
                 ["traces.capability_usage"] = {name = "cu"},
                 ["traces.thread_state"] = {name = "ts"}}

  it("sums durations cumulatively per cap, category and user", function()
    local rec = run(procs, blocks)
    local got = {}
    for _, p in ipairs(points(rec, "cu_ns")) do
      got[#got + 1] = ("cap %d %s %s t=%d v=%d"):format(
        p.a.cap, p.a.category, tostring(p.a.user), p.u - START, p.v)
      assert.are.equal(START, p.s)
    end
    -- aggregation 0: one point per span, in the order the spans end,
    -- each at its end (a running total holds time up to its time); Idle
    -- [100, 150] comes when the span after the gap starts, dated 150.
    assert.are.same({"cap 0 Mutator 7 t=100 v=100",
                     "cap 0 Idle nil t=150 v=50",
                     "cap 0 Mutator 7 t=400 v=350",
                     "cap 0 GC GC t=450 v=50",
                     "cap 1 Mutator 7 t=600 v=100"}, got)
    local m = metric(rec, "cu_ns")
    assert.are.same({"ns", "sum", "cumulative", true},
                    {m.unit, m.kind, m.temporality, m.monotonic})
  end)

  it("tracks a restarted program's threads anew (ids start at 1 again)", function()
    -- Two sessions, as a socket source sees a restarted program. Thread 1
    -- of the first program finished; thread 1 of the second is another
    -- thread, and its time counts from 0 in its own series.
    local h = new_host(procs)
    local one = {cap = 0, {"RUN_THREAD", 10, 1}, {"STOP_THREAD", 30, 1, 5, 0}}
    local two = {cap = 0, {"RUN_THREAD", 10, 1}, {"STOP_THREAD", 80, 1, 5, 0}}
    local bytes = W.eventlog{init_block(), one} .. W.eventlog{init_block(), two}
    h:scan(bytes)
    assert(h:feed(bytes))
    assert(h:finish())
    local rec = h:records()
    local got = {}
    for _, p in ipairs(points(rec, "cu_ns")) do
      if p.a.category == "Mutator" then got[#got + 1] = p.v end
    end
    assert.are.same({20, 70}, got)
    local running = 0
    for _, sp in ipairs(rec.spans) do
      if sp.name == "ts Running" then running = running + 1 end
    end
    assert.are.equal(2, running)
  end)

  it("gives at most max_threads threads their own series, the rest share user other", function()
    -- Five threads on cap 0, 10 ns each, max_threads = 2: threads 1 and 2
    -- have their series; 3, 4 and 5 add up in user "other" (30 ns). One
    -- export at the end: nothing is released in between.
    local b = {cap = 0}
    for k = 1, 5 do
      b[#b + 1] = {"RUN_THREAD", k * 100, k}
      b[#b + 1] = {"STOP_THREAD", k * 100 + 10, k, 5, 0}
    end
    local c = {["metrics.capability_usage"] = {name = "cu_ns"}}
    local rec = run(c, {b}, {max_threads = 2})
    local last = {}
    for _, p in ipairs(points(rec, "cu_ns")) do
      if p.a.category == "Mutator" then last[p.a.user] = p.v end
    end
    assert.are.same({["1"] = 10, ["2"] = 10, other = 30}, last)
  end)

  it("emits GC and Mutator spans per capability, Running and Blocked spans per thread", function()
    local rec = run(procs, blocks)
    local s = {}
    for _, x in ipairs(rec.spans) do
      s[#s + 1] = x
      assert.are.same({"internal", "ok"}, {x.kind, x.status})
      assert.is_nil(x.parent_span_id)
    end
    table.sort(s, function(a, b)
      if a.start_unix_ns ~= b.start_unix_ns then
        return a.start_unix_ns < b.start_unix_ns
      end
      return a.name < b.name
    end)
    local got = {}
    for i, x in ipairs(s) do
      local a = {}
      for k, v in pairs(x.attrs) do a[#a + 1] = k .. "=" .. tostring(v) end
      table.sort(a)
      got[i] = ("%s [%d, %d] %s"):format(x.name, x.start_unix_ns - START,
                                         x.end_unix_ns - START,
                                         table.concat(a, " "))
    end
    assert.are.same({
      "cu Mutator [0, 100] capability=0 user=7",
      -- a Running span names the stop that ends it (docs/differences.md)
      "ts Running [0, 100] capability=0 status=ThreadYielding thread=7",
      "ts Blocked [100, 150] status=ThreadYielding thread=7",
      "cu Mutator [150, 400] capability=0 user=7",
      "ts Running [150, 400] capability=0 status=BlockedOnMVar thread=7",
      "cu GC [400, 450] capability=0 user=GC",
      "ts Blocked [400, 500] status=BlockedOnMVar thread=7",
      "cu Mutator [500, 600] capability=1 user=7",
      "ts Running [500, 600] capability=1 status=ThreadFinished thread=7",
    }, got)
    -- one trace per capability (cu) and per thread (ts), span ids unique
    local cap0, cap1, th7 = s[1].trace_id, s[8].trace_id, s[2].trace_id
    assert.are.same({cap0, cap0}, {s[4].trace_id, s[6].trace_id})
    assert.are_not.equal(cap0, cap1)
    for _, i in ipairs{3, 5, 7, 9} do assert.are.equal(th7, s[i].trace_id) end
    assert.are_not.equal(cap0, th7)
    local ids = {}
    for _, x in ipairs(s) do
      assert.is_nil(ids[x.span_id])
      ids[x.span_id] = true
    end
  end)

  -- Windows of 1 s: thread 1 runs on cap 0 [0.1, 0.3] s, [0.5, 1.2] s and
  -- [1.5, 1.6] s; cap 0 collects [0.3, 0.4] s. Each span counts at its
  -- end, in the window of its end; per series and window the last
  -- cumulative value survives:
  --   Mutator: 0.2 at 0.3 (window 0); 0.9 at 1.2, 1.0 at 1.6 (window 1)
  --   GC:      0.1 at 0.4 (window 0)
  --   Idle:    [0.4, 0.5] 0.1 at 0.5 (window 0); [1.2, 1.5] 0.4 at 1.5
  -- The GC_END is written after a later RUN_THREAD, as GHC posts it with
  -- an earlier explicit time (spec eventlog-format.md §2.3), and cap 1
  -- (idle here) writes a block that interleaves.
  it("keeps the last total per series and aggregation window", function()
    local rec = run({["metrics.capability_usage"] = {name = "cu_ns",
                                                     aggregate_ms = 1000}}, {
      {cap = 0, {"RUN_THREAD", 100 * MS, 1},
                {"STOP_THREAD", 300 * MS, 1, 3, 0},
                {"GC_START", 300 * MS},
                {"RUN_THREAD", 500 * MS, 1},
                {"GC_END", 400 * MS}},
      {cap = 1, {"HEAP_SIZE", 700 * MS, 0, 8}},
      {cap = 0, {"STOP_THREAD", 1200 * MS, 1, 3, 0},
                {"RUN_THREAD", 1500 * MS, 1},
                {"STOP_THREAD", 1600 * MS, 1, 5, 0}},
    })
    local got = {}
    for _, p in ipairs(points(rec, "cu_ns")) do
      got[#got + 1] = ("%s t=%d v=%d"):format(p.a.category,
                                              (p.u - START) // MS, p.v // MS)
    end
    table.sort(got)
    assert.are.same({"GC t=400 v=100",
                     "Idle t=1500 v=400",
                     "Idle t=500 v=100",
                     "Mutator t=1600 v=1000",
                     "Mutator t=300 v=200"}, got)
  end)
end)

describe("profiles", function()
  it("cost-centre stacks resolve names innermost first", function()
    local rec = run({["profiles.cost_centre_stack_profile"] = {name = "ccs"}}, {{
      {"HEAP_PROF_COST_CENTRE", 1, 1, "fib", "Main", "Fib.hs:4:1-20", 0},
      {"HEAP_PROF_COST_CENTRE", 2, 2, "GC", "GC", "<built-in>", 0},
      {"PROF_SAMPLE_COST_CENTRE", 5, 0, 1, {2, 1, 9}},
    }}, {warnings = {"Could not resolve cost centre ID 9"}})
    local s = rec.profiles[1]
    assert.are.equal(1, #rec.profiles)
    assert.are.same({{func = "GC:GC"},
                     {func = "Main:fib", file = "Fib.hs", line = 4, column = 1},
                     {func = "9"}}, s.frames)
    assert.are.same({["__name__"] = "ccs", capability = 0}, s.attrs)
    assert.are.same({"ccs", "cpu", "samples", 1, START + 5},
                    {s.profile_kind, s.sample_type, s.sample_unit, s.value,
                     s.time_unix_ns})
  end)

  it("forgets a program's cost centres when the next session begins", function()
    -- Two sessions, as a socket source sees a restarted program: the
    -- second program's id 1 is not the first program's "fib".
    local h = new_host({["profiles.cost_centre_stack_profile"] = {name = "ccs"}})
    local bytes = W.eventlog{init_block(), {
        {"HEAP_PROF_COST_CENTRE", 1, 1, "fib", "Main", "Fib.hs:4:1-20", 0},
        {"PROF_SAMPLE_COST_CENTRE", 5, 0, 1, {1}},
      }} .. W.eventlog{init_block(), {
        {"PROF_SAMPLE_COST_CENTRE", 7, 0, 1, {1}},
      }}
    h:scan(bytes)
    assert(h:feed(bytes))
    assert(h:finish())
    local rec = h:records()
    assert.are.equal(2, #rec.profiles)
    assert.are.same({{func = "Main:fib", file = "Fib.hs", line = 4, column = 1}},
                    rec.profiles[1].frames)
    assert.are.same({{func = "1"}}, rec.profiles[2].frames)
    assert.are.same({"Could not resolve cost centre ID 1"}, warnings(h))
  end)

  -- ghc-stack-profiler messages (spec/reference-behaviour.md §5.4.3).
  local function str(id, s)
    return string.pack(">I2I8I2", 0xFFCC, id, utf8.len(s)) .. s
  end

  it("assembles chunked call stacks, innermost first, lines not swapped", function()
    local chunk1 = string.pack(">I2I4I4I2BI8BI8", 0xFFCB, 0, 42, 2, 1, 0x10, 2, 7)
    local final = string.pack(">I2I4I4I2BI8I8", 0xFFCA, 0, 42, 1, 3, 7, 3)
    local rec = run({["profiles.call_stack_profile"] = {name = "cs"}}, {
      {{"IPE", 1, 0x10, "f_info", "1", "T", "f", "M", "M.hs:3:2"}},
      {cap = 0,
        {"USER_BINARY_MSG", 2, str(7, "annot")},
        {"USER_BINARY_MSG", 3, string.pack(">I2I8I4I4I8", 0xFFCD, 3, 10, 5, 7)},
        {"USER_BINARY_MSG", 4, chunk1},
        {"USER_BINARY_MSG", 5, final}},
    })
    local s = rec.profiles[1]
    assert.are.same({{func = "annot", file = "annot", line = 10, column = 5},
                     {func = "annot"},
                     {func = "M:f", file = "M.hs", line = 3, column = 2}},
                    s.frames)
    assert.are.same({["__name__"] = "cs", capability = 0, thread = 42}, s.attrs)
    assert.are.equal(START + 4, s.time_unix_ns)   -- time of the first chunk
  end)
end)

-- The processors' batch ticks are eventlog-time timers of the host. A
-- full collection in the host's Lua state must not stop (or, under ASan,
-- corrupt) them: the processors keep their timer handles referenced, and
-- the host keeps a timer alive while its callback runs
-- (src/host/lua_time.c).
describe("timers", function()
  it("ticks go on after full collections in the host", function()
    local h = el_spec.host{config = config({["logs.user_marker"] = {}}), code = [[
      local el = require("eventlog_live")
      require("eventlog_live.processors").start(el)  -- result dropped
      el.on("USER_MSG", function() collectgarbage(); collectgarbage() end)
    ]]}
    local bytes = W.eventlog{
      init_block(),
      {cap = 0, {"USER_MARKER", 10, "a"}, {"USER_MSG", 20, "gc"}},
      {cap = 0, {"USER_MARKER", S + 10, "b"}, {"USER_MSG", S + 20, "gc"}},
      {cap = 0, {"USER_MARKER", 2 * S + 10, "c"}},
    }
    assert(h:feed(bytes))
    assert(h:finish())
    local got = {}
    for _, r in ipairs(h:records().logs) do
      got[#got + 1] = r.body .. r.batch
    end
    -- one export per tick: at 1 s, at 2 s, and at the end
    assert.are.same({"a1", "b2", "c3"}, got)
    assert.are.same({}, warnings(h))
  end)
end)

describe("live sessions", function()
  -- h46 (high): with eventlog-socket on GHC 9.0 a restarted program's
  -- metrics and logs were held until its eventlog time passed where the
  -- previous program's had ended. Each session's header arrives before
  -- its first block (GHC 9.0 writes a block when a 2 MiB buffer fills),
  -- so the wall-clock tick first runs without a clock: it then advances
  -- time itself once the stream has been quiet for two flush intervals,
  -- measured from when it last saw the stream time move. That memory
  -- outlived the session: at the next header the stream time was 0
  -- again, as it had been when session 1 began, so the tick took the
  -- whole time since then as quiet and ticked far ahead of session 2,
  -- whose own ticks were then ignored as already past.
  it("a restarted program's points go out at its own ticks", function()
    -- (a reorder horizon of 1 ms: a capability not seen yet is not waited
    -- for once the stream has been quiet that long)
    local h = new_host({["metrics.heap_size"] = {aggregate_ms = 0,
                                                 export_ms = 10}},
                       {flush_ms = 10, horizon_ns = MS})
    local function unix_now_ns()
      local f = assert(io.popen("date +%s%N"))
      local ns = math.tointeger(tonumber(f:read("l")))
      f:close()
      return ns
    end
    -- The daemon's loop runs the wall timers with its Unix ms: here one
    -- second later at each call, so that the 10 ms timer is due.
    local loop_ms = unix_now_ns() // MS
    local function wall_timers()
      loop_ms = loop_ms + 1000
      return h:wall_timers(loop_ms)
    end
    -- session 1: the header, a wall tick without a clock, then its block
    -- (no WALL_CLOCK_TIME: the clock comes from the bytes' arrival)
    h:received(unix_now_ns(), true)
    assert(h:feed(W.header()))
    assert(wall_timers())
    assert(h:feed(W.block{cap = 0, {"HEAP_SIZE", MS, 0, 4096}}))
    -- half a second later (50 flush intervals) the program restarts
    assert(os.execute("sleep 0.5"))
    h:received(unix_now_ns(), true)
    assert(h:feed(W.DATA_END .. W.header()))
    assert(wall_timers())   -- no clock yet: time must not jump
    h:received(unix_now_ns(), true)
    -- (a block after it: the decoder hands an event on once the bytes
    -- after it came, as they always do from a running program)
    assert(h:feed(W.block{cap = 0, {"HEAP_SIZE", MS, 0, 2048}} ..
                  W.block{cap = 0, {"USER_MSG", 2 * MS, "next"}}))
    assert(os.execute("sleep 0.05"))  -- past the horizon
    assert(wall_timers())   -- session 2's tick exports its point
    local got = {}
    for _, p in ipairs(points(h:records(), "metrics.heap_size")) do
      got[#got + 1] = p.v
    end
    assert.are.same({4096, 2048}, got)
    assert(h:feed(W.DATA_END))
    assert(h:finish())
  end)
  -- h44 (medium): live on GHC 9.0 a session's clock is first estimated
  -- from the arrival of its bytes, refined as later bytes arrive sooner
  -- after their events, and made exact when WALL_CLOCK_TIME comes (in the
  -- global block, late: often at the program's exit). A cumulative sum's
  -- start time used to follow every refinement (up to 52 changes in one
  -- session), which the OpenTelemetry data model reads as resets. It now
  -- keeps the first estimate until the clock is exact, then changes once,
  -- to the exact start, as the points' times do.
  it("a cumulative sum's start changes only when the clock turns exact",
     function()
    local h = new_host({["metrics.heap_allocated"] = {aggregate_ms = 0,
                                                      export_ms = 10}},
                       {flush_ms = 10, horizon_ns = MS})
    local now = os.time() * S
    local loop_ms = now // MS
    local function export()
      assert(os.execute("sleep 0.05"))  -- past the horizon
      loop_ms = loop_ms + 1000
      assert(h:wall_timers(loop_ms))
    end
    -- first bytes at `now`: events at 20 and 21 ms, estimate now - 21 ms
    h:received(now, true)
    assert(h:feed(W.header() ..
                  W.block{cap = 0, {"HEAP_ALLOCATED", 20 * MS, 0, 1000}} ..
                  W.block{cap = 0, {"USER_MSG", 21 * MS, "next"}}))
    export()
    -- 5 ms later, events up to 41 ms: a tighter estimate, now - 36 ms
    h:received(now + 5 * MS, true)
    assert(h:feed(W.block{cap = 0, {"HEAP_ALLOCATED", 30 * MS, 0, 3000}} ..
                  W.block{cap = 0, {"USER_MSG", 41 * MS, "next"}}))
    export()
    -- then WALL_CLOCK_TIME: the exact clock (START)
    assert(h:feed(W.block(init_block()) ..
                  W.block{cap = 0, {"HEAP_ALLOCATED", 50 * MS, 0, 6000}} ..
                  W.block{cap = 0, {"USER_MSG", 51 * MS, "next"}}))
    export()
    assert(h:feed(W.DATA_END))
    assert(h:finish())
    local pts = points(h:records(), "metrics.heap_allocated")
    assert.are.same({1000, 3000, 6000}, {pts[1].v, pts[2].v, pts[3].v})
    -- the clock moved between the first two exports: the second point's
    -- time is on the tighter estimate, 15 ms before the first one's start
    -- plus 30 ms
    assert.are.equal(pts[1].s + 30 * MS - 15 * MS, pts[2].u)
    -- but the start stayed
    assert.are.equal(pts[1].s, pts[2].s)
    assert.are_not.equal(START, pts[1].s)
    -- exact: start and time on WALL_CLOCK_TIME's clock
    assert.are.equal(START, pts[3].s)
    assert.are.equal(START + 50 * MS, pts[3].u)
  end)
end)
