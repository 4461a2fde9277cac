-- wrk script for `make bench-service`: POST one body from a file with fixed headers,
-- and print the run's figures as one JSON line for bench/service/run.py.
--   wrk ... -s post.lua URL -- BODY_FILE CONTENT_TYPE [NAME:VALUE ...]

function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = args[2]
  for i = 3, #args do
    local name, value = args[i]:match("^([^:]+):(.*)$")
    wrk.headers[name] = value
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p99_us":%d,' ..
    '"status_errors":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
