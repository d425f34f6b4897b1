"""`mem recall`'s work once its options are read (`show`), and `direct`: a plain `mem recall`
command line read without typer.

typer's import, and its building and parsing of the command, were ~20 % of a one-shot
`mem recall --json` (docs/benchmarks-history.md, "oneshot7 session"). `direct` reads only command lines
whose every word it knows as typer would read it, and gives back any other (help, a typo, a value
typer would refuse or convert in its own way) to typer, which then reads it and says what is wrong.
`tests/test_oneshot.py` holds it to typer's reading of `recall`'s declaration (memory_commands.py)."""

import os
import sys
from pathlib import Path

from memtool import search_aside
from memtool.cli import render
from memtool.cli.call import answered, memory, reported, state, to_reader
from memtool.collector import one_read
from memtool.errors import ExitStatus
from memtool.read_server import ask
from memtool.scan_aside import ahead
from memtool.workspace import discover

_ROOT_VALUES = {"-w": "workspace", "--workspace": "workspace"}
_VALUES = {"-k": "k", "--k": "k", "--since": "since", "--until": "until", "--as-of": "as_of",
           "--budget": "budget", "--mode": "mode", "--min-score": "min_score", "--embedder": "embedder"}
_LISTS = {"--kind": "kind", "--entity": "entity", "-e": "entity", "--field": "field_", "--tag": "tag", "-t": "tag"}
_CONVERT = {"k": int, "budget": int, "min_score": float}  # click's INT and FLOAT: int(text), float(text)
_DEFAULTS = dict(query="", k=10, since=None, until=None, as_of=None, budget=None, mode=None, min_score=None,
                 embedder=None, json_=False)  # and an empty list for each of _LISTS


def direct(args: list[str], whole_process: bool = False) -> None:
    """Run `mem ARGS` and exit when it is a recall `read` understands; return otherwise (and
    always when the shell's completion asks: typer answers it). `whole_process`: the process
    runs only this call, and ends once it is answered (`call.answered`); else SystemExit."""
    understood = None if "_MEM_COMPLETE" in os.environ else read(args)
    if understood is None:
        return
    workspace, options = understood
    state.reset()
    state.workspace = workspace
    state.json = options["json_"]
    with reported():
        show(**options)
    if whole_process:
        answered()
    sys.exit(ExitStatus.OK)


def read(args: list[str]) -> tuple[Path | None, dict] | None:
    """(the workspace, `recall`'s arguments as typer passes them) for `[-w WS] recall [QUERY]
    [OPTION…]` with each option as `--name value` or `--name=value` (a value neither empty nor
    starting with "-"), all valid UTF-8; None for anything else. Pure but for the workspace's
    `stat` (typer refuses a folder it cannot read)."""
    try:
        "".join(args).encode("utf-8")
    except UnicodeEncodeError:
        return None
    words = iter(args)
    workspace = None
    for word in words:  # the root's options, then the command
        if word == "recall":
            break
        given = _value(word, words, _ROOT_VALUES)
        workspace = given and _workspace(given[1])
        if workspace is None:
            return None
    else:
        return None
    options, query = dict(_DEFAULTS, **{parameter: [] for parameter in _LISTS.values()}), None
    for word in words:
        if not word.startswith("-"):
            if query is not None:
                return None
            query = options["query"] = word
        elif word == "--json":
            options["json_"] = True
        elif (given := _value(word, words, _VALUES | _LISTS)) is None:
            return None
        elif given[0] in _LISTS.values():
            options[given[0]].append(given[1])
        else:  # given twice, the last counts, as with typer
            options[given[0]] = given[1]
    return workspace, options


def _value(word: str, words, names: dict[str, str]) -> tuple[str, object] | None:
    """(parameter, value) of the option `word` (its value in `word` after "=" or the next of `words`),
    converted as click does; None when it is not one of `names` or its value is not read here."""
    name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
    if name not in names:
        return None
    if not eq:
        value = next(words, None)
    if not value or value.startswith("-"):
        return None
    parameter = names[name]
    if parameter in _CONVERT:
        try:
            return parameter, _CONVERT[parameter](value)
        except ValueError:
            return None
    return parameter, value


def _workspace(value: str) -> Path | None:
    """`-w`'s folder as typer's path type gives it; None where typer refuses it (unreadable)."""
    try:
        os.stat(value)
    except (OSError, ValueError):
        return Path(value)
    return Path(value) if os.access(value, os.R_OK) else None


def show(query: str, k: int, since: str | None, until: str | None, as_of: str | None, kind: list[str],
         entity: list[str], field_: list[str], tag: list[str], budget: int | None, mode: str | None,
         min_score: float | None, embedder: str | None, json_: bool) -> None:
    """Recall and print: the document as JSON, or the results for a person (warnings on stderr)."""
    args = dict(query=query, k=k, since=since, until=until, as_of=as_of, kinds=kind, entities=entity,
                budget=budget, mode=mode)
    if field_:  # only when used, so a running `mem watch` from before this option can still answer
        args["fields"] = field_
    if tag:
        args["tags"] = tag
    if min_score is not None:
        args["min_score"] = min_score
    data, terms = _served_recall(embedder, args) or _recall(embedder, args)
    for w in data["warnings"]:
        render.warn(w)
    with to_reader():
        if json_:
            render.emit_json(data)
        else:
            render.dates_read(data.get("dates", []))
            render.recall_results(data, terms)


def _served_recall(embedder: str | None, args: dict) -> tuple[dict, list[str]] | None:
    """The recall document and terms from a running `mem watch` (see read_server), or None."""
    reply = ask(discover(state.workspace).root, embedder, args)  # answers in milliseconds
    if reply is not None:
        search_aside.end()  # the child forked at start for the vectors is not needed
    return None if reply is None else (reply["result"], reply.get("terms", []))


def _recall(embedder: str | None, args: dict) -> tuple[dict, list[str]]:
    """The recall document and terms computed in this process, which exits after it."""
    one_read()
    scan = ahead(state.workspace)  # the files stat'ed in a child while this process imports the library
    try:
        mem = memory(embedder).read_once(scan)
    except BaseException:
        if scan is not None:
            scan.cancel()
        raise
    with render.progress_bar("indexing") as bar, render.progress_bar("embedding", threshold=64) as ebar:
        result = mem.recall(**args, progress=bar, embed_progress=ebar)
    return result.to_dict(), result.terms
