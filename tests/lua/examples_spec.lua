-- busted specs for the example scripts, run through the real host
-- (EL_BIN). Expected values are counted in the ghc-events references.
local bin = os.getenv("EL_BIN")
local src = os.getenv("EL_SOURCE_DIR") or "."
local logs = os.getenv("EL_EVENTLOGS") or (src .. "/tests/data/eventlogs")

local function run(script, log, extra)
  local cmd = string.format("%q run %q --output none --set format=tsv %s %q 2>&1",
                            bin, src .. "/examples/" .. script .. ".lua",
                            extra or "", logs .. "/" .. log)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- A file of two sessions: the same recorded run twice (a program run
-- again, as an eventlog-socket reconnection or `cat a b` gives).
local function two_sessions(log)
  local f = assert(io.open(logs .. "/" .. log, "rb"))
  local b = f:read("a")
  f:close()
  local path = os.tmpname()
  local o = assert(io.open(path, "wb"))
  o:write(b, b)
  o:close()
  return path
end

local function run_path(script, path)
  local cmd = string.format("%q run %q --output none --set format=tsv %q 2>&1",
                            bin, src .. "/examples/" .. script .. ".lua", path)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

local function rows(out)
  local t = {}
  for line in out:gmatch("[^\n]+") do
    local f = {}
    for x in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = x end
    t[#t + 1] = f
  end
  return t
end

local describe_bin = bin and describe or pending

describe_bin("examples", function()
  it("markers.lua lists the 8 markers of heapy-hT in time order", function()
    local out, code = run("markers", "ghc-9.0/heapy-hT.eventlog")
    assert.are.equal(0, code)
    assert.truthy(out:find("^8 markers\n"))
    local times, last = 0, -1
    for _, f in ipairs(rows(out)) do
      if #f == 5 and f[1]:match("^%d+$") then
        times = times + 1
        assert.is_true(tonumber(f[1]) >= last)
        last = tonumber(f[1])
      end
    end
    assert.are.equal(8, times)
  end)

  -- h43: totals and "to next" carried from one session into the next
  -- (alloc_markers printed -554.71 MiB). Each session is the same run, so
  -- its rows are the first session's, whatever they are.
  for _, script in ipairs({"alloc_markers", "markers"}) do
    it(script .. ".lua counts each session of a file on its own", function()
      local path = two_sessions("ghc-9.0/oddball-hT.eventlog")
      local out, code = run_path(script, path)
      os.remove(path)
      assert.are.equal(0, code)
      local marks = {}
      for _, f in ipairs(rows(out)) do
        if #f >= 4 and f[1]:match("^%d+$") then marks[#marks + 1] = f end
      end
      assert.are.equal(20, #marks) -- oddball-hT: 10 markers a run
      for i = 1, 10 do
        assert.are.same(marks[i], marks[i + 10])
        for _, x in ipairs(marks[i]) do assert.is_nil(x:match("^%-")) end
      end
    end)
  end

  it("thread_times.lua finds the 22 threads of threads.eventlog", function()
    -- 22 distinct ids on "creating thread" lines of the reference
    local out, code = run("thread_times", "ghc-9.0/threads.eventlog")
    assert.are.equal(0, code)
    assert.truthy(out:find("^22 threads\n"))
  end)

  it("gc_pauses.lua counts the collections per capability", function()
    -- "starting GC" lines in threads.eventlog.reference: 46 on cap 0,
    -- 47 on cap 1
    local out, code = run("gc_pauses", "ghc-9.0/threads.eventlog")
    assert.are.equal(0, code)
    local n = {}
    for _, f in ipairs(rows(out)) do
      if f[1] == "0" or f[1] == "1" or f[1] == "all" then n[f[1]] = tonumber(f[2]) end
    end
    assert.are.same({["0"] = 46, ["1"] = 47, all = 93}, n)
  end)

  it("heap_top.lua honours --set top", function()
    local out, code = run("heap_top", "ghc-9.0/oddball-hT.eventlog", "--set top=2")
    assert.are.equal(0, code)
    assert.truthy(out:find("top 2", 1, true))
  end)
end)
