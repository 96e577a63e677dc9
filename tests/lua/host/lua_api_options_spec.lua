-- busted specs for the keys of the Lua API's option and description
-- tables (src/host/lua_opts.c, docs/lua-api.md §9 "Errors"): a key the
-- function does not read raises an error naming the function, the key and
-- the nearest known key (or, with none near, every known key), at the
-- caller's line; every documented key is accepted. Run by
-- tests/tools/el_spec on real hosts. The expected texts follow the
-- documented format and the key lists of docs/lua-api.md, written out by
-- hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/tests/lua/?.lua;" .. package.path
local el_spec = require("el_spec")

-- Load `code` (after a line that requires the module) into a fresh host:
-- nil when it loads, else the error message.
local function load_error(code)
  local ok, err = pcall(el_spec.host, {
    code = 'local el = require("eventlog_live")\n' .. code})
  if ok then
    err:close()
    return nil
  end
  return tostring(err)
end

local function assert_error(code, want)
  local err = load_error(code)
  assert.is_not_nil(err, "no error for: " .. code)
  assert.is_truthy(err:find(want, 1, true),
                   "error\n  " .. err .. "\nlacks\n  " .. want)
end

local f = "function() end"

describe("option tables", function()
  it("el.on: an unknown option names the nearest known one", function()
    assert_error('el.on("USER_MARKER", ' .. f .. ', {ordr = "time"})',
                 "spec:2: el.on: unknown option 'ordr' (did you mean 'order'?)")
    assert_error('el.on("USER_MARKER", ' .. f .. ', {arg = "t"})',
                 "el.on: unknown option 'arg' (did you mean 'args'?)")
    assert_error('el.on("USER_MARKER", ' .. f .. ', {when = "t"})',
                 "el.on: unknown option 'when' (known: args, order)")
    assert_error('el.on("USER_MARKER", ' .. f .. ', {"time"})',
                 "el.on: option names must be strings (got the number key 1)")
  end)

  it("el.order: max_held only", function()
    assert_error('el.order("time", {max_hold = 5})',
                 "el.order: unknown option 'max_hold' (did you mean 'max_held'?)")
  end)

  it("el.threads, el.gc, el.cap_usage: each its own options", function()
    assert_error("el.threads{keep_finshed = 5}",
                 "el.threads: unknown option 'keep_finshed' (did you mean 'keep_finished'?)")
    assert_error('el.gc{spans = "x"}',
                 "el.gc: unknown option 'spans' (known: on_span, keep_finished, max_users)")
    assert_error("el.cap_usage{on_points = " .. f .. "}",
                 "el.cap_usage: unknown option 'on_points' (did you mean 'on_point'?)")
  end)

  it("el.metric, el.log, el.span, el.profile_sample: unknown fields", function()
    assert_error('el.metric{name = "m", units = "By"}',
                 "el.metric: unknown field 'units' (did you mean 'unit'?)")
    assert_error('el.log{body = "b", severty = "info"}',
                 "el.log: unknown field 'severty' (did you mean 'severity'?)")
    assert_error('el.span{name = "s", parent_id = "0011223344556677"}',
                 "el.span: unknown field 'parent_id' (known: name, start_t, end_t, "
                 .. "start_unix_ns, end_unix_ns, trace_id, span_id, parent_span_id, "
                 .. "kind, status, attrs)")
    assert_error('el.profile_sample{frames = {"f"}, valeu = 2}',
                 "el.profile_sample: unknown field 'valeu' (did you mean 'value'?)")
    assert_error('el.profile_sample{frames = {{fn = "f"}}}',
                 "el.profile_sample: frame: unknown field 'fn' (known: func, file, line, column)")
  end)

  it("every documented key is accepted", function()
    local keys_code = [[
      local f = function() end
      el.on("USER_MARKER", f, {args = "t", order = "time"})
      el.order("stream", {max_held = 10})
      el.threads{on_span = f, keep_finished = 5, max_users = 5, spans = "T"}
      el.gc{on_span = f, keep_finished = 5, max_users = 5}
      el.cap_usage{on_span = f, keep_finished = 5, max_users = 5, spans = "C",
                   on_point = f, aggregate_ns = 0, on_productivity = f,
                   productivity_aggregate_ns = 0}
      local m = el.metric{name = "m", kind = "sum", unit = "By",
                          description = "d", temporality = "delta",
                          monotonic = true}
      -- Emitting with eventlog times needs a session (no time while the
      -- script loads, docs/lua-api.md §5 "Times"): at its header.
      el.on_header(function()
        assert(el.log{body = "b", severity = "info", severity_text = "I",
                      t = 0, observed_unix_ns = 1, attrs = {a = 1},
                      trace_id = "00112233445566778899aabbccddeeff",
                      span_id = "0011223344556677", host = false})
        assert(el.log{body = "b", unix_ns = 5})
        assert(el.span{name = "s", start_t = 0, end_t = 1,
                       trace_id = "00112233445566778899aabbccddeeff",
                       span_id = "0011223344556677",
                       parent_span_id = "0011223344556678", kind = "server",
                       status = "error", attrs = {a = "x"}})
        assert(el.span{name = "s", start_unix_ns = 1, end_unix_ns = 2})
        assert(el.profile_sample{
          frames = {"f", {func = "g", file = "G.hs", line = 3, column = 4}},
          value = 2, profile_kind = "cpu", sample_type = "cpu",
          sample_unit = "samples", t = 0, attrs = {a = 1}})
        assert(el.profile_sample{frames = {"f"}, unix_ns = 7})
      end)
    ]]
    assert.is_nil(load_error(keys_code))
    local h = el_spec.host{code = 'local el = require("eventlog_live")\n' ..
                                  keys_code}
    local W = require("eventlog_writer")
    assert(h:feed(W.eventlog({{cap = 0, {"USER_MARKER", 5, "x"}}})))
    assert(h:finish())
    assert.equal(4, #h:records().logs + #h:records().spans)
  end)

  it("an unknown field in a handler is a handler error", function()
    local h = el_spec.host{code = [[
      local el = require("eventlog_live")
      el.on("USER_MARKER", function(ev, text) el.log{body = text, sevrity = 9} end)
    ]]}
    local W = require("eventlog_writer")
    local ok, err = pcall(h.feed, h, W.eventlog({{cap = 0, {"USER_MARKER", 5, "x"}}}))
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(
      "el.log: unknown field 'sevrity' (did you mean 'severity'?)", 1, true), tostring(err))
    h:close()
  end)
end)
