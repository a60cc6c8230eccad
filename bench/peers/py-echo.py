"""The Python SDK's side of junction-bench: one `echo {message}` tool answering
`Echo: <message>`, with either server of PyPI `mcp` 2.x.

    python py-echo.py mcpserver|lowlevel stdio
    python py-echo.py mcpserver|lowlevel http PORT [--sessionless] [--sse]

`mcpserver` is MCPServer (FastMCP in mcp 1.x, renamed in 2.x): the tool is a decorated,
type-annotated function. `lowlevel` is mcp.server.lowlevel.Server with hand-written
tools/list and tools/call handlers. Over HTTP the SDK's own Starlette app runs under uvicorn
with the access log off (it would print a line per request); JSON answers unless --sse.
"""

import sys

import anyio
import mcp_types as types
import uvicorn

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server


def mcpserver():
    server = MCPServer("bench-py-echo")

    @server.tool()
    def echo(message: str) -> str:
        """Echoes the message back."""
        return f"Echo: {message}"

    return server


ECHO_TOOL = types.Tool(
    name="echo",
    description="Echoes the message back",
    input_schema={
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(ctx, params):
    message = (params.arguments or {}).get("message", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"Echo: {message}")])


def lowlevel():
    return Server("bench-py-echo", on_list_tools=list_tools, on_call_tool=call_tool)


def main():
    flavor, transport = sys.argv[1], sys.argv[2]
    server = mcpserver() if flavor == "mcpserver" else lowlevel()
    if transport == "stdio":
        if flavor == "mcpserver":
            server.run()
            return

        async def serve():
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)
        return
    port = int(sys.argv[3])
    flags = sys.argv[4:]
    app = server.streamable_http_app(
        json_response="--sse" not in flags,
        stateless_http="--sessionless" in flags,
        host="127.0.0.1",
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
