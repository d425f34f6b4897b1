"""Start-up cost of a `mem` process: the garbage collector paused while modules are imported."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def no_collection():
    """Pause the cyclic garbage collector for the block (as it was before, afterwards).

    Importing creates modules, classes and functions that live as long as the process: the ~40
    collections that importing typer and memtool triggers free nothing and cost ~6 ms of a one-shot
    `mem recall` (docs/benchmarks.md, One-shot `mem recall`). Reference counting still frees
    everything else at once; only cycles wait for the next collection."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
