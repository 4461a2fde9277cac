-- wrk script of the soak (tests/drill/soak.py): a rotation over every route, each answer
-- checked against the answer pyca/cryptography, hmac or hashlib gave for that request.
--   wrk ... -s soak.lua URL -- CASES_FILE
-- CASES_FILE (written by soak.py) returns a list of cases: name, method, path, headers,
-- body_file, status, expect_files (substrings the body must contain), weight. Each request
-- carries X-Request-ID soak<case>; the server echoes it, which says whose answer a response
-- is, on any of the connections.

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  cases = dofile(args[1])
  requests, expects, rotation = {}, {}, {}
  for i, c in ipairs(cases) do
    local headers = {}
    for k, v in pairs(c.headers) do headers[k] = v end
    headers["X-Request-ID"] = "soak" .. i
    local body = c.body_file and slurp(c.body_file) or nil
    requests[i] = wrk.format(c.method, c.path, headers, body)
    expects[i] = {}
    for _, p in ipairs(c.expect_files) do table.insert(expects[i], slurp(p)) end
    for _ = 1, c.weight do table.insert(rotation, i) end
  end
  -- threads start at different places in the rotation
  position = math.random(#rotation)
  answered, checked, bad_status, mismatches, unattributed = 0, 0, 0, 0, 0
  first_problem = ""
end

function request()
  position = position % #rotation + 1
  return requests[rotation[position]]
end

function response(status, headers, body)
  answered = answered + 1
  local id = headers["x-request-id"] or headers["X-Request-ID"] or ""
  local i = tonumber(string.match(id, "^soak(%d+)$"))
  if not i then
    unattributed = unattributed + 1
    if first_problem == "" then first_problem = "no request id, status " .. status end
    return
  end
  local c = cases[i]
  if status ~= c.status then
    bad_status = bad_status + 1
    if first_problem == "" then
      first_problem = c.name .. ": status " .. status .. ": " .. string.sub(body, 1, 300)
    end
    return
  end
  for _, want in ipairs(expects[i]) do
    checked = checked + 1
    if not string.find(body, want, 1, true) then
      mismatches = mismatches + 1
      if first_problem == "" then first_problem = c.name .. ": answer differs from the reference" end
    end
  end
end

function done(summary, latency, requests)
  local t = {answered = 0, checked = 0, bad_status = 0, mismatches = 0, unattributed = 0}
  local problem = ""
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do t[k] = t[k] + (thread:get(k) or 0) end
    local p = thread:get("first_problem")
    if problem == "" and p and p ~= "" then problem = p end
  end
  -- JSON-safe without a JSON library: nothing but what cannot need escaping
  problem = string.gsub(problem, "[^%w %.:/_%-=,]", "?")
  local e = summary.errors
  io.write(string.format(
    'SOAK {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"status_errors":%d,' ..
    '"answered":%d,"checked":%d,"bad_status":%d,"mismatches":%d,"unattributed":%d,"problem":"%s"}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.connect, e.read, e.write, e.timeout, e.status,
    t.answered, t.checked, t.bad_status, t.mismatches, t.unattributed, problem))
end
