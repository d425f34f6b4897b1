"""The derived index: incremental equals rebuild, only changed files are read, edits are seen."""

import os
import shutil
import signal
import subprocess
import sys
import time

from conftest import edit, mem_env, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtool.memory import Memory
from memtool.store import SCHEMA_VERSION
from memtool.workspace import Workspace


def open_mem(path):
    return Memory(Workspace(path))


def test_incremental_equals_rebuild_after_edits(example_ws):
    mem = open_mem(example_ws)
    mem.index()
    # edit, add, delete, rename, make unreadable
    p = example_ws / "memory" / "2026-11-27.md"
    p.write_text(p.read_text(encoding="utf-8") + "- W @Peter: Back in Lisbon next week.\n", encoding="utf-8")
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n\n## Retain\n- B @memtool: Wrote the index tests.\n")
    (example_ws / "memory" / "2026-10-01.md").unlink()
    os.rename(example_ws / "bank" / "world.md", example_ws / "bank" / "welt.md")
    write(example_ws, "bank/entities/Peter.md", "---\naliases: [Pete, Petey]\n---\n# Peter\nNew alias.\n")
    write(example_ws, "memory/2026-11-29.md", b"\xff\xfe broken")
    incremental = mem.index()
    assert incremental.parsed == 4 and incremental.removed == 2 and incremental.unreadable == 1
    before = mem.store.dump()
    rebuilt = mem.index(rebuild=True)
    assert rebuilt.rebuilt
    assert mem.store.dump() == before


def test_unchanged_files_are_not_reread(example_ws):
    mem = open_mem(example_ws)
    first = mem.index()
    assert first.parsed == first.files_seen > 40
    again = mem.index()
    assert (again.parsed, again.touched, again.removed) == (0, 0, 0)
    # touching a file (new mtime, same bytes) costs a hash, not a parse
    p = example_ws / "memory.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 5_000_000_000))
    touched = mem.index()
    assert (touched.parsed, touched.touched) == (0, 1)


def test_recall_sees_hand_edits_and_deletions_without_manual_index(example_ws):
    mem = open_mem(example_ws)
    assert not mem.recall("Quokka").results
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n- Saw a quokka at the zoo.\n")
    hits = mem.recall("Quokka").results
    assert [h["source"] for h in hits] == ["memory/2026-11-30.md#L2"]
    (example_ws / "memory" / "2026-11-30.md").unlink()
    assert not mem.recall("Quokka").results


def test_corrupt_index_is_set_aside_rebuilt_and_reported(example_ws):
    mem = open_mem(example_ws)
    mem.index()
    mem.close()
    index = example_ws / ".memory" / "index.sqlite"
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(index) + suffix):
            os.unlink(str(index) + suffix)
    index.write_bytes(b"this is not a database" * 100)
    result = open_mem(example_ws).recall("Peter")
    assert result.results, "recall still answers"
    assert any("moved it to index.sqlite.corrupt-" in w for w in result.warnings), result.warnings
    assert list((example_ws / ".memory").glob("index.sqlite.corrupt-*"))


def test_workspace_copy_indexes_identically(example_ws, tmp_path):
    a = open_mem(example_ws)
    a.index()
    other = tmp_path / "copy"
    shutil.copytree(example_ws, other, ignore=shutil.ignore_patterns(".memory"))
    b = open_mem(other)
    b.index()
    da, db = a.store.dump(), b.store.dump()
    strip = lambda rows: [r[:3] + r[5:-1] for r in rows]  # mtimes and ctimes (the last column) differ between copies
    assert strip(da.pop("files")) == strip(db.pop("files"))
    assert da == db


