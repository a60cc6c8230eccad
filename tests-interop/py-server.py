"""A PyPI `mcp` server for Junction's 2026-07-28 client interop tests (stdio or HTTP)."""

import sys
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve


class Person(BaseModel):
    name: str


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


server = MCPServer("py-stateless", instructions="Interop server for Junction.")


@server.tool()
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


@server.tool()
def greet(person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Greets the person the client names."""
    return f"Hello, {person.name}!"


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Announces a tools-list change and an update of `uri` to the listen streams."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated(uri)
    return "touched"


@server.prompt()
def hello(who: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {who}."


@server.resource("file:///readme.txt")
def readme() -> str:
    """A fixed text."""
    return "read me"


def serve_http(port: int) -> None:
    """Streamable HTTP on 127.0.0.1:`port` (0: any free port). The socket is bound before the
    port is printed on the first line of stdout, so a test reads a port that is already this
    server's (a port probed free and bound later may be taken in between)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        serve_http(int(sys.argv[2]))
    else:
        server.run()
