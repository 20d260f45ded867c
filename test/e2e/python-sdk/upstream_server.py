"""A remote MCP server built with the official MCP Python SDK (MCPServer, FastMCP's name since mcp 2), over
Streamable HTTP on 127.0.0.1:<port>/mcp: the upstream of test/e2e/mcp-upstream-python.test.ts."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-tools")


@server.tool()
def shout(text: str) -> str:
    """Upper-cases its text."""
    return text.upper()


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
