"""One `mem` call, without typer: the state its root options and --json set, the facade it opens,
and how it ends on a library error (a one-line message, JSON too when asked, an exit status).
Shared by the typer app (app.py) and the direct `mem recall` (recall_command.py)."""

from __future__ import annotations  # (typer reads no function of this module)

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from memtool import TYPE_CHECKING
from memtool.cli import render
from memtool.errors import ExitStatus, MemError, StorageError

if TYPE_CHECKING:
    from typing import NoReturn


class CliState:
    """What the options of one `mem` call set before its command runs (reset by `main` on each call)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.workspace: Path | None = None  # -w/--workspace
        self.json = False  # the command's --json: errors are then also one JSON document on stdout


state = CliState()


def memory(embedder: str | None = None):
    """The `Memory` of the workspace named by -w, $MEM_WORKSPACE or the current directory."""
    from memtool.collector import imports_kept

    with imports_kept():
        from memtool.memory import Memory  # the whole library (SQLite, the store): not for `mem --help`

    return Memory.open(state.workspace, embedder=embedder)


@contextmanager
def reported():
    """The block's library errors, Ctrl-C and the file system's refusals as a message and an exit
    status; anything else (a bug) goes on up."""
    try:
        yield
    except MemError as exc:
        fail(exc, state.json)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(ExitStatus.INTERRUPTED)
    except Exception as exc:
        failure = _from_system(exc)
        if failure is None:
            raise
        fail(failure, state.json)


@contextmanager
def to_reader():
    """The block's writes to stdout; when its reader has gone (`mem recall … | head`), the rest is
    dropped and the call ends with status 1 without a word, as click ends a typer command."""
    try:
        yield
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit
        sys.exit(ExitStatus.FAILED)


def answered() -> NoReturn:
    """End a one-shot call whose answer is written, with status 0 and without the interpreter's
    teardown: clearing every module and freeing each object one by one, with two collections, frees
    nothing the kernel does not, and was ~2 % of a one-shot `mem recall`'s instructions
    (docs/benchmarks-history.md, "oneshot10 session"). Nothing is left to lose by then: stdout and stderr
    are flushed here (a reader gone ends as `to_reader` says), the exit handlers run (the children
    of memtool.scan_aside and search_aside ended and reaped), the index and the local state were
    closed when the read's `Memory` was released, and the access log is written with one `write`."""
    import atexit

    with to_reader():
        sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(ExitStatus.OK)


def fail(exc: MemError, as_json: bool) -> NoReturn:
    """Say `exc` (`error:`/`hint:` lines, and its JSON document when asked) and exit with its status."""
    if as_json:
        render.emit_json(exc.to_dict())
    render.error(exc.message, exc.hint)
    sys.exit(exc.exit_code)


def _from_system(exc: Exception) -> MemError | None:
    """A typed error for an OSError or a storage failure (None for anything else)."""
    if isinstance(exc, OSError):
        return StorageError.from_os(exc)
    if "memtool.store.driver" in sys.modules:  # else no storage failure can have come from it
        from memtool.store.driver import as_mem_error

        return as_mem_error(exc)
    return None
