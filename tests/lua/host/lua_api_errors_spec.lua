-- busted specs for the errors of the Lua API's table arguments and times
-- (docs/lua-api.md §9 "Errors"): a misuse names the function and the
-- field or argument, and is raised where the script called (file:line),
-- never turned into a wrong value. Run on real hosts (tests/tools/el_spec);
-- the expected messages are written out from the API's documentation.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")
local W = require("eventlog_writer")

-- Each case is a chunk of Lua run with pcall inside a handler (so that
-- the host has a current event and a store); the host logs its error.
local function errors(cases)
  local code = {'local el = require("eventlog_live")',
                'local m = el.metric{name = "x"}',
                'local cases = {'}
  for _, c in ipairs(cases) do
    code[#code + 1] = "  function() " .. c .. " end,"
  end
  code[#code + 1] = [[}
el.on("USER_MARKER", function()
  for i, f in ipairs(cases) do
    local ok, err = pcall(f)
    el.host_log("warn", "case " .. i .. ": " .. (ok and "no error" or err))
  end
end)]]
  local h = el_spec.host{code = table.concat(code, "\n")}
  assert(h:feed(W.eventlog{{cap = 0, {"USER_MARKER", 100, "m"}}}))
  assert(h:finish())
  local got = {}
  for _, msg in ipairs(h:messages()) do
    local i, e = msg.text:match("^case (%d+): (.*)$")
    if i then got[tonumber(i)] = e end
  end
  return got
end

