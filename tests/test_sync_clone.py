"""Item 2 of sync v2: `mem sync clone REMOTE DIR` starts a second machine with an identical workspace,
bound to the remote and indexed; a wrong key or a non-empty folder creates nothing."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import mem_env, run_json, run_mem, write
from memtool.sync.local import sync_files
from memtool.workspace import Workspace

PASS = "correct horse battery staple"
FILES = {
    "memory/2026-11-30.md": "# 2026-11-30\n\n## Retain\n- W @Peter: Peter moved to Lisbon.\n",
    "bank/entities/Peter.md": "# Peter\n\nA friend from Leipzig.\n",
    "bank/world.md": "# World\n\n- The Elbe flows through Hamburg.\n",
    "memory.md": "# Core\n\n- Prefers tea.\n",
    "SOUL.md": "# Soul\n\nCalm.\n",
}


def synced_tree(root: Path) -> dict[str, bytes]:
    ws = Workspace(root)
    return {rel: (ws.root / rel).read_bytes() for rel in sorted(sync_files(ws))}


def origin(tmp_path: Path, *args, env=None) -> tuple[Path, Path]:
    a, remote = tmp_path / "a", tmp_path / "remote"
    for rel, text in FILES.items():
        write(a, rel, text)
    run_mem("-w", a, "sync", remote, *args, env=env, check=0)
    return a, remote


def test_2_clone_gives_an_identical_bound_indexed_workspace(tmp_path):
    a, remote = origin(tmp_path)
    clone = tmp_path / "laptop" / "memory"
    proc, report = run_json("sync", "clone", remote, clone)
    assert proc.returncode == 0, proc.stderr
    assert synced_tree(clone) == synced_tree(a) and len(synced_tree(a)) == len(FILES)
    assert report["indexed"] == len(FILES) - 1 and report["workspace"] == str(clone)  # SOUL.md syncs, is not indexed
    binding = json.loads((clone / ".memory/sync/binding.json").read_text())
    assert binding["remote"] == str(remote.resolve()) and binding["encrypted"] is False
    # Indexed: recall answers at once; bound: a plain `mem sync` goes both ways.
    proc, hits = run_json("-w", clone, "recall", "Lisbon")
    assert hits["results"] and hits["results"][0]["source"].startswith("memory/2026-11-30.md")
    write(clone, "memory/2026-11-30.md", FILES["memory/2026-11-30.md"] + "- from the clone\n")
    run_mem("-w", clone, "sync", check=0)
    run_mem("-w", a, "sync", check=0)
    assert synced_tree(a) == synced_tree(clone)


def test_2_clone_of_an_encrypted_remote_needs_the_key_and_creates_nothing_without_it(tmp_path):
    a, remote = origin(tmp_path, "--encrypt", env=mem_env(MEM_SYNC_PASSPHRASE=PASS))
    clone = tmp_path / "b"
    proc = run_mem("sync", "clone", remote, clone, env=mem_env(MEM_SYNC_PASSPHRASE="not the passphrase"))
    assert proc.returncode == 8 and "wrong passphrase" in proc.stderr
    assert not clone.exists()
    run_mem("sync", "clone", remote, clone, env=mem_env(MEM_SYNC_PASSPHRASE=PASS), check=0)
    assert synced_tree(clone) == synced_tree(a)
    assert json.loads((clone / ".memory/sync/binding.json").read_text())["encrypted"] is True
    # With a key file instead: the new workspace's memtool.toml names it.
    key = tmp_path / "sync.key"
    key.write_text(run_mem("-w", a, "sync", "key", "--show", check=0).stdout)
    other = tmp_path / "c"
    run_mem("sync", "clone", remote, other, "--key-file", key, check=0)
    assert synced_tree(other) == synced_tree(a)
    assert str(key) in (other / "memtool.toml").read_text()
    run_mem("-w", other, "sync", check=0)


def test_2_clone_refuses_a_non_empty_folder_and_an_empty_remote(tmp_path):
    a, remote = origin(tmp_path)
    busy = tmp_path / "busy"
    write(busy, "notes.txt", "mine")
    proc = run_mem("sync", "clone", remote, busy)
    assert proc.returncode == 2 and "not an empty folder" in proc.stderr
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]
    proc = run_mem("sync", "clone", tmp_path / "nothing-here", tmp_path / "new")
    assert proc.returncode == 2 and "holds no memory yet" in proc.stderr
    assert not (tmp_path / "new").exists()


def test_2_clones_later_line_can_be_pasted_into_a_shell(tmp_path):
    """The "later: mem -w DIR sync" hint quotes a folder with spaces or quotes in its name."""
    import shlex

    a, remote = origin(tmp_path)
    clone = tmp_path / "my notes" / "Peter's memory"
    proc = run_mem("sync", "clone", remote, clone, check=0)
    later = proc.stderr.split("later: ", 1)[1].split("\n")[0].strip()
    assert shlex.split(later) == ["mem", "-w", str(clone), "sync"], later
