"""docs/agents.md as a user copies it: every client configuration parses and starts a working MCP
server, the session-start hook prints core memory and recent notes, and the Python API example
runs against a real workspace and matches the class."""

import asyncio
import json
import re
import shlex
import subprocess
import sys
import tomllib

from conftest import ROOT, mem_env, write

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DOC = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
PLACEHOLDER = "/home/you/memory"


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


def _servers():
    """(client shape, server entry) of every MCP server configuration on the page."""
    found = []
    for text in blocks("json"):
        data = json.loads(text)
        for key in ("mcpServers", "servers"):
            found += [(key, entry) for entry in data.get(key, {}).values()]
    for text in blocks("toml"):
        found += [("mcp_servers", entry) for entry in tomllib.loads(text).get("mcp_servers", {}).values()]
    return found


def _argv(command, args, ws):
    """What a client would start, with `mem` run from this checkout and the placeholder workspace ours."""
    args = [str(ws) if a == PLACEHOLDER else a for a in args]
    assert command in ("mem", "python3"), command
    return [sys.executable, "-m", "memtool", *args] if command == "mem" else [sys.executable, *args]


def test_d5_every_client_configuration_starts_a_working_server(example_ws):
    servers = _servers()
    assert {shape for shape, _ in servers} == {"mcpServers", "servers", "mcp_servers"}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "mem" in scripts  # the command the configurations name is what the package installs
    for shape, entry in servers:
        assert entry.get("type", "stdio") == "stdio" and PLACEHOLDER in entry["args"], entry
        argv = _argv(entry["command"], entry["args"], example_ws)

        async def main():
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=mem_env())
            async with stdio_client(params) as (read, write_):
                async with ClientSession(read, write_) as s:
                    await s.initialize()
                    return {t.name for t in (await s.list_tools()).tools}
        assert {"recall", "note", "forget"} <= asyncio.run(main()), shape


def test_d5_the_session_start_hook_prints_core_memory_and_recent_notes(example_ws):
    hooks = [h for text in blocks("json") for group in json.loads(text).get("hooks", {}).get("SessionStart", [])
             for h in group["hooks"]]
    assert hooks and all(h["type"] == "command" for h in hooks)
    run_mem = f"{shlex.quote(sys.executable)} -m memtool"
    (example_ws / "memory.md").write_text("# Core\n\n- Prefers tea.\n", encoding="utf-8")
    write(example_ws, "memory/2026-12-01.md", "# 2026-12-01\n\n- Jonas moved the meeting to Friday.\n")
    for hook in hooks:
        command = hook["command"].replace("mem ", run_mem + " ").replace(PLACEHOLDER, str(example_ws))
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, env=mem_env(), timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "- Prefers tea." in proc.stdout and "Jonas moved the meeting to Friday." in proc.stdout


def test_d5_the_python_api_example_runs_and_the_table_matches_the_class(example_ws, monkeypatch):
    from memtool import Memory

    [example] = blocks("python")
    monkeypatch.setenv("MEM_WORKSPACE", str(example_ws))
    exec(compile(example, "docs/agents.md", "exec"), {})
    assert "Works at the harbour office" not in (example_ws / "memory").joinpath(
        sorted(p.name for p in (example_ws / "memory").iterdir())[-1]).read_text(encoding="utf-8")
    table = DOC[DOC.index("## Python API"):]
    named = set(re.findall(r"^\| `(?:Memory\.)?(\w+)\(", table, re.M)) | set(re.findall(r"`(\w+)\(", table))
    assert {"open", "recall", "note", "forget", "entities", "recent", "sync_gc"} <= named
    for name in named - {"print"}:
        method = getattr(Memory, name, None)
        assert callable(method) and method.__doc__ is not None or name in ("close", "core_read", "sync_status"), name
