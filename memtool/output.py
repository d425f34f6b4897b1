"""How the CLI shows things to people (rich) and to machines (plain JSON on stdout)."""

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
    return Console(stderr=stderr, highlight=False, soft_wrap=True,  # the terminal wraps; pipes get whole lines
                   **({"color_system": None} if plain else {}))


def __getattr__(name: str):
    """`output.out` (stdout) and `output.err` (stderr) are rich consoles, created on first use."""
    if name == "out":
        return _console(False)
    if name == "err":
        return _console(True)
    raise AttributeError(name)

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
        if total < threshold:
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


def recall_results(result, highlight_terms: list[str]) -> None:
    from rich.text import Text

    from memtool.analyzer import highlight_spans

    out = _console(False)
    if not result.results:
        _console(True).print("[dim]nothing found[/dim]")
        return
    for n, r in enumerate(result.results, 1):
        line = Text()  # a base style would cover the content too: style each part alone
        line.append(f"{n:>2}. ", style="dim")
        line.append(r["kind"], style=KIND_STYLE.get(r["kind"], "white"))
        if r.get("confidence") is not None:
            line.append(f" c={r['confidence']:.2f}", style="magenta")
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
        if r.get("entities"):
            meta.append(visible("  " + " ".join("@" + e for e in r["entities"])), style="dim cyan")
        if r.get("score") is not None:
            meta.append(f"  score {r['score']:.2f}", style="dim")
        out.print(meta)
        if r.get("sources"):
            out.print(Text(visible("    also: " + ", ".join(r["sources"][1:])), style="dim"))
        if r.get("superseded_by"):
            sup = r["superseded_by"]
            out.print(Text(visible(f"    superseded since {sup['since']} by {sup['source']}"), style="yellow"))
        for prev in r.get("previously", []):
            out.print(Text(visible(f"    previously (until {prev['until']}): {prev['content']} — {prev['source']}"), style="dim"))
