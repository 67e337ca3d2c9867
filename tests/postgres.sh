#!/usr/bin/env bash
# A private PostgreSQL cluster for the PostgreSQL task-store tests (tests/src/postgres.rs), not
# the system's one. tests/run-all.sh starts it and exports TASKWIRE_POSTGRES_URL.
#
#   bash tests/postgres.sh start    install PostgreSQL if needed (Debian: apt-get install -y
#                                   postgresql), create the cluster on first use, start it, make
#                                   sure the role and the database `taskwire` exist; the last
#                                   line printed is the URL
#   bash tests/postgres.sh stop     stop it (pg_ctl stop -m fast), if it runs
#   bash tests/postgres.sh status   say whether it runs (exit 0 if it does, 3 if not)
#   bash tests/postgres.sh url      print the URL: postgres://taskwire@127.0.0.1:55432/taskwire
#
# Everything is under <target>/postgres/ (<target> is $CARGO_TARGET_DIR, default target):
# data/ (initdb -E UTF8 --locale=C.UTF-8, trust authentication on the local socket and on
# 127.0.0.1: a throwaway cluster for tests), socket/ (the unix socket), postgres.log. It listens
# on 127.0.0.1 only, port 55432 (TASKWIRE_POSTGRES_PORT overrides it). The role `taskwire` is a
# superuser (the tests create a database each), and has no password.
#
# PostgreSQL refuses to run as root: run as root, initdb and the server run as the user
# `postgres` (the Debian package creates it), or as a system user `taskwire` created for it, and
# the cluster lives in /var/tmp/taskwire-postgres-<checksum of the target path>/ instead,
# belonging to that user. start is idempotent: a running cluster is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
base="$target/postgres"
# As root the server runs as another user, which may not reach a clone under a private home
# (/root is 0700): the cluster then lives in /var/tmp, one per target directory.
if [ "$(id -u)" = 0 ]; then
  base="/var/tmp/taskwire-postgres-$(printf '%s' "$target" | cksum | cut -d' ' -f1)"
fi
data="$base/data"
socket="$base/socket"
logfile="$base/postgres.log"
port="${TASKWIRE_POSTGRES_PORT:-55432}"
role=taskwire
database=taskwire

say() { echo "postgres.sh: $*"; }
die() { echo "postgres.sh: ERROR: $*" >&2; exit 1; }

case "$port" in
  '' | *[!0-9]*) die "TASKWIRE_POSTGRES_PORT must be a port number, not '$port'" ;;
esac

url() { echo "postgres://$role@127.0.0.1:$1/$database"; }

# The directory holding initdb, pg_ctl and postgres: pg_ctl's on PATH (followed through
# symlinks), else Debian's /usr/lib/postgresql/<version>/bin (the packages do not put these on
# PATH), the newest version first. Empty if there is none.
find_bindir() {
  local pg_ctl dir
  if pg_ctl=$(command -v pg_ctl 2>/dev/null); then
    dir=$(dirname "$(readlink -f "$pg_ctl")")
    if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then
      echo "$dir"
      return
    fi
  fi
  # (Without a match the pattern stays as it is, and fails the test.)
  while IFS= read -r dir; do
    if [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then
      echo "$dir"
      return
    fi
  done < <(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV)
}

# Installs PostgreSQL with apt-get (through sudo when not root), or fails saying what to do.
install_postgres() {
  if ! command -v apt-get >/dev/null 2>&1; then
    die "no PostgreSQL server found (initdb, pg_ctl and postgres, on PATH or in /usr/lib/postgresql/*/bin) and there is no apt-get to install it: install PostgreSQL (Debian: apt-get install postgresql), or set TASKWIRE_POSTGRES_URL to a server of yours, or TASKWIRE_SKIP_POSTGRES=1 to skip the PostgreSQL tests"
  fi
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  say "no PostgreSQL server found; installing it: ${sudo[*]:+sudo }apt-get update && ${sudo[*]:+sudo }apt-get install -y postgresql"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
}

# The user that owns the cluster when this script runs as root: `postgres` if it exists, else
# the system user `taskwire` (created here if needed). Empty when not root.
owner=""
pick_owner() {
  [ "$(id -u)" = 0 ] || return 0
  if id -u postgres >/dev/null 2>&1; then
    owner=postgres
  else
    if ! id -u taskwire >/dev/null 2>&1; then
      say "running as root, and there is no user 'postgres': creating the system user 'taskwire' to run the server (PostgreSQL refuses to run as root)"
      useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin taskwire
    fi
    owner=taskwire
  fi
}

# Runs a command as `user` (as is when `user` is empty): run_as USER COMMAND...
run_as() {
  local user=$1
  shift
  if [ -z "$user" ]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u "$user" -- "$@"
  else
    sudo -u "$user" -- "$@"
  fi
}

# Runs a command as the cluster's owner (as is when not root).
as_owner() { run_as "$owner" "$@"; }

# Who runs pg_ctl on an existing data directory: its owner when root, else whoever runs this.
data_owner() {
  if [ "$(id -u)" = 0 ]; then
    stat -c %U "$data"
  fi
}

# The port the running cluster listens on (line 4 of postmaster.pid), or nothing.
running_port() {
  if [ -f "$data/postmaster.pid" ]; then
    sed -n 4p "$data/postmaster.pid" 2>/dev/null || true
  fi
}

# Whether the private cluster runs (pg_ctl status, as the data directory's owner when root).
is_running() {
  local bindir
  [ -f "$data/PG_VERSION" ] || return 1
  bindir=$(find_bindir)
  [ -n "$bindir" ] || return 1
  run_as "$(data_owner)" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1
}

# psql against the running cluster over TCP, as `user`, on `db`: psql_as USER DB ARGS...
psql_as() {
  local user=$1 db=$2
  shift 2
  PGCONNECT_TIMEOUT=10 "$psql" -X -q -t -A -v ON_ERROR_STOP=1 \
    -h 127.0.0.1 -p "$port" -U "$user" -d "$db" "$@"
}

# Makes sure the superuser role `taskwire` and the database `taskwire` exist.
ensure_role_and_database() {
  local out admin
  if out=$(psql_as "$role" postgres -c 'select 1' 2>&1); then
    say "role '$role' exists"
  else
    case "$out" in
      *"role \"$role\" does not exist"*) ;;
      *) die "cannot connect to the private cluster on 127.0.0.1:$port as '$role': $out (the server log is $logfile)" ;;
    esac
    # A data directory initialized without `-U taskwire`: its superuser is named after the
    # user that ran initdb.
    admin=$(data_owner)
    admin=${admin:-$(id -un)}
    say "creating the role '$role' (superuser, no password) as '$admin'"
    psql_as "$admin" postgres -c "CREATE ROLE $role SUPERUSER LOGIN" \
      || die "cannot create the role '$role' (as '$admin'); the server log is $logfile"
  fi
  if [ "$(psql_as "$role" postgres -c "select 1 from pg_database where datname = '$database'")" = 1 ]; then
    say "database '$database' exists"
  else
    say "creating the database '$database'"
    psql_as "$role" postgres -c "CREATE DATABASE $database OWNER $role"
  fi
}

