-- busted specs for el.log and el.log_batch (docs/lua-api.md §5) on real
-- hosts: every field given reaches the store, and a field left out takes
-- its documented default (el.log reads only the fields present in its
-- table); el.log_batch makes the same records from columns, drops and
-- counts malformed ones. Expected records written out by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")

local function logs_of(code)
  local h = el_spec.host{code = code, service_name = "spec"}
  assert(h:finish())
  local out = {}
  for _, r in ipairs(h:records().logs) do
    if not r.host_log or r.body ~= nil then
      out[#out + 1] = {body = r.body, severity = r.severity,
                       severity_text = r.severity_text,
                       time = r.time_unix_ns, observed = r.observed_unix_ns,
                       trace_id = r.trace_id, span_id = r.span_id,
                       host_log = r.host_log, attrs = r.attrs}
    end
  end
  return out
end

describe("el.log", function()
  it("stores every field given", function()
    local got = logs_of([[
      local el = require("eventlog_live")
      assert(el.log{body = "all", severity = "warn", severity_text = "W",
                    unix_ns = 1000, observed_unix_ns = 2000,
                    attrs = {b = 2, a = "x"},
                    trace_id = "00112233445566778899aabbccddeeff",
                    span_id = "8899aabbccddeeff", host = true})
    ]])
    assert.are.same({{body = "all", severity = 13, severity_text = "W",
                      time = 1000, observed = 2000,
                      trace_id = "00112233445566778899aabbccddeeff",
                      span_id = "8899aabbccddeeff", host_log = true,
                      attrs = {a = "x", b = 2}}}, got)
  end)

  it("gives the defaults for the fields left out", function()
    local got = logs_of([[
      local el = require("eventlog_live")
      assert(el.log{body = "few", unix_ns = 1000})
      assert(el.log{body = "sev", severity = 21, unix_ns = 7})
    ]])
    assert.are.same({
      {body = "few", time = 1000, observed = 1000, host_log = false,
       attrs = {}},
      {body = "sev", severity = 21, time = 7, observed = 7, host_log = false,
       attrs = {}},
    }, got)
  end)

  it("still rejects a malformed field it reads", function()
    local h = el_spec.host{code = [[
      local el = require("eventlog_live")
      local ok, err = pcall(el.log, {body = "b", unix_ns = 1, span_id = "zz"})
      assert(not ok and err:find("span_id", 1, true), tostring(err))
      ok, err = pcall(el.log, {unix_ns = 1})
      assert(not ok and err:find("el.log: field 'body' must be a string (got nil)", 1, true), tostring(err))
    ]], service_name = "spec"}
    assert(h:finish())
  end)

  it("el.log_batch: one record per row, template fields and columns", function()
    local got = logs_of([[
      local el = require("eventlog_live")
      local dropped = el.log_batch(
        {severity = 5, attrs = {kind = "K"}, span_id = "8899aabbccddeeff"},
        3, {body = {"a", "b", "c"}, unix_ns = {10, 20, 30},
            attrs = {evCap = {1, nil, 3}, z = {"s", "t", nil}}})
      assert(dropped == 0, dropped)
    ]])
    assert.are.same({
      {body = "a", severity = 5, time = 10, observed = 10, host_log = false,
       span_id = "8899aabbccddeeff", attrs = {kind = "K", evCap = 1, z = "s"}},
      {body = "b", severity = 5, time = 20, observed = 20, host_log = false,
       span_id = "8899aabbccddeeff", attrs = {kind = "K", z = "t"}},
      {body = "c", severity = 5, time = 30, observed = 30, host_log = false,
       span_id = "8899aabbccddeeff", attrs = {kind = "K", evCap = 3}},
    }, got)
  end)

  it("el.log_batch: drops and counts malformed rows, keeps the others", function()
    local got = logs_of([[
      local el = require("eventlog_live")
      local dropped, err = el.log_batch({}, 4,
        {body = {"ok1", 42, "ok2", "bad"}, unix_ns = {1, 2, 3, 4},
         attrs = {x = {nil, nil, nil, {}}}})
      assert(dropped == 2, dropped)
      assert(err == "el.log_batch: record 2: body is not a string", err)
      local ok, e = pcall(el.log_batch, {attrs = {x = 1}}, 1,
                          {body = {"b"}, attrs = {x = {2}}})
      assert(not ok and e:find("both the template and the columns", 1, true),
             tostring(e))
      ok, e = pcall(el.log_batch, {}, 1, {body = {"b"}, time = {1}})
      assert(not ok and e:find("unknown column 'time'", 1, true), tostring(e))
      ok, e = pcall(el.log_batch, {}, 1e12 // 1, {body = {"b"}})
      assert(not ok and e:find("not in 0..#columns.body (1)", 1, true),
             tostring(e))
    ]])
    assert.are.same({
      {body = "ok1", time = 1, observed = 1, host_log = false, attrs = {}},
      {body = "ok2", time = 3, observed = 3, host_log = false, attrs = {}},
    }, got)
  end)
end)