def test_large_first_build_uses_workers_and_bulk_fts(tmp_path):
    ws = tmp_path / "many"
    for i in range(120):
        write(ws, f"memory/2025-{1 + i // 28:02d}-{1 + i % 28:02d}.md", f"# day {i}\n- note {i} about Zaunkönig{i % 7}\n")
    mem = open_mem(ws)
    report = mem.index()
    assert report.parsed == 120 and mem.store.meta("fts_pending") is None
    assert len(mem.recall("Zaunkönig3", k=100).results) == 17
    dump = mem.store.dump()
    for i in range(3):  # incremental edits after a bulk build stay consistent with a rebuild
        write(ws, f"memory/2025-01-0{i + 1}.md", f"# edited {i}\n- changed Zaunkönig3 text {i}\n")
    mem.index()
    assert dump != mem.store.dump()
    after = mem.store.dump()
    mem.index(rebuild=True)
    assert mem.store.dump() == after


def test_interrupted_bulk_build_is_finished_by_the_next_read(tmp_path):
    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- Pelikan am See\n")
    mem = open_mem(ws)
    from memtool.document import parse
    from memtool.indexer import fact_rows

    parsed = parse("memory/2025-01-01.md", "- Pelikan am See\n")
    st = (ws / "memory/2025-01-01.md").stat()
    with mem.store.transaction():  # what a bulk run leaves behind when killed before its FTS build
        mem.store.begin_bulk()
        mem.store.put_file(parsed, st.st_size, st.st_mtime_ns, st.st_ctime_ns, "x", "ok", fact_rows(parsed), fts=False)
    assert [r["source"] for r in mem.recall("Pelikan").results] == ["memory/2025-01-01.md#L1"]
    assert mem.store.meta("fts_pending") is None
    assert mem.store.dump()["fact_days"] == [("memory/2025-01-01.md", "2025-01-01", "log", 1)]  # counted at the end


def test_a_bulk_build_killed_midway_is_repaired_by_the_next_run(tmp_path):
    """kill -9 of `mem index --rebuild` (and its workers) after its first committed batch: the next
    `mem index` finishes what it left (full-text rows, term and day counts, the files not read yet)
    into the index a rebuild makes."""
    import sqlite3

    ws = tmp_path / "w"
    for i in range(1500):
        lines = [f"# day {i}", "", "## Notes", ""]
        lines += [f"- note {i}.{j} about Zaunkönig{(i + j) % 11} with @Peter on 2025-01-{1 + j:02d}" for j in range(25)]
        write(ws, f"memory/{2001 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}.md", "\n".join(lines) + "\n")
    index = ws / ".memory" / "index.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "index", "--rebuild"],
                            env=mem_env(MEM_EMBEDDER="none"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    pending = None
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                with sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=1) as conn:
                    if conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]:
                        pending = conn.execute("SELECT value FROM meta WHERE key = 'fts_pending'").fetchone()
                        break
            except sqlite3.Error:
                pass  # not made yet
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert pending == ("1",), "the build was not caught midway"
    mem = open_mem(ws)
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        assert 0 < conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] < 1500
    report = mem.index()
    assert report.parsed > 0 and mem.store.meta("fts_pending") is None
    repaired = mem.store.dump()
    assert len(repaired["files"]) == 1500 and len(mem.recall("Zaunkönig3", k=10).results) == 10
    mem.index(rebuild=True)
    assert mem.store.dump() == repaired


