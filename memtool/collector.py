"""When the cyclic garbage collector runs. What importing creates is never garbage, so the collector
neither runs while modules are imported nor walks their objects again (`imports_kept`); a process
that answers one read and exits collects only after many new objects (`one_read`), and freezes what
the read itself imports for good (`lasting_imports`: numpy and the model's binding); a batch of
long-lived acyclic objects is made without it (`paused`, a reflect run)."""

from __future__ import annotations

import gc
from contextlib import contextmanager

ONE_READ_THRESHOLD = 100_000  # new objects before a collection in a one-shot read (see `one_read`)

_one_read = False  # this process answers one read and exits (`one_read`)


@contextmanager
def imports_kept():
    """Import in the block without the cyclic garbage collector, then freeze what was imported.

    Importing creates modules, classes and functions that live as long as the process: the ~40
    collections importing typer and memtool triggered freed nothing (~4 ms of a one-shot
    `mem recall`), and every later collection, the two at exit included, walked all of it again
    (~10 ms). `gc.freeze` moves them out of the collector's sight; what a command creates later
    is collected as before, and reference counting frees everything else at once. The collector
    runs again afterwards if it did before (docs/benchmarks-history.md, One-shot `mem recall`)."""
    with paused():
        try:
            yield
        finally:
            gc.freeze()


@contextmanager
def lasting_imports():
    """Import in the block without the collector; in a process that answers one read and exits
    (`one_read`), freeze what was imported too (`imports_kept`). numpy and the embedded model's
    binding, imported by a hybrid read itself, are ~25,000 objects that the collection at exit
    walked again, with whatever the read made before them (~19 M instructions of a one-shot hybrid
    `mem recall`; 39 ms of wall under load; docs/benchmarks-history.md, "hyshot4 session"). A long-running
    process only pauses the collector: freezing there would also keep for good whatever the read
    holds at that moment."""
    with imports_kept() if _one_read else paused():
        yield


@contextmanager
def paused():
    """The block without the cyclic collector, which runs again afterwards if it did before."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def one_read() -> None:
    """For a process that answers one read and exits (the CLI's in-process `mem recall`): the
    collector waits for 100,000 new objects instead of 700. The ~11 collections a one-shot recall
    at 10⁵ facts triggered (while it listed the files, read the file table and the lexicon) found
    nothing to free (~2 ms); reference counting frees the rest at once, and a recall that first
    indexes a whole workspace still collects now and then."""
    global _one_read
    _one_read = True
    gc.set_threshold(ONE_READ_THRESHOLD, *gc.get_threshold()[1:])
