#!/usr/bin/env python3
"""Drive a stdio MCP server whose stdout is a NON-BLOCKING pipe that nobody reads for a while.

    python3 tests/wasi/slow_reader.py N DELAY_MS -- SERVER_CMD [ARGS...]

Sends initialize, notifications/initialized and N tools/list requests (ids 1..N), closes the
server's stdin, reads nothing for DELAY_MS, then reads its stdout to the end. The replies
(hundreds of KB) overflow the pipe, so the server's writes fail with EAGAIN until it waits for
the pipe to drain. Prints one JSON line:

    {"exit": 0, "ids": N + 1, "in_order": true, "stderr": ""}

Standard library only.
"""
import fcntl
import json
import os
import subprocess
import sys
import threading
import time


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 4 or args[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    n, delay_ms, server = int(args[0]), int(args[1]), args[3:]

    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "slow-reader", "version": "1"}}
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(1, n + 1)]
    data = "".join(json.dumps(m) + "\n" for m in messages).encode()

    def feed() -> None:
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed)
    feeder.start()
    time.sleep(delay_ms / 1000)
    out = bytearray()
    while chunk := os.read(read_end, 65536):
        out += chunk
    feeder.join()
    code = proc.wait()
    ids = []
    for line in out.decode("utf-8", errors="replace").splitlines():
        try:
            ids.append(json.loads(line).get("id"))
        except json.JSONDecodeError:
            ids.append(None)
    print(json.dumps({
        "exit": code,
        "ids": len(ids),
        "in_order": ids == list(range(n + 1)),
        "stderr": proc.stderr.read().decode("utf-8", errors="replace"),
    }, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