describe("errors of the Lua API's arguments", function()
  it("name the function and the field of a table argument", function()
    local got = errors{
      'el.log{}',
      'el.log{body = "x", severity = "warning"}',
      'el.log{body = "x", severity = 99}',
      'el.metric{}',
      'el.metric{name = ""}',
      'el.metric{name = "y", kind = "histogram"}',
      'el.metric{name = "y", monotonic = "yes"}',
      'el.metric{name = "y", kind = "sum", temporality = "unspecified"}',
      'el.span{name = "s", kind = "weird"}',
      'el.profile_sample{frames = {"a"}, value = 1.5}',
      'el.profile_sample{frames = {{func = 7, line = "x"}}}',
      'el.threads{on_span = "x"}',
      'el.cap_usage{aggregate_ns = -1}',
    }
    -- file:line of the call, then the message
    local want = {
      "el.log: field 'body' must be a string (got nil)",
      "el.log: field 'severity' is 'warning': use one of trace, debug, " ..
        "info, warn, error, fatal",
      "el.log: field 'severity' must be 0..24 (got 99)",
      "el.metric: field 'name' must be a string (got nil)",
      "el.metric: field 'name' is empty",
      "el.metric: field 'kind' is 'histogram': use one of gauge, sum",
      "el.metric: field 'monotonic' must be a boolean (got string)",
      "el.metric: field 'temporality' is 'unspecified': use one of delta, " ..
        "cumulative",
      "el.span: field 'kind' is 'weird': use one of internal, server, " ..
        "client, producer, consumer",
      "el.profile_sample: field 'value' must be an integer (got 1.5)",
      "el.profile_sample: field 'frames[1].line' must be an integer (got " ..
        "string)",
      "el.threads: field 'on_span' must be a function (got string)",
      "el.cap_usage: option 'aggregate_ns' must be >= 0 (got -1)",
    }
    for i, w in ipairs(want) do
      assert.equal("spec:" .. (i + 3) .. ": " .. w, got[i])
    end
  end)

  it("check what the documentation says of values and attributes",
     function()
    -- Each of these was accepted (a number body converted, an empty key,
    -- a sample with no frames table, a monotonic sum going negative) or raised
    -- without the function's name (the attribute limits).
    local got = errors{
      'el.log{body = 5}',
      'el.log{body = "x", attrs = {[""] = 1}}',
      'el.log{body = "x", attrs = {[1] = "a"}}',
      'local a = {} for i = 1, 65 do a["k" .. i] = i end ' ..
        'el.span{name = "s", attrs = a}',
      'el.profile_sample{value = 2}',
      'el.metric{name = "up", kind = "sum", monotonic = true}:point(-5)',
      'el.metric{name = "up", kind = "sum", monotonic = true}:point_unix(' ..
        '-0.5, nil, 1)',
      'el.metric{name = "up", kind = "sum", monotonic = true}:point_unix(' ..
        '0/0, nil, 1)',
      'el.log_batch({}, 1, {body = {"x"}, attrs = {[""] = {1}}})',
      'el.set_resource("", "x")',
      'el.log{body = "x", attrs = {a = {b = 1}}}',
    }
    local want = {
      "el.log: field 'body' must be a string (got number)",
      "el.log: an attribute key is empty",
      "el.log: attribute keys must be strings (got number)",
      "el.span: too many attributes (max 64)",
      "el.profile_sample: field 'frames' must be a table (got nil)",
      "instrument:point: metric 'up' is a monotonic sum: a value must be " ..
        ">= 0 (got -5)",
      "instrument:point_unix: metric 'up' is a monotonic sum: a value " ..
        "must be >= 0 (got -0.5)",
      "instrument:point_unix: metric 'up' is a monotonic sum: a value " ..
        "must be >= 0 (got nan)",
      "el.log_batch: an attribute key is empty",
      "el.set_resource: an attribute key is empty",
      "el.log: attribute 'a': a table value must be a list of strings " ..
        "(keys 1..n), not a map",
    }
    for i, w in ipairs(want) do
      assert.equal("spec:" .. (i + 3) .. ": " .. w, got[i])
    end
  end)

  it("a monotonic sum takes 0 and floats; 64 attributes and an empty stack are allowed",
     function()
    local got = errors{
      'assert(el.metric{name = "c", kind = "sum", monotonic = true}' ..
        ':point(0))',
      'assert(el.metric{name = "c", kind = "sum", monotonic = true}' ..
        ':point(1.5))',
      'assert(el.metric{name = "g2"}:point(-5))',
      'local a = {} for i = 1, 64 do a["k" .. i] = i end ' ..
        'assert(el.log{body = "x", attrs = a})',
      -- a sample with no stack: GHC writes cost-centre samples of an
      -- empty stack, which the default processors export as such
      'assert(el.profile_sample{frames = {}, value = 1, t = 5})',
    }
    for i = 1, 5 do assert.equal("no error", got[i]) end
  end)

  it("refuse writes to the reused event table", function()
    -- A key written used to stay on the table for every later event.
    local got = errors{'el.event().marker = "x"', 'el.event().foo = 1'}
    for i, k in ipairs({"marker", "foo"}) do
      assert.equal("spec:" .. (i + 3) .. ": ev is read-only (one table is " ..
                   "reused for every event): copy what you keep, e.g. " ..
                   "local f = ev:fields(); key " .. k, got[i])
    end
  end)

  -- h49: a wall-clock timer (or a REPL line) before the first event
  -- emitted a record with no time (1970 in a backend), where the same at
  -- load time raises. Now it raises there too; with the Unix time the
  -- timer is given it goes out.
  it("emitting without a time before the first event raises", function()
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
local done = false
timer = el.every_wall(10, function(unix_ns)
  if done then return end
  done = true
  local ok, err = pcall(el.log, {body = "w"})
  el.log{body = ok and "emitted" or err, unix_ns = unix_ns}
end)
]]}
    local now_ms = os.time() * 1000
    assert(h:wall_timers(now_ms + 1000))
    assert(h:finish())
    local logs = h:records().logs
    assert.equal(1, #logs)
    assert.truthy(logs[1].body:find("el.log: no time before the first " ..
                                    "event (no session clock yet): pass " ..
                                    "unix_ns", 1, true), logs[1].body)
    assert.truthy(logs[1].time_unix_ns >= now_ms * 1000000)
  end)

  it("refuse negative times instead of wrapping them", function()
    local got = errors{
      'el.unix_ns(-5)',
      'm:point(1, {}, -5)',
      'm:point(1, {}, 100, -1)',
      'm:point_unix(1, {}, -1)',
      'el.log{body = "x", t = -1}',
      'el.log{body = "x", observed_unix_ns = -2}',
      'el.span{name = "s", start_t = -3}',
      'el.span{name = "s", start_unix_ns = 20, end_unix_ns = 10}',
      'el.span{name = "s", trace_id = string.rep("0", 32)}',
      'm:point(1, {nested = {a = 1}})',
      'm:point(1, {mixed = {"a", "b", x = "c"}})',
    }
    local want = {
      "bad argument #1 to 'unix_ns' (a time must be >= 0 (ns))",
      -- a method: Lua counts the arguments after self
      "bad argument #3 to 'point' (a time must be >= 0 (ns))",
      "bad argument #4 to 'point' (a time must be >= 0 (ns))",
      "bad argument #3 to 'point_unix' (a time must be >= 0 (ns))",
      "el.log: field 't' must be an integer time >= 0 (ns) (got -1)",
      "el.log: field 'observed_unix_ns' must be an integer time >= 0 (ns) " ..
        "(got -2)",
      "el.span: field 'start_t' must be an integer time >= 0 (ns) (got -3)",
      "el.span: it ends (10) before it starts (20), Unix ns",
      "el.span: field 'trace_id' is all zeros, which OTLP reads as no id",
      "instrument:point: attribute 'nested': a table value must be a list " ..
        "of strings (keys 1..n), not a map",
      "instrument:point: attribute 'mixed': a table value must be a list " ..
        "of strings (keys 1..n), not a map",
    }
    for i, w in ipairs(want) do
      assert.equal("spec:" .. (i + 3) .. ": " .. w, got[i])
    end
  end)

  it("refuse a span that ends before it starts, also while loading",
     function()
    -- While the script loads no session clock is known: both eventlog
    -- times converted to Unix time 0, and the span was stored with no
    -- times at all instead of raising.
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
local ok, err = pcall(el.span, {name = "s", start_t = 20, end_t = 10})
el.host_log("warn", "load: " .. (ok and "no error" or err))
el.on("USER_MARKER", function()
  local ok2, err2 = pcall(el.span, {name = "s", start_t = 20, end_t = 10})
  el.host_log("warn", "event: " .. (ok2 and "no error" or err2))
end)]]}
    assert(h:feed(W.eventlog{{cap = 0, {"USER_MARKER", 100, "m"}}}))
    assert(h:finish())
    local got = {}
    for _, msg in ipairs(h:messages()) do
      local k, e = msg.text:match("^(%a+): (.*)$")
      if k then got[k] = e end
    end
    local want = "el.span: it ends (10) before it starts (20), eventlog ns"
    -- While loading, the eventlog times cannot be converted at all: that
    -- is said first (the next case).
    assert.equal("el.span: no time while the script loads (no event, no " ..
                 "session clock yet): pass start_unix_ns, or emit from a " ..
                 "handler, timer or hook", got.load)
    assert.equal(want, got.event)
  end)

  it("refuse emitting without a time while the script loads", function()
    -- No event, stream time or session clock exists yet: each of these
    -- returned true and exported its record at time 0 (1970 in a
    -- backend, docs/lua-api.md §5 "Times"). Given a Unix time they work.
    local calls = {
      {'el.span{name = "s"}', "el.span", "start_unix_ns"},
      {'el.span{name = "s", start_t = 1, end_t = 2}', "el.span",
       "start_unix_ns"},
      {'el.span{name = "s", start_unix_ns = 5}', "el.span", "end_unix_ns"},
      {'el.log{body = "x"}', "el.log", "unix_ns"},
      {'el.log{body = "x", t = 1}', "el.log", "unix_ns"},
      {'m:point(1)', "instrument:point",
       "a Unix time to instrument:point_unix"},
      {'m:point(1, nil, 5)', "instrument:point",
       "a Unix time to instrument:point_unix"},
      {'el.profile_sample{frames = {"f"}}', "el.profile_sample", "unix_ns"},
      {'el.log_batch({}, 1, {body = {"x"}})', "el.log_batch",
       "columns.unix_ns"},
    }
    for _, c in ipairs(calls) do
      local ok, err = pcall(el_spec.host, {code =
        'local el = require("eventlog_live")\n' ..
        'local m = el.metric{name = "x"}\n' .. c[1]})
      assert.is_false(ok, c[1])
      assert.matches("spec:3: " .. c[2] .. ": no time while the script " ..
                     "loads (no event, no session clock yet): pass " ..
                     c[3] .. ", or emit from a handler, timer or hook",
                     err, 1, true)
    end
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
local m = el.metric{name = "x"}
el.span{name = "s", start_unix_ns = 5, end_unix_ns = 6}
el.log{body = "x", unix_ns = 7}
m:point_unix(1, nil, 8)
el.profile_sample{frames = {"f"}, unix_ns = 9}
el.log_batch({}, 1, {body = {"y"}, unix_ns = {10}})]]}
    assert(h:finish())
    local r = h:records()
    assert.equal(5, r.spans[1].start_unix_ns)
    assert.equal(6, r.spans[1].end_unix_ns)
    assert.equal(7, r.logs[1].time_unix_ns)
    assert.equal(10, r.logs[2].time_unix_ns)
    assert.equal(8, r.metrics[1].time_unix_ns)
    assert.equal(9, r.profiles[1].time_unix_ns)
  end)

  it("el.type_info and tracker:get answer one nil for what they do not know",
     function()
    -- They returned no value at all: print(el.type_info(9999)) printed an
    -- empty line and table.insert(t, el.type_info(9999)) raised.
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
local th = el.threads{}
el.host_log("warn", "n: " .. select("#", el.type_info(9999)) .. " " ..
            select("#", el.type_info("NO_SUCH_TYPE")) .. " " ..
            tostring(el.type_info("NO_SUCH_TYPE")) .. " " ..
            select("#", th:get(12345)) .. " " .. tostring(th:get(12345)))]]}
    assert(h:finish())
    local got
    for _, msg in ipairs(h:messages()) do
      got = got or msg.text:match("^n: (.*)$")
    end
    assert.equal("1 1 nil 1 nil", got)
  end)
