"""How the CLI shows things to people (rich, on first use) and to machines (plain JSON on stdout).

The commands hand over the documents their `--json` prints; everything a person sees is drawn here.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from functools import lru_cache

from memtool.control_chars import visible


@lru_cache(maxsize=None)
def _console(stderr: bool):
    from rich.console import Console  # ~35 ms: only when something is shown to a person

    # NO_COLOR (no-color.org) asks for no styling at all: rich's own no_color keeps bold, dim and reverse.
    plain = bool(os.environ.get("NO_COLOR"))
    # emoji=False: text such as `localhost:abc:` or a note's `:smile:` is shown as written, never as an emoji
    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False,  # the terminal wraps; pipes get whole lines
                   **({"color_system": None} if plain else {}), **_width())


def _width() -> dict:
    """rich takes COLUMNS=0 for a width of nothing and prints nothing at all, errors included: such a
    value (as `shutil` does) counts as unset."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) == 0:
        import shutil

        return {"width": shutil.get_terminal_size().columns}
    return {}


def __getattr__(name: str):
    """`output.out` (stdout) and `output.err` (stderr) are rich consoles, created on first use."""
    if name == "out":
        return _console(False)
    if name == "err":
        return _console(True)
    raise AttributeError(name)


def escape(text: str) -> str:
    """Text shown through rich: markup characters escaped, control characters made visible (`\\x1b`)."""
    from rich.markup import escape as _escape

    return _escape(visible(text))


RETAINED_SHOWN = 5  # vanished lines `mem status` names; `mem check` lists them all

KIND_STYLE = {"world": "cyan", "experience": "green", "opinion": "magenta", "observation": "yellow",
              "log": "white", "page": "blue"}


_C1_AND_DEL = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}  # json escapes C0 itself; these reach terminals raw


def emit_json(data) -> None:
    """One JSON document on stdout, never through rich (which would wrap lines); every control
    character in it is escaped, so no note can drive the terminal."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str).translate(_C1_AND_DEL) + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    from rich.text import Text

    _console(True).print(Text("warning: ", style="yellow bold") + Text(visible(message)))


def error(message: str, hint: str | None = None) -> None:
    from rich.text import Text

    err = _console(True)
    err.print(Text("error: ", style="red bold") + Text(visible(message)))
    if hint:
        err.print(Text("hint: ", style="dim bold") + Text(visible(hint), style="dim"))


@contextmanager
def progress_bar(label: str, threshold: int = 50):
    """A transient progress bar on stderr, shown only for runs of at least `threshold` files."""
    progress = task = None

    def update(done: int, total: int) -> None:
        nonlocal progress, task
        if total < threshold or not _console(True).is_terminal:  # a pipe or log file got only a blank line
            return
        if progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                console=_console(True), transient=True)
            progress.start()
            task = progress.add_task(label, total=total)
        progress.update(task, completed=done)

    try:
        yield update
    finally:
        if progress is not None:
            progress.stop()


def _indent_continuations(text, indent: str):
    """A multi-line record's later lines start under its first, not at column 0."""
    from rich.text import Text

    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return Text("\n").join([lines[0], *(Text(indent) + part for part in lines[1:])])


def dates_read(dates: list[dict]) -> None:
    """On stderr, how recall read the dates its query named: a prior ranks, a filter restricts."""
    from rich.text import Text

    for d in dates:
        span = d["from"] if d["from"] == d["to"] else f"{d['from']}..{d['to']}"
        how = "only these days" if d["use"] == "filter" else "facts from then first"
        _console(True).print(Text(visible(f"{d['phrase']}: {span} ({how})"), style="dim"))


def apart(score: float, floor: float) -> tuple[str, str]:
    """`score` and the `floor` it fell under, with two decimals, or as many more (up to four) as
    tell them apart: "0.2987, under the floor 0.30" would otherwise read "0.30 under 0.30"."""
    for digits in (2, 3, 4):
        shown = f"{score:.{digits}f}", f"{floor:.{digits}f}"
        if shown[0] != shown[1]:
            break
    return shown


