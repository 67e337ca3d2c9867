#!/usr/bin/env python3
"""Run a task to completion, read its result and cancel another with FastMCP's client (3 or 4).

    $TARGET/peers/fastmcp3/bin/python fastmcp_client.py [--tool NAME] {--url URL | [--] SERVER_CMD [ARGS...]}
    $TARGET/peers/fastmcp4/bin/python fastmcp_client.py [--tool NAME] {--url URL | [--] SERVER_CMD [ARGS...]}

The venv decides the client and its era:
- FastMCP 3.4.11 (`initialize`, 2025-11-25): `client.call_tool(NAME, {}, task=True)` gives a
  `ToolTask`; its status notifications are reported as they come (`on_status_change`), the task
  is polled with `client.get_task_status` until terminal, and `task.result()` reads it
  (`tasks/result`). The second task is cancelled with `task.cancel()` (`tasks/cancel`).
- FastMCP 4.1.4 (`mode="auto"`: `server/discover`, 2026-07-28 with the tasks extension, which
  every FastMCP client declares): `fastmcp_tasks.client.call_tool_task` gives a `ToolTask`
  handle, polled with `task.status()` (`tasks/get`) until terminal, then `task.result()` (the
  outcome inline in `tasks/get`); the second is cancelled with `task.cancel()` and read until
  terminal (within 5 s: behind a balancer another server may show it a moment later). Last, a plain
  `client.call_tool(NAME)`, which FastMCP 4 resolves through a task transparently when the
  server answers with one.

Stdio servers inherit this process's environment. One JSON object per line on stdout:

    {"event":"connected","protocolVersion":"2025-11-25","server":{"name":…,"version":…}}
    {"event":"tools","names":[…],"taskSupport":{"long_running_task":"optional"}}
    {"event":"created","taskId":"…","status":"working","ttl":60000,"pollInterval":500}
    {"event":"notification","taskId":"…","status":"working","message":"…"}   (FastMCP 3)
    {"event":"status","taskId":"…","status":"working","message":"…"}         (one per poll)
    {"event":"result","text":"任务完成！","isError":false}
    {"event":"cancelled","taskId":"…","status":"cancelled","message":"…"}
    {"event":"transparent","text":"任务完成！","isError":false}                (FastMCP 4)
    {"event":"error","type":"…","message":"…"}                                 (then exit 1)
"""

import argparse
import asyncio
import importlib.metadata
import json
import os
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

MAJOR = int(importlib.metadata.version("fastmcp").split(".")[0])
if MAJOR >= 4:
    # Importing `fastmcp_tasks` is what makes every FastMCP 4 `Client` declare the tasks
    # extension (it registers the client half); a client that never imports it gets no tasks.
    from fastmcp_tasks.client import call_tool_task
TERMINAL = {"completed", "failed", "cancelled"}


def emit(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}, ensure_ascii=False), flush=True)


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def status_fields(status) -> dict:
    """A task status as FastMCP 3 (`statusMessage`) or FastMCP 4 (`status_message`) has it."""
    message = getattr(status, "statusMessage", None) if MAJOR < 4 else status.status_message
    task_id = status.taskId if MAJOR < 4 else status.task_id
    return {"taskId": task_id, "status": status.status, "message": message}


async def poll(get_status, interval_ms) -> dict:
    """Polls until a terminal status, printing each; returns the last."""
    while True:
        fields = status_fields(await get_status())
        emit("status", **fields)
        if fields["status"] in TERMINAL:
            return fields
        await asyncio.sleep(max(interval_ms or 500, 50) / 1000)


async def drive_v3(client: Client, tool: str) -> None:
    init = client.initialize_result
    emit("connected", protocolVersion=init.protocolVersion,
         server={"name": init.serverInfo.name, "version": init.serverInfo.version})
    await list_tools(client)
    task = await client.call_tool(tool, {}, task=True)
    if task.returned_immediately:
        raise RuntimeError(f"{tool} ran synchronously, not as a task")
    task.on_status_change(lambda s: emit("notification", **status_fields(s)))
    first = await client.get_task_status(task.task_id)
    emit("created", taskId=task.task_id, status=first.status, ttl=first.ttl, pollInterval=first.pollInterval)
    await poll(lambda: client.get_task_status(task.task_id), first.pollInterval)
    result = await task.result()
    emit("result", text=text_of(result), isError=result.is_error)

    doomed = await client.call_tool(tool, {}, task=True)
    await doomed.cancel()
    emit("cancelled", **status_fields(await client.get_task_status(doomed.task_id)))


async def drive_v4(client: Client, tool: str) -> None:
    info = client.server_info
    emit("connected", protocolVersion=client.protocol_version,
         server={"name": info.name, "version": info.version})
    await list_tools(client)
    task = await call_tool_task(client, tool, {})
    created = task.create_result
    emit("created", taskId=task.task_id, status=created.status, ttl=created.ttl_ms,
         pollInterval=created.poll_interval_ms)
    await poll(task.status, created.poll_interval_ms)
    result = await task.result()
    emit("result", text=text_of(result), isError=result.is_error)

    doomed = await call_tool_task(client, tool, {})
    await doomed.cancel()
    # Each request may reach another server behind a balancer: one that did not take the
    # cancel shows it once it hears of it (through the store, milliseconds later).
    for _ in range(250):
        fields = status_fields(await doomed.status())
        if fields["status"] in TERMINAL:
            break
        await asyncio.sleep(0.02)
    emit("cancelled", **fields)

    result = await client.call_tool(tool, {})
    emit("transparent", text=text_of(result), isError=result.is_error)


async def list_tools(client: Client) -> None:
    tools = await client.list_tools()
    support = {}
    for t in tools:
        execution = getattr(t, "execution", None)
        support[t.name] = getattr(execution, "taskSupport", None) or getattr(execution, "task_support", None)
    emit("tools", names=[t.name for t in tools], taskSupport=support)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default="long_running_task")
    parser.add_argument("--url", help="a Streamable HTTP endpoint instead of a stdio server")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="the stdio server's command")
    args = parser.parse_args()
    server = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not args.url and not server:
        parser.error("give --url URL or a server command")
    target = args.url or StdioTransport(command=server[0], args=server[1:], env=dict(os.environ))
    try:
        async with Client(target) as client:
            await (drive_v3 if MAJOR < 4 else drive_v4)(client, args.tool)
    except Exception as error:  # the peer's own exception, reported as a line and exit 1
        emit("error", type=type(error).__name__, message=str(error))
        print(f"fastmcp_client.py: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
