#!/usr/bin/env python3
"""Logging stdio proxy: records an MCP stdio session as JSON lines.

    python3 tap.py LOG.jsonl SERVER_CMD [ARGS...]

Use it as the server command of any client. It spawns SERVER_CMD, copies our stdin to its stdin and its
stdout to our stdout line by line, unchanged, and appends each line to LOG.jsonl as
{"dir":"c2s","msg":{...}} (client to server) or {"dir":"s2c","msg":{...}}; a line that is not JSON is
logged as {"dir":..., "raw":"..."}. The server's stderr passes through. Standard library only.
Exits with the server's exit code; on SIGTERM/SIGINT it terminates the server first.
"""

import json
import signal
import subprocess
import sys
import threading


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: tap.py LOG.jsonl SERVER_CMD [ARGS...]", file=sys.stderr)
        return 2
    log_path, cmd = sys.argv[1], sys.argv[2:]
    log = open(log_path, "a", encoding="utf-8")
    lock = threading.Lock()

    def record(direction: str, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r\n")
        if not text.strip():
            return
        try:
            entry = {"dir": direction, "msg": json.loads(text)}
        except ValueError:
            entry = {"dir": direction, "raw": text}
        with lock:
            log.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
            log.flush()

    try:
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        print(f"tap.py: cannot start {cmd[0]}: {e}", file=sys.stderr)
        return 127

    def stop(signum, _frame):
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def client_to_server() -> None:
        try:
            for line in iter(sys.stdin.buffer.readline, b""):
                record("c2s", line)
                child.stdin.write(line)
                child.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass
        finally:
            try:
                child.stdin.close()
            except OSError:
                pass

    threading.Thread(target=client_to_server, daemon=True).start()

    out = sys.stdout.buffer
    for line in iter(child.stdout.readline, b""):
        record("s2c", line)
        try:
            out.write(line)
            out.flush()
        except BrokenPipeError:
            break
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