def recall_results(data: dict, highlight_terms: list[str]) -> None:
    """Numbered results, the query's terms highlighted, each with its source and what replaced it;
    "nothing relevant" with the best score when the floor held every result back."""
    from rich.text import Text

    from memtool.analyzer import highlight_spans  # ~2.5 ms of Unicode regexes: not for `mem --help`

    out = _console(False)
    results = data["results"]
    if not results and data.get("reason"):
        held = data.get("below_floor") or 0
        _console(True).print(f"[dim]nothing relevant: {data['reason']}; {held} result{'' if held == 1 else 's'} held "
                             "back (--min-score 0 shows them)[/dim]")
        return
    if not results and data.get("below_floor"):
        best, floor = apart(data["best_score"], data["floor"])
        held = data["below_floor"]
        _console(True).print(f"[dim]nothing relevant: the best of {held} result{'' if held == 1 else 's'} scores "
                             f"{best}, under the floor {floor} (--min-score 0 shows them)[/dim]")
        return
    if not results:
        _console(True).print("[dim]nothing found[/dim]")
        return
    for n, r in enumerate(results, 1):
        line = Text()  # a base style would cover the content too: style each part alone
        line.append(f"{n:>2}. ", style="dim")
        line.append(r["kind"], style=KIND_STYLE.get(r["kind"], "white"))
        if r.get("trend") and r["trend"] != "→" and r.get("written_confidence") is not None:
            line.append(f" c={r['written_confidence']:.2f}→{r['confidence']:.2f} {r['trend']}", style="magenta")
        elif r.get("confidence") is not None:
            line.append(f" c={r['confidence']:.2f}" + (f" {r['trend']}" if r.get("trend") else ""), style="magenta")
        line.append("  ")
        content = visible(r["content"])
        body = Text(content)
        for s, e in highlight_spans(content, highlight_terms):
            body.stylize("bold reverse", s, e)
        line.append_text(body)
        line = _indent_continuations(line, " " * 4)
        out.print(line)
        meta = Text("    ")
        meta.append(visible(r["source"]), style="underline")
        if r.get("timestamp"):
            meta.append(f"  {r['timestamp']}", style="dim")
        if r.get("day"):
            meta.append(f" (written {r['day']})", style="dim")
        if r.get("entities"):
            meta.append(visible("  " + " ".join("@" + e for e in r["entities"])), style="dim cyan")
        if r.get("score") is not None:
            meta.append(f"  score {r['score']:.2f}", style="dim")
        out.print(meta)
        if r.get("sources"):
            out.print(Text(visible("    also: " + ", ".join(r["sources"][1:])), style="dim"))
        for sign, key in (("+", "supporting"), ("−", "contradicting")):
            cited = (r.get("evidence") or {}).get(key)
            if cited:
                out.print(Text(visible(f"    {sign} {key}: " + ", ".join(cited)), style="dim"))
        if r.get("restated"):
            out.print(Text(visible(f"    restated at {r['restated']}"), style="dim"))
        if r.get("superseded_by"):
            sup = r["superseded_by"]
            out.print(Text(visible(f"    superseded since {sup['since']} by {sup['source']}"), style="yellow"))
        for prev in r.get("previously", []):
            out.print(Text(visible(f"    previously (until {prev['until']}): {prev['content']} — {prev['source']}"), style="dim"))


# --- one function per command's human output, fed the document its --json prints ----------------

def created(root, items: list[str]) -> None:
    """`mem init`: what was created (stderr) and the workspace (stdout)."""
    for item in items:
        _console(True).print(f"created {item}")
    if not items:
        _console(True).print("nothing to create: the workspace is complete")
    _console(False).print(escape(str(root)))


def index_report(report) -> None:
    """`mem index`: one line of counts (an `IndexReport`), and a warning for unreadable files."""
    _console(True).print(
        f"{report.files_seen} files: {report.parsed} indexed, {report.touched} unchanged content, "
        f"{report.removed} removed, {report.unreadable} unreadable; {report.facts} facts read in {report.seconds:.2f}s;"
        f" {report.embedded} newly embedded" + (f" in {report.embed_seconds:.1f}s" if report.embedded else "")
    )
    if report.unreadable:
        warn(f"{report.unreadable} file(s) could not be read; run 'mem check'")


def _counts(d: dict) -> str:
    return "(" + ", ".join(f"{k} {v}" for k, v in sorted(d.items())) + ")" if d else ""


