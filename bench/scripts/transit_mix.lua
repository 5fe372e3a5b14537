-- wrk script for the transit bench (issue 33): every request is GET /schedules/ROUTE with ROUTE
-- drawn at random from a file of route ids, one a line (gtfs_gen's routes_heavy.txt or
-- routes_small.txt). The file is the script's first argument, else $TRANSIT_ROUTES; each wrk
-- thread seeds its own generator with its number (and $TRANSIT_SEED, default 1), so a run's
-- sequence of routes is the same for every server.
--   wrk -t1 -c50 -d10s -s transit_mix.lua http://127.0.0.1:8090/ -- routes_small.txt
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

function init(args)
  local path = args[1] or os.getenv("TRANSIT_ROUTES")
  if not path then
    error("transit_mix.lua: name a routes file (wrk ... -- FILE, or TRANSIT_ROUTES=FILE)")
  end
  local file = io.open(path, "r")
  if not file then
    error("transit_mix.lua: cannot open " .. path)
  end
  requests = {}
  for line in file:lines() do
    local id = line:match("^%s*(.-)%s*$")
    if id ~= "" then
      requests[#requests + 1] = wrk.format("GET", "/schedules/" .. id)
    end
  end
  file:close()
  if #requests == 0 then
    error("transit_mix.lua: no route ids in " .. path)
  end
  math.randomseed((tonumber(os.getenv("TRANSIT_SEED")) or 1) * 1000 + (thread_number or 0))
end

function request()
  return requests[math.random(#requests)]
end
