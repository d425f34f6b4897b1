"""The `mem` program: the typer app with every command in `mem --help` order, and `main`, which
turns library errors into one-line messages and an `ExitStatus`."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import importlib
import os
import re
import sys
from pathlib import Path
from typing import Optional

import typer

from memtool import __version__
from memtool.cli import forget_command, import_command, index_commands, memory_commands
from memtool.cli.call import fail, reported, state
from memtool.cli.common import TEXT_ARGS, TextCommand
from memtool.cli.review_commands import review_app
from memtool.cli.serve_command import serve
from memtool.cli.sync import sync_app
from memtool.errors import ExitStatus, MemError, UsageError
from memtool.workspace import refuse_unnamed

APP_SETTINGS = dict(
    name="mem",
    help="Local-first long-term memory over plain Markdown.\n\nExample: mem recall \"Peter Lisbon\" --since 30d",
    no_args_is_help=True,
    # Plain click help: typer's rich help imports rich.markdown and markdown-it (~150 ms per call).
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**APP_SETTINGS)


def _version(value: bool) -> None:
    if value:
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
    state.workspace = workspace


COMMANDS = [  # the order `mem --help` lists them in
    (index_commands.init, {}),
    (memory_commands.retain, TEXT_ARGS),
    (index_commands.index, {}),
    (index_commands.watch, {}),
    (memory_commands.recall, {}),
    (index_commands.status, {}),
    (index_commands.check, {}),
    (memory_commands.get, {}),
    (memory_commands.about, {}),
    (memory_commands.opinions, {}),
    (memory_commands.episodes, {}),
    (memory_commands.summarize, {}),
    (index_commands.reflect, {}),
    (index_commands.schedule, {}),
    (index_commands.mcp, {}),
    (forget_command.forget, TEXT_ARGS),
    (memory_commands.note, TEXT_ARGS),
    (memory_commands.recent, {}),
    (memory_commands.entities, {}),
    (serve, {}),
]
for command, settings in COMMANDS:
    app.command(context_settings=settings or None, cls=TextCommand if settings else None)(command)

app.command("import")(import_command.import_)
app.add_typer(sync_app, name="sync")

core_app = typer.Typer(help="Read and edit core memory (memory.md) safely: size-limited, atomic, backed up.",
                       no_args_is_help=True)
core_app.command("show")(memory_commands.core_show)
core_app.command("append", context_settings=TEXT_ARGS, cls=TextCommand)(memory_commands.core_append)
core_app.command("replace", context_settings=TEXT_ARGS, cls=TextCommand)(memory_commands.core_replace)
core_app.command("insert", context_settings=TEXT_ARGS, cls=TextCommand)(memory_commands.core_insert)
app.add_typer(core_app, name="core")
app.add_typer(review_app, name="review")


def main(args: list[str] | None = None) -> None:
    """Run `mem ARGS` (default: the command line) and exit: library errors become `error:`/`hint:`
    lines (and a JSON document when --json was given) and the error's exit status."""
    args = sys.argv[1:] if args is None else list(args)
    args = ["--help" if a == "-h" else a for a in args]  # the same for every command (see common.TEXT_ARGS)
    state.reset()
    try:
        _check_argv(args)
        refuse_unnamed("--workspace", _workspace_given(args))
    except UsageError as exc:  # nothing is parsed yet: the arguments tell whether --json was asked
        fail(exc, "--json" in args)
    with reported():  # library errors, Ctrl-C, the file system's refusals (call.py)
        try:
            code = _app_for(args)(args=args, prog_name="mem", standalone_mode=False)
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except typer.Abort:
            sys.stderr.write("aborted\n")
            sys.exit(ExitStatus.FAILED)
        except Exception as exc:  # usage errors from click; anything else goes on to `reported`
            if type(exc).__name__ == "NoArgsIsHelpError":  # `mem`, `mem core`: the help, as click shows it
                sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
                sys.exit(ExitStatus.USAGE)
            refusal = _from_click(exc, args)
            if refusal is None:
                raise
            fail(refusal, state.json or "--json" in args)  # click may refuse before any option's callback ran
        sys.exit(code if isinstance(code, int) else ExitStatus.OK)


def _app_for(args: list[str]) -> typer.Typer:
    """An app of only the command `args` run (typer builds every command's parameters on each
    run: ~15 % of a one-shot `mem recall`); the whole app for anything else (help, groups, typos).
    The one-command app has no --install-completion/--show-completion (root options, so never
    after a command word; shell completion itself runs with no arguments, through the whole app):
    typer builds both for every run (~1 ms)."""
    name = _command_name(args)
    for command, settings in COMMANDS:
        if command.__name__ == name:
            one = typer.Typer(**APP_SETTINGS, add_completion=False)
            one.callback()(_root)
            one.command(context_settings=settings or None, cls=TextCommand if settings else None)(command)
            return one
    return app


def _command_name(args: list[str]) -> str | None:
    """The command word of `args`, past the root's own options (None when a root option other
    than the workspace comes first, e.g. --help or --version)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-w", "--workspace"):
            skip = True
        elif not arg.startswith("--workspace="):
            return None if arg.startswith("-") else arg
    return None


def _workspace_given(args: list[str]) -> str | None:
    """The text of the root's `-w`/`--workspace` as given (typer's path type reads "" as "."), None without one."""
    given = None
    words = iter(args)
    for arg in words:
        if arg in ("-w", "--workspace"):
            given = next(words, None)
        elif arg.startswith("--workspace="):
            given = arg.partition("=")[2]
        elif not arg.startswith("-") or arg == "--":
            break  # the command word: what follows is its own
    return given


def _check_argv(args: list[str]) -> None:
    """Refuse arguments that are not valid text (bytes that are not UTF-8 arrive as surrogates)."""
    for n, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(arg).decode("utf-8", "backslashreplace")
            raise UsageError(f"argument {n} ({shown}) is not valid UTF-8",
                             "pass text as UTF-8 (check the terminal's or script's locale, e.g. LANG=C.UTF-8)") from None


def _click_exception_classes() -> tuple[type, ...]:
    """ClickException of every click this typer may use: its bundled copy (typer 0.28) or click."""
    found = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        if name.split(".")[0] == "click" and "click" not in sys.modules:
            continue  # not imported, so not what raised
        try:
            found.append(importlib.import_module(name).ClickException)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _from_click(exc: Exception, args: list[str]) -> MemError | None:
    """A typed error for a usage error click raised (None for anything else)."""
    if not (isinstance(exc, _click_exception_classes())
            or any(c.__name__ == "ClickException" for c in type(exc).__mro__)):  # a click bundled under another name
        return None
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    message = re.sub(r"( Did you mean [^?]*\?)\1+", r"\1", message)  # typer 0.24-0.25 and click both suggest
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "mem"
    option = getattr(exc, "option_name", None) or ""
    takes_text = ctx is not None and any(p.param_type_name == "argument" for p in ctx.command.params)
    if takes_text and option.startswith("-") and (not option.startswith("--") or getattr(ctx, "ignore_unknown_options", False)):
        given = next((a for a in args if a.startswith(option)), option)
        hint = f"text that starts with '-' goes after --, e.g. {command} -- {given}; options: {command} --help"
    else:
        hint = f"see {command} --help"
    if getattr(exc, "exit_code", ExitStatus.USAGE) != ExitStatus.USAGE:
        error = MemError(message, hint)
        error.exit_code = exc.exit_code
        return error
    return UsageError(message, hint)