def status(data: dict) -> None:
    """`mem status`: one labelled line per area (files, facts, index, providers, sync, …)."""
    o = _console(False)
    o.print(f"[bold]workspace[/bold] {escape(data['workspace'])}")
    o.print(f"[bold]files[/bold]     {data['files']} " + _counts(data["files_by_kind"]))
    o.print(f"[bold]facts[/bold]     {data['facts']} " + _counts(data["facts_by_kind"]))
    o.print(f"[bold]entities[/bold]  {data['entities']} mentioned, {data['entity_pages']} with a page")
    d = data["days"]
    o.print(f"[bold]days[/bold]      {d['count']}" + (f" ({d['first']} … {d['last']})" if d["count"] else ""))
    ix = data["index"]
    o.print(f"[bold]index[/bold]     {ix['bytes'] / 1e6:.1f} MB, schema {ix['schema']}, driver {ix['driver']},"
            f" up to date (last change indexed {ix['indexed_at'] or 'never'})")
    _status_providers(o, data)
    sync = data["memory"]["sync"]
    o.print("[bold]sync[/bold]      " + ("not set up (mem sync REMOTE)" if not sync["remote"] else
            escape(sync["remote"]) + (", [yellow]off[/yellow]" if sync["off"] else "")
            + (f", [yellow]{sync['conflicts']} conflict(s)[/yellow]" if sync["conflicts"] else "")
            + f", last sync {sync.get('last_sync') or 'never'}"))
    auto = sync.get("auto")
    if auto:
        error = auto.get("last_error") or {}
        o.print("[bold]auto sync[/bold] " + ("running" if auto["running"] else "not running")
                + f" (every {auto['interval']:g} s), last success {auto.get('last_success') or 'never'}"
                + (f", [yellow]last error {error.get('time')}: {escape(str(error.get('message')))}"
                   f" ({auto['failures']} in a row; next try {auto.get('next_try')})[/yellow]"
                   if auto.get("failures") else ""))
    c = data["memory"].get("consolidation")
    if c:
        o.print(f"[bold]reflect[/bold]   {c['folded']} folded, {c['superseded']} superseded, {c['for_review']} for review,"
                f" {c['used_facts']} facts with a use history")
    gone = data["retained_gone"]
    if gone:
        o.print(f"[bold]retained[/bold]  [yellow]{len(gone)} line(s) mem wrote are gone[/yellow] (saved over by an editor?"
                " mem check --restore puts them back, mem check --ack accepts the deletion)")
        for e in gone[:RETAINED_SHOWN]:
            shown = e["text"] if e["kind"] == "core" else f"- {e['text']}"
            o.print(f"          {escape(e['source'])} (mem {escape(e['by'])}, {e['at'][:10]}): {escape(shown)}")
        if len(gone) > RETAINED_SHOWN:
            o.print(f"          … and {len(gone) - RETAINED_SHOWN} more (mem check lists them all)")
    diag = data["diagnostics"]
    if diag["errors"] or diag["warnings"]:
        o.print(f"[bold]check[/bold]     {_count(diag['errors'], 'error')}, {_count(diag['warnings'], 'warning')}"
                " found while indexing (mem check lists them, and checks links too)")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _status_providers(o, data: dict) -> None:
    e = data["embedder"]
    state = "answers" if e["answers"] else f"[yellow]unavailable[/yellow]: {escape(e['problem'])}"
    withheld = f", {e['withheld']} withheld by trust tier (found by words only)" if e["withheld"] else ""
    o.print(f"[bold]embedder[/bold]  {e['name']} {state}; {e['vectors']} vectors, {e['missing']} records waiting{withheld},"
            f" search via {e['vector_search']}")
    s = data["search"]
    o.print("[bold]search[/bold]    " + ("hybrid (words + meaning)" if s["semantic"] else "lexical only")
            + f", default mode {s['default_mode']}")
    llm = data["llm"]
    o.print(f"[bold]llm[/bold]       {llm['provider']} {escape(llm['model'])} at {escape(llm['host'])}: "
            + (f"answers (Ollama {escape(str(llm['version']))})" if llm["answers"] else "not reachable (only mem summarize and mem reflect --review use it)"))


def diagnostics(data: dict) -> None:
    """`mem check`: one line per problem with file:line (stdout), then the counts (stderr)."""
    for d in data["diagnostics"]:
        style = "red" if d["severity"] == "error" else "yellow"
        _console(False).print(f"{escape(d['location'])}: [{style}]{d['severity']}[/{style}] {escape(d['message'])}"
                              f" [dim]({d['code']})[/dim]")
    _console(True).print(f"{data['errors']} errors, {data['warnings']} warnings")


def retained(done: list[dict], verb: str) -> None:
    """`mem check --restore/--ack`: the vanished lines put back or accepted."""
    for e in done:
        where = f"{e['source']} → {e['restored']}" if "restored" in e else e["source"]
        shown = e["text"] if e["kind"] == "core" else f"- {e['text']}"  # a line of memory.md is recorded whole
        _console(False).print(f"{escape(where)}  {escape(shown)}")
    _console(True).print(f"{len(done)} line(s) {verb}" if done else "no retained line has vanished")


