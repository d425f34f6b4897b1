"""`mem sync` with the folder remote: real folders, real processes, real kills."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import mem_env, run_json, run_mem, write
from remote_manifest import folder_manifest
from memtool.sync.manifest import rev_of
from memtool.sync.state import SyncState
from memtool.workspace import Workspace

DAY = "memory/2026-11-30.md"
LOG = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


@pytest.fixture
def pair(tmp_path):
    """Two workspaces (laptop, desktop) that agreed on one daily log through a folder remote."""
    remote = tmp_path / "remote"
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    for ws in (a, b):
        (ws / "memory").mkdir(parents=True)
    write(a, DAY, LOG)
    write(a, "bank/world.md", "# World\n\n- The Elbe flows through Hamburg.\n")
    run_mem("-w", a, "sync", remote, check=0)
    run_mem("-w", b, "sync", remote, check=0)
    assert (b / DAY).read_text() == LOG
    return a, b, remote


def read(ws: Path, rel: str) -> str:
    return (ws / rel).read_text(encoding="utf-8")


def test_concurrent_appends_to_one_log_merge_cleanly(pair):
    a, b, remote = pair
    run_mem("-w", a, "retain", "W @Anna: Anna likes coffee.", "--date", "2026-11-30", check=0)  # the log both share, whatever today is
    run_mem("-w", b, "retain", "B: Walked along the Elbe.", "--date", "2026-11-30", check=0)
    run_mem("-w", a, "sync", check=0)
    proc, report = run_json("-w", b, "sync")
    assert proc.returncode == 0, proc.stderr
    assert report["merged"] == [DAY] and report["conflicts"] == []
    run_mem("-w", a, "sync", check=0)
    assert read(a, DAY) == read(b, DAY)
    assert "Anna likes coffee" in read(a, DAY) and "Walked along the Elbe" in read(a, DAY)
    assert not list((a / "memory").glob("*.conflict-*"))


def test_overlapping_edits_make_a_visible_resolvable_conflict(pair):
    a, b, remote = pair
    write(a, DAY, LOG.replace("likes tea", "loves tea"))
    write(b, DAY, LOG.replace("likes tea", "hates tea"))
    run_mem("-w", a, "sync", check=0)
    proc = run_mem("-w", b, "sync")
    assert proc.returncode == 9 and "conflict" in proc.stderr
    assert "hates tea" in read(b, DAY)  # the local file keeps the local text
    copies = list((b / "memory").glob("2026-11-30.conflict-*.md"))
    assert len(copies) == 1 and "loves tea" in copies[0].read_text()
    _, status = run_json("-w", b, "sync", "status")
    assert list(status["conflicts"]) == [DAY]
    check = run_mem("-w", b, "check")  # the copy is indexed (nothing is hidden) and flagged
    assert check.returncode == 0 and "sync-conflict" in check.stdout
    # Until resolved, the path is left alone (exit 9 again), and the other side is unaffected.
    assert run_mem("-w", b, "sync").returncode == 9
    _, res = run_json("-w", b, "sync", "resolve", DAY, "--keep", "both")
    assert res["remaining"] == []
    assert "hates tea" in read(b, DAY) and "loves tea" in read(b, DAY)
    assert not copies[0].exists()
    run_mem("-w", b, "sync", check=0)
    run_mem("-w", a, "sync", check=0)
    assert read(a, DAY) == read(b, DAY)
    # Both losing versions are restorable backups.
    _, listing = run_json("-w", b, "sync", "restore")
    assert {item["path"] for item in listing["backups"]} >= {DAY, copies[0].relative_to(b).as_posix()}


@pytest.mark.parametrize("keep,expect", [("local", "hates tea"), ("remote", "loves tea")])
def test_resolve_keep_one_side(pair, keep, expect):
    a, b, _ = pair
    write(a, DAY, LOG.replace("likes tea", "loves tea"))
    write(b, DAY, LOG.replace("likes tea", "hates tea"))
    run_mem("-w", a, "sync", check=0)
    run_mem("-w", b, "sync", check=9)
    run_mem("-w", b, "sync", "resolve", DAY, "--keep", keep, check=0)
    run_mem("-w", b, "sync", check=0)
    run_mem("-w", a, "sync", check=0)
    assert expect in read(a, DAY) and read(a, DAY) == read(b, DAY)
    backups = run_json("-w", b, "sync", "restore")[1]["backups"]
    lost = "loves tea" if keep == "local" else "hates tea"
    assert any(lost in (b / ".memory" / "backups" / item["id"]).read_text() for item in backups)


def test_deletions_are_tombstones_and_backed_up(pair):
    a, b, remote = pair
    (a / "bank/world.md").unlink()
    _, report = run_json("-w", a, "sync")
    assert report["tombstoned"] == ["bank/world.md"]
    manifest = folder_manifest(remote)
    assert manifest["files"]["bank/world.md"]["deleted"] is True
    _, report = run_json("-w", b, "sync")
    assert report["deleted"] == ["bank/world.md"] and not (b / "bank/world.md").exists()
    backup = [i for i in run_json("-w", b, "sync", "restore")[1]["backups"] if i["path"] == "bank/world.md"]
    run_mem("-w", b, "sync", "restore", backup[0]["id"], check=0)
    assert "Elbe" in read(b, "bank/world.md")


def test_a_change_beats_a_deletion(pair):
    a, b, _ = pair
    (a / "bank/world.md").unlink()
    run_mem("-w", a, "sync", check=0)
    write(b, "bank/world.md", read(b, "bank/world.md") + "- Lisbon is in Portugal.\n")
    proc, report = run_json("-w", b, "sync")
    assert report["pushed"] == ["bank/world.md"] and any("change is kept" in k for k in report["kept"])
    run_mem("-w", a, "sync", check=0)
    assert "Lisbon" in read(a, "bank/world.md")


def test_absence_on_the_remote_is_not_a_deletion(pair):
    a, b, remote = pair
    manifest = folder_manifest(remote)
    del manifest["files"]["bank/world.md"]  # e.g. another client lost it (an older generation would stop sync)
    manifest["generation"] += 1
    (remote / "manifest.json").write_text(json.dumps(manifest))
    _, report = run_json("-w", b, "sync")
    assert report["pushed"] == ["bank/world.md"] and (b / "bank/world.md").exists()


def test_nothing_changed_reads_only_the_manifest(pair):
    a, b, _ = pair
    _, report = run_json("-w", a, "sync")
    assert report["requests"] == {"manifest_read": 1}
    write(a, DAY, read(a, DAY) + "- one more line\n")
    _, report = run_json("-w", a, "sync")
    assert report["pushed"] == [DAY]
    assert report["requests"] == {"manifest_read": 1, "object_write": 1, "manifest_write": 1, "shard_write": 1}
    _, report = run_json("-w", b, "sync")
    assert report["requests"] == {"manifest_read": 1, "object_read": 1, "shard_read": 1} and report["pulled"] == [DAY]


def test_off_stays_off_until_on(pair):
    a, _, _ = pair
    run_mem("-w", a, "sync", "off", check=0)
    for _ in range(2):  # separate processes: the switch is persisted
        proc = run_mem("-w", a, "sync")
        assert proc.returncode == 8 and "sync is off" in proc.stderr and "mem sync on" in proc.stderr
    assert run_json("-w", a, "sync", "status")[1]["off"]
    run_mem("-w", a, "sync", "on", check=0)
    run_mem("-w", a, "sync", check=0)


def test_a_workspace_is_bound_to_its_first_remote(pair, tmp_path):
    a, _, remote = pair
    proc = run_mem("-w", a, "sync", tmp_path / "elsewhere")
    assert proc.returncode == 8 and "bound to" in proc.stderr
    assert not (tmp_path / "elsewhere" / "manifest.json").exists()
    # A remote holding another memory is refused too.
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    write(other, "memory.md", "# Someone else\n")
    run_mem("-w", other, "sync", tmp_path / "theirs", check=0)
    (remote / "manifest.json").write_bytes((tmp_path / "theirs" / "manifest.json").read_bytes())
    proc = run_mem("-w", a, "sync")
    assert proc.returncode == 8 and "different memory" in proc.stderr


def test_only_markdown_syncs(pair):
    a, b, remote = pair
    run_mem("-w", a, "index", check=0)
    write(a, "memtool.toml", "[recall]\nmode = \"lexical\"\n")
    write(a, "notes.txt", "not memory")
    run_mem("-w", a, "sync", check=0)
    manifest = folder_manifest(remote)
    assert all(p.endswith(".md") for p in manifest["files"])
    assert not any(p.startswith(".memory") for p in manifest["files"])


def test_first_sync_of_two_filled_workspaces_merges_new_files(tmp_path):
    remote = tmp_path / "r"
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, DAY, "# 2026-11-30\n- laptop line\n")
    write(b, DAY, "# 2026-11-30\n- desktop line\n")
    run_mem("-w", a, "sync", remote, check=0)
    run_mem("-w", b, "sync", remote, check=0)
    run_mem("-w", a, "sync", check=0)
    assert read(a, DAY) == read(b, DAY) == "# 2026-11-30\n- desktop line\n- laptop line\n"


def test_no_remote_and_bad_remotes_are_clear_errors(tmp_path):
    ws = tmp_path / "ws"
    write(ws, DAY, LOG)
    proc = run_mem("-w", ws, "sync")
    assert proc.returncode == 2 and "no remote" in proc.stderr
    proc = run_mem("-w", ws, "sync", "ftp://example.com/x")
    assert proc.returncode == 2 and "unsupported remote" in proc.stderr
    proc = run_mem("-w", ws, "sync", tmp_path / "no" / "such" / "folder")
    assert proc.returncode == 6 and "does not exist" in proc.stderr
    bogus = tmp_path / "bogus"
    write(bogus, "manifest.json", "{\"hello\": 1}")
    proc = run_mem("-w", ws, "sync", bogus)
    assert proc.returncode == 4 and "not a memtool sync manifest" in proc.stderr
    assert not (ws / ".memory" / "sync" / "binding.json").exists()
    proc = run_mem("-w", ws, "sync", "resolve", DAY, "--keep", "local")
    assert proc.returncode == 2 and "not in conflict" in proc.stderr


def _big_workspace(ws: Path, files: int) -> None:
    for i in range(files):
        write(ws, f"memory/2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}-{i}.md",
              f"# day {i}\n\n## Retain\n- W @P{i}: fact number {i} " + "x" * 200 + "\n")


def test_killed_syncs_leave_files_intact_and_the_next_run_completes(tmp_path):
    a, b, remote = tmp_path / "a", tmp_path / "b", tmp_path / "remote"
    _big_workspace(a, 1500)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    before = {p: p.read_bytes() for p in (a / "memory").iterdir()}
    for delay in (0.4, 0.7, 1.0):
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(a), "sync", str(remote)],
                                env=mem_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert {p: p.read_bytes() for p in (a / "memory").iterdir()} == before
        if delay == 0.4:
            assert not (remote / "manifest.json").exists()  # killed before publishing
        if (remote / "manifest.json").exists():  # whatever was published references complete revisions
            manifest = folder_manifest(remote)
            for entry in manifest["files"].values():
                rev = entry["rev"]
                assert rev_of((remote / "objects" / rev[:2] / rev).read_bytes()) == rev
    run_mem("-w", a, "sync", remote, check=0)
    run_mem("-w", b, "sync", remote, check=0)
    assert {p.name: p.read_bytes() for p in (b / "memory").iterdir()} == {p.name: v for p, v in before.items()}


def test_concurrent_syncs_from_two_machines_lose_nothing(pair):
    a, b, remote = pair
    for round_ in range(3):
        for ws, who in ((a, "laptop"), (b, "desktop")):
            write(ws, DAY, read(ws, DAY) + f"- {who} line {round_}\n")
            write(ws, f"bank/{who}-{round_}.md", f"# {who} {round_}\n")
        procs = [subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "sync", "--json"],
                                  env=mem_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for ws in (a, b)]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert json.loads(out)["conflicts"] == []
    for ws in (a, b, a):
        run_mem("-w", ws, "sync", check=0)
    assert read(a, DAY) == read(b, DAY)
    for round_ in range(3):
        for who in ("laptop", "desktop"):
            assert f"- {who} line {round_}" in read(a, DAY)
            assert (a / f"bank/{who}-{round_}.md").exists() and (b / f"bank/{who}-{round_}.md").exists()


def test_a_second_sync_in_the_same_workspace_waits_its_turn(pair):
    a, _, _ = pair
    ws = Workspace(a)
    with ws.lock("sync"):
        proc = run_mem("-w", a, "sync")
    assert proc.returncode == 7 and "another mem sync" in proc.stderr


def test_an_edit_during_sync_is_never_overwritten(pair):
    """The local write checks the file under its lock; an unseen edit defers the path to the next run."""
    a, b, _ = pair
    write(a, DAY, read(a, DAY) + "- from laptop\n")
    run_mem("-w", a, "sync", check=0)
    ws = Workspace(b)
    state_before = SyncState(ws).base()
    # Simulate an editor saving between the read and the write by changing the file under the
    # sync's feet: hold the file's lock, start the sync, edit, release.
    with ws.lock(DAY):
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(b), "sync", "--json"],
                                env=mem_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        write(b, DAY, read(b, DAY) + "- typed on the desktop meanwhile\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["deferred"] == [DAY]
    assert "typed on the desktop meanwhile" in read(b, DAY)
    assert SyncState(ws).base()[DAY] == state_before[DAY]
    run_mem("-w", b, "sync", check=0)
    text = read(b, DAY)
    assert "typed on the desktop meanwhile" in text and "from laptop" in text
