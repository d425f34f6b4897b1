"""The commands that keep the workspace and its index: init, index, watch, status, check, reflect,
schedule and mcp. Each parses its options, calls `Memory` (or the workspace) and renders."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import os
import sys
from datetime import date
from pathlib import Path
from typing import List, Optional

import typer

from memtool.cli import render, watching
from memtool.cli.call import memory, state
from memtool.cli.common import EmbedderOpt, JsonOpt
from memtool.errors import ExitStatus
from memtool.mcp_server import serve
from memtool.schedule import cron_lines, mem_command
from memtool.workspace import ENV_VAR, init as create_workspace, init_path


def init(path: Optional[Path] = typer.Argument(None, help="Folder to create or complete (default: -w's, else $MEM_WORKSPACE, else the current folder)."),
         json_: bool = JsonOpt) -> None:
    """Create a workspace: memory.md, memory/, bank/, memtool.toml and a .gitignore for .memory/.

    Only init makes a workspace of a folder; other commands refuse one that is not. Existing files
    are never changed. Example: mem init ~/memory
    """
    ws, created = create_workspace(init_path(path, state.workspace, os.environ.get(ENV_VAR)), date.today())
    if json_:
        render.emit_json({"workspace": str(ws.root), "created": created})
    else:
        render.created(ws.root, created)


def index(
    rebuild: bool = typer.Option(False, "--rebuild", help="Re-read every file (vectors of unchanged text are kept)."),
    embedder: Optional[str] = EmbedderOpt,
    json_: bool = JsonOpt,
) -> None:
    """Bring the index up to date: only changed files are read, only new text is embedded.

    Interrupt it any time; the next run continues. Example: mem index --rebuild
    """
    mem = memory(embedder)
    with render.progress_bar("indexing") as bar, render.progress_bar("embedding", threshold=64) as ebar:
        report = mem.index(rebuild=rebuild, progress=bar, embed_progress=ebar)
    for notice in mem.notices + report.notices:
        render.warn(notice)
    if json_:
        render.emit_json(report.to_dict())
    else:
        render.index_report(report)


def watch(
    interval: float = typer.Option(2.0, "--interval", help="Seconds between checks when polling (and the longest wait between rounds)."),
    poll: bool = typer.Option(False, "--poll", help="Check every file each interval instead of following file events (e.g. on network drives, where events from other machines do not arrive)."),
    embedder: Optional[str] = EmbedderOpt,
    sync: bool = typer.Option(False, "--sync", help="Also sync with the bound remote by itself: push when edits settle, pull every --sync-interval seconds (also: [sync] auto = true)."),
    sync_interval: Optional[float] = typer.Option(None, "--sync-interval", help="Seconds between pulls with --sync (default: [sync] interval, 60).", show_default=False),
) -> None:
    """Keep the index current while you write: re-index (and embed) files as they change.

    Follows the operating system's file events, so a save is searchable within a fraction of a
    second, and still checks every file once a minute; falls back to polling (and says so) where
    events are unavailable. Stop with Ctrl-C. Example: mem watch
    """
    if not 0.01 <= interval <= 86400:  # nan too: it was a traceback with --poll
        raise typer.BadParameter(f"must be seconds from 0.01 to 86400, not {interval}", param_hint="--interval")
    if sync_interval is not None and not 0.1 <= sync_interval <= 86400:  # nan pulled "every nans"
        raise typer.BadParameter(f"must be seconds from 0.1 to 86400, not {sync_interval}", param_hint="--sync-interval")
    mem = memory(embedder)
    watching.run(mem, interval, poll, embedder, sync=sync or mem.config.sync_auto, sync_interval=sync_interval)


def status(embedder: Optional[str] = EmbedderOpt, json_: bool = JsonOpt) -> None:
    """Files, facts per kind, entities, days covered, index health, and which providers answer.

    Example: mem status --json
    """
    mem = memory(embedder)
    data = mem.status()
    for notice in mem.notices + data["warnings"]:
        render.warn(notice)
    if json_:
        render.emit_json(data)
    else:
        render.status(data)


def check(
    refs: List[str] = typer.Argument(None, help="With --restore or --ack: only these vanished lines (path#Lline or path:line as listed, or a path).", show_default=False),
    restore: bool = typer.Option(False, "--restore", help="Put lines mem retain, note or core wrote that have vanished back at the end of their files."),
    ack: bool = typer.Option(False, "--ack", help="Accept lines mem retain, note or core wrote that have vanished as deleted on purpose; never report them again."),
    json_: bool = JsonOpt,
) -> None:
    """Report problems in the Markdown with file:line, and lines mem retain, note or core wrote that
    have vanished since (an editor saving an older copy over them); exits 1 when there are errors.

    Example: mem check --restore
    """
    if restore and ack:
        raise typer.BadParameter("choose one of --restore and --ack", param_hint="--restore/--ack")
    if refs and not (restore or ack):
        raise typer.BadParameter("naming lines needs --restore or --ack", param_hint="REFS")
    mem = memory("none")
    if restore or ack:
        _retained_done(mem.restore_retained(refs or []) if restore else mem.acknowledge_retained(refs or []),
                       "restored" if restore else "acknowledged", json_)
        return
    data = render.check_document(mem.check())
    for notice in mem.notices:
        render.warn(notice)
    if json_:
        render.emit_json(data)
    else:
        render.diagnostics(data)
    if data["errors"]:
        raise typer.Exit(ExitStatus.CHECK_FAILED)


def _retained_done(done: list[dict], verb: str, json_: bool) -> None:
    if json_:
        render.emit_json({verb: done})
    else:
        render.retained(done, verb)


def reflect(
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the journal entry a run would write; write nothing."),
    force: bool = typer.Option(False, "--force", help="Run even if the gates say not yet (12 h since the last run, 3 new facts)."),
    since: Optional[str] = typer.Option(None, "--since", help="Only entities with facts from this time on: 7d, 2025-11-01."),
    overwrite_edits: bool = typer.Option(False, "--overwrite-edits", help="Regenerate blocks even where a person edited them (backed up first)."),
    review: Optional[bool] = typer.Option(None, "--review/--no-review", help="Ask the local Ollama model about unclear cases.", show_default="[reflect] llm_review, else no"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Seconds before the run stops cleanly.", show_default="[reflect] time_limit, else 60"),
    embedder: Optional[str] = EmbedderOpt,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print the journal entry on success too."),
    json_: bool = JsonOpt,
) -> None:
    """Consolidate (dedup, contradictions, stability, connections), update entity pages and opinions,
    and append to bank/journal.md; safe from cron.

    For cron, take the line `mem schedule` prints (absolute paths). Example: mem reflect --dry-run
    """
    if time_limit is not None and not 0 < time_limit <= 1e6:  # nan ran without a limit
        raise typer.BadParameter(f"must be seconds, more than 0 and at most 1e6, not {time_limit}", param_hint="--time-limit")
    data = memory(embedder).reflect(dry_run=dry_run, force=force, since=since, overwrite_edits=overwrite_edits,
                                    review=review, time_limit=time_limit)
    if data.get("gated"):
        if json_:
            render.emit_json(data)
        else:
            render.err.print(f"reflect: not yet: {data['gated']}; --force runs anyway")
        return
    render.reflect_warnings(data)
    if json_:
        render.emit_json(data)
    elif dry_run or verbose:
        sys.stdout.write(data["entry"])
    elif not data["changed"]:
        render.err.print("reflect: nothing changed")


def schedule(json_: bool = JsonOpt) -> None:
    """Print crontab lines for nightly reflect (and sync, once bound to a remote) that work under
    cron's bare environment: the program and the workspace by absolute path.

    Install them with `crontab -e`. Example: mem schedule
    """
    mem = memory(None)
    jobs = cron_lines(mem_command(sys.argv[0], sys.executable), mem.ws.root.resolve(), mem.sync_status()["remote"])
    if json_:
        render.emit_json({"workspace": str(mem.ws.root.resolve()), "jobs": jobs})
    else:
        render.cron_jobs(jobs)


def mcp(embedder: Optional[str] = EmbedderOpt) -> None:
    """Serve this memory to agents over the Model Context Protocol (stdio).

    Example (client config): {"command": "mem", "args": ["-w", "/path/to/memory", "mcp"]}
    """
    mem = memory(embedder)
    problem = mem.follow()  # reads stat only what file events name, not every file
    if problem:
        render.err.print(f"[yellow]warning:[/yellow] {render.escape(problem)}; every read checks every file")
    auto = watching.auto_reflect(mem, embedder)
    try:
        serve(mem)
    finally:
        if auto:
            auto.stop()
        mem.close()
