#!/usr/bin/env bash
# Installs the pinned official MCP peers used by taskwire's interop tests.
#
#   $TARGET/peers/venv   Python venv: requirements.txt (mcp==1.30.0, wasmtime==50.0.1, exact transitive pins)
#   $TARGET/peers/fastmcp3, fastmcp4  one Python venv each: fastmcp3-requirements.txt
#                        (fastmcp[tasks]==3.4.11), fastmcp4-requirements.txt (fastmcp[tasks]==4.1.4,
#                        mcp 2.3.0), exact transitive pins
#   $TARGET/peers/node   npm folder: package.json + package-lock.json from this directory, `npm install`
#                        (the TypeScript SDK 1.32.2, server-everything, the Inspector, the SDK v2
#                        client 2.3.1 with @modelcontextprotocol/ext-tasks 0.2.2)
#                        (with playwright-core, which drives the system Chromium: `chromium` must be
#                        on PATH; Debian: apt-get install chromium)
#   $TARGET/peers/rmcp   cargo target dir of ./rmcp (rmcp 3.11.0 echo server, task server and task client; Cargo.lock, --locked)
#   $TARGET/peers/turbomcp  cargo target dir of ./turbomcp (turbomcp 4.0.0-alpha.5 task server and task client; Cargo.lock, --locked)
#
# PEERS_OPT_LEVEL=0 builds the Rust peers unoptimized (CI does; the benchmarks need the default 3).
#
# TARGET defaults to <repo>/target. Idempotent: each half is skipped when its stamp file matches
# the sha256 of its pin files (and the interpreter or toolchain version) and a smoke check passes.
# FORCE=1 reinstalls. Exits non-zero with a message on the first failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
TARGET="${TARGET:-$repo/target}"
mkdir -p "$TARGET"
TARGET="$(cd "$TARGET" && pwd)"
peers="$TARGET/peers"
venv="$peers/venv"
nodedir="$peers/node"
PYTHON="${PYTHON:-python3}"
FORCE="${FORCE:-0}"
# The Rust peers' optimization level (their `release` profile's opt-level). CI sets 0, which
# builds them in about a third of the time; the benchmarks need 3 (the default), and the
# install stamps record the level, so asking for the other one rebuilds.
OPT="${PEERS_OPT_LEVEL:-3}"

die() { echo "peers/setup.sh: ERROR: $*" >&2; exit 1; }
log() { echo "peers/setup.sh: $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH ($2)"; }

need "$PYTHON" "Python >= 3.10 is needed for mcp 1.30.0"
need node "Node >= 18 is needed for @modelcontextprotocol/sdk 1.32.2"
need npm "npm is needed to install the Node peers"
need sha256sum "coreutils sha256sum computes the install stamps"
need cargo "cargo builds the Rust peers (tests/peers/rmcp, tests/peers/turbomcp)"
need timeout "coreutils timeout bounds the Rust peers' smoke checks"
command -v chromium >/dev/null 2>&1 \
  || die "'chromium' not found on PATH: the Inspector web UI test (tests/peers/inspector_web.mjs) drives it with playwright-core (Debian: apt-get install chromium)"

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "$("$PYTHON" --version 2>&1) is too old: mcp 1.30.0 needs Python >= 3.10"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || die "node $(node --version) is too old: need >= 18"
rustc_minor="$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')"
# rmcp 3.11 and turbomcp 4.0.0-alpha.5 (edition 2024, rust-version 1.88) both need Rust >= 1.88.
[ "$rustc_minor" -ge 88 ] 2>/dev/null || die "$(rustc --version) is too old: rmcp 3.11 and turbomcp 4.0.0-alpha.5 need Rust >= 1.88"

mkdir -p "$peers"
start=$(date +%s)

# ---------------------------------------------------------------- Python
py_key="$( { cat "$here/requirements.txt"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
py_stamp="$venv/.taskwire-peers-stamp"
py_smoke='import mcp, wasmtime; from mcp.client.experimental import *; wasmtime.Linker.define_wasi; wasmtime.WasiConfig; import importlib.metadata as m; assert m.version("mcp") == "1.30.0"'
if [ "$FORCE" != 1 ] && [ -f "$py_stamp" ] && [ "$(cat "$py_stamp")" = "$py_key" ] \
   && "$venv/bin/python" -c "$py_smoke" 2>/dev/null; then
  log "python venv up to date ($venv)"
