"""Recall's lexical side in one worker thread, beside the semantic side in the caller's.

The phases of a hybrid recall are independent until fusion: the FTS5 query (SQLite releases the
GIL while it steps) can run while the query is embedded and the vectors are searched (the model
and numpy release it in their kernels). On 2 cores that takes the lexical side off the critical
path (docs/benchmarks-history.md, "10⁶ facts"). The worker reads through its own connection
(`Store.reader`), used by that thread only; one thread serves every recall of a long-running
process, and `close` ends it. A job gives the same answer as on the caller's connection: the
same file, the same lexical gates, nothing uncommitted (else it runs in the caller's thread).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from memtool import TYPE_CHECKING
from memtool.store import Store

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
THREAD_NAME = "mem-recall-lexical"


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class LexicalWorker:
    """One thread and one reading connection, made on first use, for the jobs `beside` runs."""

    def __init__(self):
        self._pool = None  # a ThreadPoolExecutor of one thread
        self._reader: tuple[Store, Store] | None = None  # (the caller's store, the reader for it)

    @contextmanager
    def beside(self, store: Store, job: Callable[[Store], T]) -> Iterator[Callable[[], T]]:
        """`with worker.beside(store, job) as result:` runs `job(reader)` in the worker while the
        block runs; `result()` waits for its value (or raises its error, as the job would have in
        the caller's thread). When no reader can be had (see `Store.reader`), `result()` runs
        `job(store)` itself. A block that raises waits for the job and drops its outcome: nothing
        of this recall runs on after it."""
        reader = self._reader_for(store)
        if reader is None:
            yield lambda: job(store)
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor  # only a hybrid recall needs it (a one-shot lexical one not)

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=THREAD_NAME)
        future = self._pool.submit(job, reader.gates_from(store))
        try:
            yield future.result
        finally:
            if not future.done():
                future.cancel()
                _wait(future)

    def _reader_for(self, store: Store) -> Store | None:
        if not store.reads_alike():
            return None
        if self._reader is not None and self._reader[0] is store:
            return self._reader[1]
        self._close_reader()
        reader = store.reader()
        if reader is not None:
            self._reader = (store, reader)
        return reader

    def close(self) -> None:
        """End the thread (after the job it runs, if any) and close the reader; a later job starts
        them again."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._close_reader()

    def _close_reader(self) -> None:
        if self._reader is not None:
            if self._pool is not None:  # a job still reading through it finishes first
                self._pool.submit(lambda: None).result()
            self._reader[1].close()
            self._reader = None


class Either:
    """A job that either thread may run, once: the first to ask runs it, the other waits for its
    outcome. The worker offers to (`offer`, before its own job); the caller asks for the value
    (`value`), running the job itself when the worker has not taken it (no thread, or a thread
    still busy), so nothing waits on a job nobody runs. Its error is raised by `value`, in the
    caller's thread, as if the caller had run it."""

    def __init__(self, job: Callable[[], T]):
        import threading  # only a recall with a worker makes one

        self._job = job
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._taken = False
        self._outcome: tuple = (None, None)  # (value, error)

    def _take(self) -> bool:
        with self._lock:
            taken, self._taken = self._taken, True
        return not taken

    def _run(self) -> None:
        try:
            self._outcome = (self._job(), None)
        except BaseException as exc:  # raised again by `value`, in the caller's thread
            self._outcome = (None, exc)
        finally:
            self._done.set()

    def offer(self) -> None:
        """Run the job here unless another thread has taken it."""
        if self._take():
            self._run()

    def value(self) -> T:
        """The job's value (its error raised), run here when no thread has taken it yet."""
        if self._take():
            self._run()
        self._done.wait()
        value, error = self._outcome
        if error is not None:
            raise error
        return value


def _wait(future) -> None:
    try:
        future.result()
    except Exception:  # the caller's own error is the one to raise (a Ctrl-C while waiting is not swallowed)
        pass
