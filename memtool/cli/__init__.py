"""The `mem` command line: `app` (typer) and `main` (the entry point in pyproject.toml).

Layout: app.py (the app, `main`, errors → exit status), memory_commands.py and index_commands.py
(the commands, thin), sync.py (`mem sync …`), render.py (what people and machines see),
watching.py (`mem watch` running), common.py (shared options and state).
"""

from memtool.cli.startup import no_collection

with no_collection():  # typer, click and the commands: ~3 ms of collections that free nothing
    from memtool.cli.app import app, main

__all__ = ["app", "main"]