LINES = st.sampled_from([
    "- W @Peter: moved to Lisbon", "- note about Häuser", "## Retain", "# title", "", "plain paragraph text",
    "- O(c=0.4) @Anna: likes tea", "- X: broken bullet", "```", "| a | b |", "- [[Wiki Link]] here",
    "---", "aliases: [Pete]", "  - nested item", "- **Caroline**: hello there",
])
OPS = st.lists(st.tuples(st.sampled_from(["write", "append", "delete", "touch"]),
                         st.sampled_from(["memory/2025-01-01.md", "memory/2025-01-02.md", "bank/entities/Pete.md",
                                          "memory.md", "bank/world.md"]),
                         st.lists(LINES, max_size=6)),
               min_size=1, max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_random_edit_histories_index_like_a_rebuild(tmp_path_factory, ops):
    ws = tmp_path_factory.mktemp("hist")
    mem = open_mem(ws)
    for op, rel, lines in ops:
        edit(ws, op, rel, "\n".join(lines) + "\n")
        mem.index()
        assert mem.store._fact_count() == mem.store.conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
    incremental = mem.store.dump()
    mem.index(rebuild=True)
    assert mem.store.dump() == incremental


def test_watch_indexes_changes_without_a_read(tmp_path):
    ws = tmp_path / "w"
    write(ws, "memory/2025-01-01.md", "- first\n")
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", "0.2"],
                            env=mem_env(), stderr=subprocess.PIPE, text=True)
    try:
        write(ws, "memory/2025-01-02.md", "- Walross im Zoo\n")
        mem = open_mem(ws)
        deadline = time.time() + 30
        while time.time() < deadline:
            if (ws / ".memory" / "index.sqlite").exists() and "memory/2025-01-02.md" in mem.store.file_states():
                break
            time.sleep(0.2)
        else:
            raise AssertionError("mem watch did not index the new file")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "watching" in err and "stopped" in err


def test_processes_creating_the_index_at_once_do_not_collide(tmp_path):
    ws = tmp_path / "race"
    write(ws, "memory/2025-01-01.md", "- Seeadler am Strand\n")
    procs = [subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "recall", "Seeadler", "--json"],
                              env=mem_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [e for _, e in outs]
    assert all('"count": 1' in o for o, _ in outs)
    assert not list((ws / ".memory").glob("index.sqlite.corrupt-*")), "no process mistook a busy index for a corrupt one"


# --- issue 20: the web view's aggregates are kept at index time ---------------------------------

RECOUNT = ("SELECT substr(COALESCE(fi.date, f.date, f.valid_from), 1, 10) AS day, f.kind, COUNT(*) FROM facts f"
           " JOIN files fi ON fi.path = f.path WHERE day IS NOT NULL AND length(day) = 10 GROUP BY day, f.kind ORDER BY day")


def test_20_facts_per_day_and_kind_are_kept_through_edits_and_equal_a_rebuild(example_ws):
    mem = open_mem(example_ws)
    mem.index()
    first = mem.store.day_kind_counts()
    assert first == mem.store.conn.execute(RECOUNT).fetchall()
    p = example_ws / "memory" / "2026-11-27.md"
    p.write_text(p.read_text(encoding="utf-8") + "- W @Peter: Back in Lisbon next week.\n- O(c=0.4) @Peter: Lisbon suits him.\n",
                 encoding="utf-8")
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n\n## Retain\n- B @memtool: Wrote the index tests.\n")
    (example_ws / "memory" / "2026-10-01.md").unlink()
    mem.index()
    counted = mem.store.day_kind_counts()
    assert counted == mem.store.conn.execute(RECOUNT).fetchall()
    assert ("2026-11-30", "experience", 1) in counted and ("2026-11-30", "experience", 1) not in first
    assert [r for r in counted if r[0] == "2026-10-01"] != [r for r in first if r[0] == "2026-10-01"]
    kinds = mem.store.conn.execute("SELECT kind, COUNT(*) FROM facts GROUP BY kind ORDER BY kind").fetchall()
    assert mem.store.stats()["facts_by_kind"] == dict(kinds)
    before = mem.store.dump()
    assert before["fact_days"]
    mem.index(rebuild=True)
    assert mem.store.dump() == before


def test_20_an_index_from_before_fact_days_gets_them_filled_by_the_migration(example_ws):
    mem = open_mem(example_ws)
    mem.index()
    expected = mem.store.day_kind_counts()
    conn = mem.store.conn
    conn.execute("DROP TABLE fact_days")  # what schema 5 had: no such table
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    mem.close()
    again = open_mem(example_ws)
    assert again.store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert again.store.day_kind_counts() == expected and expected
    assert again.index().parsed == 0  # nothing re-read: the counts came from the facts indexed


