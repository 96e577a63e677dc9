-- busted specs for eventlog_live.report (the section API of
-- `eventlog-live report`, docs/report.md) outside the report: without the
-- reducer's native module there is no page, so every function checks its
-- arguments and does nothing; and, with a stand-in native module, what
-- the functions hand to it.
package.path = (os.getenv("EL_SOURCE_DIR") or ".") .. "/lua/?.lua;" .. package.path

local function fresh()
  package.loaded["eventlog_live.report"] = nil
  return require("eventlog_live.report")
end

describe("eventlog_live.report without a page", function()
  before_each(function()
    package.loaded["eventlog_live.report.native"] = nil
    package.preload["eventlog_live.report.native"] = nil
  end)

  it("is inactive and accepts everything", function()
    local report = fresh()
    assert.is_false(report.active)
    local s = report.series{title = "x", unit = "By"}
    assert.is_not_nil(s)
    s:add(1, 2)
    s:add_unix(1, 2, "line")
    assert.is_nil(report.table{title = "t", columns = {"a"}, rows = {}})
  end)

  it("raises on misuse, as under the report", function()
    local report = fresh()
    assert.has_error(function() report.series("x") end)
    assert.has_error(function() report.series{unit = "By"} end)
    assert.has_error(function() report.table{title = "t"} end)
    assert.has_error(function()
      report.table{title = "t", columns = {}, rows = 5}
    end)
    -- a misspelt option, and a bad point, fail under run as under report
    local function err_of(f)
      local ok, e = pcall(f)
      assert.is_false(ok)
      return e
    end
    assert.truthy(err_of(function() report.series{title = "x", unti = "By"} end)
      :find("report.series: unknown option 'unti' (known: title, unit, "
            .. "description)", 1, true))
    assert.truthy(err_of(function()
      report.table{title = "t", columns = {}, rowz = {}}
    end):find("report.table: unknown option 'rowz' (known: title, "
              .. "description, columns, rows)", 1, true))
    local s = report.series{title = "x"}
    assert.truthy(err_of(function() s:add("x", "y") end)
      :find("series:add: t must be an integer time >= 0 (ns), got x", 1, true))
    assert.truthy(err_of(function() s:add(1, "y") end)
      :find("series:add: value must be a number, got string", 1, true))
  end)
end)

describe("eventlog_live.report with a page", function()
  local calls, ended
  before_each(function()
    calls, ended = {}, {}
    package.loaded["eventlog_live.report.native"] = nil
    package.preload["eventlog_live.report.native"] = function()
      return {
        active = true,
        series = function(...) calls[#calls + 1] = {"series", ...}; return 7 end,
        point = function(...) calls[#calls + 1] = {"point", ...} end,
        table = function(...) calls[#calls + 1] = {"table", ...}; return 8 end,
      }
    end
    package.loaded["eventlog_live"] = {
      unix_ns = function(t) return 1000 + t end,
      on_end = function(fn) ended[#ended + 1] = fn end,
    }
  end)
  after_each(function()
    package.loaded["eventlog_live"] = nil
    package.preload["eventlog_live.report.native"] = nil
    package.loaded["eventlog_live.report.native"] = nil
  end)

  it("converts eventlog times to Unix times and names the default line", function()
    local report = fresh()
    assert.is_true(report.active)
    local s = report.series{title = "Q", unit = "By", description = "d"}
    s:add(5, 42)
    s:add_unix(99, 1, "other")
    assert.are.same({"series", "Q", "By", "d"}, calls[1])
    assert.are.same({"point", 7, "value", 1005, 42}, calls[2])
    assert.are.same({"point", 7, "other", 99, 1}, calls[3])
  end)

  it("reads a table's rows at the end of input", function()
    local report = fresh()
    local rows = {}
    report.table{title = "T", columns = {"a", "b"}, rows = function() return rows end}
    rows[1] = {1, "x"}       -- filled after the call, before the end
    assert.are.equal(0, #calls)
    assert.are.equal(1, #ended)
    ended[1]()
    assert.are.same({"table", "T", nil, {"a", "b"}, {{1, "x"}}}, calls[1])
  end)
end)
