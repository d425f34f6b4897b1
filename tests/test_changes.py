"""Following file events (`ChangeFeed`, `Memory.follow`): reads stat only what changed, and never go stale silently."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import mem_env

from memtool.changes import ChangeFeed
from memtool.memory import Memory
from memtool.workspace import Workspace


def write(ws, rel, text):
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def save_like_an_editor(path, text):
    """Temp file beside the target, then rename over it (what most editors do)."""
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def until(check, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


def hits(mem, word):
    return [r["source"] for r in mem.recall(word, mode="lexical").results]


def test_feed_names_markdown_changes_and_ignores_state(tmp_path):
    write(tmp_path, "memory/2025-01-01.md", "- one\n")
    feed = ChangeFeed(tmp_path)
    try:
        assert feed.take() is None, "the first take asks for a full check"
        write(tmp_path, "memory/2025-01-01.md", "- one\n- two\n")
        write(tmp_path, ".memory/index.sqlite-wal", "x")
        write(tmp_path, "memory.md", "# core\n")
        seen = set()
        until(lambda: seen.update(feed.take() or set()) or {"memory/2025-01-01.md", "memory.md"} <= seen)
        assert not any(p.startswith(".memory") for p in seen)
        (tmp_path / "bank" / "people").mkdir(parents=True)  # a folder can stand for many files
        until(lambda: feed.wait(0.1) and feed.take() is None)
    finally:
        feed.close()


def test_a_barrier_collects_every_earlier_save(tmp_path):
    write(tmp_path, "memory/2025-01-01.md", "- one\n")
    feed = ChangeFeed(tmp_path)
    try:
        assert feed.take() is None
        for i in range(20):
            save_like_an_editor(tmp_path / "memory" / f"2025-02-{i + 1:02d}.md", f"- note {i}\n")
            assert feed.barrier(5.0), "the marker's event came"
            assert feed.take() == {f"memory/2025-02-{i + 1:02d}.md"}, "the save before it is already collected"
        assert not list((tmp_path / ".memory" / "barriers").iterdir()), "markers are removed"
    finally:
        feed.close()
    dead = ChangeFeed(tmp_path / "missing")
    until(lambda: dead.problem)
    assert dead.barrier() is False  # no events: the caller checks every file instead
    dead.close()


def test_a_feed_that_cannot_watch_says_why_and_asks_for_full_checks(tmp_path):
    feed = ChangeFeed(tmp_path / "missing")
    try:
        until(lambda: feed.problem)
        assert not feed.active
        assert feed.take() is None and feed.take() is None
    finally:
        feed.close()


def test_following_reads_see_editor_saves_and_match_a_rebuild(tmp_path):
    ws = tmp_path / "w"
    for d in range(1, 30):
        write(ws, f"memory/2025-01-{d:02d}.md", f"# 2025-01-{d:02d}\n\n- Eintrag {d} Fischotter\n")
    mem = Memory(Workspace(ws), embedder="none", track_access=False)
    assert mem.follow() is None
    try:
        assert len(hits(mem, "Fischotter")) == 10
        day = ws / "memory" / "2025-01-05.md"
        save_like_an_editor(day, "# 2025-01-05\n\n- Eintrag 5 Fischotter\n- Seeadler gesichtet\n")
        assert until(lambda: hits(mem, "Seeadler")) == ["memory/2025-01-05.md#L4"]
        for i in range(15):  # many quick saves
            save_like_an_editor(day, f"# 2025-01-05\n\n- Kranich {i}\n")
        (ws / "memory" / "2025-01-06.md").unlink()
        write(ws, "bank/otter.md", "# Otter\n\n- Der Fischotter jagt nachts.\n")
        until(lambda: hits(mem, "Kranich") == ["memory/2025-01-05.md#L3"] and "bank/otter.md#L3" in hits(mem, "jagt"))
        time.sleep(0.3)  # let the last events arrive, then compare with a full rebuild
        hits(mem, "Kranich")
        followed = mem.store.dump()
        assert "Kranich 14" in str(followed["facts"]) and "Kranich 13" not in str(followed["facts"])
        mem.index(rebuild=True)
        assert mem.store.dump() == followed
        # a retain from this process is visible at once, without waiting for its event
        mem.retain("W @Otter: Otter tauchen bis zu acht Minuten.")
        assert hits(mem, "tauchen")
    finally:
        mem.close()


def test_a_dead_feed_is_reported_and_reads_check_every_file(tmp_path):
    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- Fischotter\n")
    mem = Memory(Workspace(ws), embedder="none", track_access=False)
    try:
        mem.follow(ChangeFeed(tmp_path / "gone"))  # a real watcher that fails to start
        until(lambda: mem.follow())  # its problem, once it knows it
        first = mem.recall("Fischotter", mode="lexical")
        assert any("file events stopped" in w and "every read checks every file" in w for w in first.warnings)
        write(ws, "memory/2025-01-02.md", "- Seeadler\n")
        second = mem.recall("Seeadler", mode="lexical")
        assert [r["source"] for r in second.results] == ["memory/2025-01-02.md#L1"]
        assert sum("file events" in w for w in second.warnings) == 1, "still said, once per answer"
    finally:
        mem.close()


@pytest.mark.parametrize("flags", [[], ["--poll"]])
def test_mem_watch_follows_events_or_polls(tmp_path, flags):
    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- first\n")
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", "0.3", *flags],
                            env=mem_env(), stderr=subprocess.PIPE, text=True)
    try:
        until(lambda: (ws / ".memory" / "index.sqlite").exists(), 30)
        save_like_an_editor(ws / "memory" / "2025-01-02.md", "- Walross im Zoo\n")
        from memtool.store import Store

        def indexed():
            store = Store.open(ws / ".memory" / "index.sqlite")
            try:
                return "memory/2025-01-02.md" in store.file_states()
            finally:
                store.close()
        until(indexed, 30)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped" in err
    assert ("checking every file every 0.3s (--poll was given)" in err) == bool(flags)
    assert ("for changes" in err) != bool(flags)


def test_mcp_server_sees_files_written_by_others(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- Fischotter am Fluss\n")

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"],
                                       env=mem_env(MEM_EMBEDDER="none"))
        async with stdio_client(params) as (read, write_):
            async with ClientSession(read, write_) as s:
                await s.initialize()
                first = await s.call_tool("recall", {"query": "Fischotter"})
                save_like_an_editor(ws / "memory" / "2025-01-02.md", "- Seeadler über dem Watt\n")
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    later = await s.call_tool("recall", {"query": "Seeadler"})
                    if json.loads(later.content[0].text)["count"]:
                        return first, later
                    await asyncio.sleep(0.05)
                return first, later

    first, later = asyncio.run(main())
    assert json.loads(first.content[0].text)["count"] == 1
    assert [r["source"] for r in json.loads(later.content[0].text)["results"]] == ["memory/2025-01-02.md#L1"]


@pytest.mark.parametrize("by_stat_max", [0, 10**9])
def test_settle_makes_a_save_just_before_visible(tmp_path, by_stat_max):
    """What the read server does before answering: by waiting for the events (large workspaces)
    or by a stat of every file (small ones)."""
    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- Fischotter\n")
    mem = Memory(Workspace(ws), embedder="none", track_access=False)
    assert mem.follow() is None
    try:
        hits(mem, "Fischotter")
        for i in range(10):
            save_like_an_editor(ws / "memory" / f"2025-03-{i + 1:02d}.md", f"- Kormoran{i} am Deich\n")
            mem.settle(stat_up_to=by_stat_max)
            assert hits(mem, f"Kormoran{i}") == [f"memory/2025-03-{i + 1:02d}.md#L1"]
    finally:
        mem.close()
