# Starts the built `herald serve` for the script tests (contract, documentation examples);
# sourced after scripts/lib/python.sh and herald_venv.
#
# herald_serve_start NAME DATA_DIR LOG_FILE [DATABASE_URL]: starts it on a free loopback port with
# a fresh root admin token, every provider endpoint pointed at a closed loopback port (so no push
# leaves the machine), and waits until /readyz answers. Exports HERALD_SERVE_BASE (its URL) and
# HERALD_SERVE_ROOT_TOKEN (also in DATA_DIR/root-token). Fails, with the log's tail, if it does
# not become ready within 60 s. herald_serve_stop stops it (call it from an EXIT trap too).

herald_serve_pid=""

herald_serve_stop() {
  if [ -n "$herald_serve_pid" ]; then
    kill "$herald_serve_pid" 2>/dev/null || true
    wait "$herald_serve_pid" 2>/dev/null || true
    herald_serve_pid=""
  fi
}

herald_serve_start() {
  local name=$1 data=$2 log=$3 database_url=${4:-} herald port deadline
  herald="$(swift build --show-bin-path)/herald"
  [ -x "$herald" ] || { echo "$name: $herald is missing; run swift build first" >&2; return 1; }
  port=$("$HERALD_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  mkdir -p "$data"
  HERALD_SERVE_BASE="http://127.0.0.1:$port"
  HERALD_SERVE_ROOT_TOKEN="root-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  export HERALD_SERVE_BASE HERALD_SERVE_ROOT_TOKEN
  echo "$HERALD_SERVE_ROOT_TOKEN" > "$data/root-token"
  (
    export HERALD_ADMIN_TOKEN="$HERALD_SERVE_ROOT_TOKEN"
    export HERALD_APNS_ENDPOINT="https://127.0.0.1:1" HERALD_FCM_ENDPOINT="https://127.0.0.1:1"
    export HERALD_WEBPUSH_ENDPOINT="https://127.0.0.1:1" HERALD_WNS_ENDPOINT="https://127.0.0.1:1"
    export HERALD_WNS_TOKEN_ENDPOINT="https://127.0.0.1:1/token"
    unset HERALD_PROXY HERALD_DATABASE_URL
    # No webhook workers: the fuzzer registers endpoints at made-up hosts, and nothing is to
    # leave the machine (not even a DNS lookup of them).
    args=(serve --host 127.0.0.1 --port "$port" --data-dir "$data" --webhook-workers 0)
    [ -n "$database_url" ] && args+=(--database-url "$database_url")
    exec "$herald" "${args[@]}"
  ) > "$log" 2>&1 &
  herald_serve_pid=$!
  deadline=$(( $(date +%s) + 60 ))
  until curl -fsS "$HERALD_SERVE_BASE/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$herald_serve_pid" 2>/dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
      echo "$name: the server did not become ready; its log:" >&2
      tail -n 40 "$log" >&2
      herald_serve_stop
      return 1
    fi
    sleep 0.2
  done
}

# herald_throwaway_keys DIR: throw-away keys for platform credentials, written to DIR: p8 (an
# APNs-style P-256 key), rsa (a service-account key) and p256dh (a browser subscription's public
# key, base64url). scripts/contract/setup.py reads them.
herald_throwaway_keys() {
  local dir=$1
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/p8" 2>/dev/null
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/rsa" 2>/dev/null
  openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl ec -pubout -outform DER 2>/dev/null \
    | tail -c 65 | base64 -w0 | tr '+/' '-_' | tr -d '=' > "$dir/p256dh"
}

# herald_pg_database_create PREFIX: a new, empty database on the server at HERALD_TEST_POSTGRES_URL
# (named PREFIX, the shell's pid and the time), for one script's server; exports
# HERALD_PG_DATABASE_URL. herald_pg_database_drop drops it (call it from an EXIT trap too).
herald_pg_database=""
herald_pg_database_create() {
  local prefix=$1 pg_bin
  herald_pg_database="${prefix}_$$_$(date +%s)"
  eval "$("$HERALD_PYTHON" - "$HERALD_TEST_POSTGRES_URL" "$herald_pg_database" <<'PY'
import sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
print(f"herald_pg_host={url.hostname} herald_pg_port={url.port or 5432} herald_pg_role={url.username or 'postgres'}")
print("HERALD_PG_DATABASE_URL=" + urllib.parse.urlunsplit(url._replace(path="/" + sys.argv[2])))
PY
)"
  export HERALD_PG_DATABASE_URL
  pg_bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/createdb 2>/dev/null | head -1)" 2>/dev/null || true)
  herald_createdb=$(command -v createdb || echo "$pg_bin/createdb")
  herald_dropdb=$(command -v dropdb || echo "$pg_bin/dropdb")
  "$herald_createdb" -h "$herald_pg_host" -p "$herald_pg_port" -U "$herald_pg_role" "$herald_pg_database"
}

herald_pg_database_drop() {
  if [ -n "$herald_pg_database" ]; then
    "$herald_dropdb" -h "$herald_pg_host" -p "$herald_pg_port" -U "$herald_pg_role" --if-exists "$herald_pg_database" 2>/dev/null || true
    herald_pg_database=""
  fi
}
