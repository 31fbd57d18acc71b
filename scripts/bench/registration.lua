-- wrk script: POST /v1/registration with a new APNs token on every request.
-- Credentials come from the environment: HERALD_PLATFORM_UUID, HERALD_PLATFORM_SECRET.
local counter = 0

local threads = {}

function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + thread_id * 7919)
  local uuid = os.getenv("HERALD_PLATFORM_UUID")
  local secret = os.getenv("HERALD_PLATFORM_SECRET")
  local credentials = uuid .. ":" .. secret
  -- base64 of the credentials, computed once per thread
  local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  local encoded = ((credentials:gsub(".", function(c)
    local bits, byte = "", c:byte()
    for i = 8, 1, -1 do bits = bits .. (byte % 2 ^ i - byte % 2 ^ (i - 1) > 0 and "1" or "0") end
    return bits
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local value = 0
    for i = 1, 6 do value = value + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return alphabet:sub(value + 1, value + 1)
  end) .. ({ "", "==", "=" })[#credentials % 3 + 1])
  wrk.headers["Authorization"] = "Basic " .. encoded
  wrk.headers["Content-Type"] = "application/json"
  prefix = string.format("%08x%08x", thread_id, math.random(0, 0x7fffffff))
end

function request()
  counter = counter + 1
  local token = prefix .. string.format("%048x", counter)
  local body = '{"os":"ios","os_version":"17.2","device_model":"iPhone 15","device_manufacturer":"Apple",'
    .. '"registration_token":"' .. token .. '","tags":["news","sports"]}'
  return wrk.format("POST", "/v1/registration", nil, body)
end

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d rps=%.0f p50_ms=%.2f p99_ms=%.2f\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
