"""The `mem` command: thin wrappers that parse options, call `Memory`, and print."""

from __future__ import annotations

import sys
import time
from datetime import date
from pathlib import Path
from typing import List, Optional

import typer

from memtool.cli_common import EmbedderOpt, JsonOpt, complete_entities, complete_kinds, state
from memtool.cli_common import escape as _escape
from memtool.cli_common import memory as _memory
from memtool.cli_sync import sync_app
from memtool.errors import MemError

app = typer.Typer(
    name="mem",
    help="Local-first long-term memory over plain Markdown.\n\nExample: mem recall \"Peter Lisbon\" --since 30d",
    no_args_is_help=True,
    # Plain click help: typer's rich help imports rich.markdown and markdown-it (~150 ms per call).
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)



def _version(value: bool) -> None:
    if value:
        from memtool import __version__

        print(f"mem {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-w", help="Workspace folder (else $MEM_WORKSPACE, else the nearest parent with memory.md, memory/ or .memory/).", show_default=False),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """Local-first long-term memory over plain Markdown.

    Example: mem recall "Peter Lisbon" --since 30d
    """
    state["workspace"] = workspace




app.add_typer(sync_app, name="sync")


@app.command()
def init(path: Path = typer.Argument(Path("."), help="Folder to create or complete."), json_: bool = JsonOpt) -> None:
    """Create a workspace: memory.md, memory/, bank/, memtool.toml and a .gitignore for .memory/.

    Existing files are never changed. Example: mem init ~/memory
    """
    from memtool import output
    from memtool.workspace import init as create

    ws, created = create(path, date.today())
    if json_:
        output.emit_json({"workspace": str(ws.root), "created": created})
        return
    for item in created:
        output.err.print(f"created {item}")
    if not created:
        output.err.print("nothing to create: the workspace is complete")
    output.out.print(str(ws.root))


_TEXT_ARGS = {"ignore_unknown_options": True}  # text such as "- Prefers tea." is an argument, not an option


@app.command(context_settings=_TEXT_ARGS)
def retain(
    bullet: str = typer.Argument(..., help='A typed bullet "W|B|O|S[(c=0..1)] [@Entity…]: text", or any one line of plain text.'),
    day: Optional[str] = typer.Option(None, "--date", help="Day to write to: YYYY-MM-DD, today or yesterday.", show_default="today"),
    json_: bool = JsonOpt,
) -> None:
    """Append a fact to the end of the day's log: a typed bullet under `## Retain`, plain text as a log line.

    Only ever appends, so no line moves and no editor's save is overwritten; every retained line is
    remembered, and mem check reports (and --restore puts back) one that vanishes later.

    Example: mem retain "O(c=0.8) @Peter: Prefers short replies on WhatsApp."
    """
    from memtool import output
    from memtool.dates import parse_day

    mem = _memory()
    result = mem.retain(bullet, parse_day(day, date.today()) if day else None)
    if json_:
        output.emit_json(result)
    else:
        output.out.print(result["source"])


@app.command()
def index(
    rebuild: bool = typer.Option(False, "--rebuild", help="Re-read every file (vectors of unchanged text are kept)."),
    embedder: Optional[str] = EmbedderOpt,
    json_: bool = JsonOpt,
) -> None:
    """Bring the index up to date: only changed files are read, only new text is embedded.

    Interrupt it any time; the next run continues. Example: mem index --rebuild
    """
    from memtool import output

    mem = _memory(embedder)
    with output.progress_bar("indexing") as bar, output.progress_bar("embedding", threshold=64) as ebar:
        report = mem.index(rebuild=rebuild, progress=bar, embed_progress=ebar)
    for notice in mem.notices + report.notices:
        output.warn(notice)
    if json_:
        output.emit_json(report.to_dict())
        return
    output.err.print(
        f"{report.files_seen} files: {report.parsed} indexed, {report.touched} unchanged content, "
        f"{report.removed} removed, {report.unreadable} unreadable; {report.facts} facts read in {report.seconds:.2f}s;"
        f" {report.embedded} newly embedded" + (f" in {report.embed_seconds:.1f}s" if report.embedded else "")
    )
    if report.unreadable:
        output.warn(f"{report.unreadable} file(s) could not be read; run 'mem check'")


