"""Item 4 of sync v2: sync by itself (`mem watch --sync`), its back-off on an unreachable remote as
`mem status` shows it, and `mem sync off` stopping a running round between files."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import mem_env, run_json, run_mem, write
from memtool.sync.auto import MAX_PAUSE, Schedule

DAY = "memory/2026-11-30.md"
LOG = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


def watcher(ws: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--poll", "--interval", "0.5",
                             "--sync", "--sync-interval", "1"], env=mem_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def wait_for(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def test_4_two_watchers_propagate_an_edit_and_report_an_unreachable_remote(tmp_path):
    remote = tmp_path / "mnt" / "remote"
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    write(a, DAY, LOG)
    (tmp_path / "mnt").mkdir()
    run_mem("-w", a, "sync", remote, check=0)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", b, "sync", remote, check=0)
    procs = [watcher(a), watcher(b)]
    try:
        time.sleep(1.5)
        write(a, DAY, LOG + "- W @Peter: Peter moved to Lisbon.\n")
        # Settle (2 s) + push + the other side's pull interval (1 s), with room for a loaded machine.
        assert wait_for(lambda: "Lisbon" in (b / DAY).read_text(), 20), "the edit did not arrive"
        write(b, "memory/2026-12-01.md", "# 2026-12-01\n\n- from the desktop\n")
        assert wait_for(lambda: (a / "memory/2026-12-01.md").exists(), 20)
        # The remote goes away (an unmounted disk): said in mem status, with the last success kept.
        (tmp_path / "mnt").rename(tmp_path / "unmounted")
        write(a, DAY, LOG + "- W @Peter: Peter moved to Porto.\n")

        def failing() -> bool:
            auto = run_json("-w", a, "status", "--json")[1]["memory"]["sync"]["auto"]
            return bool(auto and auto["failures"] >= 1)
        assert wait_for(failing, 20)
        _, status = run_json("-w", a, "status", "--json")
        auto = status["memory"]["sync"]["auto"]
        assert auto["running"] and auto["last_success"] and "does not exist" in auto["last_error"]["message"]
        assert auto["next_try"]
        shown = run_mem("-w", a, "status").stdout
        assert "auto sync" in shown and "last error" in shown
        (tmp_path / "unmounted").rename(tmp_path / "mnt")
        assert wait_for(lambda: "Porto" in (b / DAY).read_text(), 40), "no recovery after the remote came back"
    finally:
        errs = [stop(p) for p in procs]
    assert all(p.returncode is not None for p in procs)
    assert "sync failed" in errs[0] and "Traceback" not in errs[0] + errs[1]
    _, status = run_json("-w", a, "status", "--json")
    assert status["memory"]["sync"]["auto"]["running"] is False


def test_4_schedule_pushes_after_settling_pulls_on_interval_and_backs_off():
    s = Schedule(interval=60, settle=2)
    assert s.due(0, dirty=False, changed=False)  # a first round at once
    s.finished(0, True)
    assert not s.due(10, dirty=False, changed=False)
    assert not s.due(11, dirty=True, changed=True)  # an edit: wait until it settles
    assert not s.due(12, dirty=True, changed=False)
    assert s.due(13.5, dirty=True, changed=False)
    s.finished(13.5, True)
    assert s.due(73.5, dirty=False, changed=False)  # the pull interval
    pauses = [s.finished(100 + i, False) for i in range(8)]
    assert pauses[:3] == [60, 120, 240] and max(pauses) == MAX_PAUSE
    assert not s.due(100 + 7 + MAX_PAUSE - 1, dirty=True, changed=False)  # even an edit waits out the pause
    assert s.due(100 + 7 + MAX_PAUSE, dirty=True, changed=False)
    s.finished(2000, True)
    assert s.failures == 0 and not s.due(2001, dirty=False, changed=False)


def test_4_sync_off_stops_a_running_round_between_files(tmp_path):
    remote = tmp_path / "remote"
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    names = [f"bank/entities/E{i:04d}.md" for i in range(1500)]
    for name in names:
        write(a, name, f"# {name}\n")
    run_mem("-w", a, "sync", remote, check=0)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", b, "sync", remote, check=0)
    for name in names:  # changed files are written one by one, each backed up first: a round of seconds
        write(a, name, f"# {name}\n\nchanged\n")
    run_mem("-w", a, "sync", check=0)
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(b), "sync", "--json"], env=mem_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        backups = b / ".memory" / "backups"
        assert wait_for(lambda: backups.exists() and any(backups.rglob("*.md.*")), 60)
        run_mem("-w", b, "sync", "off", check=0)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 8 and json.loads(out)["error"] == "SyncStopped", err
    written = [n for n in names if "changed" in (b / n).read_text()]
    assert 0 < len(written) < len(names), len(written)
    # Consistent: every file is whole (old or new), and after `on` the next round writes the rest.
    assert all((b / n).read_text() in (f"# {n}\n", f"# {n}\n\nchanged\n") for n in names)
    run_mem("-w", b, "sync", "on", check=0)
    proc, report = run_json("-w", b, "sync")
    assert proc.returncode == 0 and report["conflicts"] == [] and report["pushed"] == []
    assert all("changed" in (b / n).read_text() for n in names)
