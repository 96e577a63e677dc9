-- heap_top.lua: the top-N heap closure types (or cost centres, types, ...:
-- whatever the -h breakdown labels) over time, one line per census.
-- Each session (a reconnection, or `cat a b`) is a program run of its own:
-- its censuses' times are ns since its own RTS start, its cost-centre ids
-- and breakdown its own, so with several sessions every line names its
-- session and the largest labels are given per session.
--   eventlog-live run examples/heap_top.lua FILE.eventlog [--set top=5]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local top = tonumber(el.config.top) or 5
local session = 1  -- the current session's number
local census, census_t, era = nil, nil, nil
local censuses = {}  -- every session's, in order, each with its session
local sessions = {}  -- sessions[s] = {totals[label], n censuses, breakdown}
local order = {}     -- the session numbers, in order
local cc_label = {}  -- the current session's cost-centre id -> label

local function sess()
  local st = sessions[session]
  if not st then
    st = {totals = {}, n = 0}
    sessions[session] = st
    order[#order + 1] = session
  end
  return st
end

local function close()
  if not census then return end
  local labels = {}
  local total = 0
  for label, bytes in pairs(census) do
    labels[#labels + 1] = label
    total = total + bytes
  end
  table.sort(labels, function(a, b)
    if census[a] ~= census[b] then return census[a] > census[b] end
    return a < b
  end)
  local parts = {}
  for i = 1, math.min(top, #labels) do
    parts[i] = string.format("%s %s", labels[i], fmt.bytes(census[labels[i]]))
  end
  censuses[#censuses + 1] = {session = session, era = era, t = census_t,
                             total = total, n = #labels,
                             top = table.concat(parts, ", ")}
  local st = sess()
  st.n = st.n + 1
  census = nil
end

el.on_header(function(s)
  close()  -- a census cut by the end of its session
  session, cc_label = s.number, {}
end)
el.on_session_end(function(s)
  close()
  if sessions[s.number] then
    sessions[s.number].breakdown = s.heap_prof_breakdown
  end
end)

el.on("HEAP_PROF_SAMPLE_BEGIN", function(ev, e)
  close()
  census, census_t, era = {}, ev.t, e
end)
el.on("HEAP_PROF_SAMPLE_STRING", function(ev, id, bytes, label)
  if not census then census, census_t = {}, ev.t end
  census[label] = bytes
  local totals = sess().totals
  totals[label] = (totals[label] or 0) + bytes
end)
-- Cost-centre profiles (-hc) send stacks of cost-centre ids, innermost
-- first: a band is labelled by their labels joined by "/" (a CAF as
-- <module>.CAF; the empty stack is MAIN); stacks with the same label add up.
el.on("HEAP_PROF_COST_CENTRE", function(ev, id, label, module)
  cc_label[id] = (label == "CAF" and module ~= "") and (module .. ".CAF")
    or (label ~= "" and label or ("cc" .. id))
end)
el.on("HEAP_PROF_SAMPLE_COST_CENTRE", function(ev, id, bytes, depth, stack)
  if not census then census, census_t = {}, ev.t end
  local parts = {}
  for i, cc in ipairs(stack) do parts[i] = cc_label[cc] or ("cc" .. cc) end
  local label = #parts > 0 and table.concat(parts, "/") or "MAIN"
  census[label] = (census[label] or 0) + bytes
  local totals = sess().totals
  totals[label] = (totals[label] or 0) + bytes
end)
el.on("HEAP_PROF_SAMPLE_END", function() close() end)

-- largest(st): session st's top labels over its censuses, as rows.
local function largest(s, st)
  local totals, labels = st.totals, {}
  for label in pairs(totals) do labels[#labels + 1] = label end
  table.sort(labels, function(a, b)
    if totals[a] ~= totals[b] then return totals[a] > totals[b] end
    return a < b
  end)
  local rows = {}
  for i = 1, math.min(top, #labels) do
    rows[i] = {session = s, label = labels[i], sum = totals[labels[i]],
               mean = st.n > 0 and totals[labels[i]] // st.n or 0}
  end
  return rows
end

el.on_end(function()
  close()
  local several = #order > 1
  local function cols(list)
    if several then table.insert(list, 1, {key = "session", align = "right"}) end
    return list
  end
  if not several then
    local st = sessions[order[1]] or {}
    io.write(string.format("%d censuses, breakdown %s\n", #censuses,
                           st.breakdown or el.session.heap_prof_breakdown or "?"))
  else
    local parts = {}
    for _, s in ipairs(order) do
      parts[#parts + 1] = string.format("session %d: %d, breakdown %s", s,
        sessions[s].n, sessions[s].breakdown or "?")
    end
    io.write(string.format("%d censuses in %d sessions (%s)\n", #censuses,
                           #order, table.concat(parts, "; ")))
  end
  io.write(fmt.table(censuses, cols{
    {key = "era"}, {key = "t", title = "time", fmt = function(v) return fmt.duration(v) end, align = "right"},
    {key = "total", title = "total bytes"}, {key = "n", title = "labels"},
    {key = "top", title = "top " .. top, align = "left"},
  }))
  local rows = {}
  for _, s in ipairs(order) do
    for _, r in ipairs(largest(s, sessions[s])) do rows[#rows + 1] = r end
  end
  io.write(several and "\nLargest over each session's censuses\n"
                    or "\nLargest over all censuses\n")
  io.write(fmt.table(rows, cols{{key = "label", align = "left"},
                                {key = "sum", title = "sum of bytes"},
                                {key = "mean", title = "mean per census"}}))
end)
