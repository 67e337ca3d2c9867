#!/usr/bin/env python3
"""The seed's `long_running_task` as a FastMCP background task, for FastMCP 3 and 4.

    $TARGET/peers/fastmcp3/bin/python fastmcp_server.py [--step-ms MS] [--poll-ms MS] [--http PORT]
    $TARGET/peers/fastmcp4/bin/python fastmcp_server.py [--step-ms MS] [--poll-ms MS] [--http PORT]

Which FastMCP runs it is the venv's: fastmcp[tasks]==3.4.11 serves the 2025-11-25 tasks
(`tasks/get`, `tasks/result`, `tasks/cancel`, status notifications) on Docket's in-process
`memory://` backend; fastmcp[tasks]==4.1.4 serves the 2026-07-28 tasks extension through
`fastmcp_tasks.TasksExtension` (`memory://` too), and no tasks to a 2025-11-25 session.

Tools (FastMCP's own decorators, nothing hand-made):
- `long_running_task` (`task=TaskConfig(mode="optional", poll_interval=POLL)`): sets the seed's
  three status messages through the `Progress` dependency ("开始执行...", "处理步骤 1...",
  "处理步骤 2...", which FastMCP reports as the task's `statusMessage`), sleeping MS after each
  (default 1000), then returns "任务完成！" (FastMCP adds its structured `{"result": …}`).
- `echo(text)`: returns `text`, never as a task.

On stdio by default; with --http PORT, Streamable HTTP at http://127.0.0.1:PORT/mcp (FastMCP's
uvicorn app, its default SSE answers). Logs go to stderr.
"""

import argparse
import asyncio
import importlib.metadata
from datetime import timedelta

from fastmcp import FastMCP
from fastmcp.dependencies import Progress
from fastmcp.utilities.tasks import TaskConfig

STEPS = ["开始执行...", "处理步骤 1...", "处理步骤 2..."]
RESULT = "任务完成！"
MAJOR = int(importlib.metadata.version("fastmcp").split(".")[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step-ms", type=int, default=1000, help="pause after each status message")
    parser.add_argument("--poll-ms", type=int, default=500, help="the pollInterval the tasks advertise")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()

    mcp = FastMCP("fastmcp-task-server")
    if MAJOR >= 4:
        # FastMCP 4 moved tasks into the `fastmcp-tasks` package, registered as an extension.
        from fastmcp_tasks import TasksExtension

        mcp.add_extension(TasksExtension(url="memory://"))

    poll = timedelta(milliseconds=args.poll_ms)

    @mcp.tool(task=TaskConfig(mode="optional", poll_interval=poll))
    async def long_running_task(progress: Progress = Progress()) -> str:
        """一个需要几秒钟完成的任务，会输出进度状态。支持普通调用和任务调用。"""
        for step in STEPS:
            await progress.set_message(step)
            await asyncio.sleep(args.step_ms / 1000)
        return RESULT

    @mcp.tool
    def echo(text: str) -> str:
        """Returns its text."""
        return text

    if args.http is None:
        mcp.run(show_banner=False)
    else:
        mcp.run(transport="http", host="127.0.0.1", port=args.http, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
