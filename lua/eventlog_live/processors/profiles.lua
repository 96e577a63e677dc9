-- Profile processors (spec/reference-behaviour.md §5.4.2, HEAD mapping):
--   cost_centre_stack_profile: one sample per PROF_SAMPLE_COST_CENTRE
--     event (RTS -p), frames from HEAP_PROF_COST_CENTRE definitions;
--   call_stack_profile: one sample per call stack sent by
--     ghc-stack-profiler in USER_BINARY_MSG events (§5.4.3; wire layouts
--     0.3/0.4 and 0.5, chosen by its ProtocolVersion message:
--     stack_profiler.lua).
-- Samples: value 1, sample type cpu / unit samples, attributes __name__
-- (the processor name: Pyroscope shows <name>:cpu:samples), capability,
-- and thread for call stacks. Exported every export interval.
local window = require("eventlog_live.processors.window")
local ipe = require("eventlog_live.processors.ipe")
local sp = require("eventlog_live.processors.stack_profiler")

local M = {}

local MAX_DEFS = 1 << 20     -- definitions kept per session and table
local MAX_PENDING = 4096     -- call stacks assembled at once

local function sampler(ctx, pc)
  local el = ctx.el
  return ctx.add_acc(window.new{
    aggregate_ns = 0,
    export_ns = pc.export_ns,
    emit = function(s)
      el.profile_sample{
        frames = s.frames, value = 1, profile_kind = pc.name,
        sample_type = "cpu", sample_unit = "samples",
        unix_ns = ctx.unix(s), attrs = s.attrs,
      }
    end,
  })
end

-- A frame {func=, file=, line=, column=} from a name and a source
-- location text.
local function frame(name, srcloc)
  local file, line, col = ipe.parse_srcloc(srcloc)
  return {func = name, file = file, line = line, column = col}
end

local function install_cost_centres(ctx, pc)
  local el = ctx.el
  local acc = sampler(ctx, pc)
  local ccs = ctx.defs("cost-centre definitions", MAX_DEFS)  -- id -> frame
  local warned = ctx.defs("unresolved cost-centre ids", 1 << 16)
  el.on("HEAP_PROF_COST_CENTRE", function(ev, id, label, module, srcloc)
    if label ~= nil and label ~= "" then
      local loc = srcloc
      if loc == "<built-in>" or loc == "<entire-module>" then loc = "" end
      ccs.put(id, frame(module .. ":" .. label, loc))
    else
      ccs.put(id, frame(tostring(id), srcloc))
    end
  end)
  el.on("PROF_SAMPLE_COST_CENTRE", function(ev, cap, tick, depth, stack)
    local frames = {}
    for i, id in ipairs(stack) do
      local f = ccs.t[id]
      if not f then
        if not warned.t[id] then
          warned.put(id, true)
          ctx.warn(("Could not resolve cost centre ID %d"):format(id))
        end
        f = {func = tostring(id)}
      end
      frames[i] = f
    end
    acc:add(nil, {t = ev.t, frames = frames,
                  attrs = {["__name__"] = pc.name, capability = cap}})
  end)
end

