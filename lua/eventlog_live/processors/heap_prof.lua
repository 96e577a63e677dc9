-- heap_prof_sample (spec/reference-behaviour.md §5.2.2): one gauge data
-- point (By) per label of each heap census, attributes evCap,
-- heapProfBreakdown, heapProfId, heapProfLabel, heapProfSampleEra, and for
-- -hi the resolved info table (ipName, ipClosureDesc, ipTyDesc, ipLabel,
-- ipModule, ipSrcLoc). A census is one unit for aggregation: the last
-- census of each window survives.
--
-- Breakdown: the command line's -h<X> if given, else the session's
-- (HEAP_PROF_BEGIN, else -h<X> in PROGRAM_ARGS, both resolved by the host).
--
-- Cost-centre heap profiles (-hc) come as HEAP_PROF_SAMPLE_COST_CENTRE
-- events (a stack of cost-centre ids, innermost first), not as strings:
-- their label is the stack's cost-centre labels from the innermost
-- outwards joined by "/" (a CAF is "<module>.CAF", as GHC names it; an
-- unknown id is "cc<id>"; the empty stack is "MAIN"), heapProfBreakdown
-- is -hc whatever the command line says, and stacks of one census with
-- the same label are summed.
local window = require("eventlog_live.processors.window")
local ipe = require("eventlog_live.processors.ipe")

local M = {}

local SUPPORTED = {
  ["-hT"] = true, ["-hc"] = true, ["-hm"] = true, ["-hd"] = true,
  ["-hy"] = true, ["-he"] = true, ["-hr"] = true, ["-hi"] = true,
}

