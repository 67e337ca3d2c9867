#!/usr/bin/env bash
# Every check of taskwire, as CI runs it. First installs what the tests need (idempotent):
# the wasm32-wasip1 target and the pinned interop peers under target/peers/.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "toolchain: wasm32-wasip1 target"
rustup target add wasm32-wasip1

if [ "${TASKWIRE_SKIP_INTEROP:-}" = 1 ]; then
  step "peers: skipped (TASKWIRE_SKIP_INTEROP=1); the interop tests will say so"
else
  step "peers: Python mcp==1.30.0, TypeScript SDK 1.32.2, server-everything, Inspector 2.12"
  bash tests/peers/setup.sh
fi

step "format"
cargo fmt --all --check

step "lint (native, then the WASI adapter for wasm32-wasip1)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p taskwire-wasi --target wasm32-wasip1 -- -D warnings

step "tests"
cargo test --workspace --no-fail-fast

step "fuzz targets build (stable)"
cargo build --manifest-path fuzz/Cargo.toml
