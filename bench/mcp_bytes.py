"""Bytes per typical MCP call: `mem mcp` on a copy of examples/workspace, driven by the real SDK client.

    python bench/mcp_bytes.py                 # this checkout
    python bench/mcp_bytes.py --src /path     # another checkout
    python bench/mcp_bytes.py --before /path  # a before (that checkout) / after (this one) table

Counts the bytes of each tool result as it travels (the JSON-RPC `result`: text content plus any
structured content), and the text an agent reads, and estimates tokens (~4 bytes a token)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

CALLS = [
    ("recall", {"query": "Peter Lisbon", "k": 10}),
    ("recall", {"query": "", "entity": "Peter", "k": 10}),
    ("episodes", {"query": "Marrakech"}),
    ("episodes", {"query": "Peter"}),
    ("about", {"entity": "Peter"}),
    ("opinions", {"entity": "Peter"}),
    ("get", {"ref": "memory/2026-11-27.md"}),
    ("status", {}),
]


async def measure(src: Path, ws: Path) -> list[dict]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(src), "MEM_EMBEDDER": "none"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"], env=env,
                                   cwd=str(src))
    rows = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for tool, args in CALLS:
                result = await session.call_tool(tool, args)
                wire = json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"),
                                  separators=(",", ":"), ensure_ascii=False).encode()
                text = "".join(c.text for c in result.content if getattr(c, "text", None))
                rows.append({"call": f"{tool} {json.dumps(args, ensure_ascii=False)}", "wire": len(wire),
                             "text": len(text.encode()), "error": result.is_error})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = _run(args.src)
    if args.json:
        print(json.dumps(rows))
        return
    if args.before:
        _compare(_run(args.before), rows)
        return
    print("| call | bytes on the wire | text an agent reads | ~tokens |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| `{r['call']}` | {r['wire']:,} | {r['text']:,} | {r['text'] // 4:,}{' (error)' if r['error'] else ''} |")


def _run(src: Path) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "workspace", ws,
                        ignore=shutil.ignore_patterns(".memory"))
        return asyncio.run(measure(src.resolve(), ws))


def _compare(before: list[dict], after: list[dict]) -> None:
    print("| call | wire before | wire after | text before | text after | ~tokens after |")
    print("|---|---:|---:|---:|---:|---:|")
    for b, a in zip(before, after):
        print(f"| `{a['call']}` | {b['wire']:,} | {a['wire']:,} | {b['text']:,} | {a['text']:,} | {a['text'] // 4:,} |")
    totals = [sum(r[key] for r in rows) for rows in (before, after) for key in ("wire", "text")]
    print(f"| total | {totals[0]:,} | {totals[2]:,} | {totals[1]:,} | {totals[3]:,} | {totals[3] // 4:,} |")


if __name__ == "__main__":
    main()