def file_lines(data: dict) -> None:
    """`mem get`: numbered lines, what was cut, and the lines its `[because:: …]` fields point to."""
    out = _console(False)
    for line in data["lines"]:
        out.print(f"[dim]{line['n']:>5}[/dim]  {escape(line['text'])}")
    if data.get("cut"):
        c = data["cut"]
        warn(f"line {c['line']} is cut after {c['shown_chars']:,} of its {c['total_chars']:,} characters"
             " (get shows at most that much text); open the file in an editor for the rest")
    elif data["truncated"]:
        warn(f"showing lines {data['start']}-{data['end']} of {data['total_lines']}; raise --max-lines for more")
    for link in data["because"]:
        if "error" in link:
            warn(f"because {link['ref']}: {link['error']}")
            continue
        out.print(f"[dim]because → {escape(link['path'])}#L{link['start']}[/dim]")
        for n, text in enumerate(link["text"].split("\n"), link["start"]):
            out.print(f"[dim]{n:>5}[/dim]  {escape(text)}")


def about(data: dict) -> None:
    """`mem about`: the entity, its aliases and page, then the facts that mention it."""
    if not data["page"] and not data["facts"]:  # "nothing found" is success, as for recall --entity
        _console(True).print(escape(f"nothing is known about {data['entity']!r} (entities are @mentions, [[links]] "
                                    "or pages in bank/entities/; try mem recall)"))
        return
    o = _console(False)
    o.print(f"[bold]{escape(data['entity'])}[/bold]"
            + (f"  [dim]aka {escape(', '.join(data['aliases']))}[/dim]" if data["aliases"] else ""))
    if data["page"]:
        o.print(f"[dim]{escape(data['page']['path'])}[/dim]")
        o.print(escape(data["page"]["text"].strip()))
        o.print()
    recall_results({"results": data["facts"]}, [])


def opinions(data: dict) -> None:
    """`mem opinions`: confidence (and how it moved), entity, statement, source and evidence."""
    out = _console(False)
    for o in data["opinions"]:
        conf = f"{o['anchor']:.2f}→{o['confidence']:.2f}" if o["trend"] != "→" else f"{o['confidence']:.2f}"
        out.print(f"[magenta]c={conf} {o['trend']}[/magenta]  [bold]{escape(o['entity'])}[/bold]  "
                  f"{escape(o['statement'])}")
        evidence = (f"  +{len(o['supporting'])} / −{len(o['contradicting'])} evidence"
                    if o["supporting"] or o["contradicting"] else "")
        out.print(f"    [underline]{escape(o['source'])}[/underline]  [dim]{escape(o['last_updated'] or '')}{evidence}[/dim]")


def episodes(data: dict) -> None:
    """`mem episodes`: the timeline, then per day its counts and quoted sections, hits marked."""
    o = _console(False)
    o.print(f"[bold]{escape(data['timeline'])}[/bold]")
    for day in data["days"]:
        counts = ", ".join(f"{n} {kind}" for kind, n in day["buckets"].items())
        o.print(f"\n[bold cyan]{escape(day['date'] or day['path'])}[/bold cyan]  [dim]{escape(day['path'])} · {counts}[/dim]")
        for section in day["sections"]:
            if isinstance(section["lines"], str):  # fitted to a budget: already numbered, hits marked
                o.print(escape(section["lines"]))
                continue
            for line in section["lines"]:
                mark = "[bold yellow]›[/bold yellow]" if line["hit"] else " "
                o.print(f"  {mark} [dim]{line['n']:>4}[/dim]  {escape(line['text'])}")
    if data.get("omitted_days"):
        _console(True).print(f"[dim]{data['omitted_days']} more day(s) left out ({data['hint']})[/dim]")


def recent(data: dict) -> None:
    """`mem recent`: per day and file the facts written (cited), then the other files saved since."""
    o = _console(False)
    if not data["days"] and not data["pages"]:
        _console(True).print(f"[dim]nothing added or changed since {data['since']}[/dim]")
    for day in data["days"]:
        o.print(f"\n[bold cyan]{day['date']}[/bold cyan]  [dim]{escape(day['path'])}[/dim]")
        for f in day["facts"]:
            o.print(f"  [dim]{f['source'].partition('#')[2]:>5}[/dim]  {escape(f['content'])}")
    if data["pages"]:
        o.print("\n[bold]also saved since then[/bold]")
        for p in data["pages"]:
            o.print(f"  {escape(p['path'])}  [dim]{p['changed']}[/dim]")
    if data.get("omitted"):
        _console(True).print(f"[dim]{data['omitted']} more left out ({data['hint']})[/dim]")