def test_build_1_a_worker_sends_rows_and_links_not_records(tmp_path):
    """What a parse worker hands the parent is the stored rows and entity/tag pairs, not the parsed
    records (unpickling them was a third of the parent's work in a full build at 10^5 facts), and
    a full build from those equals the index made file by file."""
    import pickle

    from memtool.document import parse
    from memtool.indexer import fact_rows, load
    from memtool.workspace import FileStat

    text = "# Day\n\n- Met @Anna-Lena and [[Bob Smith]] about #Garten #tax\n- plain line\n"
    write(tmp_path, "memory/2025-01-01.md", text)
    st_ = (tmp_path / "memory/2025-01-01.md").stat()
    item = load(str(tmp_path), FileStat("memory/2025-01-01.md", st_.st_size, st_.st_mtime_ns, st_.st_ctime_ns), 10**6)
    assert item.parsed.records == [] and len(item.rows) == 2
    assert item.links == ([(0, "anna-lena"), (0, "bob-smith")], [(0, "garten"), (0, "tax")])
    full = parse("memory/2025-01-01.md", text)
    assert len(pickle.dumps(item)) < len(pickle.dumps((full, fact_rows(full))))


def test_fact_heads_are_remembered_only_while_the_index_is_unchanged(tmp_path):
    """`Store.fact_heads` keeps what it read until the index changes (a hybrid recall asks for the
    same candidates' heads up to three times): a file indexed again by another process, or by this
    one, is read anew, never answered from the heads of before."""
    write(tmp_path, "memory/2026-01-01.md", "- the first line\n- the second line\n")
    mem = Memory(Workspace(tmp_path), embedder="none")
    mem.index()
    store = mem.store
    ids = [i for (i,) in store.conn.execute("SELECT id FROM facts ORDER BY id")]
    heads = store.fact_heads(ids[::-1])
    assert list(heads) == ids and [h["content"] for h in heads.values()] == ["the first line", "the second line"]
    assert store.fact_heads(ids[:1]) == {ids[0]: heads[ids[0]]}

    write(tmp_path, "memory/2026-01-01.md", "- the first line, changed\n- the second line, changed\n")
    other = Memory(Workspace(tmp_path), embedder="none")
    other.index()  # another connection writes
    other.close()
    now = [i for (i,) in store.conn.execute("SELECT id FROM facts ORDER BY id")]
    assert [h["content"] for h in store.fact_heads(now).values()] == ["the first line, changed", "the second line, changed"]
    assert set(store.fact_heads(ids)) == set(ids) & set(now)

    write(tmp_path, "memory/2026-01-01.md", "- only this line\n")
    mem.index()  # this connection writes
    latest = [i for (i,) in store.conn.execute("SELECT id FROM facts ORDER BY id")]
    assert [h["content"] for h in store.fact_heads(latest + now).values()] == ["only this line"]
    mem.close()


def test_fact_heads_forget_what_a_rolled_back_transaction_wrote_and_stay_bounded(tmp_path, monkeypatch):
    """Review of hyb11: the data version does not go back on a rollback, so heads read inside a
    transaction that was rolled back were answered after it; and one call could keep any number of
    heads past HEADS_KEPT."""
    import pytest

    from memtool.store import index as store_index

    write(tmp_path, "memory/2026-01-01.md", "- the first line\n- the second line\n- the third line\n")
    mem = Memory(Workspace(tmp_path), embedder="none")
    mem.index()
    store = mem.store
    ids = [i for (i,) in store.conn.execute("SELECT id FROM facts ORDER BY id")]
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.conn.execute("UPDATE facts SET content = 'UNCOMMITTED' WHERE id = ?", (ids[0],))
            assert store.fact_heads(ids[:1])[ids[0]]["content"] == "UNCOMMITTED"
            raise RuntimeError("rolled back")
    assert store.fact_heads(ids[:1])[ids[0]]["content"] == "the first line"

    monkeypatch.setattr(store_index, "HEADS_KEPT", 2)
    assert len(store.fact_heads(ids)) == 3  # every head asked for comes back …
    assert len(store._heads[1]) <= 2  # … and no more than HEADS_KEPT stay
    assert len(store.fact_heads(ids[:2])) == 2 and len(store._heads[1]) <= 2
    mem.close()