else
  log "installing python peers into $venv"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv" || die "python -m venv $venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      -r "$here/requirements.txt" \
    || die "pip install -r $here/requirements.txt failed (is PyPI reachable?)"
  "$venv/bin/python" -c "$py_smoke" || die "python peers installed but the smoke import failed"
  echo "$py_key" > "$py_stamp"
fi

# ---------------------------------------------------------------- FastMCP 3 and 4 (Python)
# One venv each: FastMCP 4 needs mcp 2.3.0, the venv above pins mcp 1.30.0, and FastMCP 3's
# resolved set differs from it too. The smoke check imports what the peer scripts use.
fastmcp_venv() {
  local major="$1" version="$2"
  local dir="$peers/fastmcp$major" reqs="$here/fastmcp$major-requirements.txt"
  local key stamp smoke
  key="$( { cat "$reqs"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
  stamp="$dir/.taskwire-peers-stamp"
  smoke="import importlib.metadata as m, docket; from fastmcp import FastMCP, Client; from fastmcp.dependencies import Progress; assert m.version('fastmcp') == '$version'"
  if [ "$major" -ge 4 ]; then smoke="$smoke; import fastmcp_tasks"; fi
  if [ "$FORCE" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] \
     && "$dir/bin/python" -c "$smoke" 2>/dev/null; then
    log "fastmcp $version venv up to date ($dir)"
    return
  fi
  log "installing fastmcp[tasks]==$version into $dir"
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir" || die "python -m venv $dir failed (Debian: apt-get install python3-venv)"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$reqs" \
    || die "pip install -r $reqs failed (is PyPI reachable?)"
  "$dir/bin/python" -c "$smoke" || die "fastmcp $version installed but the smoke import failed"
  echo "$key" > "$stamp"
}
fastmcp_venv 3 3.4.11
fastmcp_venv 4 4.1.4

