-- eventlog_live.repl: the helpers of `eventlog-live repl` (docs/repl.md).
--
-- Runs inside the host's Lua state, next to the scripts' API: the helpers
-- are ordinary subscriptions (el.on, el.threads, el.gc) made before the
-- first event, plus queries of the REPL's C event store
-- (eventlog_live.repl_store). Every helper returns a table that prints as
-- an aligned text table (its __tostring) and keeps its data in fields, so
-- `s = summary(); s.duration_ns` works.
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
local statl = require("eventlog_live.stats")
local status = require("eventlog_live.status")

local M = {}

-- Settings whose assignment is checked (repl.max_rows = -1 is refused):
-- they live here, reached through M's metatable (set at the end).
local settings = {
  max_rows = 200,  -- rows printed by a list before it is cut (data all there)
}
-- Bounds of what the helpers keep (the store has its own byte bound).
M.limits = {
  points = 200000,     -- heap series points per series
  censuses = 10000,    -- heap censuses
  markers = 100000,    -- USER_MARKER
  messages = 100000,   -- USER_MSG and LOG_MSG
  gc_spans = 1000000,  -- GC pause durations
  threads = 1000000,   -- threads of the sessions that ended (threads())
}
-- What the bounds made the helpers drop, by kind.
M.dropped = {points = 0, censuses = 0, markers = 0, messages = 0,
             gc_spans = 0, threads = 0}

local store          -- eventlog_live.repl_store (C)
local host = {}      -- C callbacks set by the command (load_script, ...)
local threads_tr, gc_tr
-- The trackers start afresh with each session (docs/lua-api.md §6: a
-- thread id names another thread in each run), so each session's threads
-- are kept at its end, with its number; ended_session is the number of the
-- last session kept (its threads are no longer the tracker's to list).
local ended_threads, ended_session = {}, nil
-- Each ended session's el.session, by number (the first 10000, as the
-- store counts them): summary() shows each session's identity.
local session_ids = {}
local gc_ended = {count = 0, total_ns = 0, max_ns = 0, caps = {}}
local gc_spans = {}  -- {cap, start_t, end_t}
local series = {heap_size = {}, heap_live = {}, blocks_size = {}}
local censuses = {}  -- {t, era, samples = {label = bytes}, total}
local cc_labels = {} -- cost-centre id -> "module.label"
local marks, msgs = {}, {}

-- {====== printable results ======}

local kinds = {}

-- A table whose printed form is render(self).
local function printable(kind, data)
  return setmetatable(data, kinds[kind])
end

local function kind(name, render, methods)
  local mt = {__name = "repl." .. name, __tostring = render}
  if methods then mt.__index = methods end
  kinds[name] = mt
end

local function ns(v) return v and fmt.duration(v) or "" end

-- {====== time arguments ======}

local units = {ns = 1, us = 1e3, ms = 1e6, s = 1e9, m = 60e9, min = 60e9}

-- A time in ns from a number (ns) or a string "1.5s", "200ms", "3e8".
function M.time(v, what)
  if v == nil then return nil end
  if type(v) == "number" then return v end
  if type(v) == "string" then
    local n, u = v:match("^%s*([%d%.eE+-]+)%s*(%a*)%s*$")
    n = tonumber(n)
    local mult = units[u == "" and "ns" or u]
    if n and mult then return n * mult end
  end
  error(string.format("%s: expected ns or a duration like '1.5s', got %s",
                      what or "time", tostring(v)), 3)
end

-- The bound of counts, as the messages name it.
local COUNT_RANGE = "a whole number from 1 to 2^63-1 (math.maxinteger)"

-- v as an integer >= 1 (a float with an exact integer value is taken: 1e6,
-- 2^53), or nil.
local function whole(v)
  if math.type(v) == "float" then v = math.tointeger(v) or v end
  if math.type(v) == "integer" and v >= 1 then return v end
  return nil
end

-- A count argument: nil gives default; else whole(v), or an error
-- "<what>: expected <COUNT_RANGE>, got v" at the caller's caller.
local function count(v, what, default)
  if v == nil then return default end
  local n = whole(v)
  if not n then
    error(string.format("%s: expected %s, got %s", what, COUNT_RANGE,
                        tostring(v)), 3)
  end
  return n
end

-- {====== event lists ======}

