-- The script `eventlog-live report` runs (src/cmd/cmd_report.c,
-- docs/report.md): the daemon's default processors, whose telemetry the
-- report's reducer reads from the store (src/report/report.h), plus what
-- only the page needs, handed to the reducer through
-- eventlog_live.report.native (src/report/rp_lua.c):
--   * the session (program, RTS, clock) for the page's header;
--   * census boundaries (HEAP_PROF_SAMPLE_BEGIN), so the processors'
--     HeapProfSample points can be grouped into censuses;
--   * heap censuses the processors do not turn into points: -hb
--     biographical samples (HEAP_BIO_PROF_SAMPLE_BEGIN + string samples);
--   * the threads table, from the host's thread tracker (el.threads), one
--     list per session.
-- Everything here is low-rate (one call per census sample, per session,
-- once at the end); the scheduler events stay in C.
local el = require("eventlog_live")
local native = require("eventlog_live.report.native")
local status = require("eventlog_live.status")

require("eventlog_live.processors").start(el)

-- {====== session ======}

-- Called as the session becomes known and at its end (its clock may
-- have been tightened meanwhile), then with its last event's Unix time:
-- where each session lies on the page's axis (the charts break their
-- lines between sessions).
el.on_session(native.session)
el.on_session_end(function(s)
  native.session(s, el.now() > 0 and el.unix_ns(el.now()) or nil)
end)

-- {====== heap censuses ======}

local function unix(t) return el.unix_ns(t) end

el.on("HEAP_PROF_SAMPLE_BEGIN", function(ev, era)
  native.census_begin(unix(ev.t))
end)

-- Cost-centre stacks (-hc) come from the processors as HeapProfSample
-- points (heap_prof.lua: labelled by the stack's cost centres from the
-- innermost outwards, "build/main.\.m/main"; a CAF is "<module>.CAF"; the
-- empty stack is MAIN).

-- Biographical profiles (-hb): the processors support no -hb breakdown, so
-- the samples are taken here. A census is dated by its sample_time_ns (GHC
-- writes every census at the end of the run).
local bio_t = nil
el.on("HEAP_BIO_PROF_SAMPLE_BEGIN", function(ev, era, sample_time_ns)
  bio_t = unix(sample_time_ns)
  native.census_begin(bio_t)
end)
el.on("HEAP_PROF_SAMPLE_STRING", function(ev, profile_id, residency, label)
  local s = el.session
  if bio_t and s and s.heap_prof_breakdown == "-hb" then
    native.census_sample(bio_t, label, residency)
  end
end)
el.on("HEAP_PROF_SAMPLE_END", function() bio_t = nil end)

-- {====== threads ======}

-- The threads table lists every session's threads: the tracker starts
-- afresh with each session (a thread id names another thread in each
-- run), so each session's list is handed over at its end (after the
-- helpers' flush), with the session's number and RTS start: the page
-- puts the times on its axis. A report lists every thread: keep up to
-- 100,000 finished ones (the daemon keeps 1,000; docs/lua-api.md §6),
-- ~30 MB at most.
local threads = el.threads{keep_finished = 100000}
el.on_session_end(function(s)
  local list = threads:list()
  for _, t in ipairs(list) do
    if t.status then t.status_name = status.name(t.status) end
  end
  native.threads(list, s.number, s.start_unix_ns)
end)
