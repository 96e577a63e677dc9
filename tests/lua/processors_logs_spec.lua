-- busted specs for lua/eventlog_live/processors/logs.lua over a fake host
-- whose el.log_batch builds each record as docs/lua-api.md §5 says (the
-- real one: tests/lua/host/lua_api_log_spec.lua): the records, their
-- order, the export at MAX_PENDING (4096, logs.lua) and a rejected record
-- counted without losing the others. Expected values worked out by hand.
local root = os.getenv("EL_SOURCE_DIR") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
local logs = require("eventlog_live.processors.logs")

local S = 1000000000  -- ns per second

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = type(v) == "table" and copy(v) or v end
  return c
end

-- A fake ctx: every log processor on, exported every 2 s.
local function fake()
  local f = {records = {}, handlers = {}, accs = {}, flushes = 0}
  f.el = {
    log_batch = function(template, n, cols)
      local dropped, first = 0, nil
      for i = 1, n do
        if cols.body[i] == "reject" then
          dropped = dropped + 1
          first = first or ("record " .. i .. ": rejected")
        else
          local r = copy(template)
          r.body, r.t = cols.body[i], cols.t[i]
          r.attrs = r.attrs or {}
          for k, col in pairs(cols.attrs or {}) do r.attrs[k] = col[i] end
          f.records[#f.records + 1] = r
        end
      end
      return dropped, first
    end,
    -- Handlers are called here as fn(ev, fields...); with args = "t"
    -- (docs/lua-api.md §2) the fake passes ev.t, ev.cap instead of ev.
    on = function(name, fn, opts)
      f.handlers[name] = function(ev, ...)
        if opts and opts.args == "t" then return fn(ev.t, ev.cap, ...) end
        return fn(ev, ...)
      end
    end,
    flush = function() f.flushes = f.flushes + 1 end,
  }
  f.ctx = {
    el = f.el,
    proc = function(_, key) return {key = key, export_ns = 2 * S} end,
    add_acc = function(acc) f.accs[#f.accs + 1] = acc; return acc end,
  }
  logs.install(f.ctx)
  return f
end

describe("processors.logs", function()
  it("exports records in order at export boundaries, attributes per record", function()
    local f = fake()
    f.handlers.USER_MSG({t = 10, cap = 1}, "one")
    f.handlers.USER_MSG({t = 20}, "two")            -- no capability
    f.handlers.THREAD_LABEL({t = 30}, 7, "worker")
    for _, acc in ipairs(f.accs) do acc:tick(S) end
    assert.are.equal(0, #f.records)                 -- not an export boundary
    for _, acc in ipairs(f.accs) do acc:tick(2 * S) end
    assert.are.same({
      {body = "worker", t = 30, attrs = {kind = "ThreadLabel", thread = 7}},
      {body = "one", t = 10, severity = 5,
       attrs = {kind = "UserMessage", evCap = 1}},
      {body = "two", t = 20, severity = 5, attrs = {kind = "UserMessage"}},
    }, f.records)
  end)

  it("exports at once when 4096 records wait, then flushes the store", function()
    local f = fake()
    for i = 1, 4095 do f.handlers.USER_MARKER({t = i, cap = 0}, "m") end
    assert.are.equal(0, #f.records)
    f.handlers.USER_MARKER({t = 4096, cap = 0}, "m")
    assert.are.equal(4096, #f.records)
    assert.are.equal(1, f.flushes)
    f.handlers.USER_MARKER({t = 4097, cap = 0}, "last")
    for _, acc in ipairs(f.accs) do acc:finish() end
    assert.are.equal(4097, #f.records)
    assert.are.same({"last", 4097, 1}, {f.records[4097].body,
                                         f.records[4097].t,
                                         f.records[4097].severity})
  end)

  it("exports each record once, with its own attributes, across exports", function()
    -- The columns are refilled in place after an export (logs.lua
    -- Logs:flush): a later record must not take an earlier one's
    -- capability, nor an earlier export's records come again.
    local f = fake()
    f.handlers.USER_MSG({t = 10, cap = 1}, "one")
    f.handlers.USER_MSG({t = 20, cap = 2}, "two")
    for _, acc in ipairs(f.accs) do acc:tick(2 * S) end
    f.handlers.USER_MSG({t = 30}, "three")          -- no capability
    for _, acc in ipairs(f.accs) do acc:tick(4 * S) end
    for _, acc in ipairs(f.accs) do acc:finish() end
    assert.are.same({
      {body = "one", t = 10, severity = 5,
       attrs = {kind = "UserMessage", evCap = 1}},
      {body = "two", t = 20, severity = 5,
       attrs = {kind = "UserMessage", evCap = 2}},
      {body = "three", t = 30, severity = 5, attrs = {kind = "UserMessage"}},
    }, f.records)
  end)

  it("drops and counts a rejected record, exports the rest", function()
    local f = fake()
    for _, body in ipairs{"a", "reject", "b", "reject", "c"} do
      f.handlers.USER_MSG({t = 1, cap = 0}, body)
    end
    local acc
    for _, a in ipairs(f.accs) do
      a:finish()
      if a.failed then acc = a end
    end
    local bodies = {}
    for _, r in ipairs(f.records) do bodies[#bodies + 1] = r.body end
    assert.are.same({"a", "b", "c"}, bodies)
    assert.are.equal(2, acc.failed)
    assert.are.equal("record 2: rejected", acc.last_error)
  end)
end)