@app.command()
def watch(
    interval: float = typer.Option(2.0, "--interval", help="Seconds between checks when polling (and the longest wait between rounds)."),
    poll: bool = typer.Option(False, "--poll", help="Check every file each interval instead of following file events (e.g. on network drives, where events from other machines do not arrive)."),
    embedder: Optional[str] = EmbedderOpt,
) -> None:
    """Keep the index current while you write: re-index (and embed) files as they change.

    Follows the operating system's file events, so a save is searchable within a fraction of a
    second, and still checks every file once a minute; falls back to polling (and says so) where
    events are unavailable. Stop with Ctrl-C. Example: mem watch
    """
    import signal
    import threading

    from memtool import output
    from memtool.read_server import ReadServer

    if interval <= 0:
        raise typer.BadParameter("must be more than 0", param_hint="--interval")
    mem = _memory(embedder)
    problem = "--poll was given" if poll else mem.follow()
    if problem:
        output.err.print(f"watching {mem.ws.root}: checking every file every {interval:g}s ({problem}); Ctrl-C stops")
    else:
        output.err.print(f"watching {mem.ws.root} for changes (Ctrl-C stops)")
    lock = threading.Lock()
    server = ReadServer(mem, lock, embedder)
    refused = server.start()
    output.err.print(f"not answering other mem recall calls: {_escape(refused)}" if refused else
                     "answering mem recall calls from other processes (.memory/read.sock)")
    said = len(mem.notices)

    def changed(report) -> None:
        output.err.print(f"{time.strftime('%H:%M:%S')} {report.parsed} indexed, {report.removed} removed,"
                         f" {report.unreadable} unreadable")

    def notices() -> None:
        nonlocal said
        for notice in mem.notices[said:]:
            output.err.print(f"{time.strftime('%H:%M:%S')} [yellow]warning:[/yellow] {_escape(notice)}")
        said = len(mem.notices)

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # a service manager's stop is a clean stop too
    try:
        mem.watch(interval, changed, on_round=notices, lock=lock)
    except KeyboardInterrupt:
        output.err.print("stopped")
    finally:
        server.close()
        mem.close()


