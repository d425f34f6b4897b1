"""Item 5 of sync v2: a sharded manifest, so a sync after one edit moves bytes that grow sub-linearly
with the number of files; a format-1 remote (whole manifest) keeps working as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from remote_manifest import folder_manifest

from memtool.sync import engine
from memtool.sync.manifest import encode
from memtool.sync.shards import depth_for
from memtool.workspace import Workspace


def files(ws: Path, n: int) -> None:
    for i in range(n):
        path = ws / "memory" / f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Day {i}\n\n- W @Person{i % 50}: fact number {i}.\n")


def one_edit(tmp_path: Path, n: int) -> tuple[dict, dict]:
    """(push report, pull report) of one edited file among `n`."""
    a, b, remote = tmp_path / f"a{n}", tmp_path / f"b{n}", tmp_path / f"remote{n}"
    files(a, n)
    b.mkdir()
    engine.run(Workspace(a), str(remote))
    engine.run(Workspace(b), str(remote))
    target = a / "memory" / "2026-01-01-0.md"
    target.write_text(target.read_text() + "- one more line\n")
    push = engine.run(Workspace(a), None)
    pull = engine.run(Workspace(b), None)
    assert push["pushed"] == pull["pulled"] == ["memory/2026-01-01-0.md"]
    return push, pull


def test_5_one_edit_moves_bytes_sublinear_in_the_number_of_files(tmp_path):
    small_push, small_pull = one_edit(tmp_path, 150)
    big_push, big_pull = one_edit(tmp_path, 2400)  # 16× the files
    whole = len(json.dumps(folder_manifest(tmp_path / "remote2400")))
    for small, big in ((small_push, big_push), (small_pull, big_pull)):
        side = "up" if small is small_push else "down"
        assert big["bytes"][side] < 5 * small["bytes"][side], (small["bytes"], big["bytes"])  # ≈ √16 = 4, not 16
        assert big["bytes"][side] < whole / 5  # far below rewriting the whole manifest
    assert big_push["requests"] == {"manifest_read": 1, "object_write": 1, "shard_write": 1, "manifest_write": 1}
    assert big_pull["requests"] == {"manifest_read": 1, "shard_read": 1, "object_read": 1}
    root = json.loads((tmp_path / "remote2400" / "manifest.json").read_bytes())
    assert root["format"] == "memtool-sync/2" and len(root["shards"]) == 2 ** depth_for(2400)


def test_5_a_whole_manifest_remote_keeps_working_whole(tmp_path):
    a, b, c, remote = tmp_path / "a", tmp_path / "b", tmp_path / "c", tmp_path / "remote"
    files(a, 80)
    engine.run(Workspace(a), str(remote))
    # A remote as an earlier memtool wrote it: one whole manifest (format 1), and a client that never sharded.
    (remote / "manifest.json").write_bytes(encode(folder_manifest(remote)))  # the same manifest, whole
    shutil.rmtree(a / ".memory" / "sync" / "shards")
    (a / "memory" / "2026-01-01-0.md").write_text("# changed\n")
    report = engine.run(Workspace(a), None)
    assert report["pushed"] == ["memory/2026-01-01-0.md"]
    manifest = json.loads((remote / "manifest.json").read_bytes())
    assert manifest["format"] == "memtool-sync/1" and len(manifest["files"]) == 80
    b.mkdir()
    engine.run(Workspace(b), str(remote))
    assert (b / "memory" / "2026-01-01-0.md").read_text() == "# changed\n"
    assert json.loads((remote / "manifest.json").read_bytes())["format"] == "memtool-sync/1"
