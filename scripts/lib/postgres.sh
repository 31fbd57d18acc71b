# Starts a throw-away PostgreSQL for tests and benchmarks; sourced by scripts/test and scripts/bench-*.
#
# herald_pg_start: starts one from the machine's binaries (installing the Debian package if
# they are missing) on a free loopback port in a temporary directory, exports
# HERALD_PG_URL, and arranges for herald_pg_stop to run on exit.

herald_pg_dir=""
herald_pg_bin=""
herald_pg_user=""

herald_as_pg() {
  if [ -n "$herald_pg_user" ]; then runuser -u "$herald_pg_user" -- "$@"; else "$@"; fi
}

herald_find_pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

herald_pg_reachable() {
  command -v pg_isready >/dev/null 2>&1 || return 1
  pg_isready -q -d "${1%%\?*}" -t 3
}

herald_pg_stop() {
  if [ -n "$herald_pg_dir" ] && [ -n "$herald_pg_bin" ]; then
    herald_as_pg "$herald_pg_bin/pg_ctl" -D "$herald_pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$herald_pg_dir"
    herald_pg_dir=""
  fi
}

herald_pg_start() {
  if ! herald_pg_bin=$(herald_find_pg_bin); then
    echo "PostgreSQL binaries not found; installing the postgresql package" >&2
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    herald_pg_bin=$(herald_find_pg_bin)
  fi
  herald_pg_dir=$(mktemp -d /tmp/herald-pg.XXXXXX)
  chmod 755 "$herald_pg_dir"
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses to run as root: run the server as an unprivileged user.
    herald_pg_user=postgres
    id -u "$herald_pg_user" >/dev/null 2>&1 || useradd --system --no-create-home "$herald_pg_user"
    chown "$herald_pg_user" "$herald_pg_dir"
  fi
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  herald_as_pg "$herald_pg_bin/initdb" -D "$herald_pg_dir/data" -U herald --auth=trust -E UTF8 >/dev/null
  herald_as_pg "$herald_pg_bin/pg_ctl" -D "$herald_pg_dir/data" -l "$herald_pg_dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$herald_pg_dir -c max_connections=300 ${HERALD_PG_OPTIONS:-}" \
    start >/dev/null
  HERALD_PG_URL="postgres://herald@127.0.0.1:$port/postgres?sslmode=disable"
  export HERALD_PG_URL
  trap herald_pg_stop EXIT
  echo "started a throw-away PostgreSQL on 127.0.0.1:$port" >&2
}

# CPU ticks (1/CLK_TCK s) the server herald_pg_start started has used, and only it: its postmaster,
# the children that have exited (cutime + cstime: a finished session or psql's backend) and the
# living ones (backends, WAL writer, checkpointer, autovacuum). 0 when none is running. Other
# PostgreSQL servers on the machine (test clusters starting or stopping) are not counted.
herald_pg_cpu_ticks() {
  [ -n "$herald_pg_dir" ] && [ -f "$herald_pg_dir/data/postmaster.pid" ] || { echo 0; return; }
  local postmaster total child
  postmaster=$(head -1 "$herald_pg_dir/data/postmaster.pid")
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat" 2>/dev/null || echo 0)
  for child in $(ps -o pid= --ppid "$postmaster"); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$child/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
