"""What changed on disk, from the operating system's file events (for long-running processes).

A one-shot command stats every Markdown file on each read; a process that stays up (`mem watch`,
`mem mcp`) can instead follow file events and stat only the files they name. A `ChangeFeed`
collects those paths in a background thread (`watchfiles`: inotify, FSEvents, ReadDirectoryChangesW)
and hands them out with `take()`. It answers None, meaning "check every file", when it has just
started, when an event could hide several files (a directory created, renamed or removed), when
`full_every` seconds have passed since the last full check (a safety net for events the operating
system dropped), and for good once the watcher fails (`problem` then says why).

Only real folders inside the workspace are watched, each on its own (never recursively), so a
symbolic link to a folder elsewhere (`bank/u -> /usr`) costs no watch: the scan does not follow
linked folders either. When folders appear or vanish, the watcher restarts with the new list.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from memtool.workspace import indexable

STEP_MS = 30  # events are handed over once the file system was quiet this long
FULL_EVERY = 60.0  # seconds between full stat checks even while events flow
BARRIERS = ".memory/barriers"  # `barrier()` writes a file here; its event follows every earlier one


class ChangeFeed:
    """Workspace-relative Markdown paths changed since the last `take()`."""

    def __init__(self, root: Path, full_every: float = FULL_EVERY):
        self.root = root
        self.full_every = full_every
        self.problem: str | None = None  # why events are not (or no longer) used
        self._changed: set[str] = set()
        self._barrier = 0  # the last barrier number written, and the last one seen
        self._barrier_seen = 0
        self._full = True  # the first take() asks for a full check
        self._last_full = 0.0
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._ready = threading.Event()
        try:  # before watching: a file in a folder created later can beat the folder's watch
            if root.is_dir():
                (root / BARRIERS).mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # then barrier() fails and callers check every file
        self._thread = threading.Thread(target=self._run, name="memtool-changes", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)  # the watcher is registered before the first full check is handed out

    @property
    def active(self) -> bool:
        return self.problem is None and self._thread.is_alive()

    def take(self) -> set[str] | None:
        """Paths to re-check, or None when every file must be checked."""
        with self._lock:
            now = time.monotonic()
            if self._full or not self.active or now - self._last_full >= self.full_every:
                self._full, self._changed = False, set()
                self._last_full = now
                return None
            changed, self._changed = self._changed, set()
            return changed

    def request_full(self) -> None:
        """Make the next `take()` ask for a check of every file."""
        with self._lock:
            self._full = True
            self._lock.notify_all()

    def note(self, rel: str) -> None:
        """A file this process wrote itself: re-check it on the next `take()`, without waiting for its event."""
        with self._lock:
            self._changed.add(rel)
            self._lock.notify_all()

    def barrier(self, timeout: float = 0.5) -> bool:
        """Wait until every event that happened before this call has been collected.

        Writes a file in `.memory/` and waits for its event: the operating system delivers a
        watcher's events in order, so by then earlier saves are in `take()`'s answer. False (check
        every file instead) when events are not flowing or the marker's event does not come in time.
        """
        if not self.active:
            return False
        with self._lock:
            self._barrier += 1
            number = self._barrier
        path = self.root / BARRIERS / str(number)
        try:
            path.write_bytes(b"")
        except OSError:
            return False
        deadline = time.monotonic() + timeout
        try:
            with self._lock:
                while self._barrier_seen < number and self.active:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._lock.wait(left)
                return self._barrier_seen >= number
        finally:
            path.unlink(missing_ok=True)

    def wait(self, timeout: float) -> bool:
        """Block until something changed (True) or `timeout` seconds passed (False)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not (self._changed or self._full) and self.active:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.5))
            return True

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    # --- the watcher thread ------------------------------------------------------------------

    def _run(self) -> None:
        try:
            import watchfiles
        except ImportError:
            self.problem = "the watchfiles package is not installed"
            self._ready.set()
            return
        try:
            while not self._stop.is_set():
                try:
                    self._watch(watchfiles)
                except FileNotFoundError:  # a folder vanished between listing and watching it
                    if not self.root.is_dir():
                        raise
            if not self._stop.is_set():
                self.problem = "file events stopped (the watcher ended)"
        except Exception as exc:  # the watcher died: every later read checks every file again
            self.problem = f"file events stopped ({type(exc).__name__}: {exc})"
        finally:
            self._ready.set()
            with self._lock:
                self._lock.notify_all()

    def _watch(self, watchfiles) -> None:
        """Watch the current folders until one is created or removed (then the caller starts again)."""
        folders = watched_folders(self.root)
        restarted = self._ready.is_set()
        for batch in watchfiles.watch(*folders, watch_filter=None, step=STEP_MS, debounce=1000,
                                      stop_event=self._stop, yield_on_timeout=True, raise_interrupt=False,
                                      rust_timeout=500, recursive=False):
            if restarted:  # files may have been written in a new folder before its watch began
                restarted = False
                self.request_full()
            self._ready.set()
            if batch and self._add(path for _, path in batch):
                return

    def _add(self, paths) -> bool:
        """Collect the paths of one batch of events; True when a folder was created or removed."""
        changed, full, barrier = set(), False, 0
        marks = str(self.root / BARRIERS) + os.sep
        for path in paths:
            if path.startswith(marks):
                name = path[len(marks):]
                barrier = max(barrier, int(name) if name.isdigit() else 0)
                continue
            rel = _relative(self.root, path)
            if rel is None:
                continue
            if indexable(rel):
                changed.add(rel)
            elif (rel in ("memory", "bank") or rel.startswith(("memory/", "bank/"))) and _maybe_folder(path):
                full = True  # a folder created, moved or removed stands for the files inside it
        if changed or full or barrier:
            with self._lock:
                self._changed |= changed
                self._full = self._full or full
                if barrier:
                    self._barrier_seen = max(self._barrier_seen, barrier)
                self._lock.notify_all()
        return full


def watched_folders(root: Path) -> list[str]:
    """The workspace folder, `.memory/barriers`, and memory/ and bank/ with every real folder under
    them (no dot folders, no symbolic links below them): what `scan` looks into. memory/ and bank/
    themselves may be links to a folder elsewhere (a synced folder): the scan follows them, so the
    watch does too, under the link's path."""
    folders = [str(root)]
    if (root / BARRIERS).is_dir():
        folders.append(str(root / BARRIERS))
    for top in ("memory", "bank"):
        if not (root / top).is_dir():
            continue
        for here, dirs, _ in os.walk(root / top):  # os.walk does not follow linked folders
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            folders.append(here)
    return folders


def _maybe_folder(path: str) -> bool:
    """A folder now, or gone and named like one (editors' temp files have suffixes or vanish as files)."""
    p = Path(path)
    return p.is_dir() or (not p.exists() and "." not in p.name)


def _relative(root: Path, path: str) -> str | None:
    """The workspace-relative POSIX path, or None for paths memtool never indexes (dot folders, outside)."""
    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        return None
    if any(part.startswith(".") for part in rel.split("/")):
        return None
    return rel
