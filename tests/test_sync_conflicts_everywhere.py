"""Item 3 of sync v2: the version a conflict leaves off the remote is uploaded as a revision, listed
in the manifest, shown by `mem sync status` on every machine, and resolvable on any of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_json, run_mem, write
from remote_manifest import folder_manifest

DAY = "memory/2026-11-30.md"
LOG = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


@pytest.fixture
def conflicted(tmp_path):
    """Three machines on one remote; the desktop's edit conflicts with the laptop's."""
    remote = tmp_path / "remote"
    a, b, c = tmp_path / "laptop", tmp_path / "desktop", tmp_path / "server"
    write(a, DAY, LOG)
    run_mem("-w", a, "sync", remote, check=0)
    for ws in (b, c):
        (ws / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
        run_mem("-w", ws, "sync", remote, check=0)
    write(a, DAY, LOG.replace("likes tea", "loves tea"))
    write(b, DAY, LOG.replace("likes tea", "hates tea"))
    run_mem("-w", a, "sync", check=0)
    run_mem("-w", b, "sync", check=9)
    return a, b, c, remote


def listed(ws: Path) -> list[dict]:
    proc, status = run_json("-w", ws, "sync", "status")
    assert proc.returncode == 0, proc.stderr
    return status["conflicts_elsewhere"]


def test_3_the_losing_version_is_on_the_remote_and_listed_everywhere(conflicted):
    a, b, c, remote = conflicted
    manifest = folder_manifest(remote)
    (device, entry), = manifest["conflicts"][DAY].items()
    assert "hates tea" in (remote / "objects" / entry["rev"][:2] / entry["rev"]).read_text()
    assert entry["against"] == manifest["files"][DAY]["rev"]
    for ws in (a, c):
        run_mem("-w", ws, "sync", check=0)
        (item,) = listed(ws)
        assert item["path"] == DAY and item["device"] == device
        assert DAY in run_mem("-w", ws, "sync", "status").stdout
    assert listed(b) == []  # the desktop lists it under its own conflicts
    # Resolved where it happened: the next sync takes it off the list on every machine.
    run_mem("-w", b, "sync", "resolve", DAY, "--keep", "both", check=0)
    run_mem("-w", b, "sync", check=0)
    for ws in (a, c):
        run_mem("-w", ws, "sync", check=0)
        assert listed(ws) == []
        assert "hates tea" in (ws / DAY).read_text() and "loves tea" in (ws / DAY).read_text()
    assert "conflicts" not in json.loads((remote / "manifest.json").read_text())


def test_3_a_conflict_listed_by_another_machine_can_be_resolved_here(conflicted):
    a, b, c, remote = conflicted
    run_mem("-w", c, "sync", check=0)
    _, res = run_json("-w", c, "sync", "resolve", DAY, "--keep", "both")
    assert res["resolved"] == DAY and len(res["devices"]) == 1
    assert "hates tea" in (c / DAY).read_text() and "loves tea" in (c / DAY).read_text()
    assert listed(c) == []
    run_mem("-w", c, "sync", check=0)
    assert "conflicts" not in json.loads((remote / "manifest.json").read_text())
    # The desktop sees its conflict resolved elsewhere: it ends there too, and the result is pulled.
    proc, report = run_json("-w", b, "sync")
    assert proc.returncode == 0 and report["resolved_elsewhere"] == [DAY], proc.stderr
    _, status = run_json("-w", b, "sync", "status")
    assert status["conflicts"] == {} and (b / DAY).read_text() == (c / DAY).read_text()
    assert not list((b / "memory").glob("*.conflict-*.md"))
    run_mem("-w", a, "sync", check=0)
    assert (a / DAY).read_text() == (c / DAY).read_text()
