"""`mem watch` running: follow file events (or poll), answer other `mem recall` processes, report
each round on stderr, and stop cleanly on Ctrl-C or a service manager's SIGTERM."""

from __future__ import annotations

import signal
import threading
import time

from memtool.cli import render
from memtool.read_server import ReadServer


def run(mem, interval: float, poll: bool, embedder: str | None, sync: bool = False,
        sync_interval: float | None = None) -> None:
    """Watch `mem`'s workspace until interrupted (syncing by itself with `sync`); closes `mem` at the end."""
    problem = "--poll was given" if poll else mem.follow()
    if problem:
        render.err.print(f"watching {render.escape(str(mem.ws.root))}: checking every file every {interval:g}s ({problem}); Ctrl-C stops")
    else:
        render.err.print(f"watching {render.escape(str(mem.ws.root))} for changes (Ctrl-C stops)")
    lock = threading.Lock()
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop is a clean stop too, from the start
    server = ReadServer(mem, lock, embedder)
    stop = threading.Event()
    auto = syncer = None
    try:  # a stop while starting up ends as cleanly as one later (the socket removed, "stopped" said)
        refused = server.start()
        render.err.print(f"not answering other mem recall calls: {render.escape(refused)}" if refused else
                         "answering mem recall calls from other processes (.memory/read.sock)")
        auto = auto_reflect(mem, embedder)
        syncer = _start_sync(mem, stop, sync_interval) if sync else None
        mem.watch(interval, _said_indexed, on_round=_NoticeTeller(mem), lock=lock)
    except KeyboardInterrupt:
        render.err.print("stopped")
    except Exception as exc:
        if not _wraps_interrupt(exc):
            raise
        render.err.print("stopped")  # the stop landed where Python wraps it (a class being made by an import)
    finally:
        if auto:
            auto.stop()
        stop.set()
        if syncer is not None:
            syncer.join(timeout=60)  # a round in progress ends at its next file (or finishes)
        server.close()
        mem.close()


def auto_reflect(mem, embedder: str | None):
    """Start consolidation on its own when `[reflect] auto` is on (see memtool.reflect.auto); None when off."""
    if not mem.config.reflect_auto:
        return None
    from memtool.reflect.auto import AutoReflect

    every = mem.config.reflect_auto_every
    render.err.print(f"reflect runs by itself when its gates open (looking every {every:g} min; {render.escape('[reflect] auto')})")
    return AutoReflect(mem.ws.root, every, embedder,
                       tell=lambda line: render.err.print(f"{time.strftime('%H:%M:%S')} {render.escape(line)}")).start()


def _start_sync(mem, stop: threading.Event, interval: float | None) -> threading.Thread:
    every = interval or mem.config.sync_interval
    render.err.print(f"syncing by itself: a push when edits settle, a pull every {every:g}s (mem sync off stops it)")
    say = lambda line: render.err.print(f"{time.strftime('%H:%M:%S')} {render.escape(line)}")  # noqa: E731
    thread = threading.Thread(target=mem.sync_auto, args=(say, stop, every), name="mem-auto-sync", daemon=True)
    thread.start()
    return thread


class Terminated(KeyboardInterrupt):
    """A service manager's SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be.

    A subclass, not KeyboardInterrupt itself: CPython remembers a bare KeyboardInterrupt that
    passed through the code it runs for `python -m` and, even when it was caught, ends the
    process by SIGINT after a clean exit (a stop was seen to exit -2 after "stopped")."""


def _interrupt(*_) -> None:
    raise Terminated


def _wraps_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is a Ctrl-C or SIGTERM that Python wrapped: CPython 3.11 turns one raised inside
    `__set_name__`, as an imported dataclass is made, into "RuntimeError: Error calling __set_name__".
    Only that: an error raised while handling a stop is an error, not a stop."""
    return isinstance(exc, RuntimeError) and isinstance(exc.__cause__, KeyboardInterrupt)


def _said_indexed(report) -> None:
    """One line per round that changed the index (an `IndexReport`)."""
    render.err.print(f"{time.strftime('%H:%M:%S')} {report.parsed} indexed, {report.removed} removed,"
                     f" {report.unreadable} unreadable")


class _NoticeTeller:
    """Called after each round: prints the notices `Memory` added since the last call."""

    def __init__(self, mem):
        self.mem = mem
        self.said = len(mem.notices)

    def __call__(self) -> None:
        for notice in self.mem.notices[self.said:]:
            render.err.print(f"{time.strftime('%H:%M:%S')} [yellow]warning:[/yellow] {render.escape(notice)}")
        self.said = len(self.mem.notices)
