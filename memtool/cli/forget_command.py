"""`mem forget`: show the lines a text or citation names, ask, then remove and purge them."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import sys

import typer

from memtool.cli import render
from memtool.cli.call import memory
from memtool.cli.common import JsonOpt
from memtool.errors import UsageError


def forget(
    target: str = typer.Argument(..., help="Exact text to forget (every line holding it, any case), or a citation such as memory/2026-11-27.md#L9 or bank/entities/Jonas.md#L4-L6."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Remove without asking."),
    json_: bool = JsonOpt,
) -> None:
    """Remove lines from the Markdown and purge them from the index, local state, backups and logs.

    Shows the lines first and asks (or --yes); removes those lines, or nothing if a file changed
    meanwhile. Other lines are never touched. A synced workspace then needs mem sync (a new revision without them) and mem sync gc (deletes the old ones).

    Example: mem forget "+49 171 2345678"
    """
    mem = memory("none")
    preview = mem.forget(target, confirm=False)
    if not preview["count"]:
        render.err.print(f"no line holds {render.escape(target)!s}; nothing to forget")
        if json_:
            render.emit_json(preview)
        return
    if not json_:
        render.err.print(f"{preview['count']} line(s) to remove:")
        for m in preview["matches"]:
            keeps = f"  (keeps {m['keeps'].strip()}: the lines around it read as before)" if "keeps" in m else ""
            render.out.print(f"  {render.escape(m['source'])}  {render.escape(m['text'])}{render.escape(keeps)}")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("mem forget asks before removing anything, and no one can answer here",
                             "check the lines it lists, then run it again with --yes")
        if not typer.confirm("Remove these lines and every copy memtool keeps of them?", err=True):
            raise typer.Exit(0)
    result = mem.forget(target, confirm=True, plan=preview["plan"])  # the lines shown, or nothing
    if json_:
        render.emit_json(result)
        return
    render.err.print(f"forgot {result['count']} line(s); purged the index, local state and "
                     f"{len(result['purged']['scrubbed'])} file(s) under .memory/")
    for left in result["purged"]["left"]:
        render.warn(f"{left} could not be read; check it by hand")
    if not result["purged"]["index_wal_emptied"]:
        render.warn("another mem process has the index open: its old pages leave index.sqlite-wal when it closes")
    if result.get("sync"):
        render.err.print(result["sync"])
