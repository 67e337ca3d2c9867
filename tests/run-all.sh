#!/usr/bin/env bash
# Every check of taskwire, as CI runs it. First installs what the tests need (idempotent):
# the wasm32-wasip1 and wasm32-unknown-unknown targets, tmux (the command line's terminal
# tests), Chromium, the pinned interop peers under
# target/peers/, and PostgreSQL for the PostgreSQL store tests: tests/postgres.sh installs it
# if needed (Debian: apt-get install postgresql) and starts a private cluster (127.0.0.1:55432,
# data under target/postgres/, or /var/tmp/taskwire-postgres-*/ as root), whose URL the tests
# get in TASKWIRE_POSTGRES_URL; this script stops it at the end if it started it. A
# TASKWIRE_POSTGRES_URL set by the caller is used as it is, and no cluster is started.
#
# At the end (also when a step fails) it prints how long each step took, and a summary of the
# tests: passed, failed, ignored, and skipped by an opt-out variable (TASKWIRE_SKIP_INTEROP=1,
# TASKWIRE_SKIP_WASI=1, TASKWIRE_SKIP_POSTGRES=1; each skipped test leaves a file in
# <target>/skipped/, see tests/src/skip.rs, since cargo counts it as passed).
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
skipped_dir="$target/skipped"
test_log="$target/run-all/tests.log"

steps=()
step_name=""
step_start=0
run_start=$(date +%s)

# Ends the running step (records its wall time) and starts the next one.
step() {
  local now
  now=$(date +%s)
  if [ -n "$step_name" ]; then
    steps+=("$step_name ($((now - step_start)) s)")
  fi
  step_name="$*"
  step_start=$now
  printf '\n== %s\n' "$*"
}

# Sums one field ("passed", "failed", "ignored") over every `test result:` line of the log
# (`test result: ok. 147 passed; 0 failed; 3 ignored; 0 measured; ...`).
count() {
  awk -v field="$1" '/^test result: / {
    for (i = 1; i < NF; i++) if ($(i + 1) ~ "^" field "[;.]?$") n += $i
  } END { print n + 0 }' "$test_log"
}

summary() {
  local status=$? now
  now=$(date +%s)
  # A background peer install still running when a step failed is not needed any more.
  if [ -n "${peers_pid:-}" ] && kill -0 "$peers_pid" 2>/dev/null; then
    kill "$peers_pid" 2>/dev/null || true
  fi
  # The private PostgreSQL cluster, if this run started it (one already running is left so).
  if [ -n "${postgres_started:-}" ]; then
    printf '\n== stopping the private PostgreSQL cluster\n'
    bash tests/postgres.sh stop || echo "run-all.sh: could not stop the private PostgreSQL cluster (bash tests/postgres.sh stop)" >&2
  fi
  if [ -n "$step_name" ]; then
    [ "$status" = 0 ] || step_name="$step_name: FAILED"
    steps+=("$step_name ($((now - step_start)) s)")
  fi
  printf '\n== wall time per step\n'
  local s
  for s in "${steps[@]}"; do
    printf '== %s\n' "$s"
  done
  printf '== total (%s s)\n' "$((now - run_start))"
  printf '== disk: %s in %s, %s free\n' "$(du -sh "$target" 2>/dev/null | cut -f1)" "$target" \
    "$(df -h --output=avail "$target" 2>/dev/null | tail -n 1 | tr -d ' ')"
  if [ -f "$test_log" ]; then
    local passed failed ignored skipped interop wasi postgres
    passed=$(count passed)
    failed=$(count failed)
    ignored=$(count ignored)
    skipped=0 interop=0 wasi=0 postgres=0
    if [ -d "$skipped_dir" ]; then
      skipped=$(find "$skipped_dir" -type f | wc -l)
      interop=$({ grep -rl 'TASKWIRE_SKIP_INTEROP=1' "$skipped_dir" || true; } | wc -l)
      wasi=$({ grep -rl 'TASKWIRE_SKIP_WASI=1' "$skipped_dir" || true; } | wc -l)
      postgres=$({ grep -rl 'TASKWIRE_SKIP_POSTGRES=1' "$skipped_dir" || true; } | wc -l)
    fi
    printf '\n== tests: %s passed, %s failed, %s ignored, %s skipped (TASKWIRE_SKIP_INTEROP=1: %s, TASKWIRE_SKIP_WASI=1: %s, TASKWIRE_SKIP_POSTGRES=1: %s)\n' \
      "$((passed - skipped))" "$failed" "$ignored" "$skipped" "$interop" "$wasi" "$postgres"
    if [ "$skipped" != 0 ]; then
      # Files are named <binary>--<test>: the count per test binary, and where the names are.
      printf '   skipped per test binary: %s (one file per test in %s/)\n' \
        "$(find "$skipped_dir" -type f -printf '%f\n' | sed 's/--.*//' | sort | uniq -c \
          | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')" "$skipped_dir"
    fi
  else
    printf '\n== tests: not run\n'
  fi
  exit "$status"
}
trap summary EXIT

# CI builds once from clean: the incremental cache (about 5 GB) would never be read again, and
# line tables are all a failing test's backtrace needs (full debug info doubles target/debug).
# A CI run then needs about 6 GB of disk instead of 14.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
  export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
fi

step "toolchain: wasm32-wasip1 and wasm32-unknown-unknown targets"
rustup target add wasm32-wasip1 wasm32-unknown-unknown