@app.command()
def recall(
    query: str = typer.Argument("", help="Words to search for, in any language; any text is safe."),
    k: int = typer.Option(10, "--k", "-k", help="How many results."),
    since: Optional[str] = typer.Option(None, "--since", help="Only facts from or about this time on: 30d, 2w, 6m, 1y, 2025-11-01, 2025-11."),
    until: Optional[str] = typer.Option(None, "--until", help="Only facts up to this day (same forms as --since)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Answer as of this day: facts written by then, minus those already superseded then (see mem reflect)."),
    kind: List[str] = typer.Option([], "--kind", help="Only this kind (repeatable): world, experience, opinion, observation, log, page.", autocompletion=complete_kinds),
    entity: List[str] = typer.Option([], "--entity", "-e", help="Only facts mentioning this entity (repeatable, all must match; aliases resolve).", autocompletion=complete_entities),
    field_: List[str] = typer.Option([], "--field", help="Only facts with this [key:: value] field: outcome=fixed, or just cost for any value (repeatable, all must match; values ignore case)."),
    tag: List[str] = typer.Option([], "--tag", "-t", help="Only facts with this #tag or front-matter tag (repeatable, all must match; project also matches project/alpha)."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Pack the best results into about this many tokens."),
    mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (words and meaning), lexical or semantic.", show_default="hybrid, or config"),
    embedder: Optional[str] = EmbedderOpt,
    json_: bool = JsonOpt,
) -> None:
    """Ranked facts for a query, each citing file#Lline.

    Example: mem recall "Peter Lisbon" --since 30d --entity Peter
    """
    from memtool import output

    args = dict(query=query, k=k, since=since, until=until, as_of=as_of, kinds=kind, entities=entity,
                budget=budget, mode=mode)
    if field_:  # only when used, so a running `mem watch` from before this option can still answer
        args["fields"] = field_
    if tag:
        args["tags"] = tag
    result = _served_recall(embedder, args)  # a running `mem watch` answers in milliseconds
    if result is None:
        mem = _memory(embedder)
        with output.progress_bar("indexing") as bar, output.progress_bar("embedding", threshold=64) as ebar:
            result = mem.recall(**args, progress=bar, embed_progress=ebar)
    for w in result.warnings:
        output.warn(w)
    if json_:
        output.emit_json(result.to_dict())
    else:
        output.recall_results(result, result.terms)


def _served_recall(embedder: str | None, args: dict):
    """The recall answered by a running `mem watch` (see read_server), or None."""
    from types import SimpleNamespace

    from memtool.read_server import ask
    from memtool.workspace import discover

    reply = ask(discover(state["workspace"]).root, embedder, args)
    if reply is None:
        return None
    data = reply["result"]
    return SimpleNamespace(results=data["results"], warnings=data["warnings"], terms=reply.get("terms", []),
                           to_dict=lambda: data)


@app.command()
def status(embedder: Optional[str] = EmbedderOpt, json_: bool = JsonOpt) -> None:
    """Files, facts per kind, entities, days covered, index health, and which providers answer.

    Example: mem status --json
    """
    from memtool import output

    mem = _memory(embedder)
    data = mem.status()
    for notice in mem.notices + data["warnings"]:
        output.warn(notice)
    if json_:
        output.emit_json(data)
        return
    o = output.out
    o.print(f"[bold]workspace[/bold] {data['workspace']}")
    o.print(f"[bold]files[/bold]     {data['files']} " + _counts(data["files_by_kind"]))
    o.print(f"[bold]facts[/bold]     {data['facts']} " + _counts(data["facts_by_kind"]))
    o.print(f"[bold]entities[/bold]  {data['entities']} mentioned, {data['entity_pages']} with a page")
    d = data["days"]
    o.print(f"[bold]days[/bold]      {d['count']}" + (f" ({d['first']} … {d['last']})" if d["count"] else ""))
    ix = data["index"]
    o.print(f"[bold]index[/bold]     {ix['bytes'] / 1e6:.1f} MB, schema {ix['schema']}, driver {ix['driver']},"
            f" up to date (last change indexed {ix['indexed_at'] or 'never'})")
    e = data["embedder"]
    state = "answers" if e["answers"] else f"[yellow]unavailable[/yellow]: {e['problem']}"
    withheld = f", {e['withheld']} withheld by trust tier (found by words only)" if e["withheld"] else ""
    o.print(f"[bold]embedder[/bold]  {e['name']} {state}; {e['vectors']} vectors, {e['missing']} records waiting{withheld},"
            f" search via {e['vector_search']}")
    s = data["search"]
    o.print("[bold]search[/bold]    " + ("hybrid (words + meaning)" if s["semantic"] else "lexical only")
            + f", default mode {s['default_mode']}")
    llm = data["llm"]
    o.print(f"[bold]llm[/bold]       {llm['provider']} {llm['model']} at {llm['host']}: "
            + (f"answers (Ollama {llm['version']})" if llm["answers"] else "not reachable (only mem summarize and mem reflect --review use it)"))
    sync = data["memory"]["sync"]
    o.print("[bold]sync[/bold]      " + ("not set up (mem sync REMOTE)" if not sync["remote"] else
            f"{sync['remote']}" + (", [yellow]off[/yellow]" if sync["off"] else "")
            + (f", [yellow]{sync['conflicts']} conflict(s)[/yellow]" if sync["conflicts"] else "")))
    c = data["memory"].get("consolidation")
    if c:
        o.print(f"[bold]reflect[/bold]   {c['folded']} folded, {c['superseded']} superseded, {c['for_review']} for review,"
                f" {c['used_facts']} facts with a use history")
    if data["retained_gone"]:
        o.print(f"[bold]retained[/bold]  [yellow]{len(data['retained_gone'])} line(s) mem retain wrote are gone[/yellow]"
                " (mem check; mem check --restore puts them back)")
    diag = data["diagnostics"]
    if diag["errors"] or diag["warnings"]:
        o.print(f"[bold]check[/bold]     {diag['errors']} errors, {diag['warnings']} warnings (mem check)")


def _counts(d: dict) -> str:
    return "(" + ", ".join(f"{k} {v}" for k, v in sorted(d.items())) + ")" if d else ""


@app.command()
def check(
    refs: List[str] = typer.Argument(None, help="With --restore or --ack: only these vanished lines (path#Lline or path:line as listed, or a path).", show_default=False),
    restore: bool = typer.Option(False, "--restore", help="Put lines mem retain wrote that have vanished back at the end of their files."),
    ack: bool = typer.Option(False, "--ack", help="Accept lines mem retain wrote that have vanished as deleted on purpose; never report them again."),
    json_: bool = JsonOpt,
) -> None:
    """Report problems in the Markdown with file:line, and lines mem retain wrote that have vanished
    since (an editor saving an older copy over them); exits 1 when there are errors.

    Example: mem check --restore
    """
    from memtool import output

    if restore and ack:
        raise typer.BadParameter("choose one of --restore and --ack", param_hint="--restore/--ack")
    if refs and not (restore or ack):
        raise typer.BadParameter("naming lines needs --restore or --ack", param_hint="REFS")
    mem = _memory("none")
    if restore or ack:
        _retained_done(mem.restore_retained(refs or []) if restore else mem.acknowledge_retained(refs or []),
                       "restored" if restore else "acknowledged", json_)
        return
    diags = mem.check()
    for notice in mem.notices:
        output.warn(notice)
    errors = sum(1 for d in diags if d.severity == "error")
    if json_:
        output.emit_json({"errors": errors, "warnings": len(diags) - errors,
                          "diagnostics": [{"path": d.path, "line": d.line, "location": d.location(),
                                           "severity": d.severity, "code": d.code, "message": d.message}
                                          for d in diags]})
    else:
        for d in diags:
            style = "red" if d.severity == "error" else "yellow"
            output.out.print(f"{_escape(d.location())}: [{style}]{d.severity}[/{style}] {_escape(d.message)} [dim]({d.code})[/dim]")
        output.err.print(f"{errors} errors, {len(diags) - errors} warnings")
    if errors:
        raise typer.Exit(1)


def _retained_done(done: list[dict], verb: str, json_: bool) -> None:
    from memtool import output

    if json_:
        output.emit_json({verb: done})
        return
    for e in done:
        where = f"{e['source']} → {e['restored']}" if "restored" in e else e["source"]
        output.out.print(f"{_escape(where)}  - {_escape(e['text'])}")
    output.err.print(f"{len(done)} line(s) {verb}" if done else "no retained line has vanished")


@app.command()
def get(
    ref: str = typer.Argument(..., help="path, path#L12 or path#L12-L20, relative to the workspace."),
    max_lines: int = typer.Option(200, "--max-lines", help="Show at most this many lines."),
    json_: bool = JsonOpt,
) -> None:
    """Print lines of a workspace file with their numbers (paths outside the workspace are refused).

    Example: mem get memory/2026-10-27.md#L10-L14
    """
    from memtool import output

    data = _memory("none").get(ref, max_lines=max_lines)
    if json_:
        output.emit_json(data)
        return
    for line in data["lines"]:
        output.out.print(f"[dim]{line['n']:>5}[/dim]  {_escape(line['text'])}")
    if data.get("cut"):
        c = data["cut"]
        output.warn(f"line {c['line']} is cut after {c['shown_chars']:,} of its {c['total_chars']:,} characters"
                     " (get shows at most that much text); open the file in an editor for the rest")
    elif data["truncated"]:
        output.warn(f"showing lines {data['start']}-{data['end']} of {data['total_lines']}; raise --max-lines for more")
    for link in data["because"]:
        if "error" in link:
            output.warn(f"because {link['ref']}: {link['error']}")
            continue
        output.out.print(f"[dim]because → {link['path']}#L{link['start']}[/dim]")
        for n, text in enumerate(link["text"].split("\n"), link["start"]):
            output.out.print(f"[dim]{n:>5}[/dim]  {_escape(text)}")


@app.command()
def about(
    entity: str = typer.Argument(..., help="A name, @slug or alias.", autocompletion=complete_entities),
    k: int = typer.Option(20, "--k", "-k", help="How many facts."),
    json_: bool = JsonOpt,
) -> None:
    """An entity's page and the facts that mention it, newest first (aliases resolve).

    Example: mem about Pete
    """
    from memtool import output

    data = _memory().about(entity, k=k)
    if json_:
        output.emit_json(data)
        return
    if not data["page"] and not data["facts"]:  # "nothing found" is success, as for recall --entity
        output.err.print(f"nothing is known about {data['entity']!r} (entities are @mentions, [[links]] or pages"
                         " in bank/entities/; try mem recall)")
        return
    o = output.out
    o.print(f"[bold]{_escape(data['entity'])}[/bold]" + (f"  [dim]aka {_escape(', '.join(data['aliases']))}[/dim]" if data["aliases"] else ""))
    if data["page"]:
        o.print(f"[dim]{_escape(data['page']['path'])}[/dim]")
        o.print(_escape(data["page"]["text"].strip()))
        o.print()
    _print_results(data["facts"])


@app.command()
def opinions(
    entity: Optional[str] = typer.Option(None, "--entity", "-e", help="Only opinions about this entity.", autocompletion=complete_entities),
    k: int = typer.Option(50, "--k", "-k", help="How many."),
    json_: bool = JsonOpt,
) -> None:
    """Opinions with their confidence (moved by later evidence), trend and evidence, newest first.

    Example: mem opinions --entity Peter
    """
    from memtool import output

    data = _memory("none").opinions(entity=entity, k=k)
    if json_:
        output.emit_json(data)
        return
    for o in data["opinions"]:
        conf = f"{o['anchor']:.2f}→{o['confidence']:.2f}" if o["trend"] != "→" else f"{o['confidence']:.2f}"
        output.out.print(f"[magenta]c={conf} {o['trend']}[/magenta]  [bold]{_escape(o['entity'])}[/bold]  "
                         f"{_escape(o['statement'])}")
        evidence = f"  +{len(o['supporting'])} / −{len(o['contradicting'])} evidence" if o["supporting"] or o["contradicting"] else ""
        output.out.print(f"    [underline]{o['source']}[/underline]  [dim]{o['last_updated'] or ''}{evidence}[/dim]")


@app.command()
def episodes(
    query: str = typer.Argument(..., help="What to look for (words and meaning)."),
    k: int = typer.Option(30, "--k", "-k", help="How many hits to group."),
    since: Optional[str] = typer.Option(None, "--since", help="Only from this time on: 30d, 2025-11-01, 2025-11."),
    until: Optional[str] = typer.Option(None, "--until", help="Only up to this day."),
    json_: bool = JsonOpt,
) -> None:
    """Hits grouped by day, counted by kind, with each day's relevant section quoted.

    Example: mem episodes "Marrakech trip"
    """
    from memtool import output

    data = _memory().episodes(query, k=k, since=since, until=until)
    for w in data["warnings"]:
        output.warn(w)
    if json_:
        output.emit_json(data)
        return
    o = output.out
    o.print(f"[bold]{_escape(data['timeline'])}[/bold]")
    for day in data["days"]:
        counts = ", ".join(f"{n} {kind}" for kind, n in day["buckets"].items())
        o.print(f"\n[bold cyan]{day['date'] or day['path']}[/bold cyan]  [dim]{day['path']} · {counts}[/dim]")
        for section in day["sections"]:
            for line in section["lines"]:
                mark = "[bold yellow]›[/bold yellow]" if line["hit"] else " "
                o.print(f"  {mark} [dim]{line['n']:>4}[/dim]  {_escape(line['text'])}")


@app.command()
def summarize(
    target: str = typer.Argument(..., help="A day (2025-11-27, today, yesterday) or a query."),
    lang: str = typer.Option("auto", "--lang", help="de, en or auto (the query's language)."),
    model: Optional[str] = typer.Option(None, "--model", help="Ollama model (else [llm] model, default llama3.2)."),
    json_: bool = JsonOpt,
) -> None:
    """A 3-5 sentence recap of a day or a topic by a local model (Ollama), citing its days.

    Example: mem summarize yesterday --lang de
    """
    from memtool import output

    data = _memory().summarize(target, lang=lang, model=model)
    if data["withheld"]:
        output.warn(f"not sent to the model (trust tier): {', '.join(data['withheld'])}")
    if json_:
        output.emit_json(data)
        return
    output.out.print(_escape(data["summary"]))
    output.err.print(f"[dim]{data['model']} · from {', '.join(data['sources'])}[/dim]")


@app.command()
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
    from memtool import output

    data = _memory(embedder).reflect(dry_run=dry_run, force=force, since=since, overwrite_edits=overwrite_edits,
                                     review=review, time_limit=time_limit)
    if data.get("gated"):
        if json_:
            output.emit_json(data)
        else:
            output.err.print(f"reflect: not yet: {data['gated']}; --force runs anyway")
        return
    for page in data["pages"]:
        if page["action"] == "skipped" and "legal" not in page["reason"]:
            output.warn(f"{page['path']}: {page['reason']}; left alone (mem reflect --overwrite-edits regenerates it)")
    llm = data["consolidation"].get("llm") or {}
    if llm.get("warning"):
        output.warn(llm["warning"])
    if llm.get("rejected"):
        output.warn(f"{llm['rejected']} answer(s) from the model were malformed and were not applied")
    if json_:
        output.emit_json(data)
    elif dry_run or verbose:
        sys.stdout.write(data["entry"])
    elif not data["changed"]:
        output.err.print("reflect: nothing changed")


@app.command()
def schedule(json_: bool = JsonOpt) -> None:
    """Print crontab lines for nightly reflect (and sync, once bound to a remote) that work under
    cron's bare environment: the program and the workspace by absolute path.

    Install them with `crontab -e`. Example: mem schedule
    """
    from memtool import output
    from memtool.schedule import cron_lines, mem_command

    mem = _memory(None)
    jobs = cron_lines(mem_command(sys.argv[0], sys.executable), mem.ws.root.resolve(), mem.sync_status()["remote"])
    if json_:
        output.emit_json({"workspace": str(mem.ws.root.resolve()), "jobs": jobs})
        return
    for job in jobs:
        print(f"# {job['about']}")
        print(job["line"])


core_app = typer.Typer(help="Read and edit core memory (memory.md) safely: size-limited, atomic, backed up.",
                       no_args_is_help=True)
app.add_typer(core_app, name="core")


def _core_done(data: dict, json_: bool) -> None:
    from memtool import output

    if json_:
        output.emit_json({k: v for k, v in data.items() if k != "text"})
    else:
        output.err.print(f"memory.md: {data['chars']:,} of {data['limit']:,} characters"
                         + (f"; previous version in {data['backup']}" if data.get("backup") else ""))


@core_app.command("show")
def core_show(json_: bool = JsonOpt) -> None:
    """Print memory.md.

    Example: mem core show
    """
    from memtool import output

    data = _memory("none").core_read()
    if json_:
        output.emit_json(data)
    else:
        from memtool.control_chars import visible

        sys.stdout.write(visible(data["text"]))


@core_app.command("append", context_settings=_TEXT_ARGS)
def core_append(text: str = typer.Argument(..., help="Line(s) to add at the end."), json_: bool = JsonOpt) -> None:
    """Append to memory.md (fails, changing nothing, past the size limit).

    Example: mem core append "- Prefers tea over coffee."
    """
    _core_done(_memory("none").core_append(text), json_)


@core_app.command("replace", context_settings=_TEXT_ARGS)
def core_replace(
    old: str = typer.Argument(..., help="Exact text that occurs once in memory.md."),
    new: str = typer.Argument(..., help="Replacement (may be empty)."),
    json_: bool = JsonOpt,
) -> None:
    """Replace text that occurs exactly once in memory.md; the old file is backed up.

    Example: mem core replace "lives in Hamburg" "lives in Lisbon"
    """
    _core_done(_memory("none").core_replace(old, new), json_)


@core_app.command("insert", context_settings=_TEXT_ARGS)
def core_insert(
    line: int = typer.Argument(..., help="1-based line to insert before."),
    text: str = typer.Argument(..., help="Line(s) to insert."),
    json_: bool = JsonOpt,
) -> None:
    """Insert text before a line of memory.md.

    Example: mem core insert 3 "- Works from Berlin."
    """
    _core_done(_memory("none").core_insert(line, text), json_)


@app.command()
def mcp(embedder: Optional[str] = EmbedderOpt) -> None:
    """Serve this memory to agents over the Model Context Protocol (stdio).

    Example (client config): {"command": "mem", "args": ["-w", "/path/to/memory", "mcp"]}
    """
    from memtool import output
    from memtool.mcp_server import serve

    mem = _memory(embedder)
    problem = mem.follow()  # reads stat only what file events name, not every file
    if problem:
        output.err.print(f"[yellow]warning:[/yellow] {_escape(problem)}; every read checks every file")
    try:
        serve(mem)
    finally:
        mem.close()


def _print_results(results: list[dict]) -> None:
    from types import SimpleNamespace

    from memtool import output

    output.recall_results(SimpleNamespace(results=results), [])


def main() -> None:
    """Entry point: run the app, turning library errors into one-line messages and exit codes."""
    try:
        _check_argv(sys.argv[1:])
        code = app(prog_name="mem", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except MemError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(1)
    except Exception as exc:  # usage errors from click, and the file system's refusals
        mapped = _as_mem_error(exc)
        if mapped is None:
            raise
        _fail(mapped)


def _fail(exc: MemError) -> None:
    from memtool import output

    if "--json" in sys.argv[1:]:
        output.emit_json(exc.to_dict())
    output.error(exc.message, exc.hint)
    sys.exit(exc.exit_code)


def _check_argv(args: list[str]) -> None:
    """Refuse arguments that are not valid text (bytes that are not UTF-8 arrive as surrogates)."""
    import os

    from memtool.errors import UsageError

    for n, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(arg).decode("utf-8", "backslashreplace")
            raise UsageError(f"argument {n} ({shown}) is not valid UTF-8",
                             "pass text as UTF-8 (check the terminal's or script's locale, e.g. LANG=C.UTF-8)") from None


def _click_exception_classes() -> tuple[type, ...]:
    """ClickException of every click this typer may use: its bundled copy (typer 0.28) or click."""
    import importlib

    found = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        if name.split(".")[0] == "click" and "click" not in sys.modules:
            continue  # not imported, so not what raised
        try:
            found.append(importlib.import_module(name).ClickException)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _as_mem_error(exc: Exception) -> MemError | None:
    """A typed error for a usage error from click, an OSError or a storage failure; None otherwise."""
    from memtool.errors import StorageError, UsageError

    click_error = isinstance(exc, _click_exception_classes()) or any(
        c.__name__ == "ClickException" for c in type(exc).__mro__)  # a click bundled under another name
    if click_error:
        import re

        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = re.sub(r"( Did you mean [^?]*\?)\1+", r"\1", message)  # typer 0.24-0.25 and click both suggest
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "mem"
        option = getattr(exc, "option_name", None) or ""
        if option.startswith("-") and not option.startswith("--"):
            given = next((a for a in sys.argv[1:] if a.startswith(option)), option)
            hint = f"text that starts with '-' goes after --, e.g. {command} -- {given}; options: {command} --help"
        else:
            hint = f"see {command} --help"
        if getattr(exc, "exit_code", 2) != 2:
            error = MemError(message, hint)
            error.exit_code = exc.exit_code
            return error
        return UsageError(message, hint)
    if isinstance(exc, OSError):
        return StorageError.from_os(exc)
    if "memtool.store.driver" in sys.modules:
        from memtool.store.driver import as_mem_error

        return as_mem_error(exc)
    return None
