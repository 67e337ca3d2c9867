#!/usr/bin/env python3
"""Drive any MCP server the way the seed client does, with the Python SDK (mcp==1.30.0).

    $TARGET/peers/venv/bin/python py_client.py [--tool NAME] [--ttl MS] [--] SERVER_CMD [ARGS...]
    $TARGET/peers/venv/bin/python py_client.py [--tool NAME] [--ttl MS] --url URL

The server is started on stdio (`stdio_client`), or, with --url, reached over Streamable HTTP
(`streamable_http_client(URL)`, e.g. http://127.0.0.1:3000/mcp: the session's Mcp-Session-Id is
reported, the SDK opens the GET stream after initialization and ends the session with DELETE on exit).

Steps (as seed/task_client.py): initialize, tools/list,
session.experimental.call_tool_as_task(NAME, {}, ttl=MS), poll_task until terminal,
get_task_result(task_id, CallToolResult). Prints one JSON object per line on stdout:

    {"event":"initialized","protocolVersion":"2025-11-25","serverInfo":{...},"capabilities":{...}}
    {"event":"session","sessionId":"..."}                                          (--url only)
    {"event":"tools","names":["long_running_task"]}
    {"event":"task_created","taskId":"...","status":"working","ttl":60000,"pollInterval":500}
    {"event":"status","taskId":"...","status":"working","message":"开始执行..."}   (one per poll)
    {"event":"result","text":"任务完成！","isError":false}
    {"event":"error","code":-32602,"message":"..."}                                (on a JSON-RPC error)

Exit 0 when the task completed and its result was read; 1 otherwise (reason on stderr).
The server inherits this process's environment.
"""

import argparse
import json
import os
import sys
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult, TextContent


warnings.filterwarnings("ignore", category=DeprecationWarning, module="mcp")
warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated")


def emit(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}, ensure_ascii=False), flush=True)


def die(reason: str) -> None:
    print(f"py_client.py: {reason}", file=sys.stderr, flush=True)
    sys.exit(1)


async def run(args: argparse.Namespace) -> None:
    if args.url:
        async with streamable_http_client(args.url) as (read, write, session_id):
            await drive(args, read, write, session_id)
        return
    params = StdioServerParameters(command=args.server[0], args=args.server[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        await drive(args, read, write, None)


async def drive(args: argparse.Namespace, read, write, session_id) -> None:
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        emit(
            "initialized",
            protocolVersion=init.protocolVersion,
            serverInfo=init.serverInfo.model_dump(exclude_none=True),
            capabilities=init.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True),
        )
        if session_id is not None:
            emit("session", sessionId=session_id())

        tools = await session.list_tools()
        emit("tools", names=[t.name for t in tools.tools])

        created = await session.experimental.call_tool_as_task(args.tool, arguments={}, ttl=args.ttl)
        task = created.task
        emit(
            "task_created",
            taskId=task.taskId,
            status=task.status,
            ttl=task.ttl,
            pollInterval=task.pollInterval,
        )

        status = None
        async for status in session.experimental.poll_task(task.taskId):
            emit("status", taskId=task.taskId, status=status.status, message=status.statusMessage or "")

        if status is None or status.status != "completed":
            die(f"task ended with status {status.status if status else None}")

        result = await session.experimental.get_task_result(task.taskId, CallToolResult)
        texts = [c.text for c in result.content if isinstance(c, TextContent)]
        emit("result", text="".join(texts), isError=bool(result.isError))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default="long_running_task", help="tool to call as a task")
    parser.add_argument("--ttl", type=int, default=60000, help="requested task ttl in ms (default 60000)")
    parser.add_argument("--url", help="Streamable HTTP endpoint to connect to instead of starting SERVER_CMD")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="server command and its arguments")
    args = parser.parse_args()
    if args.server and args.server[0] == "--":
        args.server = args.server[1:]
    if args.url and args.server:
        parser.error("give either --url URL or SERVER_CMD, not both")
    if not args.url and not args.server:
        parser.error("missing SERVER_CMD (or --url URL)")
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")
    try:
        anyio.run(run, args)
    except Exception as exc:  # noqa: BLE001 - report anything, JSON-RPC errors with their code
        err = _find_mcp_error(exc)
        if err is not None:
            emit("error", code=err.error.code, message=err.error.message)
            die(f"JSON-RPC error {err.error.code}: {err.error.message}")
        die(f"{type(exc).__name__}: {exc}")


def _find_mcp_error(exc: BaseException) -> McpError | None:
    """The SDK raises from inside anyio task groups, so errors may arrive wrapped in ExceptionGroups."""
    if isinstance(exc, McpError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _find_mcp_error(inner)
        if found is not None:
            return found
    return None

if __name__ == "__main__":
    main()