def _page(aliases: str, facts: list[str], generated: str) -> str:
    from memtool import blocks

    return (f"---\naliases: [{aliases}]\n---\n# Peter\n\n" + "".join(f"- {f}\n" for f in facts) + "\n"
            + blocks.render("entity", generated))


def test_reflect10_a_file_whose_facts_did_not_change_keeps_its_rows_and_equals_a_rebuild(tmp_path):
    """A page rewritten inside its generated block (never indexed), or with only its aliases changed,
    keeps its fact rows and their ids; its file and alias rows follow the new text; the index equals
    a rebuild after each step. A changed fact replaces the file's rows as before."""
    ws = tmp_path / "w"
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n- W @Peter: moved to Lisbon.\n")
    write(ws, "bank/entities/Peter.md", _page("Pete", ["W: Lives in Lisbon.", "B: Met him in Porto."], "*One.*\n"))
    mem = open_mem(ws)
    mem.index()

    def page_ids():
        sql = "SELECT id FROM facts WHERE path = 'bank/entities/Peter.md' ORDER BY ord"
        return mem.store.conn.execute(sql).fetchall()

    def rebuilt_equals(before):
        mem.index(rebuild=True)
        return mem.store.dump() == before

    ids = page_ids()
    write(ws, "bank/entities/Peter.md", _page("Pete, Petey", ["W: Lives in Lisbon.", "B: Met him in Porto."],
                                              "*Two: from 3 facts.*\n\n**Facts**\n- more\n"))
    assert mem.index().parsed == 1
    assert page_ids() == ids
    assert mem.store.entity_page("Petey")["path"] == "bank/entities/Peter.md"
    assert [r["source"] for r in mem.recall("Porto").results] == ["bank/entities/Peter.md#L7"]
    assert rebuilt_equals(mem.store.dump())

    ids = page_ids()
    write(ws, "bank/entities/Peter.md",
          _page("Pete, Petey", ["W: Lives in Lisbon.", "B: Met him in Braga."], "*Two.*\n"))
    mem.index()
    assert page_ids() != ids
    assert not mem.recall("Porto").results
    assert [r["source"] for r in mem.recall("Braga").results] == ["bank/entities/Peter.md#L7"]
    assert rebuilt_equals(mem.store.dump())


def _same_size_edit_keeping_mtime(path, old: str, new: str) -> None:
    """An editor, `touch -r`, rsync -t or a checkout: same size, the mtime put back."""
    assert len(old) == len(new)
    before = path.stat()
    time.sleep(0.01)  # a ctime tick apart on any file system
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_edit_that_restores_the_mtime_is_seen_by_the_next_read(example_ws):
    """The index compared size and mtime only: an edit keeping both stayed unseen, by every read and
    by `mem index`, until something else touched the file. The ctime changes on every write."""
    from conftest import run_json

    run_json("index", cwd=example_ws)
    p = example_ws / "memory" / "2026-11-27.md"
    _same_size_edit_keeping_mtime(p, "handcart", "wheelbox")
    _, data = run_json("recall", "wheelbox", "--mode", "lexical", cwd=example_ws)  # the one-shot path
    assert [r["source"].split("#")[0] for r in data["results"]] == ["memory/2026-11-27.md"], data
    mem = open_mem(example_ws)
    assert mem.index().parsed == 0  # in step already
    _same_size_edit_keeping_mtime(p, "wheelbox", "handcart")  # and back, seen by a long-running Memory too
    assert not mem.recall("wheelbox", mode="lexical").results
    assert mem.recall("handcart", mode="lexical").results
