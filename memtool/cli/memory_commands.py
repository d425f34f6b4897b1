"""The commands that write and read memories: retain, recall, get, about, opinions, episodes,
summarize and `mem core …`. Each parses its options, calls one `Memory` method and renders.

No `from __future__ import annotations` here: typer reads a command's parameters from its
signature, and string annotations cost an `eval` each (60 for `mem recall` with the root's and
--json's callbacks, ~1 ms) on every call."""

import sys
from datetime import date
from typing import List, Optional

import typer

from memtool.cli import recall_command, render
from memtool.cli.call import memory
from memtool.cli.common import EmbedderOpt, JsonOpt, complete_entities, complete_kinds
from memtool.control_chars import visible
from memtool.dates import parse_day


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
    result = memory().retain(bullet, parse_day(day, date.today()) if day else None)
    for w in result["warnings"]:
        render.warn(w)
    if json_:
        render.emit_json(result)
    else:
        render.out.print(result["source"])


def note(
    text: str = typer.Argument(..., help="One line of free text (no type letter needed)."),
    page: Optional[str] = typer.Option(None, "--page", help="Append to this bank page instead: bank/world.md, or an entity's name (its page, created if missing).", show_default="today's log"),
    day: Optional[str] = typer.Option(None, "--date", help="Day's log to write to: YYYY-MM-DD, today or yesterday.", show_default="today"),
    json_: bool = JsonOpt,
) -> None:
    """Append free, untyped text to today's log (or to a bank page); the untyped sibling of retain.

    Only ever appends. Example: mem note "Jonas moved the meeting to Friday."
    """
    if page and day:
        raise typer.BadParameter("a note goes to a day's log (--date) or to a page (--page), not both", param_hint="--page/--date")
    result = memory().note(text, page=page, day=parse_day(day, date.today()) if day else None)
    for w in result["warnings"]:
        render.warn(w)
    if json_:
        render.emit_json(result)
    else:
        render.out.print(result["source"])


def recent(
    days: int = typer.Option(7, "--days", "-d", help="How many days back, today included.", min=1, max=3650),
    budget: Optional[int] = typer.Option(None, "--budget", help="Fit the answer into about this many tokens (agents get 2000).", show_default="everything"),
    json_: bool = JsonOpt,
) -> None:
    """What was added or changed lately: each day's facts by file (cited), then other files saved since.

    Example: mem recent --days 3
    """
    data = memory().recent(days=days, budget=budget)
    if json_:
        render.emit_json(data)
    else:
        render.recent(data)


def entities(
    query: Optional[str] = typer.Argument(None, help="Only entities whose name or an alias contains this (any case).", show_default=False),
    k: int = typer.Option(100, "--k", "-k", help="How many entities at most."),
    json_: bool = JsonOpt,
) -> None:
    """The entities memory knows: name, aliases, facts mentioning them and their page, most mentioned first.

    Example: mem entities pet
    """
    data = memory().entities(query, k=k)
    if json_:
        render.emit_json(data)
    else:
        render.entities(data)


