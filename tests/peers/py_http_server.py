#!/usr/bin/env python3
"""Serve the seed's Python task server over Streamable HTTP with the Python SDK (mcp==1.30.0).

    $TARGET/peers/venv/bin/python py_http_server.py --port PORT [--seed PATH] [--json-response]

PATH is the seed's task_server.py (default: ../shared/seed/task_server.py beside the repository). It is
imported unchanged, so its low-level `Server("task-server")`, its `long_running_task` (as a task through
`ctx.experimental.run_task`, one-second steps "开始执行...", "处理步骤 1...", "处理步骤 2...", result
"任务完成！") and its `server.experimental.enable_tasks()` (tasks/get, tasks/result, tasks/list,
tasks/cancel over the SDK's InMemoryTaskStore) are the seed's own. Only its transport changes: instead
of `stdio_server()`, the SDK's `StreamableHTTPSessionManager` (stateful sessions: an `initialize` POST
without Mcp-Session-Id opens one; SSE replies unless --json-response) serves http://127.0.0.1:PORT/mcp
through a Starlette route under uvicorn (both pinned in requirements.txt). As the seed's `main()` does,
the completed `demo-task` is created at startup.

The low-level Server has no `streamable_http_app()` (only FastMCP does), so the app is put together
here the way FastMCP's is: the session manager's `handle_request` as the endpoint, its `run()` as the
app's lifespan. PORT 0 picks a free port. Once listening it prints
{"event":"listening","url":"http://127.0.0.1:PORT/mcp"} on stdout; logs go to stderr. Exits on SIGTERM
or SIGINT.
"""

import argparse
import contextlib
import importlib.util
import json
import socket
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated")

import anyio  # noqa: E402
import mcp.types as types  # noqa: E402
import uvicorn  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Route  # noqa: E402

DEFAULT_SEED = Path(__file__).resolve().parents[2] / ".." / "shared" / "seed" / "task_server.py"


def load_seed(path: Path):
    """Imports the seed's task_server.py as a module (its `if __name__ == "__main__"` does not run)."""
    spec = importlib.util.spec_from_file_location("seed_task_server", path)
    if spec is None or spec.loader is None:
        sys.exit(f"py_http_server.py: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def create_demo_task(task_support) -> None:
    """The seed's main() does this before serving, for the Inspector's List Tasks."""
    if not task_support:
        return
    await task_support.store.create_task(types.TaskMetadata(ttl=300000), task_id="demo-task")
    await task_support.store.update_task(
        "demo-task", status=types.TASK_STATUS_COMPLETED, status_message="已完成"
    )
    await task_support.store.store_result(
        "demo-task",
        types.CallToolResult(content=[types.TextContent(type="text", text="此任务用于List Tasks 功能")]),
    )


class Endpoint:
    """The ASGI endpoint: every request to /mcp goes to the session manager."""

    def __init__(self, manager: StreamableHTTPSessionManager):
        self.manager = manager

    async def __call__(self, scope, receive, send) -> None:
        await self.manager.handle_request(scope, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--seed", type=Path, default=DEFAULT_SEED, help="the seed's task_server.py")
    parser.add_argument("--json-response", action="store_true", help="answer requests with JSON, not SSE")
    args = parser.parse_args()
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")

    seed = load_seed(args.seed.resolve())
    manager = StreamableHTTPSessionManager(app=seed.server, json_response=args.json_response)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        await create_demo_task(seed.task_support)
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=Endpoint(manager), methods=["GET", "POST", "DELETE"])],
                    lifespan=lifespan)

    # Bind first, so that the port is known (and taken) before uvicorn starts serving on it.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def serve() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.02)
            print(json.dumps({"event": "listening", "url": url}), flush=True)
            print(f"py_http_server.py: ready on {url}", file=sys.stderr, flush=True)

    anyio.run(serve)


if __name__ == "__main__":
    main()