end)

-- A key no event has (a misspelling: ev.staus) reads as nil, as every
-- key ev has no value for (docs/lua-api.md §2), but is said once, where
-- the handler read it, with the nearest key (h69: a script read nil and
-- printed nothing). A field of other types (ev.thread of a GC event in a
-- "*" handler) is a plain nil, said nowhere.
describe("ev's keys", function()
  -- The host's messages saying a key is no field, in order.
  local function no_field_messages(h)
    local said = {}
    for _, m in ipairs(h:messages()) do
      if m.text:find("no field") then said[#said + 1] = m.text end
    end
    return said
  end

  it("say a key that is no field of any event type, once", function()
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
el.on("STOP_THREAD", function(ev)
  assert(ev.staus == nil and ev:field("statsu") == nil)
  assert(ev.staus == nil)
  -- keys of ev, not fields (h72), and a number: said nowhere
  assert(ev:field("t") == nil and ev:field("session") == nil and ev[1] == nil)
end)
el.on("*", function(ev) local _ = ev.thread, ev.heap_capset end)]]}
    assert(h:feed(W.eventlog{{cap = 0,
      {"STOP_THREAD", 100, 1, 5, 0},
      {"STOP_THREAD", 200, 1, 5, 0},
      {"GC_START", 300}}}))
    assert(h:finish())
    local said = no_field_messages(h)
    assert.are.same({
      "Lua: spec:3: ev: 'staus' is no field of STOP_THREAD"
      .. " nor of any event type (did you mean 'status'?): it reads as nil"
      .. " (said once)",
      "Lua: spec:3: ev: 'statsu' is no field of STOP_THREAD"
      .. " nor of any event type (did you mean 'status'?): it reads as nil"
      .. " (said once)"}, said)
  end)

  -- h75: the nearest key is looked for among every type's fields when ev
  -- has none near it, and the type holding it is named.
  it("suggest another type's field when ev has none near", function()
    local h = el_spec.host{code = [[
local el = require("eventlog_live")
el.on("GC_START", function(ev) local _ = ev.staus end)]]}
    assert(h:feed(W.eventlog{{cap = 0, {"GC_START", 300}}}))
    assert(h:finish())
    local said = no_field_messages(h)
    assert.are.same({
      "Lua: spec:2: ev: 'staus' is no field of GC_START"
      .. " nor of any event type (did you mean 'status', a field of"
      .. " STOP_THREAD?): it reads as nil (said once)"}, said)
  end)
end)
