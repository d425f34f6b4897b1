"""The stat check of every file (`Workspace.scan`) in a forked child process, while the parent
imports the library (`ahead`) or answers a read from the index (see `Freshness.checked_read`).

In a big workspace a one-shot read spends about as long on the stat check (one `stat` per file:
~0.1 s for 25,000 files) as on its query. Both mostly wait on the kernel or SQLite, yet a thread
cannot overlap them: it takes the GIL back between two `stat` calls only when the query thread
lets go of it. A child made by `fork` scans in its own interpreter on the other core and sends back
what it found (`marshal`, path → (size, mtime_ns, ctime_ns) and the problems); the parent keeps its answer
only if that scan matches the index it read. Forked before the library is imported (`ahead`, the
CLI's one-shot `mem recall`), the child is small (little memory to copy on write) and its scan is
usually done before the parent needs it: the check then costs the parent no time at any size.

Only on Linux, and only in a process with no other thread: `fork` copies just the calling thread,
so a lock another thread held would stay locked in the child. The child touches nothing but the
file system and the pipe, and leaves with `os._exit` (no clean-up of what it shares with the parent:
SQLite connections, buffered output).
"""

from __future__ import annotations

import marshal
import os
import sys

from memtool.config import env_choice
from memtool.errors import MemError
from memtool.workspace import ScanProblem, Workspace, discover

STAT_CHECKS = ("auto", "child", "ahead", "inline")  # $MEM_STAT_CHECK (docs/configuration.md)


class ScanAside:
    """A scan running in a child process; `result()` waits for it, `cancel()` ends it."""

    def __init__(self, pid: int, fd: int, root):
        self.pid: int | None = pid  # None once reaped
        self.fd: int | None = fd  # None once closed
        self.root = root  # the workspace folder it scans

    @staticmethod
    def core_free() -> bool:
        """Whether a core is likely idle for the child: fewer runnable processes over the last
        minute (the load average) than cores less one half. On a busy machine the two processes
        take turns on one core, and the copy-on-write of the parent's memory makes both slower."""
        try:
            cores = len(os.sched_getaffinity(0))
            return os.getloadavg()[0] < cores - 0.5
        except (AttributeError, OSError):
            return False

    @classmethod
    def start(cls, ws: Workspace) -> "ScanAside | None":
        """Start scanning `ws` in a child, or None where that cannot be done (the caller scans)."""
        threads = sys.modules.get("threading")  # never imported: no thread was started through it
        if not sys.platform.startswith("linux") or (threads and threads.active_count() != 1):
            return None
        try:
            r, w = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:  # e.g. out of processes: scan here
            os.close(r)
            os.close(w)
            return None
        if pid == 0:
            try:  # never back into the parent's code, whatever happens (a signal before _child's own try)
                _child(ws, r, w)
            finally:
                os._exit(1)
        os.close(w)
        return cls(pid, r, ws.root)

    def result(self) -> tuple[dict[str, tuple[int, int]], list[ScanProblem]] | None:
        """The child's scan, as `Workspace.scan` gives it (files, problems), or None if it failed.
        Interrupted while waiting, the child is ended first (not waited for)."""
        fd, self.fd = self.fd, None
        try:
            with os.fdopen(fd, "rb") as pipe:
                data = pipe.read()
        except BaseException:
            self.cancel()
            raise
        ok = self._reaped() == 0
        if not ok:
            return None
        try:
            files, problems = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return files, [ScanProblem(*p) for p in problems]

    def cancel(self) -> None:
        """End the child (the read it ran beside failed or was interrupted) and reap it; nothing
        once it is reaped (its pid may belong to another process by then)."""
        if self.pid is not None:
            import signal  # (its enums are ~1 ms to build: a read that ends well needs none)

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.close(fd)
            except OSError:
                pass
        self._reaped()

    def _reaped(self) -> int:
        """The child's exit status, waited for once; -1 when it was reaped already."""
        pid, self.pid = self.pid, None
        while pid is not None:
            try:
                _, status = os.waitpid(pid, 0)
                return status
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        return -1


def ahead(workspace) -> ScanAside | None:
    """The stat check of the workspace named by `workspace` (`-w`; else $MEM_WORKSPACE or the current
    directory's ancestry) started now in a child, for the one-shot read about to import the library:
    with a core likely free and no search child forked for the query's vectors (memtool.search_aside:
    a third process on two cores cost a hybrid one-shot ~40 ms of wall; docs/benchmarks-history.md, "One-shot
    `mem recall`"), whatever the load and the search child with $MEM_STAT_CHECK `ahead` or `child`,
    at any size, never with `inline`. None where it is not started (a workspace not found is said by
    the read itself). The child is ended at exit if nothing took its scan (an error before the read)."""
    from memtool import search_aside

    how = env_choice("MEM_STAT_CHECK", STAT_CHECKS, "a way to check the files", "auto")  # a recall that
    # embeds its query never asks again
    if how not in ("auto", "ahead", "child") or (
            how == "auto" and (search_aside.started() is not None or not ScanAside.core_free())):
        return None
    try:
        ws = discover(workspace)
    except MemError:
        return None
    aside = ScanAside.start(ws)
    if aside is not None:
        import atexit

        atexit.register(aside.cancel)
    return aside


def _child(ws: Workspace, r: int, w: int) -> None:
    """Scan, write the result to `w`, and leave the process (status 0 only if all of it was sent)."""
    import signal  # in the child, on the other core

    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child; the parent cleans up
        os.close(r)
        problems: list = []
        files = ws.scan(problems)
        data = memoryview(marshal.dumps((files, [tuple(p) for p in problems])))
        while data:
            data = data[os.write(w, data):]
        code = 0
    finally:
        os._exit(code)
