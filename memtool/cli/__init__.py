"""The `mem` command line: `app` (typer) and `main` (the entry point in pyproject.toml).

Layout: app.py (the app, `main`, errors → exit status), memory_commands.py and index_commands.py
(the commands, thin), sync.py (`mem sync …`), render.py (what people and machines see),
watching.py (`mem watch` running), common.py (shared options and state).
"""

from memtool.collector import imports_kept

with imports_kept():  # typer, click and the commands: never garbage, not for the collector to walk
    from memtool.cli.app import app, main

__all__ = ["app", "main"]
