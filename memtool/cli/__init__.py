"""The `mem` command line: `main` (the entry point of `python -m memtool` and the `mem` script).

Layout: app.py (the typer app, its `main`, errors → exit status), memory_commands.py and
index_commands.py (the commands, thin), recall_command.py (`mem recall`'s work, and a plain
`mem recall` read without typer), sync.py (`mem sync …`), render.py (what people and machines
see), watching.py (`mem watch` running), call.py (the state of one call, the facade, library
errors → messages), common.py (the typer commands' shared options).
"""

import sys

from memtool.collector import imports_kept


def main(args: list[str] | None = None, whole_process: bool = False) -> None:
    """Run `mem ARGS` (default: the command line) and exit: a plain `mem recall` without typer
    (recall_command.direct), anything else through the typer app (app.main). `whole_process`: the
    process runs this one call (`python -m memtool`, the `mem` script): a plain recall then ends it
    once answered, without the interpreter's teardown (call.answered); otherwise every call ends
    with SystemExit."""
    args = sys.argv[1:] if args is None else list(args)
    with imports_kept():  # never garbage, not for the collector to walk (collector.py)
        from memtool.cli import recall_command
    recall_command.direct(args, whole_process)
    with imports_kept():  # typer, click and the commands
        from memtool.cli.app import main as run_app
    run_app(args)
