"""`mem import`: another tool's memory into this workspace (see memtool.importing)."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

from pathlib import Path

import typer

from memtool.cli import render
from memtool.cli.call import memory
from memtool.cli.common import JsonOpt

FORMAT_HELP = {"obsidian": "an Obsidian vault", "basic-memory": "a basic-memory project",
               "chatgpt": "a ChatGPT data export", "claude-code": "Claude Code memory files"}


def complete_formats(incomplete: str) -> list[tuple[str, str]]:
    return [(f, h) for f, h in FORMAT_HELP.items() if f.startswith(incomplete)]


def import_(
    fmt: str = typer.Argument(..., metavar="format", help="obsidian, basic-memory, chatgpt or claude-code.",
                              autocompletion=complete_formats),
    source: Path = typer.Argument(..., metavar="source", show_default=False, help="The vault, project or export folder (a ChatGPT export may also be its .zip "
                                            "or conversations.json; claude-code takes a project or ~/.claude)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be written and skipped; write nothing."),
    json_: bool = JsonOpt,
) -> None:
    """Import another tool's memory: notes to bank pages, daily notes and chats to daily logs.

    The source is only read. A second import adds nothing (each imported item carries a marker);
    what is left out is listed with the reason. Example: mem import obsidian ~/Vault --dry-run
    """
    from memtool.errors import UsageError
    from memtool.importers import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    with render.progress_bar("importing") as bar:
        data = memory("none").import_(fmt, source, dry_run=dry_run, progress=bar)
    if json_:
        render.emit_json(data)
    else:
        render.import_report(data)
