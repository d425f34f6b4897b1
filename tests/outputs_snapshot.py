"""Snapshot of what `mem` and `mem mcp` print on the example workspace, for behaviour-preserving
reshapes: run it before and after, and compare the two files byte for byte.

    python tests/outputs_snapshot.py before.json
    ... reshape ...
    python tests/outputs_snapshot.py after.json && cmp before.json after.json

Every command runs as a real process on a fresh copy of examples/workspace. What legitimately differs
between two runs (temporary paths, durations, clock times) is replaced by placeholders; nothing else
is touched. Not a test module (pytest does not collect it): a tool for the reviewer of a reshape.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CLI = [
    ["index", "--json"],
    ["status", "--json"],
    ["recall", "Peter Lisbon"],
    ["recall", "Peter Lisbon", "--json"],
    ["recall", "wer macht meine Steuern", "--json", "-k", "5"],
    ["recall", "--entity", "Pete", "--json"],
    ["recall", "--kind", "opinion", "--json", "-k", "20"],
    ["recall", "Marrakech", "--as-of", "2026-10-15", "--json"],
    ["recall", "Marrakech", "--since", "2026-11-01", "--until", "2026-11-30", "--json"],
    ["recall", "invoice", "--budget", "80", "--json"],
    ["recall", "\"unbalanced (query* OR", "--json"],
    ["episodes", "Marrakech"],
    ["episodes", "Marrakech", "--json"],
    ["about", "Pete"],
    ["about", "Pete", "--json"],
    ["opinions", "--json"],
    ["opinions", "--entity", "Peter"],
    ["get", "memory.md#L1-L6"],
    ["get", "memory.md#L1-L6", "--json"],
    ["check"],
    ["check", "--json"],
    ["core", "show", "--json"],
    ["reflect", "--dry-run", "--force", "--json"],
    ["summarize", "2026-11-27", "--json"],
    ["schedule", "--json"],
    ["recal", "x"],
    ["recall", "x", "--bogus"],
    ["get", "../etc/passwd"],
    ["retain", "W @Peter: Snapshot fact.", "--date", "2026-11-29", "--json"],
    ["recall", "Snapshot fact", "--json"],
    ["reflect", "--force", "--json"],
    ["recall", "Peter Lisbon", "--json"],
    ["sync", "status", "--json"],
]

MCP = [
    ("recall", {"query": "Peter Lisbon", "k": 5}),
    ("recall", {"query": "", "entity": "Pete", "k": 5}),
    ("episodes", {"query": "Marrakech", "k": 5}),
    ("get", {"ref": "memory.md#L1-L4"}),
    ("about", {"entity": "Pete", "k": 5}),
    ("opinions", {"entity": "Peter"}),
    ("status", {}),
    ("summarize", {"target": "2026-11-27"}),
    ("retain", {"bullet": "W @Peter: Snapshot via MCP.", "date": "2026-11-29"}),
    ("core_append", {"text": "- Snapshot line."}),
    ("get", {"ref": "../secret"}),
]


def normalise(text: str, ws: Path) -> str:
    text = text.replace(str(ws.resolve()), "<WS>").replace(str(ws), "<WS>")
    text = re.sub(r'"(seconds|embed_seconds|elapsed|took)": [0-9.e-]+', r'"\1": 0', text)
    text = re.sub(r"\b\d+\.\d+ ?s\b", "<t>s", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( ?[A-Z]{2,5})?( ?\(UTC[+-]\d{4}\))?Z?", "<time>", text)
    text = re.sub(r"\d{8}T\d{6}Z(-\d+)*", "<stamp>", text)
    return text


def run_cli(ws: Path, env: dict) -> list[dict]:
    out = []
    for args in CLI:
        proc = subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), *args], capture_output=True,
                              text=True, env=env, timeout=300)
        out.append({"args": args, "exit": proc.returncode, "stdout": normalise(proc.stdout, ws),
                    "stderr": normalise(proc.stderr, ws)})
    return out


def run_mcp(ws: Path, env: dict) -> list[dict]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def calls():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                got = [{"tools": sorted([t.name, t.description, json.dumps(t.input_schema, sort_keys=True)]
                                        for t in tools)}]
                for name, arguments in MCP:
                    result = await session.call_tool(name, arguments)
                    got.append({"tool": name, "arguments": arguments, "error": result.is_error,
                                "text": normalise("".join(getattr(c, "text", "") for c in result.content), ws)})
                core = await session.read_resource("memory://core")
                got.append({"resource": "memory://core", "text": normalise(core.contents[0].text, ws)})
                return got

    return asyncio.run(calls())


def main() -> None:
    dest = Path(sys.argv[1])
    tmp = Path(tempfile.mkdtemp(prefix="mem-snapshot-"))
    try:
        ws = tmp / "ws"
        shutil.copytree(ROOT / "examples" / "workspace", ws, ignore=shutil.ignore_patterns(".memory"))
        env = {k: v for k, v in os.environ.items() if k not in ("MEM_WORKSPACE", "FORCE_COLOR")}
        env.update({"MEM_EMBEDDER": "none", "NO_COLOR": "1", "COLUMNS": "120", "TERM": "dumb", "TZ": "UTC",
                    "OLLAMA_HOST": "http://127.0.0.1:9"})
        snapshot = {"cli": run_cli(ws, env), "mcp": run_mcp(ws, env)}
        dest.write_text(json.dumps(snapshot, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