def recall(
    query: str = typer.Argument("", help="Words to search for, in any language; any text is safe."),
    k: int = typer.Option(10, "--k", "-k", help="How many results."),
    since: Optional[str] = typer.Option(None, "--since", help="Only facts from or about this time on: 30d, 2w, 6m, 1y, 2025-11-01, 2025-11."),
    until: Optional[str] = typer.Option(None, "--until", help="Only facts up to this day (same forms as --since)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Answer as of this day: facts written by then, minus those already superseded then (see mem reflect); dates in the query and a relative --since/--until (30d, yesterday) count from it."),
    kind: List[str] = typer.Option([], "--kind", help="Only this kind (repeatable): world, experience, opinion, observation, log, page.", autocompletion=complete_kinds),
    entity: List[str] = typer.Option([], "--entity", "-e", help="Only facts mentioning this entity (repeatable, all must match; aliases resolve).", autocompletion=complete_entities),
    field_: List[str] = typer.Option([], "--field", help="Only facts with this [key:: value] field: outcome=fixed, or just cost for any value (repeatable, all must match; values ignore case)."),
    tag: List[str] = typer.Option([], "--tag", "-t", help="Only facts with this #tag or front-matter tag (repeatable, all must match; project also matches project/alpha)."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Pack the best results into about this many tokens."),
    mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (words and meaning), lexical or semantic.", show_default="hybrid, or config"),
    min_score: Optional[float] = typer.Option(None, "--min-score", help="Answer only when the best result's relevance (0-1) reaches this; 0 shows anything.", show_default="0.3, or config"),
    embedder: Optional[str] = EmbedderOpt,
    json_: bool = JsonOpt,
) -> None:
    """Ranked facts for a query, each citing file#Lline; "nothing relevant" below the score floor.

    Dates in the query ("last week", "im Oktober", "vor zwei Wochen") rank facts from then first;
    bounds it states ("since Monday", "between May 1 and May 10") filter, unless --since/--until are given.

    Example: mem recall "Peter Lisbon" --since 30d --entity Peter
    """
    recall_command.show(query, k, since, until, as_of, kind, entity, field_, tag, budget, mode, min_score, embedder,
                        json_)


def get(
    ref: str = typer.Argument(..., help="path, path#L12 or path#L12-L20, relative to the workspace (path:12, as mem check names a line, works too)."),
    max_lines: int = typer.Option(200, "--max-lines", help="Show at most this many lines."),
    json_: bool = JsonOpt,
) -> None:
    """Print lines of a workspace file with their numbers (paths outside the workspace are refused).

    Example: mem get memory/2026-10-27.md#L10-L14
    """
    data = memory("none").get(ref, max_lines=max_lines)
    if json_:
        render.emit_json(data)
    else:
        render.file_lines(data)


def about(
    entity: str = typer.Argument(..., help="A name, @slug or alias.", autocompletion=complete_entities),
    k: int = typer.Option(20, "--k", "-k", help="How many facts."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Fit the answer into about this many tokens: the page without its generated lists, then the facts that fit.", show_default="everything"),
    json_: bool = JsonOpt,
) -> None:
    """An entity's page and the facts that mention it, newest first (aliases resolve).

    Example: mem about Pete
    """
    data = memory().about(entity, k=k, budget=budget)
    if json_:
        render.emit_json(data)
    else:
        render.about(data)


def opinions(
    entity: Optional[str] = typer.Option(None, "--entity", "-e", help="Only opinions about this entity.", autocompletion=complete_entities),
    k: int = typer.Option(50, "--k", "-k", help="How many."),
    json_: bool = JsonOpt,
) -> None:
    """Opinions with their confidence (moved by later evidence), trend and evidence, newest first.

    Example: mem opinions --entity Peter
    """
    data = memory("none").opinions(entity=entity, k=k)
    if json_:
        render.emit_json(data)
    elif not data["opinions"]:
        render.err.print(f"no opinions{' about ' + render.escape(entity) if entity else ''}")
    else:
        render.opinions(data)


def episodes(
    query: str = typer.Argument(..., help="What to look for (words and meaning)."),
    k: int = typer.Option(30, "--k", "-k", help="How many hits to group."),
    since: Optional[str] = typer.Option(None, "--since", help="Only from this time on: 30d, 2025-11-01, 2025-11."),
    until: Optional[str] = typer.Option(None, "--until", help="Only up to this day."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Fit the answer into about this many tokens, each line said once (what agents get by default: 2000).", show_default="everything"),
    json_: bool = JsonOpt,
) -> None:
    """Hits grouped by day, counted by kind, with each day's relevant section quoted.

    Example: mem episodes "Marrakech trip"
    """
    data = memory().episodes(query, k=k, since=since, until=until, budget=budget)
    for w in data["warnings"]:
        render.warn(w)
    if json_:
        render.emit_json(data)
    else:
        render.episodes(data)


def summarize(
    target: str = typer.Argument(..., help="A day (2025-11-27, today, yesterday; a date that does not exist is refused) or a query."),
    lang: str = typer.Option("auto", "--lang", help="de, en or auto (the query's language)."),
    model: Optional[str] = typer.Option(None, "--model", help="Ollama model (else [llm] model, default llama3.2)."),
    json_: bool = JsonOpt,
) -> None:
    """A 3-5 sentence recap of a day or a topic by a local model (Ollama), citing its days.

    Example: mem summarize yesterday --lang de
    """
    data = memory().summarize(target, lang=lang, model=model)
    if data["withheld"]:
        render.warn(f"not sent to the model (trust tier): {', '.join(data['withheld'])}")
    if json_:
        render.emit_json(data)
    else:
        render.summary(data)


# --- mem core … ---------------------------------------------------------------------------------

def core_show(json_: bool = JsonOpt) -> None:
    """Print memory.md.

    Example: mem core show
    """
    data = memory("none").core_read()
    if json_:
        render.emit_json(data)
    else:
        sys.stdout.write(visible(data["text"]))


def core_append(text: str = typer.Argument(..., help="Line(s) to add at the end."), json_: bool = JsonOpt) -> None:
    """Append to memory.md (fails, changing nothing, past the size limit).

    The lines added are remembered: mem check reports (and --restore puts back) one that an editor's
    save drops later.

    Example: mem core append "- Prefers tea over coffee."
    """
    _core_done(memory("none").core_append(text), json_)


def core_replace(
    old: str = typer.Argument(..., help="Exact text that occurs once in memory.md."),
    new: str = typer.Argument(..., help="Replacement (may be empty)."),
    json_: bool = JsonOpt,
) -> None:
    """Replace text that occurs exactly once in memory.md; the old file is backed up.

    Example: mem core replace "lives in Hamburg" "lives in Lisbon"
    """
    _core_done(memory("none").core_replace(old, new), json_)


def core_insert(
    line: int = typer.Argument(..., help="1-based line to insert before."),
    text: str = typer.Argument(..., help="Line(s) to insert."),
    json_: bool = JsonOpt,
) -> None:
    """Insert text before a line of memory.md.

    Example: mem core insert 3 "- Works from Berlin."
    """
    _core_done(memory("none").core_insert(line, text), json_)


def _core_done(data: dict, json_: bool) -> None:
    if json_:
        render.emit_json({k: v for k, v in data.items() if k != "text"})
    else:
        render.core_size(data)
