-- many_threads.lua N OUT: write an eventlog in which a program makes N
-- short-lived threads, one after another, on two capabilities (issue 13:
-- the daemon's memory must not grow with every thread ever made).
--
-- Per thread k (ids 1..N, 10 us apart, capability k % 2): CREATE_THREAD,
-- THREAD_LABEL "worker-k" (every 10th thread), RUN_THREAD, STOP_THREAD
-- with status 5 (ThreadFinished) 4 us later. Every 1000 threads, on the
-- same capability, HEAP_ALLOCATED and HEAP_SIZE. WALL_CLOCK_TIME first, in
-- the global block. Written with tests/lua/eventlog_writer.lua, block by
-- block (at most ~2000 threads a block), so memory stays small.
package.path = arg[0]:gsub("[^/]*$", "") .. "../lua/?.lua;" .. package.path
local W = require("eventlog_writer")
local n, out = tonumber(arg[1]), arg[2]
assert(n and out, "usage: lua5.4 many_threads.lua N OUT")
local f = assert(io.open(out, "wb"))
local bytes = W.eventlog({
  {{"WALL_CLOCK_TIME", 0, 1, 1700000000, 0},
   {"CAPSET_CREATE", 0, 1, 2}, {"CAPSET_ASSIGN_CAP", 0, 1, 0},
   {"CAPSET_ASSIGN_CAP", 0, 1, 1}},
}, {data_end = false})

f:write(bytes)
local PER = 1000
local alloc = 0
for first = 1, n, PER do
  local blocks = {{cap = 0}, {cap = 1}}
  for k = first, math.min(first + PER - 1, n) do
    local t = k * 10000
    local b = blocks[k % 2 + 1]
    b[#b + 1] = {"CREATE_THREAD", t, k}
    if k % 10 == 0 then b[#b + 1] = {"THREAD_LABEL", t, k, "worker-" .. k} end
    b[#b + 1] = {"RUN_THREAD", t + 1000, k}
    b[#b + 1] = {"STOP_THREAD", t + 5000, k, 5, 0}
    if k % 1000 == 0 then
      alloc = alloc + 4096 * 1000
      b[#b + 1] = {"HEAP_ALLOCATED", t + 5000, 1, alloc}
      b[#b + 1] = {"HEAP_SIZE", t + 5000, 1, 8 << 20}
    end
  end
  for _, b in ipairs(blocks) do
    if #b > 0 then f:write(W.block(b)) end
  end
end
f:write(W.DATA_END)
f:close()