local function install_call_stacks(ctx, pc)
  local el = ctx.el
  local acc = sampler(ctx, pc)
  local ipes = ipe.get(ctx)
  local strings = ctx.defs("ghc-stack-profiler strings", MAX_DEFS)
  local srclocs = ctx.defs("ghc-stack-profiler source locations", MAX_DEFS)
  -- (cap, thread) -> {t=, cap=, thread=, items}: stacks being assembled
  -- from chunks, at most MAX_PENDING at once (a stack whose final chunk
  -- never comes is dropped with the session).
  local pending = ctx.defs("call stacks in assembly", MAX_PENDING)
  local parse_warned = false
  local ipe_warned = ctx.defs("unresolved IPE ids", 1 << 16)
  -- The wire layout of this session's messages: 0.3/0.4 until a
  -- ProtocolVersion message names another; false after an unknown
  -- version (its messages are skipped and counted until a known version
  -- comes). Unknown versions and tags are reported once each.
  local layout = sp.LAYOUT_04
  local skipped = 0
  local warned_versions, warned_tags = {}, {}
  ctx.add_acc{tick = function() end, finish = function() end,
              restart = function() layout = sp.LAYOUT_04 end}
  ctx.on_finish(function()
    if skipped > 0 then
      ctx.warn(("%d ghc-stack-profiler messages skipped: unsupported"
                .. " protocol version"):format(skipped))
      skipped = 0
    end
  end)

  local function frames_of(items)
    local frames, errs = {}, nil
    for _, it in ipairs(items) do
      if it.kind == "ipe" then
        local ip = ipes[it.id]
        if ip then
          local name
          if ip.label ~= "" then name = ip.module .. ":" .. ip.label
          elseif ip.name ~= "" then name = ip.module .. ":" .. ip.name end
          frames[#frames + 1] = frame(name or ("0x%x"):format(it.id),
                                      ip.src_loc)
        else
          if not ipe_warned.t[it.id] then
            ipe_warned.put(it.id, true)
            ctx.warn(("Could not resolve IPE ID 0x%x"):format(it.id))
          end
          frames[#frames + 1] = {func = ("0x%x"):format(it.id)}
        end
      else
        local text = strings.t[it.string]
        if text == nil then
          errs = (errs or "") .. ("\nunknown string id %d"):format(it.string)
        elseif it.kind == "string" then
          frames[#frames + 1] = {func = text}
        else
          local loc = srclocs.t[it.srcloc]
          if loc == nil then
            errs = (errs or "") .. ("\nunknown source location id %d")
                                   :format(it.srcloc)
          else
            -- Line and column as written (the reference swaps them).
            frames[#frames + 1] = {func = text, file = loc.file,
                                   line = loc.line, column = loc.column}
          end
        end
      end
    end
    if errs then
      ctx.warn("Encountered errors while decoding binary call-stack from"
               .. " ghc-stack-profiler message:" .. errs)
    end
    return frames
  end

  el.on("USER_BINARY_MSG", function(ev, bytes)
    local m, err, tag = sp.decode(bytes, layout or sp.LAYOUT_04)
    if m and m.tag == "version" then
      layout = sp.PROTOCOLS[m.version] or false
      if not layout and not warned_versions[m.version] then
        warned_versions[m.version] = true
        ctx.warn(("ghc-stack-profiler protocol version %d is not supported"
                  .. " (known: 0, and 0.3/0.4 without a version message);"
                  .. " its messages are skipped"):format(m.version))
      end
      return
    end
    if layout == false then
      skipped = skipped + 1
      return
    end
    if not m and tag and tag >= 0xFF00 then
      if not warned_tags[tag] then
        warned_tags[tag] = true
        ctx.warn(("unknown ghc-stack-profiler message tag 0x%04x: skipped")
                 :format(tag))
      end
      return
    end
    if not m then
      if not parse_warned then
        parse_warned = true
        ctx.warn("Could not parse UserBinaryMessage as ghc-stack-profiler"
                 .. " message:\n" .. err .. "\nIf other plugins are"
                 .. " communicating via binary eventlog messages, this is"
                 .. " expected.")
      end
      return
    end
    if m.tag == "string" then
      strings.put(m.id, m.text)
    elseif m.tag == "srcloc" then
      local file = strings.t[m.file]
      if file == nil then
        ctx.warn("Could not decode source location from ghc-stack-profiler"
                 .. (" message:\nunknown string id %d"):format(m.file))
      else
        srclocs.put(m.id, {file = file, line = m.line, column = m.column})
      end
    else
      local k = m.cap .. ":" .. m.thread
      local p = pending.t[k]
      if not p then
        p = {t = ev.t, cap = m.cap, thread = m.thread,
             items = {}}
        pending.put(k, p)
        if pending.t[k] == nil then return end  -- too many: dropped
      end
      for _, it in ipairs(m.items) do p.items[#p.items + 1] = it end
      if m.tag == "final" then
        pending.t[k] = nil
        pending.n = pending.n - 1
        -- The writer emits reversed chunks in reverse order: the stack,
        -- innermost first, is the reverse of the concatenation.
        local items, n = {}, #p.items
        for i = 1, n do items[i] = p.items[n + 1 - i] end
        local frames = frames_of(items)
        if #frames > 0 then
          acc:add(nil, {t = p.t, frames = frames, attrs = {
            ["__name__"] = pc.name, capability = p.cap, thread = p.thread}})
        end
      end
    end
  end)
end

function M.install(ctx)
  local pc = ctx.proc("profiles", "cost_centre_stack_profile")
  if pc then install_cost_centres(ctx, pc) end
  pc = ctx.proc("profiles", "call_stack_profile")
  if pc then install_call_stacks(ctx, pc) end
end

return M