# A program the tests need from the system: found on PATH, or installed with apt-get.
need_system() {
  local program="$1" package="$2"
  if command -v "$program" >/dev/null 2>&1; then
    echo "$program found: $(command -v "$program")"
  elif command -v apt-get >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo "
    echo "$program not found; installing it: ${sudo}apt-get update && ${sudo}apt-get install -y $package"
    ${sudo}apt-get update
    ${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y "$package"
  else
    echo "run-all.sh: $program is not on PATH and there is no apt-get to install it; install it (Debian: apt-get install $package)" >&2
    exit 1
  fi
}

# The Inspector web UI test drives the system Chromium (tests/peers/setup.sh needs it on PATH).
if [ "${TASKWIRE_SKIP_INTEROP:-}" != 1 ]; then
  step "system: chromium (the Inspector web UI test)"
  need_system chromium chromium
fi

# The command line's terminal tests (tests/tests/cli/terminal.rs) run it in tmux.
step "system: tmux (the command line's terminal tests)"
need_system tmux tmux

# The fleet tests (tests/tests/http/fleet.rs) balance fronts with HAProxy.
step "system: haproxy (the fleet tests' load balancer)"
need_system haproxy haproxy

# The PostgreSQL store tests reach their server through TASKWIRE_POSTGRES_URL (tests/src/postgres.rs):
# a private cluster that tests/postgres.sh installs if needed and starts, unless the caller set
# the URL of a server of theirs.
postgres_started=""
if [ "${TASKWIRE_SKIP_POSTGRES:-}" = 1 ]; then
  step "system: PostgreSQL skipped (TASKWIRE_SKIP_POSTGRES=1); the PostgreSQL store tests will say so"
else
  step "system: PostgreSQL (private cluster for the store tests)"
  if [ -n "${TASKWIRE_POSTGRES_URL:-}" ]; then
    echo "TASKWIRE_POSTGRES_URL is set: the tests use that server ($TASKWIRE_POSTGRES_URL); no private cluster is started"
  else
    postgres_log="$target/run-all/postgres.log"
    mkdir -p "$(dirname "$postgres_log")"
    # Stopped at the end (in `summary`) only if it was not already running.
    bash tests/postgres.sh status >/dev/null 2>&1 || postgres_started=1
    bash tests/postgres.sh start | tee "$postgres_log"
    TASKWIRE_POSTGRES_URL=$(tail -n 1 "$postgres_log")
    case "$TASKWIRE_POSTGRES_URL" in
      postgres://*) ;;
      *)
        echo "run-all.sh: tests/postgres.sh start did not end with the URL (log in $postgres_log)" >&2
        exit 1
        ;;
    esac
    export TASKWIRE_POSTGRES_URL
    echo "TASKWIRE_POSTGRES_URL=$TASKWIRE_POSTGRES_URL"
  fi
fi

# The peers install in the background (network waits, and cargo builds of their own) while
# the workspace is checked and built; the tests wait for them.
peers_pid=""
peers_log="$target/run-all/peers.log"
mkdir -p "$(dirname "$peers_log")"
if [ "${TASKWIRE_SKIP_INTEROP:-}" = 1 ]; then
  step "peers: skipped (TASKWIRE_SKIP_INTEROP=1); the interop tests will say so"
else
  step "peers: started in the background (Python mcp==1.30.0, FastMCP 3.4.11 and 4.1.4, TypeScript SDK 1.32.2 and its v2 client with ext-tasks 0.2.2, server-everything, Inspector 2.12, rmcp 3.11, turbomcp 4.0.0-alpha.5; log in $peers_log)"
  # CI builds the Rust peers unoptimized (the tests need them to work, not to be fast).
  if [ "${CI:-}" = true ]; then
    export PEERS_OPT_LEVEL="${PEERS_OPT_LEVEL:-0}"
  fi
  bash tests/peers/setup.sh > "$peers_log" 2>&1 &
  peers_pid=$!
fi

step "format"
cargo fmt --all --check

step "lint (native, the WASI adapter for wasm32-wasip1, the engine for browsers)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p taskwire-wasi --target wasm32-wasip1 -- -D warnings
cargo clippy -p taskwire-engine --target wasm32-unknown-unknown -- -D warnings

step "docs (every intra-doc link resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

step "test build"
cargo test --workspace --no-run

if [ -n "$peers_pid" ]; then
  step "peers: waiting for the background install"
  if ! wait "$peers_pid"; then
    cat "$peers_log"
    echo "run-all.sh: installing the peers failed (log above)" >&2
    exit 1
  fi
  tail -n 12 "$peers_log"
fi

step "tests"
rm -rf "$skipped_dir"
mkdir -p "$(dirname "$test_log")"
conformance_tallies="$target/run-all/conformance.txt"
rm -f "$conformance_tallies"
cargo test --workspace --no-fail-fast 2>&1 | tee "$test_log"
# The official conformance suite's tallies (tests/tests/conformance/official_suite.rs).
if [ -f "$conformance_tallies" ]; then
  printf '\n== the official conformance suite against conformance-server --http, and its client scenarios against conformance-client\n' | tee -a "$test_log"
  sed 's/^/   /' "$conformance_tallies" | tee -a "$test_log"
fi

# The benchmarks never rot: clippy above checks every target (`--all-targets`: the engine's
# `cargo bench` targets and the `bench` binary), and the end-to-end `bench` binary's checks run
# in the tests (tests/bench/tests/smoke/, --smoke mode). None is run here.

# The fuzz targets are a workspace of their own: checked on stable without libFuzzer (whose
# C++ cargo-fuzz compiles and links on nightly).
step "fuzz targets check (stable)"
cargo check --manifest-path fuzz/Cargo.toml --no-default-features
