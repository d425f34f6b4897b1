"""`mem mcp`: the Model Context Protocol server (stdio), built on the official `mcp` SDK. The tools
are in `memtool.mcp_tools` (imported only when the server starts: `mem --help` stays fast)."""

from __future__ import annotations


def build_server(mem):
    """An MCPServer whose tools call `mem` (a `memtool.memory.Memory`)."""
    from memtool.mcp_tools import build_server as build

    return build(mem)


def serve(mem) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    build_server(mem).run("stdio")
