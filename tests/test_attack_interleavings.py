"""Property: random interleavings of retain, editor-style saves, sync between two replicas, reflect
and kill -9 never lose a line.

Every line is a unique token. A line a person saved in an editor, or that `mem retain` reported as
written, must afterwards be somewhere: in a replica's file, a sync conflict copy, or a backup (where
memtool keeps whatever it replaced) — or, for a retained line an editor's stale buffer saved over, reported
and put back by `mem check --restore` (`Memory.restore_retained`). A killed `mem retain` may or may not have written its line;
it must never take another line with it. Runs are bounded (few examples, short histories) so the
suite stays fast; the hostile single-purpose tests live beside this file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

from conftest import mem_env
from hypothesis import HealthCheck, given, settings, strategies as st

from memtool.memory import Memory
from memtool.workspace import Workspace

DAY = date(2026, 11, 30)
DAILY = f"memory/{DAY.isoformat()}.md"
FILES = [DAILY, "bank/world.md", "memory.md"]

ops = st.lists(st.one_of(
    st.tuples(st.just("retain"), st.integers(0, 1)),
    st.tuples(st.just("edit"), st.integers(0, 1), st.integers(0, len(FILES) - 1)),
    st.tuples(st.just("race"), st.integers(0, 1), st.integers(2, 6)),
    st.tuples(st.just("sync"), st.integers(0, 1)),
    st.tuples(st.just("reflect"), st.integers(0, 1)),
    st.tuples(st.just("kill"), st.integers(0, 1), st.sampled_from(["retain", "reflect"]), st.integers(0, 400)),
), min_size=3, max_size=10)


class World:
    def __init__(self, encrypted: bool = False):
        self.root = Path(tempfile.mkdtemp(prefix="mem-interleave-"))
        self.remote = self.root / "remote"
        self.encrypted = encrypted
        self.ws = []
        for i in range(2):
            ws = self.root / f"r{i}"
            (ws / "memory").mkdir(parents=True)
            (ws / "bank" / "entities").mkdir(parents=True)
            if encrypted:  # both replicas name one key file (made once); the first sync makes the remote encrypted
                (ws / "memtool.toml").write_text(f'[sync]\nkey_file = "{self.root / "sync.key"}"\n')
                Memory(Workspace(ws), embedder="none").sync_key_create()
            self.ws.append(ws)
        self.counter = 0
        self.kept: set[str] = set()  # lines that must survive somewhere

    def token(self, who: int) -> str:
        self.counter += 1
        return f"r{who} token{self.counter:03d} lives in Leipzig"

    def memory(self, i: int) -> Memory:
        return Memory(Workspace(self.ws[i]), embedder="none")

    def editor_save(self, i: int, rel: str, pause: float = 0.0) -> None:
        """What an editor does: read the file, add a line, write a temp file, rename it over."""
        path = self.ws[i] / rel
        text = self.token(i)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        time.sleep(pause)  # the person types
        tmp = path.with_name(f".{path.name}.editor-{threading.get_ident()}~")
        tmp.write_text(old + ("" if not old or old.endswith("\n") else "\n") + f"- {text}\n", encoding="utf-8")
        os.replace(tmp, path)
        self.kept.add(text)

    def apply(self, op) -> None:
        kind, i = op[0], op[1]
        if kind == "retain":
            text = self.token(i)
            mem = self.memory(i)
            try:
                mem.retain(f"W @Jonas: {text}", DAY)
            finally:
                mem.close()
            self.kept.add(text)
        elif kind == "edit":
            self.editor_save(i, FILES[op[2]])
        elif kind == "race":  # an editor saving the day's log while retains append to it
            saver = threading.Thread(target=lambda: [self.editor_save(i, DAILY, pause=0.01) for _ in range(op[2])])
            saver.start()
            try:
                for _ in range(op[2]):
                    self.apply(("retain", i))
            finally:
                saver.join()
        elif kind == "sync":
            mem = self.memory(i)
            try:
                report = mem.sync(str(self.remote), encrypt=self.encrypted)
                assert report["encrypted"] is self.encrypted
            except Exception as exc:  # a refusal (e.g. a conflict waits) is fine; losing a line is not
                assert type(exc).__name__ in ("SyncError", "SyncConflict", "UsageError", "RemoteError", "MemError",
                                              "SyncOff", "LockBusy", "WorkspaceError"), repr(exc)
            finally:
                mem.close()
        elif kind == "reflect":
            mem = self.memory(i)
            try:
                mem.reflect(force=True)
            finally:
                mem.close()
        elif kind == "kill":
            cmd, delay_ms = op[2], op[3]
            args = ["retain", "--date", DAY.isoformat(), f"W @Jonas: {self.token(i)}"] if cmd == "retain" else ["reflect", "--force"]
            proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(self.ws[i]), *args],
                                    env=mem_env(MEM_EMBEDDER="none"), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(delay_ms / 1000)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)

    def everything(self) -> str:
        """Every byte of Markdown memtool keeps on either replica: files, conflict copies, backups."""
        texts = []
        for ws in self.ws:
            for path in ws.rglob("*"):
                if path.is_file() and (path.suffix == ".md" or ".md." in path.name or "backups" in path.parts):
                    try:
                        texts.append(path.read_text(encoding="utf-8", errors="replace"))
                    except OSError:
                        pass
        return "\n".join(texts)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_no_line_is_ever_lost(history):
    _check(World(), history)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_1_no_line_is_ever_lost_with_an_encrypted_remote(history):
    world = World(encrypted=True)
    _check(world, history)


def _check(world: World, history) -> None:
    try:
        for op in history:
            world.apply(op)
        for i in (0, 1):  # what mem check reports as vanished (an editor's stale save), --restore puts back
            mem = world.memory(i)
            try:
                mem.restore_retained()
            finally:
                mem.close()
        for i in (0, 1, 0):  # settle: each replica syncs
            world.apply(("sync", i))
        kept = world.everything()
        lost = sorted(line for line in world.kept if line not in kept)
        assert not lost, f"lost {lost} after {history}"
    finally:
        shutil.rmtree(world.root, ignore_errors=True)
