-- busted specs for the default processors (lua/eventlog_live/processors)
-- driven through a stand-in host (processors_fake_el.lua) with hand-made
-- events. Expected telemetry follows spec/reference-behaviour.md §5 and is
-- written out by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" ..
  root .. "/tests/lua/?.lua;" .. package.path
local fake = require("processors_fake_el")
local processors = require("eventlog_live.processors")
local sp = require("eventlog_live.processors.stack_profiler")
local ipe = require("eventlog_live.processors.ipe")

local S = 1000000000
local START = 1700000000 * S

local function run(procs, events, opts)
  opts = opts or {}
  local cfg = fake.config(procs, opts.flush_ms)
  if opts.breakdown then cfg.breakdown = opts.breakdown end
  local el = fake.new(cfg, START)
  if opts.session then for k, v in pairs(opts.session) do el.session[k] = v end end
  processors.start(el)
  for _, e in ipairs(events) do el.event(table.unpack(e)) end
  el.finish()
  return el
end

describe("log processors", function()
  it("user markers are TRACE, user messages DEBUG, labels unset", function()
    local el = run({["logs.user_marker"] = {}, ["logs.user_message"] = {},
                    ["logs.thread_label"] = {}},
                   {{"USER_MARKER", 5, 1, "Summing 3 numbers"},
                    {"USER_MSG", 6, 0, "round 1 done"},
                    {"THREAD_LABEL", 7, 1, 42, "worker"}})
    local l = {}
    for _, r in ipairs(el.out.logs) do
      local i = ({UserMarker = 1, UserMessage = 2, ThreadLabel = 3})[r.attrs.kind]
      l[i] = r
    end
    assert.are.equal(3, #el.out.logs)
    assert.are.same({body = "Summing 3 numbers", severity = 1,
                     unix_ns = START + 5, observed_unix_ns = START + 5,
                     attrs = {kind = "UserMarker", evCap = 1}}, l[1])
    assert.are.equal(5, l[2].severity)
    assert.are.same({kind = "UserMessage", evCap = 0}, l[2].attrs)
    assert.is_nil(l[3].severity)
    assert.are.same({kind = "ThreadLabel", thread = 42}, l[3].attrs)
  end)

  it("exports logs at the export interval", function()
    local el = fake.new(fake.config({["logs.user_marker"] = {export_ms = 2000}}), START)
    processors.start(el)
    el.event("USER_MARKER", 10, 0, "a")
    el.event("USER_MARKER", S + 1, 0, "b")
    assert.are.equal(0, #el.out.logs)     -- 1 s is not an export boundary
    el.event("USER_MARKER", 2 * S + 1, 0, "c")
    assert.are.equal(2, #el.out.logs)
    el.finish()
    assert.are.equal(3, #el.out.logs)
  end)
end)

describe("heap metrics", function()
  it("heap_size keeps the last value per window and attribute set", function()
    local el = run({["metrics.heap_size"] = {aggregate_ms = 1000}},
                   {{"HEAP_SIZE", 100, 0, 0, 1000},
                    {"HEAP_SIZE", 200, 0, 0, 2000},
                    {"HEAP_SIZE", 150, 1, 0, 3000},
                    {"HEAP_SIZE", S + 5, 0, 0, 4000}})
    local p = el.out.metrics["metrics.heap_size"].points
    assert.are.equal(3, #p)
    assert.are.same({v = 2000, a = {evCap = 0, heapCapset = 0},
                     u = START + 200, s = START}, p[1])
    assert.are.same({v = 3000, a = {evCap = 1, heapCapset = 0},
                     u = START + 150, s = START}, p[2])
    assert.are.equal(4000, p[3].v)
    assert.are.equal("By", el.out.metrics["metrics.heap_size"].desc.unit)
  end)

  it("heap_allocated is a cumulative monotonic sum", function()
    local el = run({["metrics.heap_allocated"] = {}},
                   {{"HEAP_ALLOCATED", 1, 0, 0, 568}})
    local m = el.out.metrics["metrics.heap_allocated"]
    assert.are.same({"sum", "cumulative", true},
                    {m.desc.kind, m.desc.temporality, m.desc.monotonic})
    assert.are.equal(568, m.points[1].v)
  end)

  it("MEM_RETURN feeds three metrics in {mblock}", function()
    local el = run({["metrics.mem_current"] = {}, ["metrics.mem_needed"] = {},
                    ["metrics.mem_returned"] = {}},
                   {{"MEM_RETURN", 1, nil, 0, 10, 8, 2}})
    assert.are.equal(10, el.out.metrics["metrics.mem_current"].points[1].v)
    assert.are.equal(8, el.out.metrics["metrics.mem_needed"].points[1].v)
    assert.are.equal(2, el.out.metrics["metrics.mem_returned"].points[1].v)
    assert.are.same({heapCapset = 0},
                    el.out.metrics["metrics.mem_current"].points[1].a)
    assert.are.equal("{mblock}", el.out.metrics["metrics.mem_needed"].desc.unit)
  end)
end)

describe("heap_prof_sample", function()
  local census = {
    {"HEAP_PROF_SAMPLE_BEGIN", 10, nil, 1},
    {"HEAP_PROF_SAMPLE_STRING", 11, nil, 0, 100, "THUNK"},
    {"HEAP_PROF_SAMPLE_STRING", 12, nil, 0, 200, "ARR_WORDS"},
    {"HEAP_PROF_SAMPLE_STRING", 13, nil, 0, 300, "THUNK"},  -- replaces
    {"HEAP_PROF_SAMPLE_END", 14, nil, 1},
  }

  it("emits one point per label with the census attributes", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, census,
                   {breakdown = "-hT"})
    local p = el.out.metrics["metrics.heap_prof_sample"].points
    assert.are.equal(2, #p)
    assert.are.same({v = 300, u = START + 13, s = START, a = {
      heapProfBreakdown = "-hT", heapProfId = 0, heapProfLabel = "THUNK",
      heapProfSampleEra = 1}}, p[1])
    assert.are.equal("ARR_WORDS", p[2].a.heapProfLabel)
    -- spec §5.2.2 (HEAD): a duplicate label with another value warns.
    assert.are.same({"Duplicate sample for THUNK within census (old: 100,"
                     .. " new: 300)."}, el.warnings)
  end)

  it("does not warn about a duplicate label with the same value", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, {
      {"HEAP_PROF_SAMPLE_BEGIN", 10, nil, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, nil, 0, 100, "THUNK"},
      {"HEAP_PROF_SAMPLE_STRING", 13, nil, 0, 100, "THUNK"},
      {"HEAP_PROF_SAMPLE_END", 14, nil, 1},
    }, {breakdown = "-hT"})
    assert.are.equal(1, #el.out.metrics["metrics.heap_prof_sample"].points)
    assert.are.equal(0, #el.warnings)
  end)

  it("takes the breakdown from the session when -h is not given", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, census,
                   {session = {heap_prof_breakdown = "-hy"}})
    assert.are.equal("-hy",
      el.out.metrics["metrics.heap_prof_sample"].points[1].a.heapProfBreakdown)
  end)

  it("drops samples and warns once without a breakdown, or for -hb", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, census)
    assert.are.equal(0, #el.out.metrics["metrics.heap_prof_sample"].points)
    assert.are.equal(2, #el.warnings)
    assert.truthy(el.warnings[1]:find("Cannot infer heap profile breakdown", 1, true))
    assert.are.equal("3 heap profile samples dropped: no supported heap"
                     .. " profile breakdown (pass -h<X> as given to the"
                     .. " program)", el.warnings[2])
    el = run({["metrics.heap_prof_sample"] = {}}, census, {breakdown = "-hb"})
    assert.are.equal("Unsupported heap profile breakdown -hb", el.warnings[1])
  end)

  it("resolves -hi labels through IPE events", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, {
      {"IPE", 1, nil, 0x4a10, "Foo_con_info", "1", "Foo", "MkFoo", "Main",
       "src/Main.hs:10:5-12"},
      {"HEAP_PROF_SAMPLE_BEGIN", 10, nil, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, nil, 0, 64, "0x4a10"},
      {"HEAP_PROF_SAMPLE_STRING", 12, nil, 0, 32, "0x9999"},
      {"HEAP_PROF_SAMPLE_END", 14, nil, 1},
    }, {breakdown = "-hi"})
    local p = el.out.metrics["metrics.heap_prof_sample"].points
    assert.are.same({heapProfBreakdown = "-hi", heapProfId = 0,
      heapProfLabel = "0x4a10", heapProfSampleEra = 1, ipName = "Foo_con_info",
      ipClosureDesc = 1, ipTyDesc = "Foo", ipLabel = "MkFoo",
      ipModule = "Main", ipSrcLoc = "src/Main.hs:10:5-12"}, p[1].a)
    assert.is_nil(p[2].a.ipName)
    -- spec §5.2.2 (HEAD): unresolved ids warn (not id 0), and a label that
    -- is no info pointer warns too.
    assert.are.same({"Could not resolve IPE for 0x9999."}, el.warnings)
    el = run({["metrics.heap_prof_sample"] = {}}, {
      {"HEAP_PROF_SAMPLE_BEGIN", 10, nil, 1},
      {"HEAP_PROF_SAMPLE_STRING", 11, nil, 0, 64, "0x0"},
      {"HEAP_PROF_SAMPLE_STRING", 12, nil, 0, 32, "THUNK"},
      {"HEAP_PROF_SAMPLE_END", 14, nil, 1},
    }, {breakdown = "-hi"})
    assert.are.same({"Expected InfoProv ID, found 'THUNK' for"
                     .. " HeapProfSampleString."}, el.warnings)
  end)

  it("closes censuses at the next BEGIN when the RTS writes no END (GHC < 9.2)", function()
    local el = run({["metrics.heap_prof_sample"] = {}}, {
      {"HEAP_PROF_SAMPLE_BEGIN", 10, nil, 0},
      {"HEAP_PROF_SAMPLE_STRING", 11, nil, 0, 100, "A"},
      {"HEAP_PROF_SAMPLE_BEGIN", 20, nil, 0},
      {"HEAP_PROF_SAMPLE_STRING", 21, nil, 0, 200, "A"},
    }, {breakdown = "-hT"})
    local p = el.out.metrics["metrics.heap_prof_sample"].points
    assert.are.same({100, 200}, {p[1].v, p[2].v})
    assert.are.equal(0, #el.warnings)
  end)
end)

describe("capability usage and thread spans", function()
  it("sums durations cumulatively per cap, category and user", function()
    local el = fake.new(fake.config({["metrics.capability_usage"] = {},
                                     ["traces.capability_usage"] = {name = "cu"},
                                     ["traces.thread_state"] = {name = "ts"}}), START)
    processors.start(el)
    el.cap_usage_cb(0, "Mutator", "7", 0, 100)
    el.cap_usage_cb(0, "Idle", nil, 100, 150)
    el.cap_usage_cb(0, "Mutator", "7", 150, 400)
    el.cap_usage_cb(0, "GC", "GC", 400, 450)
    el.threads_cb(7, "blocked", 7, 0, 400, 500, 0)
    el.threads_cb(7, "running", nil, 1, 500, 600, nil)
    el.finish()
    local p = el.out.metrics["metrics.capability_usage"].points
    local vs = {}
    for _, x in ipairs(p) do vs[#vs + 1] = x.a.category .. "=" .. x.v end
    assert.are.same({"Mutator=100", "Idle=50", "Mutator=350", "GC=50"}, vs)
    local s = el.out.spans
    assert.are.equal(5, #s)
    assert.are.equal("cu Mutator", s[1].name)
    assert.are.equal("cu GC", s[3].name)
    assert.are.equal(s[1].trace_id, s[3].trace_id)   -- per capability
    assert.are.same({capability = 0, user = "GC"}, s[3].attrs)
    assert.are.equal("ts Blocked", s[4].name)
    assert.are.same({thread = "7", status = "BlockedOnMVar"}, s[4].attrs)
    assert.are.equal("ts Running", s[5].name)
    assert.are.same({thread = "7", capability = 1}, s[5].attrs)
    assert.are.equal(s[4].trace_id, s[5].trace_id)   -- per thread
    assert.are_not.equal(s[1].trace_id, s[4].trace_id)
  end)
end)

describe("profiles", function()
  it("cost-centre stacks resolve names innermost first", function()
    local el = run({["profiles.cost_centre_stack_profile"] = {name = "ccs"}}, {
      {"HEAP_PROF_COST_CENTRE", 1, nil, 1, "fib", "Main", "Fib.hs:4:1-20", 0},
      {"HEAP_PROF_COST_CENTRE", 2, nil, 2, "GC", "GC", "<built-in>", 0},
      {"PROF_SAMPLE_COST_CENTRE", 5, nil, 0, 1, 3, {2, 1, 9}},
    })
    local s = el.out.profiles[1]
    assert.are.same({{func = "GC:GC", file = ""},
                     {func = "Main:fib", file = "Fib.hs", line = 4, column = 1},
                     {func = "9"}}, s.frames)
    assert.are.same({["__name__"] = "ccs", capability = 0}, s.attrs)
    assert.are.same({"cpu", "samples", START + 5},
                    {s.sample_type, s.sample_unit, s.unix_ns})
    assert.are.equal("Could not resolve cost centre ID 9", el.warnings[1])
  end)

  local function str(id, s)
    return string.pack(">I2I8I2", 0xFFCC, id, utf8.len(s)) .. s
  end

  it("decodes ghc-stack-profiler messages", function()
    local m = sp.decode(str(7, "héllo") .. "trailing")
    assert.are.same({tag = "string", id = 7, text = "héllo"}, m)
    m = sp.decode(string.pack(">I2I8I4I4I8", 0xFFCD, 3, 10, 5, 7))
    assert.are.same({tag = "srcloc", id = 3, line = 10, column = 5, file = 7}, m)
    m = sp.decode(string.pack(">I2I4I4I2BI8BI8BI8I8", 0xFFCA, 1, 42, 3,
                              1, 0x10, 2, 7, 3, 7, 3))
    assert.are.same({tag = "final", cap = 1, thread = 42, items = {
      {kind = "ipe", id = 0x10}, {kind = "string", string = 7},
      {kind = "srcloc", string = 7, srcloc = 3}}}, m)
    local bad, err = sp.decode("\1\2\3")
    assert.is_nil(bad)
    assert.truthy(err)
  end)

  it("assembles chunked call stacks, innermost first, lines not swapped", function()
    local chunk1 = string.pack(">I2I4I4I2BI8BI8", 0xFFCB, 0, 42, 2, 1, 0x10, 2, 7)
    local final = string.pack(">I2I4I4I2BI8I8", 0xFFCA, 0, 42, 1, 3, 7, 3)
    local el = run({["profiles.call_stack_profile"] = {name = "cs"}}, {
      {"IPE", 1, nil, 0x10, "f_info", "1", "T", "f", "M", "M.hs:3:2"},
      {"USER_BINARY_MSG", 2, 0, str(7, "annot")},
      {"USER_BINARY_MSG", 3, 0, string.pack(">I2I8I4I4I8", 0xFFCD, 3, 10, 5, 7)},
      {"USER_BINARY_MSG", 4, 0, chunk1},
      {"USER_BINARY_MSG", 5, 0, final},
    })
    local s = el.out.profiles[1]
    assert.are.same({{func = "annot", file = "annot", line = 10, column = 5},
                     {func = "annot"},
                     {func = "M:f", file = "M.hs", line = 3, column = 2}},
                    s.frames)
    assert.are.same({["__name__"] = "cs", capability = 0, thread = 42}, s.attrs)
    assert.are.equal(START + 4, s.unix_ns)   -- time of the first chunk
  end)

  it("parses source locations like ipedb", function()
    assert.are.same({"a/B.hs", 3, 4}, {ipe.parse_srcloc("a/B.hs:3:4")})
    assert.are.same({"a/B.hs", 3, 4}, {ipe.parse_srcloc("a/B.hs:3:4-9")})
    assert.are.same({"C:/x.hs", 1, 2}, {ipe.parse_srcloc("C:/x.hs:(1,2)-(3,4)")})
    assert.are.same({"f.hs"}, {ipe.parse_srcloc("f.hs:")})
    assert.are.same({""}, {ipe.parse_srcloc("<built-in>")})
  end)
end)

-- The host frees a timer whose handle was collected while the timer's own
-- callback runs, then uses it (src/host/lua_time.c el__timers_fire and
-- el_host_run_wall_timers: use after free, double free). The processors
-- therefore keep every timer handle they create reachable.
describe("timers", function()
  it("the processors keep their timer handles referenced", function()
    local el = fake.new(fake.config({["metrics.heap_size"] = {}}), START)
    local handles = setmetatable({}, {__mode = "v"})
    local every, n = el.every, 0
    function el.every(interval, fn)
      every(interval, fn)
      n = n + 1
      handles[n] = {}
      return handles[n]
    end
    function el.every_wall()
      n = n + 1
      handles[n] = {}
      return handles[n]
    end
    processors.start(el)    -- the daemon keeps no reference to the result
    assert.is_true(n >= 2)
    collectgarbage("collect")
    collectgarbage("collect")
    for i = 1, n do assert.is_not_nil(handles[i], "timer handle " .. i) end
  end)
end)
