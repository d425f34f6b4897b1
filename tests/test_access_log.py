"""Issue 19, one-shot speed: a recall logs the facts it returned by appending one line to
`.memory/access.log` (no database transaction, no `fsync`); whatever reads the `access` table
(reflect's stability, `mem status`, purge) folds the log in first, exactly once per line."""

import os
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
    assert len((empty_ws / ".memory" / ACCESS_LOG).read_text().splitlines()) == 3
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 9, status
    assert not (empty_ws / ".memory" / ACCESS_LOG).exists()  # folded in
    _, status = run_json("-w", empty_ws, "status")
    assert status["memory"]["consolidation"]["recalls_logged"] == 9, status


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
    folding = path.with_name(ACCESS_LOG + ".folding")
    os.link(path.with_name(ACCESS_LOG), folding)  # as if the last fold had stopped after its commit
    state.fold_access_log()
    assert state.counts()["access"] == 2 and not folding.exists()
    assert state.meta(ACCESS_FOLDED)
    log.record_access(["c"], at=2.0)
    os.rename(path.with_name(ACCESS_LOG), folding)  # a fold stopped after renaming, before its commit
    log.record_access(["d"], at=3.0)  # a new log meanwhile
    assert state.counts()["access"] == 4 and not folding.exists()
    assert sorted(state.accesses_since(0)[0]) == ["a", "b", "c", "d"]


def test_2_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / ".memory" / "local.sqlite"
    path.parent.mkdir()
    path.with_name(ACCESS_LOG).write_bytes(b"5.0 x y\nnot-a-time z\n6.0 w")
    assert LocalStateFile(path).open().accesses_since(0)[0] == {"x": [5.0], "y": [5.0]}
