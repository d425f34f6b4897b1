"""Regenerate the command reference in docs/cli.md from `mem … --help` (a test keeps them in sync).

    python docs/cli_reference.py          # rewrite docs/cli.md
    python docs/cli_reference.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).with_name("cli.md")
BEGIN, END = "<!-- BEGIN GENERATED HELP -->", "<!-- END GENERATED HELP -->"
COMMANDS = ["", "init", "retain", "index", "watch", "recall", "episodes", "about", "opinions", "reflect", "get", "summarize",
            "core", "core show", "core append", "core replace", "core insert", "sync", "sync run",
            "sync status", "sync resolve", "sync off", "sync on", "sync restore", "sync key", "sync clone", "sync gc",
            "status", "check", "schedule", "mcp", "forget", "note", "recent", "entities", "import", "review",
            "review list", "review show", "review decide", "serve"]


def help_text(command: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("MEM_WORKSPACE", "FORCE_COLOR")}
    env.update({"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"})
    args = [sys.executable, "-m", "memtool", *command.split(), "--help"]
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout
    return "\n".join(line.rstrip() for line in out.strip("\n").splitlines())


def generated() -> str:
    parts = [BEGIN]
    for cmd in COMMANDS:
        title = f"mem {cmd}".strip()
        parts += [f"### `{title}`", "", "```text", help_text(cmd), "```", ""]
    parts.append(END)
    return "\n".join(parts)


def updated(doc: str) -> str:
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + generated() + tail


if __name__ == "__main__":
    current = DOC.read_text(encoding="utf-8")
    new = updated(current)
    if "--check" in sys.argv:
        sys.exit(0 if new == current else 1)
    DOC.write_text(new, encoding="utf-8")