function M.install(ctx)
  local pc = ctx.proc("metrics", "heap_prof_sample")
  if not pc then return end
  local el = ctx.el
  local ipes = ipe.get(ctx)
  local inst = el.metric{name = pc.name, description = pc.description,
                         unit = "By", kind = "gauge"}
  local start_unix = ctx.start_unix

  local acc = ctx.add_acc(window.new{
    aggregate_ns = pc.aggregate_ns,
    export_ns = pc.export_ns,
    grace_ns = ctx.flush_ns,
    emit = function(census)
      local s = start_unix()
      for _, smp in ipairs(census.samples) do
        inst:point_unix(smp.v, smp.attrs, ctx.unix(smp), s)
      end
    end,
  })

  local ccs = ctx.defs("heap profile cost-centre definitions", 1 << 20)
  local eras = {}          -- era stack
  local census = nil       -- open census {t=, samples={}, index={}}
  local bad_warned = {}
  local ipe_warned = ctx.defs("unresolved IPE ids", 1 << 16)

  local function breakdown()
    if ctx.breakdown then return ctx.breakdown end
    return el.session and el.session.heap_prof_breakdown
  end

  local function close()
    if census and #census.samples > 0 then acc:add(0, census) end
    census = nil
  end

  -- GHC before 8.10 writes no HEAP_PROF_SAMPLE_END (spec
  -- eventlog-format.md §2.1, §2.10): there a census ends at the next
  -- HEAP_PROF_SAMPLE_BEGIN (or the end of input) without warning.
  local seen_end = false
  local function writes_end()
    if seen_end then return true end
    local v = el.session and el.session.ghc_version
    local major, minor = tostring(v or ""):match("^(%d+)%.(%d+)")
    major, minor = tonumber(major), tonumber(minor)
    return major ~= nil and (major > 8 or (major == 8 and minor >= 10))
  end

  -- The end of a session (the end of input, a closed connection, the
  -- next header) with a census still open. From a GHC that ends each
  -- census, the input was cut inside it (a killed program, a file read
  -- while written, a connection closed): its samples are a part of the
  -- heap, which would read as a heap that shrank, so it is dropped and
  -- said. Else it ends there, as at a BEGIN.
  local function close_at_end()
    if census and census.ends then
      ctx.warn(("The heap census begun at %.3f s has no"
                .. " HEAP_PROF_SAMPLE_END: the eventlog ends inside it;"
                .. " its %d sample(s) are dropped (a part of a census)")
               :format(census.t / 1e9,
                       #census.samples))
      census = nil
    end
    close()
  end
  el.on("HEAP_PROF_SAMPLE_BEGIN", function(ev, era)
    if census and not seen_end then
      close()
      eras[#eras] = nil
    elseif census then
      ctx.warn("Unexpected event HeapProfSampleBegin while previous garbage"
               .. " collection pass was left open.\nThis may indicate that"
               .. " the eventlog is not properly ordered or that its"
               .. " semantics have changed.")
      close()
    end
    eras[#eras + 1] = era
    census = {t = ev.t, samples = {}, index = {}, ends = writes_end()}
  end)

  -- A biographical census (-hb, GHC writes them all at the end) opens its
  -- era as a census does: its END closes it. Its samples are not
  -- supported (dropped and counted below).
  el.on("HEAP_BIO_PROF_SAMPLE_BEGIN", function(_ev, era)
    eras[#eras + 1] = era
  end)

  el.on("HEAP_PROF_SAMPLE_END", function(ev, era)
    seen_end = true
    close()
    local top = eras[#eras]
    if top == nil then
      ctx.warn(("Eventlog closed era %d, but there is no current era.")
               :format(era))
    else
      if top ~= era then
        ctx.warn(("Eventlog closed era %d, but the current era is era %d.")
                 :format(era, top))
      end
      eras[#eras] = nil
    end
  end)

  -- The command line's -h<X> wins over the program's own (as the
  -- reference's does), but a difference is said once per pair (h68: a
  -- dashboard filtering on heapProfBreakdown filed closure types as
  -- cost centres, silently).
  local mismatch_said = {}
  local function check_mismatch()
    local own = el.session and el.session.heap_prof_breakdown
    if not own or own == ctx.breakdown then return end
    local pair = ctx.breakdown .. " " .. own
    if mismatch_said[pair] then return end
    mismatch_said[pair] = true
    ctx.warn(("The heap profile breakdown %s given here differs from the"
              .. " program's %s (its HEAP_PROF_BEGIN or +RTS arguments):"
              .. " its samples are labelled %s; give %s, or no -h<X> to"
              .. " take the program's"):format(ctx.breakdown, own,
                                               ctx.breakdown, own))
  end

  el.on("HEAP_PROF_SAMPLE_STRING", function(ev, profile_id, residency, label)
    if ctx.breakdown then check_mismatch() end
    local bd = breakdown()
    if bd == nil or not SUPPORTED[bd] then
      local why = bd and ("Unsupported heap profile breakdown " .. bd)
        or ("Cannot infer heap profile breakdown.\nIf your program uses GHC"
            .. " < 9.14, you must also pass the heap profile type to this"
            .. " executable.\nSee: https://gitlab.haskell.org/ghc/ghc/-/commit/76d392a")
      if not bad_warned[bd or ""] then
        bad_warned[bd or ""] = true
        ctx.warn(why)
      end
      ctx.dropped_samples = (ctx.dropped_samples or 0) + 1
      ctx.dropped_breakdown = bd
      return
    end
    if not census then
      ctx.warn("Unexpected event HeapProfSampleString out of scope of"
               .. " HeapProfSampleBegin and HeapProfSampleEnd.\nThis may"
               .. " indicate that the eventlog is not properly ordered or"
               .. " that its semantics have changed.")
      census = {t = ev.t, samples = {}, index = {}}
    end
    local attrs = {
      heapProfBreakdown = bd, heapProfId = profile_id, heapProfLabel = label,
      heapProfSampleEra = eras[#eras], evCap = ev.cap,
    }
    if bd == "-hi" then
      local hex = label:match("^0x(%x+)$")
      local ptr = hex and tonumber(hex, 16)
      local ip = ptr and ipes[ptr]
      if not ptr then
        ctx.warn(("Expected InfoProv ID, found '%s' for"
                  .. " HeapProfSampleString."):format(label))
      elseif not ip and ptr ~= 0 and not ipe_warned.t[ptr] then
        ipe_warned.put(ptr, true)  -- once per id (and session)
        ctx.warn(("Could not resolve IPE for 0x%x."):format(ptr))
      end
      if ip then
        attrs.ipName = ip.name
        attrs.ipClosureDesc = math.tointeger(tonumber(ip.closure_desc))
          or ip.closure_desc
        attrs.ipTyDesc = ip.ty_desc
        attrs.ipLabel = ip.label
        attrs.ipModule = ip.module
        attrs.ipSrcLoc = ip.src_loc
      end
    end
    local smp = {t = ev.t, v = residency, attrs = attrs}
    local i = census.index[label]
    if i then
      local old = census.samples[i].v
      if old ~= residency then
        ctx.warn(("Duplicate sample for %s within census (old: %d, new: %d).")
                 :format(label, old, residency))
      end
      census.samples[i] = smp   -- a duplicate label replaces the old one
    else
      census.samples[#census.samples + 1] = smp
      census.index[label] = #census.samples
    end
  end)

  el.on("HEAP_PROF_COST_CENTRE", function(ev, id, label, module)
    if label == "CAF" and module ~= "" then
      ccs.put(id, module .. ".CAF")
    else
      ccs.put(id, label ~= "" and label or ("cc" .. id))
    end
  end)

  local function stack_label(stack)
    if #stack == 0 then return "MAIN" end
    local parts = {}
    for i, id in ipairs(stack) do parts[i] = ccs.t[id] or ("cc" .. id) end
    return table.concat(parts, "/")
  end

  el.on("HEAP_PROF_SAMPLE_COST_CENTRE",
        function(ev, profile_id, residency, _depth, stack)
    if not census then
      ctx.warn("Unexpected event HeapProfSampleCostCentre out of scope of"
               .. " HeapProfSampleBegin and HeapProfSampleEnd.\nThis may"
               .. " indicate that the eventlog is not properly ordered or"
               .. " that its semantics have changed.")
      census = {t = ev.t, samples = {}, index = {}}
    end
    local label = stack_label(stack)
    local i = census.index[label]
    if i then    -- another stack with the same labels: summed
      local smp = census.samples[i]
      smp.v = smp.v + residency
      if ev.t > smp.t then smp.t = ev.t end
      return
    end
    census.samples[#census.samples + 1] = {t = ev.t, v = residency, attrs = {
      heapProfBreakdown = "-hc", heapProfId = profile_id,
      heapProfLabel = label, heapProfSampleEra = eras[#eras], evCap = ev.cap,
    }}
    census.index[label] = #census.samples
  end)

  -- A new session (another program): no era or census carries over.
  ctx.el.on_header(function()
    eras, census, seen_end = {}, nil, false
  end)

  ctx.on_finish(function()
    close_at_end()
    if (ctx.dropped_samples or 0) > 0 then
      local n, bd = ctx.dropped_samples, ctx.dropped_breakdown
      ctx.dropped_samples = 0
      ctx.warn(bd and ("%d heap profile samples dropped: the breakdown %s"
                       .. " is not supported"):format(n, bd)
               or ("%d heap profile samples dropped: no supported heap"
                   .. " profile breakdown (pass -h<X> as given to the"
                   .. " program)"):format(n))
    end
  end)
end

return M
