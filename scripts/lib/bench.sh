# Helpers the benchmark scripts share (sourced: scripts/bench-*).

# A TCP port on 127.0.0.1 that was free a moment ago.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# CPU ticks (user + system, 1/CLK_TCK s each) process $1 has used.
process_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# The request count of wrk's RESULT line ($2, from scripts/bench/registration.lua), for run $1;
# exits, with the server's log ($3), when there is no line, no request, or any error. wrk's
# errors are failed connects, reads, writes, timeouts and non-2xx/3xx answers: any of them means
# the rate is not one of registrations (e.g. another server took the port).
wrk_requests() {
  local name=$1 result=$2 log=$3 requests errors
  requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$result")
  errors=$(sed -E 's/.*errors=([0-9]+).*/\1/' <<<"$result")
  if [ -z "$result" ] || [ "$errors" != 0 ] || [ "$requests" = 0 ]; then
    echo "$name: wrk reported ${errors:-no result} errors in ${requests:-0} requests (${result#RESULT }); no figures. Server log:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  echo "$requests"
}
