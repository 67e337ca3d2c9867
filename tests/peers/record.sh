#!/usr/bin/env bash
# Re-records tests/fixtures/recorded/*.jsonl: real sessions between the official peers, logged by tap.py.
#   bash tests/peers/record.sh [FLOW_NAME_SUBSTRING]
# Needs setup.sh to have run (same TARGET). Task ids and timestamps differ on every run.
# Takes about 70 s. Flows whose peer is expected to fail say so with "expect-fail".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
TARGET="${TARGET:-$repo/target}"
py="$TARGET/peers/venv/bin/python"
nm="$TARGET/peers/node/node_modules/.bin"
out="$repo/tests/fixtures/recorded"
seed="${SEED_DIR:-$repo/../shared/seed}"
[ -d "$seed" ] || seed=/work/shared/seed
only="${1:-}"

[ -x "$py" ] && [ -x "$nm/inspector" ] || { echo "record.sh: run tests/peers/setup.sh first" >&2; exit 1; }
[ -f "$seed/task_server.py" ] || { echo "record.sh: seed not found (set SEED_DIR)" >&2; exit 1; }
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export MCP_CATALOG_PATH="$tmp/inspector-catalog.json" PYTHONWARNINGS=ignore::DeprecationWarning

tap=("$py" "$here/tap.py")
ts_server=(node "$here/ts_server.mjs")
seed_server=("$py" "$seed/task_server.py")
everything=("$nm/mcp-server-everything" stdio)

# The seed client starts "<its dir>/task_server.py" itself; run an unchanged copy of it next to a shim of
# that name which execs tap.py around the real seed server (the client passes the server env={}, so the
# log path is written into the shim).
mkdir -p "$tmp/seedclient"
cp "$seed/task_client.py" "$tmp/seedclient/"
cat > "$tmp/seedclient/task_server.py" <<EOF
import os, sys
os.execv(sys.executable, [sys.executable, "$here/tap.py", "$out/seedclient-seedserver-task.jsonl", sys.executable, "$seed/task_server.py"])
EOF
# A seed-server variant whose tool says taskSupport "required" (the only way to make the Inspector run it
# as a task): two substitutions in a temporary copy, made at record time.
sed -e 's/ToolExecution(task_support=types.TASK_OPTIONAL)/ToolExecution(taskSupport="required")/' \
    -e 's/validate_task_mode(types.TASK_OPTIONAL)/validate_task_mode("required")/' \
    "$seed/task_server.py" > "$tmp/seed_required_server.py"

failures=0
# record NAME expect-ok|expect-fail CMD... : CMD gets "TAP" replaced by the tap prefix for this log.
record() {
  local name="$1" expect="$2"; shift 2
  [ -z "$only" ] || [[ "$name" == *"$only"* ]] || return 0
  local log="$out/$name.jsonl" args=() a
  rm -f "$log"
  for a in "$@"; do
    if [ "$a" = TAP ]; then args+=("${tap[@]}" "$log"); else args+=("$a"); fi
  done
  local rc=0
  "${args[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null || rc=$?
  if { [ "$expect" = expect-ok ] && [ $rc -ne 0 ]; } || { [ "$expect" = expect-fail ] && [ $rc -eq 0 ]; }; then
    echo "record.sh: $name: exit $rc, $expect" >&2; tail -5 "$tmp/$name.err" >&2; failures=$((failures + 1))
  fi
  printf '%-45s %4d lines  exit %d\n' "$name" "$(wc -l < "$log" 2>/dev/null || echo 0)" "$rc"
}

# Seed Python client (unchanged) <-> seed Python server: initialize, tools/list, task, tasks/get polls, tasks/result.
record seedclient-seedserver-task expect-ok "$py" "$tmp/seedclient/task_client.py"
# The Python SDK client API (py_client.py) against the TypeScript server.
record pyclient-tsserver-task expect-ok "$py" "$here/py_client.py" TAP "${ts_server[@]}"
# TypeScript client <-> seed Python server.
record tsclient-seedserver-task expect-ok node "$here/ts_client.mjs" task TAP "${seed_server[@]}"
record tsclient-seedserver-task-nottl expect-fail node "$here/ts_client.mjs" task --ttl none TAP "${seed_server[@]}"
record tsclient-seedserver-auto expect-ok node "$here/ts_client.mjs" auto TAP "${seed_server[@]}"
record tsclient-seedserver-list expect-ok node "$here/ts_client.mjs" list TAP "${seed_server[@]}"
record tsclient-seedserver-cancel expect-ok node "$here/ts_client.mjs" cancel TAP "${seed_server[@]}"
record tsclient-seedserver-get-unknown expect-ok node "$here/ts_client.mjs" get-unknown TAP "${seed_server[@]}"
# TypeScript client <-> TypeScript server.
record tsclient-tsserver-task expect-ok node "$here/ts_client.mjs" task TAP "${ts_server[@]}"
record tsclient-tsserver-auto expect-ok node "$here/ts_client.mjs" auto TAP "${ts_server[@]}"
record tsclient-tsserver-plain expect-ok node "$here/ts_client.mjs" plain TAP "${ts_server[@]}"
record tsclient-tsserver-list expect-ok node "$here/ts_client.mjs" list --start 2 TAP "${ts_server[@]}"
record tsclient-tsserver-cancel expect-ok node "$here/ts_client.mjs" cancel TAP "${ts_server[@]}"
record tsclient-tsserver-get-unknown expect-ok node "$here/ts_client.mjs" get-unknown TAP "${ts_server[@]}"
record tsclient-tsserver-failing expect-fail node "$here/ts_client.mjs" task --tool failing_task TAP "${ts_server[@]}" --failing
record tsclient-tsserver-plain-required expect-fail node "$here/ts_client.mjs" plain --tool long_running_task_required TAP "${ts_server[@]}" --required
# TypeScript client <-> server-everything.
record tsclient-everything-input-required expect-ok node "$here/ts_client.mjs" input-required TAP "${everything[@]}"
record tsclient-everything-research-plain expect-ok node "$here/ts_client.mjs" task --tool simulate-research-query --args '{"topic":"rust"}' TAP "${everything[@]}"
record tsclient-everything-cancel expect-ok node "$here/ts_client.mjs" cancel --tool simulate-research-query --args '{"topic":"rust"}' TAP "${everything[@]}"
record tsclient-everything-sampling-async expect-ok node "$here/ts_client.mjs" sampling-async TAP "${everything[@]}"
record tsclient-everything-elicitation-async expect-ok node "$here/ts_client.mjs" elicitation-async TAP "${everything[@]}"
record tsclient-everything-get-unknown expect-ok node "$here/ts_client.mjs" get-unknown TAP "${everything[@]}"
# Inspector CLI 2.12.0 <-> TypeScript server / seed variant.
record inspector-tsserver-required expect-ok "$nm/inspector" --cli TAP "${ts_server[@]}" --required --method tools/call --tool-name long_running_task_required
record inspector-tsserver-optional expect-ok "$nm/inspector" --cli TAP "${ts_server[@]}" --method tools/call --tool-name long_running_task
record inspector-seedrequired-nottl expect-fail "$nm/inspector" --cli TAP "$py" "$tmp/seed_required_server.py" --method tools/call --tool-name long_running_task

[ $failures -eq 0 ] || { echo "record.sh: $failures flow(s) did not end as expected" >&2; exit 1; }
echo "recorded into $out"
