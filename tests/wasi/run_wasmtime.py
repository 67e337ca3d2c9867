#!/usr/bin/env python3
"""Run a wasm32-wasip1 command module under wasmtime (the PyPI package, pinned in
tests/peers/requirements.txt), on this process's stdio.

    target/peers/venv/bin/python tests/wasi/run_wasmtime.py MODULE.wasm [ARGS...]

Exits with the module's exit code; a trap (e.g. a panic, which aborts on wasm32-wasip1) is
printed and exits 134. TASKWIRE_WASI_LINGER_MS=N (tests only) keeps the host alive N ms after
the module returned.
"""
import os
import sys
import time

import wasmtime


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    wasm_path, args = sys.argv[1], sys.argv[2:]

    engine = wasmtime.Engine()
    module = wasmtime.Module.from_file(engine, wasm_path)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()

    wasi = wasmtime.WasiConfig()
    wasi.argv = [wasm_path, *args]
    wasi.env = list(os.environ.items())
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()

    store = wasmtime.Store(engine)
    store.set_wasi(wasi)
    instance = linker.instantiate(store, module)
    code = 0
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as e:
        code = e.code
    except wasmtime.Trap as e:
        print(f"run_wasmtime.py: trap: {e}", file=sys.stderr)
        code = 134

    # Tests: keep the host alive for a while after the module returned, to look at its fds then.
    linger = int(os.environ.get("TASKWIRE_WASI_LINGER_MS", "0"))
    if linger > 0:
        print(f"run_wasmtime.py: module exited with {code}", file=sys.stderr, flush=True)
        time.sleep(linger / 1000)
    return code


if __name__ == "__main__":
    sys.exit(main())
