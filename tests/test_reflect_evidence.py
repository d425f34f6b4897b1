"""Opinion evidence windows kept between runs (memtool.reflect.evidence, issue 19 item 5): after each
change, a run that brings the kept windows up to date writes what a run from scratch writes, and
every kept window equals the one read afresh from the index. Windows of 4 facts, so that facts
leave them and older ones would come back."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import mem_env, write
from test_reflect_incremental import (PEOPLE, change_both, comparable, damage_local, drop_record, evidence_ws, markdown,
                                      pages, reflect, twins)

from memtool.memory import Memory
from memtool.reflect import cache, evidence, runner
from memtool.store.local import REFLECT_EVIDENCE
from memtool.workspace import Workspace

K = 4


@pytest.fixture
def spied(monkeypatch):
    """Windows of `K` facts; `spied` lists, per run, the entities whose evidence came from kept windows."""
    monkeypatch.setattr(runner, "MAX_K", K)
    monkeypatch.setattr(cache, "MAX_K", K)
    calls: list[set[str]] = []
    weighable = evidence.Windows.weighable

    def spy(self, keys, held, k):
        out = weighable(self, keys, held, k)
        calls.append(set(out))
        return out

    monkeypatch.setattr(evidence.Windows, "weighable", spy)
    return calls


def from_scratch(ws: Path) -> None:
    """What a run without the record and the evidence windows starts from."""
    drop_record(ws)
    damage_local(ws, "DROP TABLE IF EXISTS reflect_evidence")


def windows_are_the_index(ws: Path, k: int = K) -> int:
    """Each kept window equals the one read afresh; returns how many are kept (tied to the record)."""
    mem = Memory(Workspace(ws), embedder="none")
    try:
        src = type("Src", (), {"local": mem.local, "store": mem.store})()
        record = json.loads(mem.local.meta(cache.KEY) or "null")
        assert record is None or mem.local.meta(REFLECT_EVIDENCE) == evidence.tag(record["weighed"])
        kept = evidence.read(src, list(mem.local.evidence_keys()))
        for name, (keys, complete, facts) in kept.items():
            assert sorted(keys) == sorted(mem.store.entity_keys(name)), name
            assert (complete, facts) == evidence.window(mem.store.evidence_rows({name: keys}, k), k), name
        return len(kept)
    finally:
        mem.close()


def agree(a: Path, b: Path, spied: list[set[str]], what: str = "") -> tuple[dict, set[str]]:
    """Reflect in `a` with its record and windows and in `b` from scratch: the same output; returns
    `a`'s output and the entities whose evidence came from kept windows."""
    from_scratch(b)
    spied.clear()
    got = reflect(a)
    brought = set().union(*spied)
    full = reflect(b)
    assert comparable(got) == comparable(full) and markdown(a) == markdown(b), what
    assert windows_are_the_index(a) > 0, what  # those weighed (after windows not usable, no others)
    return got, brought


def spread(a: Path, b: Path, day: int) -> None:
    change_both(a, b, f"memory/2026-11-{day:02d}.md", f"# 2026-11-{day:02d}\n\n## Retain\n" + "".join(
        f"- @{p} took the ferry to harbour {i} again, the best way to travel.\n"
        if (i + day) % 2 else f"- @{p}: the ferry to harbour {i} is not the best way to travel.\n"
        for i, p in enumerate(PEOPLE) if (i + day) % 3))


def test_reflect15_kept_evidence_windows_through_edits_deletions_renames_rebuilds_and_forgetting(
        tmp_path, example_ws, spied):
    evidence_ws(example_ws)
    a, b = twins(tmp_path, example_ws)
    assert windows_are_the_index(a) >= len(PEOPLE)

    def edit(ws: Path) -> None:  # a hand edit of a daily log line that was evidence (its verdict flips)
        log = ws / "memory/2026-10-02.md"
        old = "- @Ben took the ferry to harbour 1 again, the best way to travel.\n"
        assert old in log.read_text(encoding="utf-8")
        log.write_text(log.read_text(encoding="utf-8").replace(old, "- @Ben: the ferry to harbour 1 is not the best way"
                                                                     " to travel.\n"), encoding="utf-8")

    def newest_deleted(ws: Path) -> None:  # the windows' newest facts leave: older ones come back
        (ws / "memory/2026-11-10.md").unlink()

    def renamed(ws: Path) -> None:
        (ws / "memory/2026-11-11.md").rename(ws / "memory/2026-11-21.md")

    def rebuilt(ws: Path) -> None:
        mem = Memory(Workspace(ws), embedder="none")
        try:
            mem.index(rebuild=True)
        finally:
            mem.close()

    def forgotten(ws: Path) -> None:
        mem = Memory(Workspace(ws), embedder="none")
        try:
            assert mem.forget("for lunch on day 3", confirm=True)["forgotten"]
        finally:
            mem.close()
        conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
        try:
            assert conn.execute("SELECT v FROM meta WHERE k = ?", (REFLECT_EVIDENCE,)).fetchone() is None
            assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'reflect_evidence'").fetchall()
        finally:
            conn.close()

    def older(ws: Path) -> None:  # windows of another format: read afresh
        damage_local(ws, f"UPDATE meta SET v = replace(v, '\"format\": {evidence.FORMAT}', '\"format\": 0')"
                         f" WHERE k = '{REFLECT_EVIDENCE}'")

    spread(a, b, 10)
    spread(a, b, 11)
    got, brought = agree(a, b, spied)
    assert got["reused"]["evidence_verdicts"] > 0 and brought  # the windows were brought up to date
    rounds = [("a hand edit", edit, True), ("the newest file deleted", newest_deleted, True),
              ("a renamed file", renamed, True), ("mem index --rebuild", rebuilt, True),
              ("mem forget", forgotten, False), ("an older version's windows", older, False)]
    for n, (what, change, kept) in enumerate(rounds):
        for ws in (a, b):
            change(ws)
        spread(a, b, 12 + n)
        assert bool(agree(a, b, spied, what)[1]) == kept, what


