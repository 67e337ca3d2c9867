#!/usr/bin/env bash
# Every check of taskwire, as CI runs it. First installs what the tests need (idempotent):
# the wasm32-wasip1 and wasm32-unknown-unknown targets and the pinned interop peers under
# target/peers/.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "toolchain: wasm32-wasip1 and wasm32-unknown-unknown targets"
rustup target add wasm32-wasip1 wasm32-unknown-unknown

if [ "${TASKWIRE_SKIP_INTEROP:-}" = 1 ]; then
  step "peers: skipped (TASKWIRE_SKIP_INTEROP=1); the interop tests will say so"
else
  step "peers: Python mcp==1.30.0, TypeScript SDK 1.32.2, server-everything, Inspector 2.12, rmcp 3.11, turbomcp 4.0.0-alpha.5"
  bash tests/peers/setup.sh
fi

step "format"
cargo fmt --all --check

step "lint (native, the WASI adapter for wasm32-wasip1, the engine for browsers)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p taskwire-wasi --target wasm32-wasip1 -- -D warnings
cargo clippy -p taskwire-engine --target wasm32-unknown-unknown -- -D warnings

step "tests"
cargo test --workspace --no-fail-fast

# Builds every benchmark (the engine's `cargo bench` targets, the bench-profile builds of the
# other targets) so they never rot; runs none. The end-to-end `bench` binary's checks run in
# the tests above (tests/tests/demo/bench_smoke.rs, --smoke mode).
step "benchmarks build"
cargo bench --workspace --no-run

step "fuzz targets build (stable)"
cargo build --manifest-path fuzz/Cargo.toml
