-- The info-table provenance (IPE) table shared by heap_prof_sample (-hi)
-- and call_stack_profile (spec/reference-behaviour.md §5.2.2, §5.4.4):
-- every IPE event of the stream, by info pointer.
local M = {}

local MAX_IPES = 1 << 20   -- info tables kept per session

-- The session's IPE table of the processors' context `ctx` (one per
-- ctx, subscribing to IPE events on first use): ctx.defs, so it is
-- bounded and cleared at each new session. Returns the table itself
-- (info pointer -> {name, closure_desc, ty_desc, label, module, src_loc}).
function M.get(ctx)
  local d = ctx.ipe_defs
  if not d then
    d = ctx.defs("IPE definitions", MAX_IPES)
    ctx.ipe_defs = d
    ctx.el.on("IPE", function(ev, info_ptr, table_name, closure_desc,
                              ty_desc, label, module, src_loc)
      d.put(info_ptr, {
        name = table_name, closure_desc = closure_desc, ty_desc = ty_desc,
        label = label, module = module, src_loc = src_loc,
      })
    end)
  end
  return setmetatable({}, {__index = function(_, k) return d.t[k] end})
end

-- Parse a source location "file:L:C", "file:L:C1-C2",
-- "file:(L1,C1)-(L2,C2)" (from the right, as ipedb's parseSrcLoc).
-- Returns file, line, column (line/column nil when absent); file "" for
-- unhelpful locations.
function M.parse_srcloc(s)
  if s == nil or s == "" then return "", nil, nil end
  local f, l1, c1 = s:match("^(.*):%((%d+),(%d+)%)%-%(%d+,%d+%)$")
  if f then return f, tonumber(l1), tonumber(c1) end
  f, l1, c1 = s:match("^(.*):(%d+):(%d+)%-%d+$")
  if f then return f, tonumber(l1), tonumber(c1) end
  f, l1, c1 = s:match("^(.*):(%d+):(%d+)$")
  if f then return f, tonumber(l1), tonumber(c1) end
  f = s:match("^(.*):$")
  if f then return f, nil, nil end
  return "", nil, nil
end

return M
