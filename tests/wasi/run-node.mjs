// Runs a wasm32-wasip1 command module under Node's built-in WASI, on this process's stdio.
//
//   node tests/wasi/run-node.mjs MODULE.wasm [ARGS...]
//
// Exits with the module's exit code. TASKWIRE_WASI_LINGER_MS=N (tests only) keeps the host
// alive N ms after the module returned. Uses the global `process` only: importing 'node:process'
// (or touching process.stdin) makes Node switch fd 0 to non-blocking, and the module's reads
// would then fail with EAGAIN. Node 20 prints an ExperimentalWarning for WASI; it is silenced
// so that stderr carries only the module's own messages.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

// Drop Node's default warning printer, keeping every warning except WASI's ExperimentalWarning.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (!(w.name === 'ExperimentalWarning' && /WASI/.test(w.message))) console.error(`${w.name}: ${w.message}`);
});

const [wasmPath, ...args] = process.argv.slice(2);
if (!wasmPath) {
  console.error('usage: node run-node.mjs MODULE.wasm [ARGS...]');
  process.exit(2);
}
const wasi = new WASI({
  version: 'preview1',
  args: [wasmPath, ...args],
  env: process.env,
  stdin: 0,
  stdout: 1,
  stderr: 2,
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);

// Tests: keep the host alive for a while after the module returned, to look at its fds then
// (Node itself resets stdio's flags when the process exits).
const linger = Number(process.env.TASKWIRE_WASI_LINGER_MS || 0);
if (linger > 0) {
  console.error(`run-node.mjs: module exited with ${process.exitCode}`);
  await new Promise((resolve) => setTimeout(resolve, linger));
}
