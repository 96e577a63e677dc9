-- ended_threads.lua N OUT: write two sessions one after the other (as
-- `cat a b` or a reconnection gives), each a program that makes N
-- labelled threads on capability 0, 10 us apart: thread k is created,
-- labelled "s<session>-<k>", runs 4 us and stops. In session 1 the odd
-- threads finish (STOP_THREAD status 5, ThreadFinished) and the even
-- ones block (status 7, BlockedOnMVar); in session 2 every thread blocks.
-- Session 2's RTS starts 10 s after session 1's (WALL_CLOCK_TIME). So
-- when session 2 begins, session 1's N/2 blocked threads end with it
-- unfinished, and the rest of session 2's end with the input (tests/e2e/
-- test_web_threads.sh: the web view's "other" row with N > 250).
package.path = arg[0]:gsub("[^/]*$", "") .. "../lua/?.lua;" .. package.path
local W = require("eventlog_writer")
local n, out = tonumber(arg[1]), arg[2]
assert(n and out, "usage: lua5.4 ended_threads.lua N OUT")
local f = assert(io.open(out, "wb"))
for s = 1, 2 do
  local b = {cap = 0}
  for k = 1, n do
    local t = k * 10000
    b[#b + 1] = {"CREATE_THREAD", t, k}
    b[#b + 1] = {"THREAD_LABEL", t, k, "s" .. s .. "-" .. k}
    b[#b + 1] = {"RUN_THREAD", t + 1000, k}
    b[#b + 1] = {"STOP_THREAD", t + 5000, k, (s == 1 and k % 2 == 1) and 5 or 7, 0}
  end
  f:write((W.eventlog({
    {{"WALL_CLOCK_TIME", 0, 1, 1700000000 + 10 * (s - 1), 0},
     {"CAPSET_CREATE", 0, 1, 2}, {"CAPSET_ASSIGN_CAP", 0, 1, 0}},
    b,
  })))
end
f:close()
