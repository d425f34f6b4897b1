"""Consolidation on its own: while `mem watch` or `mem mcp` runs, `mem reflect` is started every
`[reflect] auto_every_minutes` (the first time after one such wait), and does work only when its
gates open. It runs as a child process, so a recall in the parent never waits for it; reflect's own
lock keeps two runs (this one, cron's, an agent's `reflect` tool) from overlapping; stopping ends a
running child, so no process is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Callable

STOP_PATIENCE = 5.0  # seconds a running child gets to end on SIGTERM before it is killed


class AutoReflect:
    """A daemon thread that starts `mem reflect` in `root` every `every_minutes` until `stop`."""

    def __init__(self, root, every_minutes: float, embedder: str | None = None,
                 tell: Callable[[str], None] = lambda line: None):
        self.root, self.every, self.embedder, self.tell = str(root), every_minutes * 60, embedder, tell
        self._stopped = threading.Event()
        self._child: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="auto-reflect", daemon=True)

    def start(self) -> "AutoReflect":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop looking; end a run in progress (it stops cleanly: its writes are atomic)."""
        self._stopped.set()
        with self._lock:
            child = self._child
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(STOP_PATIENCE)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self._thread.join(STOP_PATIENCE)

    def _loop(self) -> None:
        while not self._stopped.wait(self.every):
            line = self.run_once()
            if not self._stopped.is_set():  # a run ended by `stop` is not news
                self.tell(line)

    def run_once(self) -> str:
        """One `mem reflect` (gated) in a child process; a line saying what it did."""
        env = dict(os.environ)
        if self.embedder:
            env["MEM_EMBEDDER"] = self.embedder
        with self._lock:
            if self._stopped.is_set():
                return "reflect: stopped"
            self._child = subprocess.Popen([sys.executable, "-m", "memtool", "-w", self.root, "reflect", "--json"],
                                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           env=env)
        out, err = self._child.communicate()
        return said(self._child.returncode, out, err)


def said(code: int, out: bytes, err: bytes) -> str:
    """What a reflect child's exit and JSON say, in one line."""
    try:
        data = json.loads(out or b"{}")
    except ValueError:
        data = {}
    if code == 7:
        return "reflect: another run is in progress; skipped"
    if code != 0:
        reason = data.get("message") or err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {code}"]
        return f"reflect failed: {reason if isinstance(reason, str) else reason[0]}"
    if data.get("gated"):
        return f"reflect: not yet ({data['gated']})"
    pages = [p for p in data.get("pages", []) if p.get("action") in ("create", "update")]
    return f"reflect: {len(pages)} page(s) written" if data.get("changed") else "reflect: nothing changed"
