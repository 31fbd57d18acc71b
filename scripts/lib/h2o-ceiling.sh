# The same-run speed reference for the benchmarks (issue 18): h2load against the independent
# h2o APNs sink (../shared/bench/h2o-apns-sink/run-sink), with the request shape of an APNs
# fan-out — 4 connections × 100 streams, a ~200-byte payload, a provider-token-sized bearer.
# It tracks how fast the shared host runs this hour. Source this file, then:
#   h2o_ceiling [REQUESTS]     prints h2load's requests/s
# Installs h2o and nghttp2-client when missing.

h2o_ceiling() {
  local requests=${1:-200000} sink_script work port rate
  sink_script=${HERALD_H2O_SINK:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared/bench/h2o-apns-sink/run-sink}
  [ -x "$sink_script" ] || { echo "h2o_ceiling: no sink script at $sink_script (set HERALD_H2O_SINK)" >&2; return 1; }
  local missing=()
  command -v h2o >/dev/null || missing+=(h2o)
  command -v h2load >/dev/null || missing+=(nghttp2-client)
  if [ ${#missing[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; fi
  work=$(mktemp -d /tmp/herald-h2o-ceiling.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  "$sink_script" "$port" "$work" >/dev/null
  python3 -c 'import json; print(json.dumps({"aps":{"alert":{"body":"Hello from the Herald benchmark, a message of about the usual length"},"sound":"default"},"receipt_id":"01a214c9-d20d-7049-8d0a-c5997c261a8d"}))' >"$work/payload.json"
  rate=$(h2load -n "$requests" -c 4 -m 100 -t 1 -H 'apns-topic: com.example.bench' -H 'apns-push-type: alert' \
      -H 'apns-priority: 10' -H "authorization: bearer $(head -c 120 /dev/urandom | base64 -w0 | tr '+/' '-_' | cut -c1-150)" \
      -d "$work/payload.json" "https://127.0.0.1:$port/3/device/$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
    | awk '/^finished in/ {gsub(",", "", $4); print $4}')
  kill -9 "$(cat "$work/h2o-sink.pid")" 2>/dev/null || true
  rm -rf "$work"
  printf '%.0f\n' "$rate"
}