# ---------------------------------------------------------------- Node
node_key="$( { cat "$here/package.json" "$here/package-lock.json"; node --version; } | sha256sum | cut -d' ' -f1)"
node_stamp="$nodedir/.taskwire-peers-stamp"
node_smoke() {
  (cd "$nodedir" && node --input-type=module -e '
    import { readFileSync } from "fs";
    const want = JSON.parse(readFileSync("package.json", "utf8")).dependencies;
    for (const [name, ver] of Object.entries(want)) {
      const got = JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version;
      if (got !== ver) throw new Error(`${name}: want ${ver}, have ${got}`);
    }
    await import("@modelcontextprotocol/sdk/experimental/tasks");
    await import("@modelcontextprotocol/ext-tasks/client");
    await import("playwright-core");
    await import("oidc-provider");
  ') && [ -x "$nodedir/node_modules/.bin/inspector" ] && [ -x "$nodedir/node_modules/.bin/mcp-server-everything" ]
}
if [ "$FORCE" != 1 ] && [ -f "$node_stamp" ] && [ "$(cat "$node_stamp")" = "$node_key" ] && node_smoke 2>/dev/null; then
  log "node peers up to date ($nodedir)"
else
  log "installing node peers into $nodedir"
  mkdir -p "$nodedir"
  rm -f "$node_stamp"
  cp "$here/package.json" "$here/package-lock.json" "$nodedir/"
  # `npm install` with the copied lock, not `npm ci`: vite (an Inspector dependency) lists the
  # optional, Windows-only dependency napi-windows-process-start-time, which the registry has
  # answered both 404 and 200 for, so `npm ci` may refuse the lock as "out of sync" and
  # `npm install` may add or drop that entry. `npm install` installs exactly the locked tree;
  # the comparison below proves it, ignoring optional packages for other operating systems
  # (never installed here).
  # --ignore-scripts: the only install script in the tree is the Inspector's postinstall,
  # a no-op when it is installed as a dependency. The Inspector declares engines node>=22.19;
  # its CLI runs on Node 20 (see README), so EBADENGINE warnings are silenced by loglevel=error.
  rm -rf "$nodedir/node_modules"
  (cd "$nodedir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error 1>&2) \
    || die "npm install in $nodedir failed (is the npm registry reachable?)"
  node -e '
    const fs = require("fs");
    const norm = (f) => { const lock = JSON.parse(fs.readFileSync(f, "utf8"));
      for (const [k, p] of Object.entries(lock.packages || {}))
        if (p.optional && p.os && !p.os.includes(process.platform)) delete lock.packages[k];
      return JSON.stringify(lock); };
    process.exit(norm(process.argv[1]) === norm(process.argv[2]) ? 0 : 1);
  ' "$here/package-lock.json" "$nodedir/package-lock.json" \
    || die "npm changed $nodedir/package-lock.json: tests/peers/package-lock.json is out of date"
  node_smoke || die "node peers installed but the version/import check failed"
  echo "$node_key" > "$node_stamp"
fi

# ---------------------------------------------------------------- the conformance suite
# @modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12, and Node 22 from the npm
# package `node` (the suite's bundle needs fs.globSync, which Node 20 lacks). The `node`
# package's install script fetches its platform binary from the npm registry, so scripts run.
conf_src="$here/conformance"
conf_dir="$peers/conformance"
conf_key="$( { cat "$conf_src/package.json" "$conf_src/package-lock.json"; node --version; } | sha256sum | cut -d' ' -f1)"
conf_stamp="$conf_dir/.taskwire-peers-stamp"
conf_smoke() {
  [ "$("$conf_dir/node_modules/.bin/node" --version 2>/dev/null)" = v22.23.3 ] \
  && for v in stable next; do
       "$conf_dir/node_modules/.bin/node" "$conf_dir/node_modules/conformance-$v/dist/index.js" --version >/dev/null 2>&1 || return 1
     done
}
if [ "$FORCE" != 1 ] && [ -f "$conf_stamp" ] && [ "$(cat "$conf_stamp")" = "$conf_key" ] && conf_smoke; then
  log "conformance suite up to date ($conf_dir)"
else
  log "installing the conformance suite and Node 22 into $conf_dir"
  mkdir -p "$conf_dir"
  rm -f "$conf_stamp"
  rm -rf "$conf_dir/node_modules"
  cp "$conf_src/package.json" "$conf_src/package-lock.json" "$conf_dir/"
  (cd "$conf_dir" && npm ci --no-audit --no-fund --loglevel=error 1>&2) \
    || die "npm ci in $conf_dir failed (is the npm registry reachable?)"
  conf_smoke || die "the conformance suite installed, but $conf_dir/node_modules/.bin/node is not v22.23.3 or a suite does not start"
  echo "$conf_key" > "$conf_stamp"
fi

# ---------------------------------------------------------------- rmcp (Rust)
rmcp_src="$here/rmcp"
rmcp_dir="$peers/rmcp"
rmcp_bin="$rmcp_dir/release/rmcp-echo-server"
rmcp_task_server="$rmcp_dir/release/rmcp-task-server"
rmcp_task_client="$rmcp_dir/release/rmcp-task-client"
# Every file under src/ counts, by path and content.
rmcp_sources() { (cd "$rmcp_src" && find src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }
rmcp_key="$( { cat "$rmcp_src/Cargo.toml" "$rmcp_src/Cargo.lock"; rmcp_sources; cargo --version; rustc --version; echo "opt-level $OPT"; } | sha256sum | cut -d' ' -f1)"
rmcp_stamp="$rmcp_dir/.taskwire-peers-stamp"
rmcp_init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"setup.sh","version":"0"}}}'
# The echo server answers initialize, then stops at the end of stdin; the task client runs
# long_running_task on the task server (10 ms steps) to its result.
rmcp_smoke() {
  [ -x "$rmcp_bin" ] && printf '%s\n' "$rmcp_init" | timeout 10 "$rmcp_bin" 2>/dev/null \
    | grep -q '"protocolVersion":"2025-11-25"' \
  && [ -x "$rmcp_task_server" ] && [ -x "$rmcp_task_client" ] \
  && timeout 20 "$rmcp_task_client" -- "$rmcp_task_server" --step-ms 10 2>/dev/null \
    | grep -q '"event":"result".*"text":"任务完成！"'
}
if [ "$FORCE" != 1 ] && [ -f "$rmcp_stamp" ] && [ "$(cat "$rmcp_stamp")" = "$rmcp_key" ] && rmcp_smoke; then
  log "rmcp peers up to date ($rmcp_dir/release)"
