"""Sync by itself (`mem watch --sync`, or `[sync] auto = true`): a push shortly after local edits
settle, a pull by a cheap conditional read every `interval` seconds, and growing pauses while the
remote cannot be reached. What happened is kept in `.memory/sync/auto.json` for `mem status`.

`Schedule` decides when (pure: time is passed in); `AutoSync` looks at the files, runs rounds and
keeps the record.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from memtool import retain_log
from memtool.errors import MemError
from memtool.sync.local import sync_files, unchanged
from memtool.sync.state import SyncBlocked, SyncState, now_iso
from memtool.workspace import Workspace

SETTLE = 2.0  # seconds without a further local change before a push (an editor's save, then the next)
TICK = 1.0  # how often the files' stats are compared with the base (a stat per synced file)
MAX_PAUSE = 900.0  # the longest wait between attempts while the remote cannot be reached


class Schedule:
    """When the next round is due, from local changes, the pull interval and past failures."""

    def __init__(self, interval: float, settle: float = SETTLE):
        self.interval, self.settle = interval, settle
        self.next_pull = 0.0  # a first round at once
        self.retry_at = 0.0
        self.quiet_since = 0.0
        self.failures = 0

    def due(self, now: float, dirty: bool, changed: bool) -> bool:
        """`dirty`: local files differ from the last agreed state; `changed`: they changed since the last tick."""
        if changed:
            self.quiet_since = now
        if now < self.retry_at:
            return False
        return (dirty and now - self.quiet_since >= self.settle) or now >= self.next_pull

    def finished(self, now: float, ok: bool) -> float:
        """Record a round's outcome; seconds until the next attempt."""
        if ok:
            self.failures, self.retry_at = 0, 0.0
            self.next_pull = now + self.interval
            return self.interval
        self.failures += 1
        pause = min(max(self.interval, 5.0) * 2 ** (self.failures - 1), MAX_PAUSE)
        self.retry_at = self.next_pull = now + pause
        return pause


class AutoSync:
    """Runs `run_round()` when the schedule says so, until `stop` is set; `say(line)` reports."""

    def __init__(self, ws: Workspace, run_round: Callable[[], dict], interval: float,
                 say: Callable[[str], None], stop: threading.Event):
        self.ws, self.run_round, self.say, self.stop = ws, run_round, say, stop
        self.state = SyncState(ws)
        self.schedule = Schedule(interval)
        self.signature = None
        self.noted: list[str] = []  # what the last round left out, said once until it changes
        self.record = {"pid": os.getpid(), "interval": interval, "started": now_iso(), "last_success": None,
                       "last_error": None, "failures": 0, "next_try": None}

    def loop(self) -> None:
        self._save()
        try:
            while not self.stop.is_set():
                self.tick(time.monotonic())
                self.stop.wait(TICK)
        finally:
            self.record["pid"] = None
            self._save()

    def tick(self, now: float) -> None:
        too_big: set[str] = set()
        stats = sync_files(self.ws, None, too_big)
        signature = hash(frozenset(stats.items()))
        changed, self.signature = signature != self.signature and self.signature is not None, signature
        if self.state.off():
            return
        if not self.schedule.due(now, not unchanged(stats, self.state.base(), too_big), changed):
            return
        try:
            report = self.run_round()
        except SyncBlocked as exc:  # off meanwhile, another memory, a remote gone backwards: said, retried later
            self._failed(now, exc.message, exc.hint)
        except MemError as exc:  # unreachable, damaged, the key: said, and a growing pause
            self._failed(now, exc.message, exc.hint)
        except OSError as exc:
            self._failed(now, str(exc), None)
        else:
            self.schedule.finished(now, True)
            self.record.update(last_success=now_iso(), failures=0, next_try=None)
            self._save()
            moved = {k: len(report[k]) for k in ("pulled", "pushed", "merged", "deleted", "tombstoned") if report[k]}
            if moved or report["new_conflicts"]:
                self.say("synced: " + ", ".join(f"{n} {k}" for k, n in moved.items())
                         + (f"; new conflict(s): {', '.join(report['new_conflicts'])}" if report["new_conflicts"] else ""))
            if report["removed_elsewhere"]:  # said once: the round acknowledged them
                self.say(retain_log.removed_note(report["removed_elsewhere"]))
            self._note_left_out(report)

    def _note_left_out(self, report: dict) -> None:
        """Say what a round left out (damaged on the remote, refused, colliding names, local links), once
        until it changes: a round that found nothing new does not repeat it every interval."""
        notes = ([f"damaged on the remote (every other file synced): {p}" for p in report["damaged"]]
                 + [f"refused from the remote's manifest: {n}" for n in report["refused"]]
                 + [f"not synced: {n}" for n in report.get("oversize", [])]
                 + [f"not written here: {n}" for n in report.get("failed", [])]
                 + [f"not synced: {n}" for n in report["collisions"] + report["not_synced"]])
        if notes and notes != self.noted:
            for note in notes:
                self.say(note)
            self.noted = notes

    def _failed(self, now: float, message: str, hint: str | None) -> None:
        pause = self.schedule.finished(now, False)
        self.record.update(last_error={"time": now_iso(), "message": message, "hint": hint},
                           failures=self.schedule.failures,
                           next_try=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + pause)))
        self._save()
        self.say(f"sync failed ({message}); next try in {pause:.0f} s")

    def _save(self) -> None:
        self.state.save_auto(self.record)


def auto_status(ws: Workspace) -> dict | None:
    """The last automatic sync's record, `running` telling whether its process is still alive."""
    record = SyncState(ws).auto()
    if not record:
        return None
    pid = record.get("pid")
    running = False
    if isinstance(pid, int):
        try:
            os.kill(pid, 0)
            running = True
        except (ProcessLookupError, PermissionError):
            running = False
    return {**record, "running": running}
