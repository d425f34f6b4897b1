"""Issue 19, one-shot speed: a recall logs the facts it returned by appending one line to
`.memory/access.log` (no database transaction, no `fsync`); whatever reads the `access` table
(reflect's stability, `mem status`, purge) folds the log in first, exactly once per line."""

import os
import subprocess
import sys
import textwrap
import threading

from conftest import run_json, run_mem, write

from memtool.store.local import ACCESS_LOG, ACCESS_FOLDED, LocalState, LocalStateFile


def _days(ws, n=3):
    for d in range(1, n + 1):
        write(ws, f"memory/2024-03-{d:02d}.md", f"# 2024-03-{d:02d}\n\n- Reviewed the ledger for batch {d}.\n")


def test_2_a_recall_appends_to_the_log_without_writing_the_database_and_status_counts_it(empty_ws):
    _days(empty_ws)
    run_mem("-w", empty_ws, "index", check=0)
    local = empty_ws / ".memory" / "local.sqlite"
    LocalStateFile(local).open().close()  # the database exists: a recall must leave it as it is
    before = local.stat()
    for _ in range(3):
        _, doc = run_json("-w", empty_ws, "recall", "ledger")
        assert doc["count"] == 3, doc
    after = local.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert len((empty_ws / ".memory" / ACCESS_LOG).read_text().split()) == 3 * 4  # 3 lines: time and 3 keys
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 9, status
    assert (after.st_size, after.st_mtime_ns) == (local.stat().st_size, local.stat().st_mtime_ns)  # read, not folded


def test_2_appends_during_folds_are_each_counted_once(tmp_path):
    """Writers append while another connection folds again and again: every key lands in `access`
    once, none twice, none lost (the rename and the shared lock)."""
    path = tmp_path / ".memory" / "local.sqlite"
    path.parent.mkdir()
    LocalStateFile(path).open().close()
    writers, lines = 4, 150
    done = threading.Event()

    def write_lines(n):
        log = LocalStateFile(path)
        for i in range(lines):
            log.record_access([f"w{n}k{i}a", f"w{n}k{i}b"], at=1_700_000_000.0 + i)

    def fold():
        state = LocalState(path)
        while not done.is_set():
            state.fold_access_log()
        state.close()

    folder = threading.Thread(target=fold)
    folder.start()
    threads = [threading.Thread(target=write_lines, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    folder.join()
    state = LocalState(path)
    state.fold_access_log()
    keys = [k for (k,) in state.conn.execute("SELECT key FROM access")]
    assert len(keys) == len(set(keys)) == writers * lines * 2
    assert state.accesses_since(0)[0]["w3k7b"] == [1_700_000_007.0]


def test_2_a_fold_interrupted_before_its_file_was_removed_does_not_count_it_twice(tmp_path):
    path = tmp_path / ".memory" / "local.sqlite"
    path.parent.mkdir()
    log = LocalStateFile(path)
    log.record_access(["a", "b"], at=1.0)
    state = log.open()
    kept = tmp_path / "kept"
    os.link(path.with_name(ACCESS_LOG), kept)
    state.fold_access_log()
    assert state.counts()["access"] == 2 and state.meta(ACCESS_FOLDED)
    os.rename(kept, path.with_name(state.meta(ACCESS_FOLDED)))  # as if the fold had stopped after its commit
    state.fold_access_log()
    assert state.counts()["access"] == 2 and not list(path.parent.glob(f"{ACCESS_LOG}.*"))
    log.record_access(["c"], at=2.0)
    os.rename(path.with_name(ACCESS_LOG), path.with_name(f"{ACCESS_LOG}.0123abcd.folding"))  # stopped before its commit
    log.record_access(["d"], at=3.0)  # a new log meanwhile
    assert state.counts()["access"] == 4  # counted without folding (status)
    assert sorted(state.accesses_since(0)[0]) == ["a", "b", "c", "d"]
    assert not list(path.parent.glob(f"{ACCESS_LOG}*"))


def test_2_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / ".memory" / "local.sqlite"
    path.parent.mkdir()
    path.with_name(ACCESS_LOG).write_bytes(b"5.0 x y\nnot-a-time z\n6.0 w")
    assert LocalStateFile(path).open().accesses_since(0)[0] == {"x": [5.0], "y": [5.0]}


def test_2_a_recall_logged_after_a_torn_write_is_counted(tmp_path):
    """A crash left zeros (or half a line) at the log's end: the next recall's line is still read."""
    for n, torn in enumerate((b"\x00\x00\x00", b"\n7.0 half")):
        path = tmp_path / str(n) / ".memory" / "local.sqlite"
        path.parent.mkdir(parents=True)
        path.with_name(ACCESS_LOG).write_bytes(torn)
        log = LocalStateFile(path)
        log.record_access(["k"], at=9.0)
        assert log.open().accesses_since(0)[0]["k"] == [9.0], torn


def test_2_two_processes_folding_at_once_both_succeed_and_count_each_line_once(tmp_path):
    """One process folds while another has just committed its fold and not yet removed its file."""
    path = tmp_path / ".memory" / "local.sqlite"
    path.parent.mkdir()
    LocalStateFile(path).open().close()
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from memtool.store.local import LocalState, LocalStateFile
        path = Path({str(path)!r})
        log = LocalStateFile(path)
        for i in range(200):
            log.record_access([f"{{sys.argv[1]}}-{{i}}"], at=float(i))
            LocalState(path).fold_access_log()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, name], stderr=subprocess.PIPE, text=True)
             for name in ("a", "b", "c")]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    state = LocalState(path)
    state.fold_access_log()
    keys = [k for (k,) in state.conn.execute("SELECT key FROM access")]
    assert len(keys) == len(set(keys)) == 600


def test_2_status_and_a_dry_run_count_logged_recalls_without_writing_anything(empty_ws):
    _days(empty_ws)
    run_mem("-w", empty_ws, "index", check=0)
    run_json("-w", empty_ws, "recall", "ledger")
    state_dir = empty_ws / ".memory"
    before = sorted(p.name for p in state_dir.iterdir())
    assert ACCESS_LOG in before and "local.sqlite" not in before
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 3, status
    assert sorted(p.name for p in state_dir.iterdir()) == before  # nothing created, nothing folded
    run_mem("-w", empty_ws, "reflect", "--dry-run", check=0)
    assert (state_dir / ACCESS_LOG).read_text().count("\n") >= 1
    assert not list(state_dir.glob(f"{ACCESS_LOG}.*"))
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 3, status
    run_mem("-w", empty_ws, "reflect", check=0)  # folds them in
    assert not (state_dir / ACCESS_LOG).exists()
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 3, status
