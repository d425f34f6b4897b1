"""Issue 19, one-shot speed: a one-shot read runs its stat check in a child process started
before the library is imported (`scan_aside.ahead`), and in a big workspace queries the index
while that check runs (memtool.scan_aside, `Freshness.checked_read`). The answer must still
reflect every file as the check found it: never an index older than the files.

`MEM_STAT_CHECK=child` puts these small workspaces on the second path (it starts at 10,000 files),
`ahead` on the first whatever the load (it needs a core free)."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import mem_env, run_json, run_mem, write

CHILDREN = ("child", "ahead")



def _env(how: str) -> dict:
    return mem_env(MEM_STAT_CHECK=how)  # at run time: the environment then says MEM_EMBEDDER=none


def _days(ws, n=30):
    for d in range(1, n + 1):
        write(ws, f"memory/2024-03-{d:02d}.md", f"# 2024-03-{d:02d}\n\n- Walked the dog on day {d}.\n"
                                                 f"- Reviewed the ledger for batch {d}.\n")


def _contents(doc) -> list[str]:
    return [r["content"] for r in doc["results"]]


def _set(ws, rel, text, mtime_s):
    """Replace `rel` by `text` with a given mtime, atomically (a temp file renamed over it, as editors
    save): equal sizes and a coarse clock cannot hide a change, and no read sees half a file."""
    tmp = write(ws, rel + ".tmp", text)
    os.utime(tmp, ns=(mtime_s * 10**9, mtime_s * 10**9))
    os.replace(tmp, ws / rel)


@pytest.mark.parametrize("how", CHILDREN)
def test_2_a_file_changed_before_a_one_shot_recall_is_in_its_answer(empty_ws, how):
    """Each recall follows an edit made just before it: a word added is found, a word removed is
    not, with the file's size unchanged; a new file and a deleted one likewise. A stale index
    answers first on this path, so every case here needs the re-check to win."""
    ws = empty_ws
    _days(ws)
    run_mem("-w", ws, "index", env=_env(how), check=0)
    words = ["heron", "otter"]  # same length: the edit keeps the file's size
    for round_ in range(6):
        now, gone = words[round_ % 2], words[(round_ + 1) % 2]
        _set(ws, "memory/2024-03-07.md", f"# 2024-03-07\n\n- Saw a {now} by the canal.\n", 1_700_000_000 + round_)
        _, doc = run_json("-w", ws, "recall", now, env=_env(how))
        assert _contents(doc) == [f"Saw a {now} by the canal."], (round_, doc)
        _, doc = run_json("-w", ws, "recall", gone, "--min-score", "0", env=_env(how))
        assert not any(gone in c for c in _contents(doc)), (round_, doc)
    write(ws, "memory/2024-04-01.md", "# 2024-04-01\n\n- A kingfisher at the weir.\n")
    _, doc = run_json("-w", ws, "recall", "kingfisher", env=_env(how))
    assert _contents(doc) == ["A kingfisher at the weir."], doc
    (ws / "memory" / "2024-04-01.md").unlink()
    _, doc = run_json("-w", ws, "recall", "kingfisher", "--min-score", "0", env=_env(how))
    assert doc["count"] == 0, doc


@pytest.mark.parametrize("how", CHILDREN)
def test_2_a_file_changing_during_one_shot_recalls_never_gets_an_older_answer(empty_ws, how):
    """A writer rewrites one line over and over (a counter, each version with its own mtime) while
    recalls run: every answer holds exactly one version of the line, never one older than the
    version on disk when the recall started, nor one newer than when it ended."""
    ws = empty_ws
    _days(ws)
    rel = "memory/2024-03-15.md"
    _set(ws, rel, "# 2024-03-15\n\n- Gauge reading 0000 noted.\n", 1_700_000_000)
    run_mem("-w", ws, "index", env=_env(how), check=0)
    env = _env(how)
    version = [0]
    stop = threading.Event()

    def writer():
        while not stop.is_set() and version[0] < 9000:
            n = version[0] + 1
            _set(ws, rel, f"# 2024-03-15\n\n- Gauge reading {n:04d} noted.\n", 1_700_000_000 + n)
            version[0] = n
            time.sleep(0.003)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(8):
            before = version[0]
            proc = subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), "recall", "gauge", "--json"],
                                  capture_output=True, text=True, env=env, timeout=120)
            after = version[0]
            assert proc.returncode == 0, proc.stderr
            seen = [int(c.split()[2]) for c in _contents(json.loads(proc.stdout))]
            assert len(seen) == 1 and before <= seen[0] <= after, (before, seen, after)
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("how", CHILDREN)
def test_2_the_check_in_a_child_answers_exactly_as_the_check_in_process(example_ws, how):
    """Same JSON from both paths, on an unchanged workspace and right after an edit."""
    run_mem("-w", example_ws, "index", check=0)
    for query in ("Peter", "Lisbon", "tea"):
        assert run_mem("-w", example_ws, "recall", query, "--json", env=_env(how)).stdout == \
            run_mem("-w", example_ws, "recall", query, "--json", env=_env("inline")).stdout
    log = next((example_ws / "memory").glob("*.md"))
    with log.open("a", encoding="utf-8") as f:
        f.write("\n- Peter asked about the tram to Belém.\n")
    child = run_mem("-w", example_ws, "recall", "Belém", "--json", env=_env(how))
    inline = run_mem("-w", example_ws, "recall", "Belém", "--json", env=_env("inline"))
    assert child.stdout == inline.stdout and "tram to Belém" in child.stdout


def test_2_an_unknown_stat_check_setting_is_refused_clearly(example_ws):
    proc, doc = run_json("-w", example_ws, "recall", "Peter", env=mem_env(MEM_STAT_CHECK="threads"))
    assert proc.returncode != 0 and doc["error"] == "UsageError", proc.stdout
    assert "MEM_STAT_CHECK" in doc["message"] and "auto, child, ahead, inline" in doc["hint"]
    assert "Traceback" not in proc.stderr


def test_2_a_scan_once_reaped_is_never_signalled_or_closed_again(empty_ws):
    """After `result()` the child is reaped and its pipe closed: a `cancel()` then (an error in the
    caller after the scan came back) must not kill a pid that may belong to another process by
    now, nor close a descriptor number that may be reused. Run in a fresh process: no other thread."""
    _days(empty_ws, 3)
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from memtool.scan_aside import ScanAside\n"
        "from memtool.workspace import Workspace\n"
        "aside = ScanAside.start(Workspace(Path(sys.argv[1])))\n"
        "files, problems = aside.result()\n"
        "assert len(files) == 3 and aside.pid is None and aside.fd is None, (aside.pid, aside.fd)\n"
        "aside.cancel()\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script, str(empty_ws)], env=_env("child"), capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_2_a_check_started_ahead_is_the_reads_own_and_never_outlives_the_process(empty_ws, tmp_path):
    """The check started before the library loads gives the read its scan (its child reaped then,
    nothing left to take); one for another folder is not used; one nothing took (an error before
    the read) is ended at exit. Run in fresh processes: no other thread."""
    _days(empty_ws, 3)
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    script = (
        "import sys\n"
        "from memtool.memory import Memory\n"
        "from memtool.scan_aside import ahead\n"
        "scan = ahead(sys.argv[1])\n"
        "mem = Memory.open(sys.argv[1], embedder='none').read_once(scan)\n"
        "assert mem.freshness.scan_ahead is scan and scan.pid is not None\n"
        "assert 'Reviewed the ledger for batch 2.' in [r['content'] for r in mem.recall('ledger').results]\n"
        "assert mem.freshness.scan_ahead is None and scan.pid is None and scan.fd is None\n"
        "stray = ahead(sys.argv[2])\n"
        "mem = Memory.open(sys.argv[1], embedder='none').read_once(stray)\n"
        "assert mem.freshness.scan_ahead is None and stray.pid is None\n"
        "left = ahead(sys.argv[1])\n"
        "print(left.pid)\n")
    out = subprocess.run([sys.executable, "-c", script, str(empty_ws), str(other)], env=_env("ahead"),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert not os.path.exists(f"/proc/{int(out.stdout)}"), "the check nothing took outlived its process"


def test_2_a_read_refused_after_its_check_started_ahead_still_says_why(example_ws):
    proc, doc = run_json("-w", example_ws, "recall", "Peter", "--since", "sometime", env=_env("ahead"))
    assert proc.returncode != 0 and doc["error"] == "UsageError" and "Traceback" not in proc.stderr, proc.stderr