def entities(data: dict) -> None:
    """`mem entities`: one line each: name, facts, aliases, page."""
    o = _console(False)
    if not data["entities"]:
        _console(True).print(f"[dim]{escape('no entities (they are @mentions, [[links]] or pages in bank/entities/)')}[/dim]")
    for e in data["entities"]:
        aka = f"  [dim]aka {escape(', '.join(e['aliases']))}[/dim]" if e["aliases"] else ""
        page = f"  [underline]{escape(e['page'])}[/underline]" if e["page"] else ""
        o.print(f"{e['facts']:>5}  [bold]{escape(e['name'])}[/bold]{aka}{page}")


def summary(data: dict) -> None:
    """`mem summarize`: the recap (stdout), the model and the days it used (stderr)."""
    _console(False).print(escape(data["summary"]))
    _console(True).print(f"[dim]{escape(data['model'] + ' · from ' + ', '.join(data['sources']))}[/dim]")


def reflect_warnings(data: dict) -> None:
    """`mem reflect`: pages left alone because a person edited them, and the model's trouble."""
    from memtool.reflect.pages import BROKEN, EDITED, NAME_TAKEN, TOO_LONG

    for page in data["pages"]:
        if page["action"] == "skipped" and page["reason"] == TOO_LONG:
            warn(f"@{page['entity'][:60]}…: {page['reason']}; no page made (its facts are still recalled)")
        elif page["action"] == "skipped" and page["reason"] == EDITED:
            warn(f"{page['path']}: {page['reason']}; left alone (mem reflect --overwrite-edits regenerates it)")
        elif page["action"] == "skipped" and page["reason"].startswith(BROKEN):
            warn(f"{page['path']}: {page['reason']}; left alone (fix the marker lines or close the code fence; "
                 "deleting the block's lines makes the next run write a new one)")
        elif page["action"] == "skipped" and page["reason"].startswith(NAME_TAKEN):
            warn(f"{page['path']}: {page['reason']}; no page made for {page['entity']!r} (its facts are still recalled)")
        elif page["action"] == "skipped" and "legal" not in page["reason"]:
            warn(f"{page['path']}: {page['reason']}; left alone")
    if data.get("reused", {}).get("notice"):
        warn(data["reused"]["notice"])
    llm = data["consolidation"].get("llm") or {}
    if llm.get("warning"):
        warn(llm["warning"])
    if llm.get("rejected"):
        warn(f"{llm['rejected']} answer(s) from the model were malformed and were not applied")
    proposed = data["consolidation"].get("proposals") or {}
    if proposed.get("warning"):
        warn(proposed["warning"])
    if proposed.get("rejected"):
        warn(f"proposals: {proposed['rejected']} answer(s) from the model were malformed; nothing was proposed for them")


def cron_jobs(jobs: list[dict]) -> None:
    """`mem schedule`: each crontab line under a comment saying what it does."""
    for job in jobs:
        print(f"# {job['about']}")
        print(job["line"])


def core_size(data: dict) -> None:
    """`mem core append|replace|insert`: how full core memory is, and where the old version went."""
    _console(True).print(f"{data['path']}: {data['chars']:,} of {data['limit']:,} characters"
                         + (f"; previous version in {data['backup']}" if data.get("backup") else ""))


def check_document(diags: list) -> dict:
    """`mem check --json`: the counts and one entry per `Diagnostic`."""
    errors = sum(1 for d in diags if d.severity == "error")
    return {"errors": errors, "warnings": len(diags) - errors,
            "diagnostics": [{"path": d.path, "line": d.line, "location": d.location(),
                             "severity": d.severity, "code": d.code, "message": d.message} for d in diags]}


def import_report(data: dict) -> None:
    """`mem import`: what was (or would be) written, on stdout; a summary and what was skipped, on stderr."""
    out, err = _console(False), _console(True)
    for w in data["written"]:
        out.print(f"{w['action']:<8} {escape(w['path'])}  ← {escape(w['item'])}")
    for s in data["skipped"]:
        err.print(f"skipped  {escape(s['item'])}: {escape(s['reason'])}")
    c = data["counts"]
    verb = "would write" if data["dry_run"] else "wrote"
    err.print(f"{'[DRY RUN] ' if data['dry_run'] else ''}import {data['format']} from {escape(data['source'])}: "
              f"{verb} {c['written']}, {c['unchanged']} imported before (unchanged), {c['skipped']} skipped")

