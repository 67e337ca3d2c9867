"""The Python SDK (mcp 1.30.0) peer of taskwire's end-to-end benchmark (tests/src/bin/bench.rs).

A stdio MCP server with the same two tools as `task-server --bench-tools`, on the low-level
`Server` and its experimental tasks API (`enable_tasks`, `run_task`), as the seed's server uses it:

    python bench_server.py

- `echo`: taskSupport "forbidden"; input schema {"text": string} (required); returns `text` as
  one text content block.
- `instant_task`: taskSupport "optional"; as a task, `run_task` with work that returns the
  text "done" at once; called plainly, it answers "done".

`tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` are the SDK's defaults (an
`InMemoryTaskStore`). Exits when stdin closes.
"""

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.stdio import stdio_server

server = Server("taskwire-py-bench-server")

TOOLS = [
    types.Tool(
        name="echo",
        description="Returns its `text` argument as one text block.",
        inputSchema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        execution=types.ToolExecution(taskSupport=types.TASK_FORBIDDEN),
    ),
    types.Tool(
        name="instant_task",
        description='Completes at once with the text "done".',
        inputSchema={"type": "object", "properties": {}},
        execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL),
    ),
]


def text_result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)


@server.list_tools()
async def list_tools() -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    if name == "echo":
        ctx.experimental.validate_task_mode(types.TASK_FORBIDDEN)
        return text_result(arguments["text"])
    if name == "instant_task":
        ctx.experimental.validate_task_mode(types.TASK_OPTIONAL)
        if ctx.experimental.is_task:

            async def work(_task: ServerTaskContext) -> types.CallToolResult:
                return text_result("done")

            return await ctx.experimental.run_task(work)
        return text_result("done")
    return text_result(f"unknown tool: {name}", is_error=True)


server.experimental.enable_tasks()


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