start() {
  local bindir
  bindir=$(find_bindir)
  if [ -z "$bindir" ]; then
    install_postgres
    bindir=$(find_bindir)
    [ -n "$bindir" ] || die "apt-get install postgresql succeeded, but there is still no initdb/pg_ctl/postgres in /usr/lib/postgresql/*/bin"
  fi
  say "PostgreSQL server: $("$bindir/postgres" --version) ($bindir)"
  psql="$bindir/psql"
  [ -x "$psql" ] || psql=$(command -v psql) || die "psql not found (in $bindir or on PATH): install the PostgreSQL client (Debian: apt-get install postgresql-client)"

  if is_running; then
    local actual
    actual=$(running_port)
    if [ -n "$actual" ] && [ "$actual" != "$port" ]; then
      die "the private cluster ($data) already runs, on port $actual, not $port (TASKWIRE_POSTGRES_PORT): run 'bash tests/postgres.sh stop' first"
    fi
    say "the private cluster is already running (data $data, port $port)"
  else
    pick_owner
    mkdir -p "$base"
    if [ -n "$owner" ]; then
      say "running as root: the server runs as the user '$owner', which owns $base"
      chown -R "$owner:" "$base"
      as_owner test -w "$base" \
        || die "the user '$owner' cannot write $base (a parent directory is not searchable by others?): make the path reachable (chmod o+x on its parents) or set CARGO_TARGET_DIR to a directory it can reach"
    fi
    as_owner mkdir -p -m 0700 "$socket"
    if [ ! -f "$data/PG_VERSION" ]; then
      local locale=C
      if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
        locale=C.UTF-8
      fi
      say "creating the private cluster in $data (initdb, superuser '$role', trust authentication, UTF8, locale $locale)"
      as_owner "$bindir/initdb" -D "$data" -U "$role" -E UTF8 --locale="$locale" \
        --auth-local=trust --auth-host=trust >"$base/initdb.log" 2>&1 \
        || { cat "$base/initdb.log" >&2; die "initdb failed (output above, also in $base/initdb.log)"; }
    fi
    # A unix socket path is limited to about 107 bytes; when <target> is too deep, TCP only.
    local socket_dir=$socket
    if [ "$((${#socket} + 15))" -ge 107 ]; then
      say "the socket directory's path is too long for a unix socket; listening on TCP only"
      socket_dir=""
    fi
    # pg_stat_statements (in the server's contrib, which Debian's package holds) lets
    # fleet-bench count the statements per task lifecycle; a server without it starts without.
    local preload=""
    if [ -e "$(dirname "$bindir")/lib/pg_stat_statements.so" ]; then
      preload="-c shared_preload_libraries=pg_stat_statements"
    fi
    say "starting the private cluster on 127.0.0.1:$port (data $data, socket ${socket_dir:-none}, log $logfile)"
    if ! as_owner "$bindir/pg_ctl" -D "$data" -l "$logfile" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k '$socket_dir' $preload" start >/dev/null; then
      tail -n 20 "$logfile" >&2 || true
      die "the private cluster did not start (the end of $logfile is above; is port $port taken? TASKWIRE_POSTGRES_PORT picks another)"
    fi
    say "started"
  fi
  ensure_role_and_database
  say "ready; the tests reach it through TASKWIRE_POSTGRES_URL:"
  url "$port"
}

stop() {
  local bindir
  if ! is_running; then
    say "the private cluster is not running ($data)"
    return 0
  fi
  bindir=$(find_bindir)
  say "stopping the private cluster ($data)"
  run_as "$(data_owner)" "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
  say "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if is_running; then
      say "the private cluster is running: $(url "$(running_port)")"
    else
      say "the private cluster is not running ($data)"
      exit 3
    fi
    ;;
  url)
    # The running cluster's port, else the one start would use.
    actual=$(running_port)
    if [ -n "$actual" ] && is_running; then
      url "$actual"
    else
      url "$port"
    fi
    ;;
  *)
    echo "usage: bash tests/postgres.sh start|stop|status|url" >&2
    exit 2
    ;;
esac