def test_reflect15_damaged_evidence_windows_are_read_afresh_with_the_same_pages(tmp_path, example_ws, spied):
    evidence_ws(example_ws)
    a, b = twins(tmp_path, example_ws)
    damages = [
        "UPDATE reflect_evidence SET facts = '{' WHERE entity = 'Ana'",
        "UPDATE reflect_evidence SET facts = '{\"complete\": true, \"paths\": [], \"facts\": [[1]]}'"
        " WHERE entity = 'Ben'",
        "UPDATE reflect_evidence SET keys = '[\"someone-else\"]' WHERE entity = 'Cleo'",
        "UPDATE reflect_evidence SET keys = 'x' WHERE entity = 'Dov'",
        "DELETE FROM reflect_evidence WHERE entity = 'Eda'",
        f"UPDATE meta SET v = 'x' WHERE k = '{REFLECT_EVIDENCE}'",
        "DROP TABLE reflect_evidence",
    ]
    for n, damage in enumerate(damages):
        spread(a, b, 10 + n)
        damage_local(a, damage)
        agree(a, b, spied)


def test_reflect15_a_window_that_lost_facts_it_needs_reads_them_afresh(tmp_path, example_ws, spied):
    """A full window whose facts in a changed file left it cannot know the older facts that now
    belong in it: that entity is read from the index (the others keep theirs)."""
    evidence_ws(example_ws)
    a, b = twins(tmp_path, example_ws)
    spread(a, b, 10)
    agree(a, b, spied)
    for ws in (a, b):  # Ana's newest facts go; a new fact of Ben's arrives
        path = ws / "memory/2026-11-10.md"
        path.write_text("".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                                if "@Ana" not in line), encoding="utf-8")
    change_both(a, b, "memory/2026-11-11.md", "# 2026-11-11\n\n- @Ben took the ferry to harbour 1 again.\n")
    brought = agree(a, b, spied)[1]
    assert "Ana" not in brought and "Ben" in brought


def test_reflect15_a_run_killed_anywhere_leaves_windows_that_give_what_a_run_from_scratch_gives(
        tmp_path, example_ws):
    evidence_ws(example_ws)
    for i in range(28):  # enough entities that a run takes a moment
        write(example_ws, f"memory/2026-08-{1 + i % 28:02d}.md",
              "".join(f"- @Person{i}-{j} met @Person{i}-{(j + 1) % 3} about project {j}.\n" for j in range(3)))
    a, b = twins(tmp_path, example_ws)
    for n, delay in enumerate((0.3, 0.6, 0.9, 1.2, 1.5)):
        spread(a, b, 10 + n)
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=a, env=mem_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    from_scratch(b)
    reflect(a), reflect(b)
    assert pages(a) == pages(b)  # the journals differ: the killed runs may have written entries
    windows_are_the_index(a, runner.MAX_K)
    spread(a, b, 20)
    from_scratch(b)
    got, full = reflect(a), reflect(b)
    assert comparable(got) == comparable(full) and pages(a) == pages(b)
    assert windows_are_the_index(a, runner.MAX_K) >= len(PEOPLE)


def test_reflect15_a_runs_objects_are_freed_before_the_collector_comes_back(example_ws):
    """The collector's first collection after a run walked every object the run still held (its
    facts, threads and plans: 0.3 s at 10⁵ facts); they are freed first."""
    import gc

    from memtool.reflect.opinions import Opinion

    evidence_ws(example_ws)
    alive: list[bool] = []

    def first(phase, info):
        if phase == "start" and not alive:
            alive.append(any(isinstance(o, Opinion) for o in gc.get_objects()))

    mem = Memory(Workspace(example_ws), embedder="none")
    mem.index()
    gc.collect()
    gc.callbacks.append(first)
    try:
        assert mem.reflect(force=True)["opinion_moves"] is not None
        for _ in range(10_000):  # allocations enough for a collection, if the run did not leave one due
            [None]
        gc.collect()
    finally:
        gc.callbacks.remove(first)
        mem.close()
    assert alive == [False]


def test_reflect15_an_entity_that_lost_its_opinion_threads_keeps_no_window(tmp_path, example_ws, spied):
    """Ben's opinion goes (the line deleted by hand): a run from scratch keeps no evidence window for
    him, and neither does a run with kept windows (it kept his old one, naming places that moved)."""
    evidence_ws(example_ws)
    a, b = twins(tmp_path, example_ws)
    spread(a, b, 10)
    agree(a, b, spied)
    for ws in (a, b):
        path = ws / "memory/2026-10-01.md"
        path.write_text("".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                                if not line.startswith("- O(c=0.7) @Ben:")), encoding="utf-8")
    agree(a, b, spied)
    change_both(a, b, "memory/2026-11-11.md", "# 2026-11-11\n\n- @Ben took the ferry to harbour 1 again.\n")
    agree(a, b, spied)
    mem = Memory(Workspace(a), embedder="none")
    try:
        assert "Ben" not in mem.local.evidence_keys() and "Ana" in mem.local.evidence_keys()
    finally:
        mem.close()
