-- eventlog_live.stats: small statistics helpers for analysis scripts.
-- Pure Lua; usable outside the host. docs/lua-api.md §8.
local M = {}

local function sorted_copy(values)
  local s = {}
  for i = 1, #values do s[i] = values[i] end
  table.sort(s)
  return s
end

-- Nearest-rank percentile of values (p in 0..100); nil for no values.
-- values is not modified. Pass sorted = true if it is already sorted.
function M.percentile(values, p, sorted)
  assert(type(p) == "number" and p >= 0 and p <= 100, "p must be 0..100")
  local n = #values
  if n == 0 then return nil end
  local s = sorted and values or sorted_copy(values)
  local rank = math.ceil(p / 100 * n)
  if rank < 1 then rank = 1 end
  return s[rank]
end

-- {n, min, max, sum, mean, p50, p90, p99} of an array of numbers.
function M.summary(values)
  local n = #values
  if n == 0 then return {n = 0, sum = 0} end
  local s = sorted_copy(values)
  local sum = 0
  for i = 1, n do sum = sum + s[i] end
  return {
    n = n, min = s[1], max = s[n], sum = sum, mean = sum / n,
    p50 = M.percentile(s, 50, true), p90 = M.percentile(s, 90, true),
    p99 = M.percentile(s, 99, true),
  }
end

-- Histogram with power-of-two buckets: array of {lo, hi, count} for every
-- bucket from the smallest to the largest non-empty one; a value v >= 1
-- falls in [2^k, 2^(k+1)); values in [0, 1) fall in [0, 1). A value that
-- is not a finite number >= 0 (nil, NaN, inf, negative) is an error
-- naming its index: an infinite one would ask for endless buckets.
-- Bounds past 2^63 are floats.
function M.log2_histogram(values)
  local counts, lo_k, hi_k = {}, nil, nil
  for i = 1, #values do
    local v = values[i]
    if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then
      error(("log2_histogram: values[%d] is %s: values must be finite "
             .. "numbers >= 0"):format(i, tostring(v)), 2)
    end
    local k = -1
    if v >= 1 then k = math.floor(math.log(v, 2)) end
    -- guard against rounding at exact powers of two
    if k >= 0 and 2 ^ (k + 1) <= v then k = k + 1 end
    if k >= 0 and 2 ^ k > v then k = k - 1 end
    counts[k] = (counts[k] or 0) + 1
    if not lo_k or k < lo_k then lo_k = k end
    if not hi_k or k > hi_k then hi_k = k end
  end
  local out = {}
  if not lo_k then return out end
  for k = lo_k, hi_k do
    local lo = k < 0 and 0 or (math.tointeger(2 ^ k) or 2 ^ k)
    local hi = math.tointeger(2 ^ (k + 1)) or 2 ^ (k + 1)
    out[#out + 1] = {lo = lo, hi = hi, count = counts[k] or 0}
  end
  return out
end

-- Counter table helper: inc(t, key, by) -> new value.
function M.inc(t, key, by)
  local v = (t[key] or 0) + (by or 1)
  t[key] = v
  return v
end

return M
