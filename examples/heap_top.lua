-- heap_top.lua: the top-N heap closure types (or cost centres, types, ...:
-- whatever the -h breakdown labels) over time, one line per census.
--   eventlog-live run examples/heap_top.lua FILE.eventlog [--set top=5]
local el = require("eventlog_live")
local fmt = require("eventlog_live.fmt")
fmt.mode = el.config.format or "text"

local top = tonumber(el.config.top) or 5
local census, census_t, era = nil, nil, nil
local censuses, totals = {}, {}

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
  censuses[#censuses + 1] = {era = era, t = census_t, total = total,
                             n = #labels, top = table.concat(parts, ", ")}
  census = nil
end

el.on("HEAP_PROF_SAMPLE_BEGIN", function(ev, e)
  close()
  census, census_t, era = {}, ev.t, e
end)
el.on("HEAP_PROF_SAMPLE_STRING", function(ev, id, bytes, label)
  if not census then census, census_t = {}, ev.t end
  census[label] = bytes
  totals[label] = (totals[label] or 0) + bytes
end)
-- Cost-centre profiles (-hc) send stacks of cost-centre ids, innermost
-- first: a band is labelled by their labels joined by "/" (a CAF as
-- <module>.CAF; the empty stack is MAIN); stacks with the same label add up.
local cc_label = {}
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
  totals[label] = (totals[label] or 0) + bytes
end)
el.on("HEAP_PROF_SAMPLE_END", function() close() end)

el.on_end(function()
  close()
  io.write(string.format("%d censuses, breakdown %s\n", #censuses,
                         el.session.heap_prof_breakdown or "?"))
  io.write(fmt.table(censuses, {
    {key = "era"}, {key = "t", title = "time", fmt = function(v) return fmt.duration(v) end, align = "right"},
    {key = "total", title = "total bytes"}, {key = "n", title = "labels"},
    {key = "top", title = "top " .. top, align = "left"},
  }))
  local labels = {}
  for label in pairs(totals) do labels[#labels + 1] = label end
  table.sort(labels, function(a, b)
    if totals[a] ~= totals[b] then return totals[a] > totals[b] end
    return a < b
  end)
  local rows = {}
  for i = 1, math.min(top, #labels) do
    rows[i] = {label = labels[i], sum = totals[labels[i]],
               mean = #censuses > 0 and totals[labels[i]] // #censuses or 0}
  end
  io.write("\nLargest over all censuses\n")
  io.write(fmt.table(rows, {{key = "label", align = "left"},
                            {key = "sum", title = "sum of bytes"},
                            {key = "mean", title = "mean per census"}}))
end)