-- Keys of a stored event that a field of the same name does not hide (the
-- field is then "<name>_field", e.g. BLOCK_MARKER's cap_field).
local reserved = {cap = 1, t = 1, type = 1, seq = 1, session = 1, type_id = 1}

local function fields_text(ev)
  local ti = el.type_info(ev.type)
  if not ti then
    return ev.payload and string.format("payload=%d bytes", #ev.payload) or ""
  end
  local parts = {}
  for _, f in ipairs(ti.fields) do
    local v = ev[f]
    if reserved[f] then v = ev[f .. "_field"] end
    if type(v) == "string" then
      if #v > 80 then v = v:sub(1, 77) .. "..." end
      v = string.format("%q", v):gsub("\\\n", "\\n")
    elseif type(v) == "table" then
      local s = {}
      for i = 1, math.min(#v, 12) do s[i] = tostring(v[i]) end
      if #v > 12 then s[#s + 1] = "..." end
      v = "[" .. table.concat(s, ",") .. "]"
    end
    if v ~= nil then parts[#parts + 1] = f .. "=" .. tostring(v) end
  end
  return table.concat(parts, " ")
end

local function render_events(self)
  local rows = {}
  local n = math.min(#self, M.max_rows)
  for i = 1, n do
    local ev = self[i]
    rows[i] = {seq = ev.seq, t = ev.t, cap = ev.cap or "-", type = ev.type,
               fields = fields_text(ev)}
  end
  local out = {fmt.table(rows, {
    {key = "seq", align = "right"}, {key = "t", title = "time ns", align = "right"},
    {key = "cap", align = "right"}, {key = "type", align = "left"},
    {key = "fields", align = "left"},
  })}
  if n < #self then
    out[#out + 1] = string.format("... %d more rows not shown "
      .. "(repl.max_rows = %d; index the list or use :rows(i, j))\n",
      #self - n, M.max_rows)
  end
  if self.matched > #self then
    out[#out + 1] = string.format("%d events (of %d matching)\n", #self,
                                  self.matched)
  else
    out[#out + 1] = string.format("%d events\n", #self)
  end
  if self.dropped > 0 then
    out[#out + 1] = string.format("note: %d older events were dropped "
      .. "from the store (bound %s)\n", self.dropped,
      fmt.bytes(store.stats().max_bytes))
  end
  return table.concat(out)
end

kind("events", render_events, {
  -- A new list with the rows i..j (for printing long lists in parts).
  rows = function(self, i, j)
    local out = {matched = 0, dropped = 0}
    for k = i or 1, math.min(j or #self, #self) do out[#out + 1] = self[k] end
    out.matched = #out
    return printable("events", out)
  end,
})

local function event_list(list, matched)
  list.matched = matched
  list.dropped = store.stats().dropped
  return printable("events", list)
end

local function upper_types(v)
  if type(v) == "string" then return v:upper() end
  if type(v) == "table" then
    local out = {}
    for i, s in ipairs(v) do out[i] = type(s) == "string" and s:upper() or s end
    return out
  end
  return v
end

-- events{type=, cap=, thread=, from=, to=, session=, text=, limit=, last=}
-- An unknown key is an error (a misspelt filter would list everything);
-- limit and last are whole numbers >= 1.
local EVENT_KEY_LIST = {"type", "cap", "thread", "from", "to", "session",
                        "text", "limit", "last"}
local EVENT_KEYS = {}
for _, k in ipairs(EVENT_KEY_LIST) do EVENT_KEYS[k] = true end

function M.events(f)
  f = f or {}
  if type(f) == "string" then f = {type = f} end
  if type(f) ~= "table" then error("events: expected a filter table", 2) end
  local q = {}
  for k, v in pairs(f) do
    if not EVENT_KEYS[k] then
      error(("events: unknown filter '%s' (use %s)"):format(tostring(k),
            table.concat(EVENT_KEY_LIST, ", ")), 2)
    end
    q[k] = v
  end
  q.limit = f.limit ~= nil and count(f.limit, "events: limit") or nil
  q.last = f.last ~= nil and count(f.last, "events: last") or nil
  q.type = upper_types(f.type)
  q.from = M.time(f.from, "from")
  q.to = M.time(f.to, "to")
  if q.limit == nil and q.last == nil then q.limit = 100000 end
  local ok, list, matched = pcall(store.query, q)
  if not ok then error("events: " .. tostring(list), 2) end
  return event_list(list, matched)
end

function M.head(n)
  local list, matched = store.query{limit = count(n, "head", 10)}
  return event_list(list, matched)
end

function M.tail(n)
  local list, matched = store.query{last = count(n, "tail", 10)}
  return event_list(list, matched)
end

-- {====== summary ======}

-- The identity lines of session s (a summary, or one of its per_session
-- entries) into add(key, value).
local function identity_lines(s, add)
  add("capabilities", string.format("%d: %s", #s.caps,
      table.concat(s.caps, ", ")))
  add("rts version", s.rts_version or "?")
  add("program args", s.args and table.concat(s.args, " ") or "?")
  add("pid", s.pid and string.format("%d (parent %s)", s.pid,
      tostring(s.ppid or "?")) or "?")
  if s.heap_prof_breakdown then
    add("heap profile", string.format("%s every %s", s.heap_prof_breakdown,
        ns(s.heap_prof_interval_ns)))
  end
  if s.start_unix_ns then
    -- exact from WALL_CLOCK_TIME; else said as the estimate it is
    local from = {arrival = " (estimated from arrival: no WALL_CLOCK_TIME)",
      file_mtime = " (estimated from the file's time: no WALL_CLOCK_TIME)",
      next_session = " (estimated from the next session)"}
    add("started", os.date("!%Y-%m-%d %H:%M:%S UTC",
        s.start_unix_ns // 1000000000) .. (from[s.clock_from] or ""))
  end
end

local function counts_table(counts, events)
  local rows = {}
  for _, c in ipairs(counts) do
    rows[#rows + 1] = {type = c.type, count = c.count,
      share = string.format("%.1f%%", 100 * c.count / math.max(1, events))}
  end
  return fmt.table(rows, {
    {key = "type", title = "event type", align = "left"},
    {key = "count", align = "right"}, {key = "share", align = "right"},
  })
end

local SESSIONS_SHOWN = 20  -- session blocks printed; all are in the data

kind("summary", function(s)
  local lines = {}
  local function add(k, v) lines[#lines + 1] = string.format("%-13s %s", k, v) end
  add("source", s.source or "")
  add("sessions", tostring(s.sessions))
  if s.first_t then
    add("duration", string.format("%s (%d ns, from %d to %d ns)",
        fmt.duration(s.duration_ns), s.duration_ns, s.first_t, s.last_t))
  else -- several sessions, each on its own clock (ns since its RTS start)
    add("duration", string.format("%s (%d ns: the sum of the %d sessions' "
        .. "own durations)", fmt.duration(s.duration_ns), s.duration_ns,
        #s.per_session))
  end
  add("events", string.format("%d (stored %d, dropped %d)", s.events,
      s.stored, s.dropped))
  if s.sessions <= 1 or #s.per_session == 0 then
    identity_lines(s, add)
    return table.concat(lines, "\n") .. "\n\n" .. counts_table(s.counts,
                                                               s.events)
  end
  -- Several sessions: each one's identity with its own counts (h60: the
  -- last one's identity was shown next to every session's counts).
  local out = {table.concat(lines, "\n")}
  for i, p in ipairs(s.per_session) do
    if i > SESSIONS_SHOWN then
      out[#out + 1] = string.format("(%d more sessions: summary()"
        .. ".per_session)", #s.per_session - SESSIONS_SHOWN)
      break
    end
    lines = {}
    add("session " .. p.number, string.format("%d events, %s (%d ns, from "
      .. "%d to %d ns)", p.events, fmt.duration(p.duration_ns),
      p.duration_ns, p.first_t, p.last_t))
    identity_lines(p, add)
    out[#out + 1] = table.concat(lines, "\n") .. "\n\n"
      .. counts_table(p.counts, p.events)
  end
  out[#out + 1] = "all sessions\n\n" .. counts_table(s.counts, s.events)
  return table.concat(out, "\n\n")
end)

-- Sort list (of tables) by field `by`, largest first; equal ones by field
-- `tie`, smallest first (a stable, readable order).
local function sort_desc(list, by, tie)
  table.sort(list, function(a, b)
    if a[by] ~= b[by] then return a[by] > b[by] end
    return a[tie] < b[tie]
  end)
end

-- The counts {[type] = n} as an array of {type, count}, largest first.
local function count_list(by_type)
  local counts = {}
  for name, n in pairs(by_type) do
    counts[#counts + 1] = {type = name, count = n}
  end
  sort_desc(counts, "count", "type")
  return counts
end

-- The identity fields of session table sess (el.session) into t.
local function identity(sess, t)
  local caps = {}
  for i, c in ipairs(sess.caps or {}) do caps[i] = c end
  t.caps, t.rts_version, t.args, t.pid = caps, sess.rts_version, sess.args,
    sess.pid
  t.ppid, t.heap_prof_breakdown = sess.ppid, sess.heap_prof_breakdown
  t.heap_prof_interval_ns = sess.heap_prof_interval_ns
  t.start_unix_ns, t.clock_from = sess.start_unix_ns, sess.clock_from
  return t
end

-- Each session counted one by one by the store (its first 10000), with
-- its identity (el.session as it ended, or the current one) and counts.
local function per_session()
  local list = {}
  for i, c in ipairs(store.sessions and store.sessions() or {}) do
    local sess = session_ids[i]
    if not sess and el.session and el.session.number == i then
      sess = el.session
    end
    list[i] = identity(sess or {}, {
      number = i, events = c.events, first_t = c.min_t, last_t = c.max_t,
      duration_ns = c.max_t - c.min_t, counts = count_list(store.counts(i)),
    })
  end
  return list
end

function M.summary()
  local st = store.stats()
  local list = per_session()
  local s = identity(el.session or {}, {
    source = host.source, sessions = st.sessions, events = st.events,
    stored = st.stored, dropped = st.dropped,
    first_t = st.min_t, last_t = st.max_t,
    duration_ns = st.max_t - st.min_t,
    counts = count_list(store.counts()), per_session = list,
  })
  if #list > 1 then
    -- Times are ns since each session's own RTS start: the lowest and
    -- highest over all sessions are no span of time (h62). The duration
    -- is the sum of the sessions' own; first_t and last_t are per session.
    local sum = 0
    for _, p in ipairs(list) do sum = sum + p.duration_ns end
    s.duration_ns, s.first_t, s.last_t = sum, nil, nil
  end
  return printable("summary", s)
end

-- One line after a file was loaded.
function M.loaded_line()
  local s = M.summary()
  local dropped = s.dropped > 0 and string.format(" (the oldest %d are not "
    .. "kept: --store-mb)", s.dropped) or ""
  if s.sessions > 1 then  -- one session's capabilities and RTS: not all's
    return string.format("loaded %s: %d events%s, %s, %d sessions; type "
      .. ":help", s.source or "input", s.events, dropped,
      fmt.duration(s.duration_ns), s.sessions)
  end
  return string.format("loaded %s: %d events%s, %s, %d %s, %s; "
    .. "type :help", s.source or "input", s.events, dropped,
    fmt.duration(s.duration_ns), #s.caps,
    #s.caps == 1 and "capability" or "capabilities",
    s.rts_version or "unknown RTS")
end

-- {====== threads ======}

-- The session column, when the rows hold more than one session.
local function session_cols(self, cols)
  if #self > 0 and self[1].session ~= self[#self].session then
    table.insert(cols, 1, {key = "session", align = "right"})
  end
  return cols
end

-- " (session 1: 9, session 2: 9)" when the rows hold several sessions
-- (in session order), else "".
local function per_session(self)
  if #self == 0 or self[1].session == self[#self].session then return "" end
  local parts, n = {}, 0
  for i, t in ipairs(self) do
    n = n + 1
    local nxt = self[i + 1]
    if not nxt or nxt.session ~= t.session then
      parts[#parts + 1] = string.format("session %s: %d", t.session, n)
      n = 0
    end
  end
  return " (" .. table.concat(parts, ", ") .. ")"
end

kind("threads", function(self)
  local rows = {}
  for i, t in ipairs(self) do
    local reasons = {}
    for code, v in pairs(t.blocked or {}) do
      reasons[#reasons + 1] = {name = status.name(code), ns = v}
    end
    table.sort(reasons, function(a, b) return a.ns > b.ns end)
    local r = {}
    for k = 1, math.min(2, #reasons) do
      r[k] = string.format("%s %s", reasons[k].name, fmt.duration(reasons[k].ns))
    end
    local stop = t.finished_t or t.last_t
    local start = t.created_t or t.first_t
    rows[i] = {session = t.session, thread = t.thread, label = t.label or "",
      state = t.state,
      created = start and fmt.duration(start) or "",
      lifetime = (start and stop) and fmt.duration(stop - start) or "",
      runs = t.runs, running = fmt.duration(t.running_ns),
      blocked = fmt.duration(t.blocked_ns), reasons = table.concat(r, ", ")}
  end
  local s = fmt.table(rows, session_cols(self, {
    {key = "thread"}, {key = "label", align = "left"},
    {key = "state", align = "left"}, {key = "created", align = "right"},
    {key = "lifetime", align = "right"}, {key = "runs"},
    {key = "running", align = "right"}, {key = "blocked", align = "right"},
    {key = "reasons", title = "blocked on (longest)", align = "left"},
  }))
  if (self.dropped or 0) > 0 then
    s = s .. string.format("note: %d threads of ended sessions beyond "
      .. "repl.limits.threads not listed\n", self.dropped)
  end
  return s .. string.format("%d threads%s\n", #self, per_session(self))
end)

-- Every session's threads: those of the sessions that ended, then the
-- current session's if it goes on (live); rows by session, then thread id.
function M.threads()
  local list = {}
  for i, t in ipairs(ended_threads) do list[i] = t end
  local cur = el.session and el.session.number or 0
  if cur ~= ended_session then
    for _, t in ipairs(threads_tr:list()) do
      t.session = cur
      list[#list + 1] = t
    end
  end
  list.dropped = M.dropped.threads
  return printable("threads", list)
end

-- {====== GC ======}

kind("gc", function(self)
  local rows = {}
  for _, r in ipairs(self.rows) do
    rows[#rows + 1] = {cap = r.cap, count = r.count, total = ns(r.total_ns),
      mean = ns(r.mean_ns), p50 = ns(r.p50_ns), p90 = ns(r.p90_ns),
      p99 = ns(r.p99_ns), max = ns(r.max_ns)}
  end
  local s = fmt.table(rows, {
    {key = "cap", align = "right"}, {key = "count"},
    {key = "total", align = "right"}, {key = "mean", align = "right"},
    {key = "p50", align = "right"}, {key = "p90", align = "right"},
    {key = "p99", align = "right"}, {key = "max", align = "right"},
  })
  if self.dropped > 0 then
    s = s .. string.format("note: %d pauses beyond repl.limits.gc_spans "
      .. "not in the percentiles\n", self.dropped)
  end
  return s .. "GC pauses: GC_START..GC_END per capability\n"
end)

-- Add the el.gc stats st ({count, total_ns, max_ns, caps}) into acc.
local function gc_add(acc, st)
  acc.count = acc.count + (st.count or 0)
  acc.total_ns = acc.total_ns + (st.total_ns or 0)
  acc.max_ns = math.max(acc.max_ns, st.max_ns or 0)
  for cap, c in pairs(st.caps or {}) do
    local a = acc.caps[cap] or {count = 0, total_ns = 0, max_ns = 0}
    acc.caps[cap] = a
    a.count, a.total_ns = a.count + c.count, a.total_ns + c.total_ns
    a.max_ns = math.max(a.max_ns, c.max_ns)
  end
  return acc
end

-- The el.gc helper's totals over every session (it starts afresh with
-- each): the ended sessions' and the current one's if it goes on.
local function gc_stats()
  local acc = gc_add({count = 0, total_ns = 0, max_ns = 0, caps = {}},
                     gc_ended)
  local cur = el.session and el.session.number or 0
  if cur ~= ended_session then gc_add(acc, gc_tr:stats()) end
  return acc
end

function M.gc()
  local per, all = {}, {}
  for _, sp in ipairs(gc_spans) do
    local d = sp[3] - sp[2]
    per[sp[1]] = per[sp[1]] or {}
    table.insert(per[sp[1]], d)
    all[#all + 1] = d
  end
  local function row(cap, v)
    local s = statl.summary(v)
    return {cap = cap, count = s.n, total_ns = s.sum, mean_ns = s.mean,
            p50_ns = s.p50, p90_ns = s.p90, p99_ns = s.p99, max_ns = s.max}
  end
  local caps = {}
  for c in pairs(per) do caps[#caps + 1] = c end
  table.sort(caps)
  local rows = {}
  for _, c in ipairs(caps) do rows[#rows + 1] = row(c, per[c]) end
  rows[#rows + 1] = row("all", all)
  return printable("gc", {rows = rows, dropped = M.dropped.gc_spans,
                          stats = gc_stats()})
end

-- {====== heap ======}

-- Indexes of want (>= 1) of the points 1..n spread evenly over them: all
-- of them when n <= want, else the first and the last among them (want =
-- 1: the last).
local function spread(n, want)
  local idx = {}
  if n <= want then
    for i = 1, n do idx[i] = i end
  elseif want == 1 then
    idx[1] = n
  else
    for k = 0, want - 1 do
      idx[k + 1] = 1 + (k * (n - 1) + (want - 1) // 2) // (want - 1)
    end
  end
  return idx
end

kind("heap", function(self)
  local rows, n = {}, #self.rows
  for _, i in ipairs(spread(n, self.n or 25)) do
    local r = self.rows[i]
    rows[#rows + 1] = {session = r.session, t = r.t, time = fmt.duration(r.t),
      heap_size = fmt.bytes(r.heap_size), heap_live = fmt.bytes(r.heap_live),
      blocks_size = fmt.bytes(r.blocks_size)}
  end
  local cols = {
    {key = "t", title = "time ns"}, {key = "time", align = "right"},
    {key = "heap_size", title = "heap size", align = "right"},
    {key = "heap_live", title = "live", align = "right"},
    {key = "blocks_size", title = "blocks", align = "right"},
  }
  if n > 0 and self.rows[1].session ~= self.rows[n].session then
    table.insert(cols, 1, {key = "session", align = "right"})
  end
  local s = fmt.table(rows, cols)
  return s .. string.format("%d points (showing %d); max heap %s, max live %s\n",
    n, #rows, fmt.bytes(self.max_heap_size), fmt.bytes(self.max_heap_live))
end)

-- heap(n): the HEAP_SIZE / HEAP_LIVE / BLOCKS_SIZE series merged on time,
-- session by session (each run of the program starts again at time 0 and
-- with no value), printed as n rows spread over them, the first and the
-- last included (default 25); a session column when there are several.
function M.heap(n)
  n = count(n, "heap", 25)
  local pts = {}
  for name, s in pairs(series) do
    for _, p in ipairs(s) do
      pts[#pts + 1] = {t = p[1], k = name, v = p[2], s = p[3] or 0}
    end
  end
  table.sort(pts, function(a, b)
    if a.s ~= b.s then return a.s < b.s end
    return a.t < b.t
  end)
  local rows, cur, maxs, maxl = {}, {}, nil, nil
  for _, p in ipairs(pts) do
    local last = rows[#rows]
    if last and last.session ~= p.s then cur, last = {}, nil end
    cur[p.k] = p.v
    if last and last.t == p.t then
      last[p.k] = p.v
    else
      rows[#rows + 1] = {session = p.s, t = p.t, heap_size = cur.heap_size,
        heap_live = cur.heap_live, blocks_size = cur.blocks_size}
    end
    if p.k == "heap_size" and (not maxs or p.v > maxs) then maxs = p.v end
    if p.k == "heap_live" and (not maxl or p.v > maxl) then maxl = p.v end
  end
  return printable("heap", {rows = rows, n = n, max_heap_size = maxs,
                            max_heap_live = maxl, series = series})
end

-- {====== heap census ======}

kind("census", function(self)
  if not self.t then
    return self.asked and
      string.format("no heap census seen in session %s\n", self.asked) or
      "no heap census seen\n"
  end
  local rows = {}
  for i, r in ipairs(self.samples) do
    if i > (self.n or 20) then break end
    rows[i] = {label = r.label, bytes = r.bytes, size = fmt.bytes(r.bytes),
      share = string.format("%.1f%%", 100 * r.bytes / math.max(1, self.total))}
  end
  return string.format("census at %d ns (%s%s), era %s: %d labels, %s total\n",
    self.t, fmt.duration(self.t),
    self.sessions and self.sessions > 1 and
      string.format(" of session %d", self.session) or "",
    tostring(self.era), #self.samples, fmt.bytes(self.total)) .. fmt.table(rows, {
      {key = "label", align = "left"}, {key = "bytes"},
      {key = "size", align = "right"}, {key = "share", align = "right"},
    })
end)

-- census(t, n, session): the census nearest time t (ns or "1.5s";
-- default: the last) of a session (default: the last session with a
-- census; each run of the program starts again at time 0), its n largest
-- labels (default 20).
function M.census(t, n, session)
  t = M.time(t, "census time")
  n = count(n, "census", 20)
  if t and (t ~= t or t == math.huge or t == -math.huge) then
    error("census: the time must be a finite number, got " .. tostring(t), 2)
  end
  if session ~= nil and math.type(session) ~= "integer" then
    error("census: the session must be a whole number, got " ..
          tostring(session), 2)
  end
  -- the sessions with a census (in order), and the one looked in
  local nsess, last = 0, nil
  for _, c in ipairs(censuses) do
    if c.session ~= last then nsess, last = nsess + 1, c.session end
  end
  session = session or last
  -- the nearest census, by exact integer distances: census times are ns
  -- since the start (0 to 2^62), so t is clamped to that range first; a
  -- time far beyond the run picks the last census, before it the first
  if t then t = math.floor(math.max(0, math.min(t, 2^62))) // 1 end
  local best
  for _, c in ipairs(censuses) do
    if c.session == session and
       (not best or (t and math.abs(c.t - t) < math.abs(best.t - t))
        or (not t and c.t >= best.t)) then
      best = c
    end
  end
  if not best then
    return printable("census", {samples = {}, total = 0,
                                asked = nsess > 0 and session or nil})
  end
  local samples = {}
  for label, bytes in pairs(best.samples) do
    samples[#samples + 1] = {label = label, bytes = bytes}
  end
  sort_desc(samples, "bytes", "label")
  return printable("census", {t = best.t, era = best.era, total = best.total,
                              samples = samples, n = n,
                              count = #censuses, session = best.session,
                              sessions = nsess})
end

-- {====== markers and messages ======}

-- By session (another run of the program), then by time.
local function text_list(kind_name, list, title)
  local sorted = {}
  for i, m in ipairs(list) do sorted[i] = m end
  table.sort(sorted, function(a, b)
    if a.session ~= b.session then return a.session < b.session end
    return a.t < b.t
  end)
  return printable(kind_name, sorted)
end

kind("markers", function(self)
  local rows = {}
  for i, m in ipairs(self) do
    if i > M.max_rows then break end
    local nxt = self[i + 1]
    if nxt and nxt.session ~= m.session then nxt = nil end -- another run
    rows[i] = {session = m.session, t = m.t, cap = m.cap or "-", text = m.text,
               delta = nxt and fmt.duration(nxt.t - m.t) or ""}
  end
  return fmt.table(rows, session_cols(self, {
    {key = "t", title = "time ns", align = "right"}, {key = "cap", align = "right"},
    {key = "text", title = "marker", align = "left"},
    {key = "delta", title = "to next", align = "right"},
  })) .. string.format("%d markers\n", #self)
end)

kind("messages", function(self)
  local rows = {}
  for i, m in ipairs(self) do
    if i > M.max_rows then break end
    rows[i] = {session = m.session, t = m.t, cap = m.cap or "-", type = m.type,
               text = m.text}
  end
  return fmt.table(rows, session_cols(self, {
    {key = "t", title = "time ns", align = "right"}, {key = "cap", align = "right"},
    {key = "type", align = "left"}, {key = "text", title = "message", align = "left"},
  })) .. string.format("%d messages\n", #self)
end)

function M.markers() return text_list("markers", marks) end
function M.messages() return text_list("messages", msgs) end

-- {====== help ======}

M.helpers = {
  {"summary()", "duration, events per type, capabilities, RTS, args, pid"},
  {"head(n)", "the first n stored events (default 10)"},
  {"tail(n)", "the last n stored events (default 10)"},
  {"events{...}", "filter: type=, cap=, thread=, from=, to=, session=, text=, limit=, last="},
  {"threads()", "per thread: label, state, lifetime, running time, blocked reasons"},
  {"gc()", "GC pauses per capability: count, total, mean, p50/p90/p99, max"},
  {"heap(n)", "heap size / live / blocks series (n rows, default 25)"},
  {"census(t, n, s)", "heap census nearest time t (ns or '1.5s') of session s, top n labels"},
  {"markers()", "USER_MARKER events with the time to the next"},
  {"messages()", "USER_MSG and LOG_MSG events"},
  {"help()", "this text"},
}
M.commands = {
  {":load FILE.lua", "run a script (same API as `eventlog-live run`)"},
  {":help", "this text"},
  {":quit", "leave (also Ctrl-D)"},
}

function M.help()
  local rows = {}
  for _, h in ipairs(M.helpers) do rows[#rows + 1] = {name = h[1], what = h[2]} end
  for _, h in ipairs(M.commands) do rows[#rows + 1] = {name = h[1], what = h[2]} end
  return setmetatable({}, {__tostring = function()
    return "Lua 5.4 with the script API in `el` (docs/lua-api.md); "
      .. "expressions print their value.\n"
      .. fmt.table(rows, {{key = "name", title = "helper", align = "left"},
                          {key = "what", title = "", align = "left"}})
      .. "Times are ns since RTS start; durations also as strings: '1.5s', "
      .. "'200ms'.\nDocs: docs/repl.md\n"
  end})
end

-- {====== evaluation ======}

-- A readable form of a value: __tostring if any, else a short table dump.
function M.repr(v, depth, seen)
  depth = depth or 0
  local mt = getmetatable(v)
  if type(mt) == "table" and mt.__tostring then return tostring(v) end
  if type(v) == "string" then
    return depth == 0 and v or string.format("%q", v)
  end
  if type(v) ~= "table" then return tostring(v) end
  seen = seen or {}
  if seen[v] or depth >= 3 then return tostring(v) end
  seen[v] = true
  local parts, n = {}, 0
  local len = #v
  for i = 1, len do
    n = n + 1
    if n > 50 then parts[#parts + 1] = "..."; break end
    parts[#parts + 1] = M.repr(v[i], depth + 1, seen)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= len) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then
      return a < b
    end
    return type(a) < type(b)
  end)
  for _, k in ipairs(keys) do
    n = n + 1
    if n > 50 then parts[#parts + 1] = "..."; break end
    local ks = type(k) == "string" and k:match("^[%a_][%w_]*$") and k
               or "[" .. M.repr(k, depth + 1, seen) .. "]"
    parts[#parts + 1] = ks .. " = " .. M.repr(v[k], depth + 1, seen)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- Where errors and syntax errors go: stderr, after what the input printed
-- to stdout so far (tests replace it).
function M.err(...)
  io.stdout:flush()
  io.stderr:write(...)
end

local function traceback(msg)
  if type(msg) ~= "string" then
    local mt = getmetatable(msg)
    if mt and mt.__tostring then msg = tostring(msg)
    else msg = "(error object is a " .. type(msg) .. " value)" end
  end
  local tb = debug.traceback(msg, 2)
  -- cut the frames of the REPL itself
  local cut = tb:find("\n%s*%[C%]: in function 'xpcall'")
  if cut then tb = tb:sub(1, cut - 1) end
  return tb
end

local function command(line)
  local cmd, rest = line:match("^%s*:(%S*)%s*(.-)%s*$")
  if cmd == "q" or cmd == "quit" or cmd == "exit" then return "quit" end
  if cmd == "help" or cmd == "h" or cmd == "" then
    io.write(tostring(M.help()))
    return "ok"
  end
  if cmd == "load" or cmd == "l" then
    if rest == "" then
      M.err(":load wants a file name\n")
      return "error"
    end
    if not host.load_script then
      M.err(":load is not available here\n")
      return "error"
    end
    local ok, err = host.load_script(rest)
    if not ok then
      M.err(tostring(err), "\n")
      return "error"
    end
    return "ok"
  end
  M.err(string.format("unknown command :%s (try :help)\n", cmd))
  return "error"
end

-- Evaluate one input (one or more lines). Returns "ok", "error",
-- "incomplete" (more lines wanted), "quit" or "error_quit". Prints
-- results and errors. A ":" command line after unfinished lines ends
-- them: their syntax error is printed, then the command runs, and the
-- status is "error" ("error_quit" for :quit): the input failed.
function M.eval(code)
  if code:match("^%s*:") then return command(code) end
  local head, last = code:match("^(.*)\n(%s*:[^\n]*)$")
  if head then
    -- A command ends an unfinished input: that input is an error (the
    -- command still runs; "error_quit" when it was :quit).
    local fn, err = load(head, "=stdin", "t")
    if fn then return command(last) end
    M.err(err, "\n")
    return command(last) == "quit" and "error_quit" or "error"
  end
  if code:match("^%s*$") then return "ok" end
  local fn, err = load("return " .. code, "=stdin", "t")
  local expr = fn ~= nil
  if not fn then
    local err1 = err
    fn, err = load(code, "=stdin", "t")
    if not fn then
      -- unfinished as a statement or as an expression ("1 +"): more lines
      if err:match("<eof>$") or err1:match("<eof>$") then
        return "incomplete"
      end
      M.err(err, "\n")
      return "error"
    end
  end
  -- An expression runs as the arguments of an identity function, not as
  -- `return f(x)`: a tail call would drop the input's frame, and an error
  -- a helper raises for its caller (error(msg, 2): events{type = "BOGUS"})
  -- would lose its "stdin:1:" (h69). No name is added, and `...` is still
  -- the input's own (empty) varargs (h72).
  local wrapped = expr and load("return (function(...) return ... end)(" ..
                                code .. "\n)", "=stdin", "t")
  local res = table.pack(xpcall(wrapped or fn, traceback))
  if not res[1] then
    M.err(tostring(res[2]), "\n")
    return "error"
  end
  if res.n > 1 then
    local parts = {}
    for i = 2, res.n do parts[#parts + 1] = M.repr(res[i]) end
    local s = table.concat(parts, "\t")
    io.write(s, s:sub(-1) == "\n" and "" or "\n")
  end
  return "ok"
end

-- {====== completion ======}

local keywords = {"and", "break", "do", "else", "elseif", "end", "false",
  "for", "function", "goto", "if", "in", "local", "nil", "not", "or",
  "repeat", "return", "then", "true", "until", "while"}

-- The __index table of v's metatable (a string's is `string`), or nil.
local function index_table(v)
  local mt = getmetatable(v)
  if type(mt) == "table" and type(rawget(mt, "__index")) == "table" then
    return rawget(mt, "__index")
  end
  return nil
end

-- The names of t's fields (a string's methods: through its metatable's
-- __index, as for a table) into the set out. Only tables go into seen
-- (a NaN cannot be a key); each table once, so a cycle of __index
-- tables ends.
local function keys_of(t, out, seen)
  if type(t) == "table" then
    if seen[t] then return end
    seen[t] = true
    for k in pairs(t) do
      if type(k) == "string" and k:match("^[%a_][%w_]*$") then
        out[k] = true
      end
    end
  end
  if t ~= nil then keys_of(index_table(t), out, seen) end
end

-- t[k] without calling metamethods: the raw field, else the same through
-- the __index tables, at most 100 deep (a table that is its own __index
-- ends, as Lua's own "'__index' chain too long" does).
local function field(t, k)
  for _ = 1, 100 do
    if t == nil then return nil end
    if type(t) == "table" then
      local v = rawget(t, k)
      if v ~= nil then return v end
    end
    t = index_table(t)
  end
  return nil
end

local type_names  -- event type names, for completion (built once)

local function event_names()
  if type_names then return type_names end
  type_names = {}
  for id = 0, 1023 do
    local ti = el.type_info(id)
    if ti then type_names[#type_names + 1] = ti.name end
  end
  return type_names
end

-- Completions of the word `text` (at byte `start`, 0-based, of the input
-- `line`): an array of whole words, sorted; or nil, "files" after :load.
-- ":lo" -> commands; "el.o" -> fields of el; "su" -> globals, keywords;
-- "USER_M" -> event type names.
function M.complete(text, line, start)
  local out = {}
  if line and start and start > 0
     and line:sub(1, start):match("^%s*:l[oad]*%s+$") then
    return nil, "files"
  end
  if text:match("^[A-Z][A-Z0-9_]*$") then
    for _, name in ipairs(event_names()) do
      if name:sub(1, #text) == text then out[#out + 1] = name end
    end
    if #out > 0 then table.sort(out) return out end
  end
  if text:sub(1, 1) == ":" then
    -- ":load " with its space: a file name follows (the line editor adds
    -- none after a completion)
    for _, c in ipairs({":load ", ":help", ":quit"}) do
      if c:sub(1, #text) == text then out[#out + 1] = c end
    end
    return out
  end
  local prefix, sep, partial = text:match("^(.-)([%.:])([%w_]*)$")
  local names = {}
  if prefix and prefix ~= "" then
    if not prefix:match("^[%a_][%w_]*$")
       and not prefix:match("^[%a_][%w_%.]*[%w_]$") then
      return out
    end
    local obj = _G
    for name in prefix:gmatch("[^%.]+") do
      obj = field(obj, name)
      if obj == nil then return out end
    end
    keys_of(obj, names, {})
    for k in pairs(names) do
      if k:sub(1, #partial) == partial
         and (sep == "." or type(field(obj, k)) == "function") then
        out[#out + 1] = prefix .. sep .. k
      end
    end
  else
    partial = text
    keys_of(_G, names, {})
    for _, k in ipairs(keywords) do names[k] = true end
    for k in pairs(names) do
      if k:sub(1, #partial) == partial then out[#out + 1] = k end
    end
  end
  table.sort(out)
  return out
end

-- {====== subscriptions ======}

local function push(list, item, limit_key)
  if #list >= M.limits[limit_key] then
    M.dropped[limit_key] = M.dropped[limit_key] + 1
    return
  end
  list[#list + 1] = item
end

-- Set up the helpers: call once, before the first event. c: the
-- command's callbacks {store = repl_store module, source = description,
-- load_script = function(path) -> true | nil, msg}. Defines the globals.
function M.install(c)
  c = c or {}
  host = c
  store = c.store or require("eventlog_live.repl_store")
  threads_tr = el.threads()
  el.on_session_end(function(sess)
    ended_session = sess and sess.number or 0
    if sess and ended_session >= 1 and ended_session <= 10000 then
      session_ids[ended_session] = sess
    end
    gc_add(gc_ended, gc_tr:stats())
    for _, t in ipairs(threads_tr:list()) do
      t.session = ended_session
      push(ended_threads, t, "threads")
    end
  end)
  gc_tr = el.gc{on_span = function(cap, s, e)
    push(gc_spans, {cap, s, e}, "gc_spans")
  end}
  local function series_on(name, key)
    el.on(name, function(ev, _, bytes)
      push(series[key], {ev.t, bytes, el.session and el.session.number or 0},
           "points")
    end)
  end
  series_on("HEAP_SIZE", "heap_size")
  series_on("HEAP_LIVE", "heap_live")
  series_on("BLOCKS_SIZE", "blocks_size")
  local cur
  el.on("HEAP_PROF_COST_CENTRE", function(ev, id, label, module)
    cc_labels[id] = module .. "." .. label
  end)
  el.on("HEAP_PROF_SAMPLE_BEGIN", function(ev, era)
    cur = {t = ev.t, era = era, samples = {}, total = 0,
           session = el.session and el.session.number or 0}
    push(censuses, cur, "censuses")
  end)
  el.on("HEAP_PROF_SAMPLE_STRING", function(ev, _, bytes, label)
    if not cur then return end
    cur.samples[label] = (cur.samples[label] or 0) + bytes
    cur.total = cur.total + bytes
  end)
  el.on("HEAP_PROF_SAMPLE_COST_CENTRE", function(ev, _, bytes, _, stack)
    if not cur then return end
    local label = stack[1] and (cc_labels[stack[1]] or ("cc " .. stack[1]))
                  or "(no cost centre)"
    cur.samples[label] = (cur.samples[label] or 0) + bytes
    cur.total = cur.total + bytes
  end)
  el.on("HEAP_PROF_SAMPLE_END", function() cur = nil end)
  el.on("USER_MARKER", function(ev, text)
    push(marks, {t = ev.t, cap = ev.cap, text = text,
                 session = el.session and el.session.number or 0}, "markers")
  end)
  local function msg_on(name)
    el.on(name, function(ev, text)
      push(msgs, {t = ev.t, cap = ev.cap, type = name, text = text,
                  session = el.session and el.session.number or 0}, "messages")
    end)
  end
  msg_on("USER_MSG")
  msg_on("LOG_MSG")
  for _, name in ipairs({"summary", "head", "tail", "events", "threads",
                         "gc", "heap", "census", "markers", "messages",
                         "help"}) do
    _G[name] = M[name]
  end
  _G.el = el
  _G.fmt = fmt
  _G.repl = M
  return M
end

-- repl.max_rows reads and writes `settings`; a value that is not
-- COUNT_RANGE is refused where it is assigned (a negative one printed
-- "... 4 more rows not shown" under 3 rows). Completion finds the
-- settings through __index (a table).
setmetatable(M, {
  __index = settings,
  __newindex = function(t, k, v)
    if settings[k] == nil then rawset(t, k, v) return end
    local n = whole(v)
    if not n then
      error(string.format("repl.%s: expected %s, got %s", k, COUNT_RANGE,
                          tostring(v)), 2)
    end
    settings[k] = n
  end,
})

return M
