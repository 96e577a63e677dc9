-- busted specs for the pure-Lua library parts (run with busted --lua=lua5.4).
-- eventlog_live.status needs a host: tests/unit/test_host.c tests it.
-- Expected values are hand computations.
package.path = (os.getenv("EL_SOURCE_DIR") or ".") .. "/lua/?.lua;" .. package.path
local stats = require("eventlog_live.stats")
local fmt = require("eventlog_live.fmt")

describe("eventlog_live.stats", function()
  it("computes nearest-rank percentiles without modifying the input", function()
    local v = {15, 20, 35, 40, 50}
    assert.are.equal(20, stats.percentile(v, 30))
    assert.are.equal(35, stats.percentile(v, 50))
    assert.are.equal(50, stats.percentile(v, 100))
    assert.are.equal(15, stats.percentile(v, 0))
    assert.are.same({15, 20, 35, 40, 50}, v)
    assert.is_nil(stats.percentile({}, 50))
  end)
  it("summarises", function()
    local s = stats.summary({3, 1, 2})
    assert.are.same({n = 3, min = 1, max = 3, sum = 6, mean = 2, p50 = 2,
                     p90 = 3, p99 = 3}, s)
    assert.are.same({n = 0, sum = 0}, stats.summary({}))
  end)
  it("builds power-of-two histograms", function()
    local h = stats.log2_histogram({0, 1, 3, 4, 7, 8, 1024})
    assert.are.same({lo = 0, hi = 1, count = 1}, h[1])
    assert.are.same({lo = 1, hi = 2, count = 1}, h[2])
    assert.are.same({lo = 2, hi = 4, count = 1}, h[3])
    assert.are.same({lo = 4, hi = 8, count = 2}, h[4])
    assert.are.same({lo = 8, hi = 16, count = 1}, h[5])
    assert.are.same({lo = 1024, hi = 2048, count = 1}, h[#h])
    assert.are.equal(12, #h)
  end)
  it("refuses values that are not finite numbers >= 0, naming the index",
     function()
    for _, bad in ipairs({math.huge, -math.huge, 0 / 0, -1, "7"}) do
      local ok, err = pcall(stats.log2_histogram, {1, 2, bad})
      assert.is_false(ok)
      assert.matches("values%[3%] is .*finite numbers >= 0", err)
    end
  end)
  it("gives float bounds past 2^63", function()
    local h = stats.log2_histogram({2 ^ 70})
    assert.are.same({{lo = 2 ^ 70, hi = 2 ^ 71, count = 1}}, h)
  end)
end)

describe("eventlog_live.fmt", function()
  it("formats durations and bytes", function()
    assert.are.equal("812 ns", fmt.duration(812))
    assert.are.equal("12.3 us", fmt.duration(12300))
    assert.are.equal("1.50 ms", fmt.duration(1500000))
    assert.are.equal("2.000 s", fmt.duration(2e9))
    assert.are.equal("512 B", fmt.bytes(512))
    assert.are.equal("1.5 KiB", fmt.bytes(1536))
    assert.are.equal("3.25 MiB", fmt.bytes(3.25 * 1024 * 1024))
    assert.are.equal("1023.00 GiB", fmt.bytes(1023 * 2 ^ 30))
    assert.are.equal("1.00 TiB", fmt.bytes(2 ^ 40))
  end)
  it("aligns text by the columns it takes on a terminal", function()
    -- "こんにちは": 5 characters, 15 bytes, 10 columns (East Asian wide);
    -- "é" (2 bytes) takes one column.
    local t = fmt.table({{s = "こんにちは", n = 1}, {s = "é", n = 22}},
                        {{key = "s"}, {key = "n"}})
    assert.are.equal("s            n\n" ..
                     "----------  --\n" ..
                     "こんにちは   1\n" ..
                     "é           22\n", t)
    assert.are.equal(3, fmt.width("\xff\xfe\x01")) -- not UTF-8: bytes
  end)
  it("aligns tables: numbers right, text left", function()
    local t = fmt.table({{name = "a", n = 5}, {name = "bbb", n = 120}},
                        {{key = "name"}, {key = "n", title = "count"}})
    assert.are.equal("name  count\n----  -----\na         5\nbbb     120\n", t)
  end)
  it("writes tsv when asked", function()
    assert.are.equal("name\tn\nx\t1\n",
                     fmt.tsv({{name = "x", n = 1}}, {{key = "name"}, {key = "n"}}))
  end)
end)