else
  log "building the rmcp 3.11 peers into $rmcp_dir (cargo build --release --locked, opt-level $OPT; about 2 minutes cold at 3)"
  mkdir -p "$rmcp_dir"
  rm -f "$rmcp_stamp"
  CARGO_PROFILE_RELEASE_OPT_LEVEL="$OPT" cargo build --release --locked --quiet --manifest-path "$rmcp_src/Cargo.toml" --target-dir "$rmcp_dir" 1>&2 \
    || die "cargo build --locked of $rmcp_src failed (is crates.io reachable? does Cargo.lock still match Cargo.toml?)"
  rmcp_smoke || die "the rmcp peers built, but the smoke check failed ($rmcp_bin must answer initialize with protocol 2025-11-25, $rmcp_task_client must run a task on $rmcp_task_server)"
  echo "$rmcp_key" > "$rmcp_stamp"
fi

# ---------------------------------------------------------------- turbomcp (Rust)
turbo_src="$here/turbomcp"
turbo_dir="$peers/turbomcp"
turbo_task_server="$turbo_dir/release/turbomcp-task-server"
turbo_task_client="$turbo_dir/release/turbomcp-task-client"
# Every file under src/ counts, by path and content.
turbo_sources() { (cd "$turbo_src" && find src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }
turbo_key="$( { cat "$turbo_src/Cargo.toml" "$turbo_src/Cargo.lock"; turbo_sources; cargo --version; rustc --version; echo "opt-level $OPT"; } | sha256sum | cut -d' ' -f1)"
turbo_stamp="$turbo_dir/.taskwire-peers-stamp"
# The task client runs long_running_task on the task server (10 ms steps) to its result.
turbo_smoke() {
  [ -x "$turbo_task_server" ] && [ -x "$turbo_task_client" ] \
  && timeout 20 "$turbo_task_client" -- "$turbo_task_server" --step-ms 10 2>/dev/null \
    | grep -q '"event":"result".*"text":"任务完成！"'
}
if [ "$FORCE" != 1 ] && [ -f "$turbo_stamp" ] && [ "$(cat "$turbo_stamp")" = "$turbo_key" ] && turbo_smoke; then
  log "turbomcp peers up to date ($turbo_dir/release)"
else
  log "building the turbomcp 4.0.0-alpha.5 peers into $turbo_dir (cargo build --release --locked, opt-level $OPT; about 5 minutes cold at 3, 2 at 0)"
  mkdir -p "$turbo_dir"
  rm -f "$turbo_stamp"
  CARGO_PROFILE_RELEASE_OPT_LEVEL="$OPT" cargo build --release --locked --quiet --manifest-path "$turbo_src/Cargo.toml" --target-dir "$turbo_dir" 1>&2 \
    || die "cargo build --locked of $turbo_src failed (is crates.io reachable? does Cargo.lock still match Cargo.toml?)"
  turbo_smoke || die "the turbomcp peers built, but the smoke check failed ($turbo_task_client must run a task on $turbo_task_server)"
  echo "$turbo_key" > "$turbo_stamp"
fi

elapsed=$(( $(date +%s) - start ))
cat <<EOF
peers ready in ${elapsed}s
  PEERS_PYTHON=$venv/bin/python      (mcp 1.30.0, wasmtime 50.0.1)
  fastmcp:           $peers/fastmcp3/bin/python, $peers/fastmcp4/bin/python   (fastmcp[tasks] 3.4.11, 4.1.4)
  PEERS_NODE_DIR=$nodedir          (node_modules: sdk 1.32.2, server-everything 2026.8.31, inspector 2.12.0, client 2.3.1 + ext-tasks 0.2.2)
  server-everything: $nodedir/node_modules/.bin/mcp-server-everything stdio
  inspector cli:     $nodedir/node_modules/.bin/inspector --cli <server cmd...> --method tools/list
  inspector web:     node $here/inspector_web.mjs   (playwright-core 1.65.1, $(command -v chromium))
  rmcp echo server:  $rmcp_bin   (rmcp 3.11.0)
  rmcp task peers:   $rmcp_task_server [--step-ms N]
                     $rmcp_task_client [--cancel] -- SERVER_CMD [ARGS...]
  turbomcp peers:    $turbo_task_server [--step-ms N]   (turbomcp 4.0.0-alpha.5)
                     $turbo_task_client [--cancel] -- SERVER_CMD [ARGS...]
  conformance:       $conf_dir/node_modules/.bin/node $conf_dir/node_modules/conformance-{stable,next}/dist/index.js   (0.1.16, 0.2.0-alpha.12; Node 22.23.3)
  peer scripts:      $here/{py_client.py,ts_client.mjs,ts_server.mjs,bench_server.mjs,bench_server.py,tap.py}
                     $here/{fastmcp_server.py,fastmcp_client.py,ext_tasks_client.mjs}
EOF
