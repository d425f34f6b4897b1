"""The remote is untrusted input (issue 13, part D): a tampered, rolled-back or damaged remote.

Every test plays someone with write access to the remote (a folder, or a real S3-speaking server)
and checks what one `mem sync` (a real process) then does to a workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from remote_manifest import whole
from conftest import mem_env, run_json, run_mem, write
from s3_server import S3_ENV, start_s3

DAY = "memory/2026-11-30.md"
LOG = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


def rev(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FolderStore:
    """Direct access to a folder remote, as an attacker (or a careless restore) would have it."""

    def __init__(self, root: Path):
        self.root = root
        self.url = str(root)
        self.env = None

    def manifest_bytes(self) -> bytes:
        return (self.root / "manifest.json").read_bytes()

    def set_manifest_bytes(self, data: bytes) -> None:
        (self.root / "manifest.json").write_bytes(data)

    def object_path(self, r: str) -> Path:
        return self.root / "objects" / r[:2] / r

    def put(self, data: bytes) -> str:
        r = rev(data)
        self.object_path(r).parent.mkdir(parents=True, exist_ok=True)
        self.object_path(r).write_bytes(data)
        return r

    def damage(self, r: str, data: bytes) -> None:
        self.object_path(r).write_bytes(data)

    def get(self, r: str) -> bytes:
        return self.object_path(r).read_bytes()


class S3Store:
    def __init__(self, client, url: str, env: dict):
        self.client, self.url, self.env = client, url, env
        self.bucket, self.prefix = url[5:].split("/", 1)

    def manifest_bytes(self) -> bytes:
        return self.client.get_object(Bucket=self.bucket, Key=f"{self.prefix}/manifest.json")["Body"].read()

    def set_manifest_bytes(self, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=f"{self.prefix}/manifest.json", Body=data)

    def put(self, data: bytes) -> str:
        r = rev(data)
        self.client.put_object(Bucket=self.bucket, Key=f"{self.prefix}/objects/{r[:2]}/{r}", Body=data)
        return r

    def damage(self, r: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=f"{self.prefix}/objects/{r[:2]}/{r}", Body=data)

    def get(self, r: str) -> bytes:
        return self.client.get_object(Bucket=self.bucket, Key=f"{self.prefix}/objects/{r[:2]}/{r}")["Body"].read()


def manifest(store) -> dict:
    """The whole manifest (a sharded one assembled); a tamperer writes it back whole (format 1)."""
    return whole(store.manifest_bytes(), store.get)


def tamper(store, files: dict[str, bytes]) -> None:
    """Add (valid, uploaded) entries for `files` to the remote's manifest, as a newer generation."""
    m = manifest(store)
    for path, data in files.items():
        m["files"][path] = {"rev": store.put(data), "size": len(data), "device": "mallory", "time": "2026-12-01T00:00:00Z"}
    m["generation"] = m.get("generation", 0) + 1
    store.set_manifest_bytes(json.dumps(m).encode())


def sync(ws: Path, store, *args, check=None):
    return run_mem("-w", ws, "sync", *args, env=store.env, check=check)


def sync_json(ws: Path, store, *args):
    return run_json("-w", ws, "sync", *args, env=store.env)


def pair_on(store, tmp_path: Path) -> tuple[Path, Path]:
    """Two workspaces (laptop, desktop) that agreed on one daily log through `store`."""
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    write(a, DAY, LOG)
    write(a, "bank/world.md", "# World\n\n- The Elbe flows through Hamburg.\n")
    (b / "memory").mkdir(parents=True)
    sync(a, store, store.url, check=0)
    sync(b, store, store.url, check=0)
    assert (b / DAY).read_text() == LOG
    return a, b


@pytest.fixture
def folder(tmp_path):
    return FolderStore(tmp_path / "remote")


@pytest.fixture(scope="module")
def s3_server():
    server, endpoint = start_s3()
    yield endpoint
    server.stop()


@pytest.fixture
def s3(s3_server):
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server, **{k.lower(): v for k, v in S3_ENV.items()
                                                            if k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")},
                          region_name=S3_ENV["AWS_REGION"])
    name = f"mem-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return S3Store(client, f"s3://{name}/memory", mem_env(**S3_ENV, AWS_ENDPOINT_URL=s3_server))


# --- item 12: a tampered manifest may only ever write what sync itself would publish ---------------

PLANTED = {
    ".memory/index.sqlite": b"not a database",
    ".memory/sync/off.json": b'{"since": "forever"}',
    ".memory/backups/memory.md.20991231T235959Z-000000000": b"# Core memory\n- planted backup\n",
    ".memory/sync/base.json": b'{"files": {}}',
    ".hidden.md": b"hidden\n",
    "memory/.hidden.md": b"hidden\n",
    "memory/2026-11-30.conflict-mallory.md": b"fake conflict copy\n",
    "memtool.toml": b"[sync]\nremote = '/tmp/elsewhere'\n",
    "other/notes.md": b"outside the synced folders\n",
    "../escaped.md": b"outside the workspace\n",
    "/tmp/absolute-mem-attack.md": b"absolute\n",
    "memory\\..\\..\\win.md": b"backslashes\n",
    "memory/nul\x00.md": b"nul\n",
    "memory/csi\x9b2J\x9b31mRED\x85.md": b"C1 controls: a terminal's CSI, NEL\n",
    "memory/./dot.md": b"dot\n",
    "memory//double.md": b"double slash\n",
}
LEGIT = {"memory/2026-12-01.md": b"# 2026-12-01\n\n- A line from the other machine.\n"}


def _assert_nothing_planted(ws: Path) -> None:
    for path in PLANTED:
        if path.startswith("/") or "\x00" in path:
            continue
        target = ws / path
        if path == ".memory/index.sqlite" and target.exists():
            assert target.read_bytes() != PLANTED[path]
            continue
        if path == ".memory/sync/base.json":
            assert json.loads(target.read_text())["files"], "the base was overwritten from the remote"
            continue
        assert not target.exists(), f"{path} was written from the remote"
    assert not (ws.parent / "escaped.md").exists()
    assert not Path("/tmp/absolute-mem-attack.md").exists()


def _tampered_manifest_round(store, tmp_path):
    a, b = pair_on(store, tmp_path)
    tamper(store, {**PLANTED, **LEGIT})
    proc = sync(b, store)
    assert proc.returncode == 0, proc.stderr
    _assert_nothing_planted(b)
    assert (b / "memory/2026-12-01.md").read_bytes() == LEGIT["memory/2026-12-01.md"]  # the rest proceeds
    assert "refused" in proc.stderr and ".memory/sync/off.json" in proc.stderr and "\x00" not in proc.stderr
    _, listing = run_json("-w", b, "sync", "restore")
    assert listing["backups"] == []  # no planted backup to "restore"
    # The other replica is not harmed either: it names every refused path and keeps syncing.
    proc, report = sync_json(a, store)
    assert proc.returncode == 0, proc.stderr
    assert report["pulled"] == ["memory/2026-12-01.md"]
    _assert_nothing_planted(a)
    refused = "\n".join(report["refused"])
    for path in (".memory/index.sqlite", ".memory/sync/off.json", "memtool.toml", "../escaped.md", "/tmp/absolute"):
        assert path in refused
    assert "\\x00" in refused and "\x00" not in refused  # named, and printable
    assert "csi\\x9b2J" in refused and "\x9b" not in refused and "\x9b" not in proc.stderr


def test_d12_tampered_manifest_writes_only_synced_paths(folder, tmp_path):
    _tampered_manifest_round(folder, tmp_path)


def test_d12_tampered_manifest_writes_only_synced_paths_s3(s3, tmp_path):
    _tampered_manifest_round(s3, tmp_path)


def test_d12_a_synced_path_through_a_symlink_is_not_written(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    os.symlink("../.memory/sync", b / "bank" / "state")  # a link someone made on this machine
    tamper(folder, {"bank/state/conflicts.md": b"through the link\n", **LEGIT})
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert not (b / ".memory/sync/conflicts.md").exists()
    assert any("bank/state/conflicts.md" in note for note in report["refused"])
    assert (b / "memory/2026-12-01.md").exists()


def test_d12_malformed_entries_are_refused_not_fatal(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    m["files"]["memory/bad-rev.md"] = {"rev": "../../../../etc/passwd", "size": 1}
    m["files"]["memory/not-an-object.md"] = ["x"]
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    tamper(folder, LEGIT)
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert (b / "memory/2026-12-01.md").exists()
    assert {n.split(":")[0] for n in report["refused"]} == {"memory/bad-rev.md", "memory/not-an-object.md"}


# --- item 13: without a common base only extensions merge ----------------------------------------

LONG = "# 2026-11-30\n\n## Retain\n" + "".join(f"- B: line {i}.\n" for i in range(3, 11))


def test_d13_a_lost_base_never_mangles_a_file(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, DAY, LONG)
    sync(a, folder, check=0)
    sync(b, folder, check=0)
    edited = LONG.replace("- B: line 5.", "- B: line five, corrected.") + "- B: line 11.\n"
    write(a, DAY, edited)
    sync(a, folder, check=0)
    (b / ".memory/sync/base.json").rename(b / "base.json.away")  # as the "damaged" hint suggests
    proc, report = sync_json(b, folder)
    assert proc.returncode == 9, proc.stderr
    assert report["merged"] == [] and report["conflicts"] == [DAY]
    assert (b / DAY).read_text() == LONG  # untouched: both versions kept, nothing duplicated
    copy = next((b / "memory").glob("2026-11-30.conflict-*.md"))
    assert copy.read_text() == edited
    assert manifest(folder)["files"][DAY]["rev"] == rev(edited.encode())  # nothing garbled published


def test_d13_without_a_base_an_extension_merges_and_identical_files_agree(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, DAY, LOG + "- B: appended on the laptop.\n")
    sync(a, folder, check=0)
    (b / ".memory/sync/base.json").unlink()
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert (b / DAY).read_text() == LOG + "- B: appended on the laptop.\n"
    assert report["conflicts"] == [] and "bank/world.md" in report["adopted"]


def test_d13_a_second_machine_after_mem_init_is_told_to_clone(folder, tmp_path):
    """Sync v2 item 2: `mem init` then `mem sync` to a remote holding a memory explains the choice
    (clone) instead of merging starter files into that memory; the remote and the files stay as they were."""
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    run_mem("init", a, check=0)
    core = "# Core memory\n\n- Prefers tea.\n- Works at Brandt Logistik.\n"
    write(a, "memory.md", core)  # the starter comment replaced: not an extension of the starter
    sync(a, folder, folder.url, check=0)
    run_mem("init", b, check=0)
    before = folder.manifest_bytes()
    proc, report = sync_json(b, folder, folder.url)
    assert proc.returncode == 8 and report["error"] == "SyncBlocked", proc.stderr
    assert "only the starter files of mem init" in report["message"] and "mem sync clone" in report["hint"]
    assert (b / "memory.md").read_text() != core and not (b / ".memory/sync/binding.json").exists()
    assert folder.manifest_bytes() == before
    c = tmp_path / "second"
    run_mem("sync", "clone", folder.url, c, check=0)
    assert (c / "memory.md").read_text() == core
    sync(a, folder, check=0)
    assert (a / "memory.md").read_text() == core


def test_d13_a_second_machine_with_its_own_core_memory_gets_a_conflict(folder, tmp_path):
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    write(a, "memory.md", "# Core memory\n\n- Prefers tea.\n- Lives in Hamburg.\n")
    sync(a, folder, folder.url, check=0)
    mine = "# Core memory\n\n- Prefers coffee.\n- Lives in Hamburg.\n"  # one line differs: not appends
    write(b, "memory.md", mine)
    proc, report = sync_json(b, folder, folder.url)
    assert proc.returncode == 9 and report["conflicts"] == ["memory.md"]
    assert (b / "memory.md").read_text() == mine
    copy = next(b.glob("memory.conflict-*.md"))
    assert copy.read_text() == "# Core memory\n\n- Prefers tea.\n- Lives in Hamburg.\n"


def test_d13_merge_unrelated_rules():
    from memtool.sync.merge import merge_unrelated

    assert merge_unrelated("a\nb\n", "a\nb\nc\n").text == "a\nb\nc\n"
    assert merge_unrelated("a\nb\nc\n", "a\nb\n").text == "a\nb\nc\n"
    assert merge_unrelated("a\nb", "a\nb\nc\n").text == "a\nb\nc\n"
    two = merge_unrelated("# d\n- laptop\n", "# d\n- desktop\n")
    assert two.clean and two.text == "# d\n- laptop\n- desktop\n"
    assert merge_unrelated("# d\n- laptop", "# d\n- desktop").text == "# d\n- laptop\n- desktop"
    replaced = merge_unrelated("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n")  # shares c, d after the change
    assert not replaced.clean and replaced.text == "a\nb\nc\nd\n"


# --- item 14: a remote that went backwards stops sync instead of rolling replicas back -------------

NEWER = LOG + "- W @Anna: Anna moved to Leipzig.\n"


def _rollback_round(store, tmp_path):
    a, b = pair_on(store, tmp_path)
    old = store.manifest_bytes()
    write(a, DAY, NEWER)
    sync(a, store, check=0)
    sync(b, store, check=0)
    assert (b / DAY).read_text() == NEWER
    store.set_manifest_bytes(old)  # a restore from last week's backup, or an attacker's replay
    for ws in (a, b):
        proc = sync(ws, store)
        assert proc.returncode == 8, proc.stderr
        assert "went backwards" in proc.stderr and "hint:" in proc.stderr
        assert (ws / DAY).read_text() == NEWER  # nothing dropped
    assert store.manifest_bytes() == old  # and nothing published
    # Deliberate recovery, as the hint says: without a base the newer text is an extension: published.
    (b / ".memory/sync/base.json").rename(b / "base.json.aside")
    proc, report = sync_json(b, store)
    assert proc.returncode == 0, proc.stderr
    assert manifest(store)["generation"] > json.loads(old)["generation"] + 1  # the root carries the generation
    proc, report = sync_json(a, store)  # the other replica sees the remote moving forward again
    assert proc.returncode == 0, proc.stderr
    assert (a / DAY).read_text() == (b / DAY).read_text() == NEWER


def test_d14_a_rolled_back_manifest_stops_sync(folder, tmp_path):
    _rollback_round(folder, tmp_path)


def test_d14_a_rolled_back_manifest_stops_sync_s3(s3, tmp_path):
    _rollback_round(s3, tmp_path)


def test_d14_a_manifest_replaced_under_the_same_generation_stops_sync(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    m["files"][DAY] = {"rev": folder.put(b"# 2026-11-30\n"), "size": 13, "device": "mallory", "time": "x"}
    folder.set_manifest_bytes(json.dumps(m).encode())  # generation unchanged
    proc = sync(b, folder)
    assert proc.returncode == 8 and "replaced" in proc.stderr
    assert (b / DAY).read_text() == LOG


def test_d14_an_emptied_remote_is_not_silently_reseeded(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    shutil.rmtree(folder.root)
    proc = sync(b, folder)
    assert proc.returncode == 8 and "no manifest any more" in proc.stderr and "mounted" in proc.stderr
    assert not (folder.root / "manifest.json").exists()


# --- item 15: same-size-and-mtime edits, damaged objects, stale temp files --------------------------

def test_d15a_an_edit_that_keeps_size_and_mtime_is_published(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    target = b / DAY
    before = target.stat()
    target.write_text(LOG.replace("likes tea", "hates tea"))  # same length
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -r
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert report["pushed"] == [DAY]
    sync(a, folder, check=0)
    assert (a / DAY).read_text() == LOG.replace("likes tea", "hates tea")
    # And the file is not stuck: a later change on the other side is pulled.
    write(a, DAY, (a / DAY).read_text() + "- B: later.\n")
    sync(a, folder, check=0)
    proc, report = sync_json(b, folder)
    assert report["pulled"] == [DAY] and report["deferred"] == []
    assert "later" in target.read_text()


def _damaged_object_round(store, tmp_path):
    a, b = pair_on(store, tmp_path)
    write(a, DAY, NEWER)
    write(a, "bank/world.md", "# World\n\n- The Elbe flows through Hamburg.\n- And through Dresden.\n")
    write(a, "memory/2026-12-01.md", "# 2026-12-01\n\n- New day.\n")
    sync(a, store, check=0)
    store.damage(rev(NEWER.encode()), b"# 2026-11-30\n\nbit rot\n")
    # The blocked replica syncs every other file and names the one bad path.
    proc = sync(b, store)
    assert proc.returncode == 6, proc.stderr
    assert DAY in proc.stderr and "damaged" in proc.stderr
    assert (b / "bank/world.md").read_text().endswith("Dresden.\n")
    assert (b / "memory/2026-12-01.md").exists()
    assert (b / DAY).read_text() == LOG  # its own version untouched
    # The replica holding the right bytes repairs the remote instead of saying "nothing to do".
    proc, report = sync_json(a, store)
    assert proc.returncode == 0, proc.stderr
    assert report["repaired"] == [DAY]
    proc, report = sync_json(b, store)
    assert proc.returncode == 0, proc.stderr
    assert report["pulled"] == [DAY] and report["damaged"] == []
    assert (b / DAY).read_text() == NEWER


def test_d15b_one_damaged_object_blocks_only_its_file_and_is_repaired(folder, tmp_path):
    _damaged_object_round(folder, tmp_path)


def test_d15b_one_damaged_object_blocks_only_its_file_and_is_repaired_s3(s3, tmp_path):
    _damaged_object_round(s3, tmp_path)


def test_d15b_a_missing_object_during_a_merge_is_named_not_fatal(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, DAY, NEWER)
    sync(a, folder, check=0)
    folder.object_path(rev(NEWER.encode())).unlink()
    write(b, DAY, LOG + "- B: desktop line.\n")
    write(b, "bank/world.md", "# World\n\n- Changed on the desktop.\n")
    proc, report = sync_json(b, folder)
    assert proc.returncode == 6
    assert report["damaged"] == [DAY] and report["pushed"] == ["bank/world.md"]
    assert (b / DAY).read_text() == LOG + "- B: desktop line.\n"


def test_issue14_a_round_that_creates_a_conflict_says_so(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, DAY, LOG.replace("likes tea", "loves tea"))
    write(b, DAY, LOG.replace("likes tea", "hates tea"))
    sync(a, folder, check=0)
    proc = sync(b, folder)
    assert proc.returncode == 9
    assert "nothing to do" not in proc.stderr and "1 new conflict" in proc.stderr


def _age(path: Path, seconds: float = 3600) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_d15c_stale_temp_files_of_killed_runs_are_removed(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    ours = [write(b, "memory/.2026-11-30.md.k2j3h4g5.tmp", "half a log"),
            write(b, "bank/entities/.Peter.md.a1b2c3d4.tmp", "half a page"),  # a killed reflect
            write(b, ".memory/sync/.base.json.qwertyui.tmp", "{"),
            write(folder.root, f"objects/ab/.{'ab' * 32}.zz_9yy8x.tmp", "half an object"),
            write(folder.root, ".manifest.json.m4n5b6v7.tmp", "{")]
    kept = [write(b, "memory/.draft.tmp", "someone else's"),  # not our naming
            write(b, "memory/notes.k2j3h4g5.tmp", "not hidden"),
            write(folder.root, "objects/ab/.other.tmp", "someone else's")]
    fresh = write(b, "memory/.2026-11-30.md.abcdefgh.tmp", "a write in progress")
    for path in ours + kept:
        _age(path)
    _age(b / ".memory/swept")  # the last sweep an hour ago
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert [p for p in ours if p.exists()] == []
    assert all(p.exists() for p in kept) and fresh.exists()
    assert report["temp_files_removed"] == len(ours)
    # At most every few minutes: the next run only looks at one marker file.
    _age(write(b, "memory/.2026-12-02.md.k2j3h4g5.tmp", "x"))
    proc, report = sync_json(b, folder)
    assert report["temp_files_removed"] == 0 and (b / "memory/.2026-12-02.md.k2j3h4g5.tmp").exists()


def test_d15c_a_killed_reflect_leaves_nothing_after_the_next_reflect(tmp_path):
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    write(ws, DAY, LOG)
    left = _age(write(ws, "bank/entities/.Peter.md.a1b2c3d4.tmp", "half a page"))
    run_mem("-w", ws, "reflect", "--force", env=mem_env(MEM_EMBEDDER="none"), check=0)
    assert not left.exists()


# --- names a remote may not bring, entries it may not null (qa36) -----------------------------------

TWINS = {"memory/Notes.md": b"# Notes\n- from a case-sensitive disk\n",
         "memory/notes.md": b"# notes\n- the other one\n",
         "memory/caf\u00e9.md": b"# cafe (NFC)\n",
         "memory/cafe\u0301.md": b"# cafe (NFD)\n",
         "bank/World.md": b"# World, capital W\n"}  # a twin of the replicas' bank/world.md


@pytest.mark.parametrize("where", ["folder", "s3"])
def test_qa36_paths_that_differ_only_by_case_or_unicode_form_are_not_synced(where, request, tmp_path):
    folder = request.getfixturevalue(where)
    a, b = pair_on(folder, tmp_path)
    world = (b / "bank/world.md").read_bytes()
    tamper(folder, {**TWINS, **LEGIT})
    before = manifest(folder)["files"]
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    named = {note.split(":")[0] for note in report["collisions"]}
    assert named == {*TWINS, "memory/cafe\u0301.md (NFD)", "bank/world.md"} - {"memory/cafe\u0301.md"}
    for path in TWINS:
        assert not (b / path).exists() or path == "bank/World.md" and (b / path).samefile(b / "bank/world.md")
    assert (b / "bank/world.md").read_bytes() == world  # neither overwritten nor published over its twin
    assert (b / "memory/2026-12-01.md").exists()  # the rest of the round went ahead
    after = manifest(folder)["files"]
    assert {p: after[p] for p in (*TWINS, "bank/world.md")} == {p: before[p] for p in (*TWINS, "bank/world.md")}


def test_qa36_local_twins_are_not_published(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, "memory/Plans.md", "# Plans\n- one\n")
    write(a, "memory/plans.md", "# plans\n- two\n")
    proc, report = sync_json(a, folder)
    assert proc.returncode == 0, proc.stderr
    assert sorted(n.split(":")[0] for n in report["collisions"]) == ["memory/Plans.md", "memory/plans.md"]
    assert not {"memory/Plans.md", "memory/plans.md"} & set(manifest(folder)["files"])
    proc = sync(a, folder)  # said on every round until one is renamed
    assert proc.returncode == 0 and "not synced: memory/Plans.md" in proc.stderr and "rename one of them" in proc.stderr


def test_qa36_a_rename_by_case_still_syncs(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    (a / "bank/world.md").rename(a / "bank/World.md")
    proc, report = sync_json(a, folder)
    assert proc.returncode == 0 and report["collisions"] == [], proc.stderr
    assert report["tombstoned"] == ["bank/world.md"] and report["pushed"] == ["bank/World.md"]
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0 and report["collisions"] == [], proc.stderr
    assert sorted(p.name for p in (b / "bank").iterdir()) == ["World.md"]


INVISIBLE = ["memory/evil\u202egnp.md", "memory/iso\u2066late.md", "memory/zero\u200bwidth.md",
             "memory/\ufeffbom.md", "memory/rtl\u200fmark.md", "memory/line\u2028sep.md", "memory/sur\ud800.md"]


@pytest.mark.parametrize("where", ["folder", "s3"])
def test_qa36_invisible_and_bidi_characters_in_remote_paths_are_refused(where, request, tmp_path):
    folder = request.getfixturevalue(where)
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    for path in INVISIBLE:
        m["files"][path] = {"rev": folder.put(path.encode("utf-8", "surrogatepass")), "size": 1}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    tamper(folder, LEGIT)
    proc = sync(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(b / "memory")) == ["2026-11-30.md", "2026-12-01.md"]
    refused = [line for line in proc.stderr.splitlines() if "refused from the remote" in line]
    assert len(refused) == len(INVISIBLE)
    # Named, but escaped: nothing that reorders or hides text on a terminal.
    assert all("\\u" in line for line in refused)
    assert not any(ch in proc.stderr for ch in "\u202e\u2066\u200b\ufeff\u200f\u2028")


@pytest.mark.parametrize("where", ["folder", "s3"])
def test_qa36_a_null_or_mistyped_manifest_entry_changes_nothing(where, request, tmp_path):
    folder = request.getfixturevalue(where)
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    m["files"][DAY] = None
    m["files"]["bank/world.md"] = 7
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    write(b, DAY, LOG + "- W @Peter: edited here meanwhile.\n")
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert sorted(n.split(":")[0] for n in report["refused"]) == ["bank/world.md", DAY]
    assert all("malformed manifest entry" in n for n in report["refused"])
    files = manifest(folder)["files"]
    assert files[DAY] is None and files["bank/world.md"] == 7  # not overwritten by a push either
    assert report["pushed"] == []


def test_qa36_a_top_level_link_out_of_the_workspace_or_into_memory_state_is_not_synced(folder, tmp_path):
    """`SOUL.md -> ~/elsewhere/SOUL.md` stopped every sync (exit 2, 'outside the workspace'); a top-level
    link into `.memory/` published that file's bytes (a sync key, the access log) to the remote."""
    a, b = pair_on(folder, tmp_path)
    secret = write(tmp_path, "elsewhere/SOUL.md", "# Soul kept elsewhere\n")
    os.symlink(secret, a / "SOUL.md")
    write(a, ".memory/sync/secret-state", "not for the remote\n")
    os.symlink(".memory/sync/secret-state", a / "LEAK.md")
    write(a, "memory/2026-12-01.md", "# 2026-12-01\n- still syncs\n")
    proc = sync(a, folder)
    assert proc.returncode == 0, proc.stderr
    assert "not synced: SOUL.md" in proc.stderr and "not synced: LEAK.md" in proc.stderr
    files = manifest(folder)["files"]
    assert "memory/2026-12-01.md" in files and not {"SOUL.md", "LEAK.md"} & set(files)
    assert not any(b"not for the remote" in p.read_bytes() for p in (folder.root / "objects").rglob("*") if p.is_file())


def test_qa36_a_listed_conflict_may_not_name_a_path_sync_never_writes(folder, tmp_path):
    """The remote's conflict list was not checked like its files: `mem sync status` offered a planted
    'conflict' at memtool.toml, and `mem sync resolve memtool.toml --keep remote` wrote the remote's
    bytes there (re-pointing sync, key file and trust tiers)."""
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    planted = folder.put(b"[sync]\nremote = '/tmp/elsewhere'\n")
    m["conflicts"] = {path: {"mallory": {"rev": planted, "against": planted, "size": 30, "time": "2026-12-01T00:00:00Z"}}
                      for path in ("memtool.toml", ".memory/sync/off.json", "../escaped.md")}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert sorted(n.split(":")[0] for n in report["refused"]) == sorted([".memory/sync/off.json", "../escaped.md", "memtool.toml"])
    _, status = run_json("-w", b, "sync", "status")
    assert status.get("conflicts_elsewhere", []) == []
    proc = sync(b, folder, "resolve", "memtool.toml", "--keep", "remote")
    assert proc.returncode == 2 and not (b / "memtool.toml").exists()
    assert not (b / ".memory/sync/off.json").exists()


def test_qa36_a_folder_where_an_object_should_be_blocks_only_its_file(folder, tmp_path):
    """A directory at objects/ab/<rev> stopped the whole round ('Is a directory', exit 4)."""
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    r = rev(b"never stored")
    folder.object_path(r).mkdir(parents=True)
    m["files"]["memory/2026-12-02.md"] = {"rev": r, "size": 12}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    tamper(folder, LEGIT)
    proc, report = sync_json(b, folder)
    assert proc.returncode == 6, proc.stderr
    assert report["damaged"] == ["memory/2026-12-02.md"] and report["pulled"] == ["memory/2026-12-01.md"]
    assert not (b / "memory/2026-12-02.md").exists()


@pytest.mark.parametrize("where", ["root", "shard"])
def test_qa36_a_manifest_nested_past_pythons_limit_is_a_clear_error(folder, tmp_path, where):
    """JSON nested 100,000 deep ended sync with a RecursionError traceback (exit 1)."""
    a, b = pair_on(folder, tmp_path)
    deep = b"[" * 100_000 + b"]" * 100_000
    if where == "root":
        folder.set_manifest_bytes(folder.manifest_bytes()[:-1] + b', "deep": ' + deep + b"}")
    else:
        root = json.loads(folder.manifest_bytes())
        shard = folder.put(b'{"files": ' + deep + b"}")
        root["shards"] = {k: shard for k in root["shards"]}
        root["generation"] += 1
        folder.set_manifest_bytes(json.dumps(root).encode())
    before = {p: (b / p).read_bytes() for p in (DAY, "bank/world.md")}
    proc = sync(b, folder)
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: ") and "hint: " in proc.stderr
    assert {p: (b / p).read_bytes() for p in before} == before


def test_qa36_a_listed_conflicts_time_reaches_the_terminal_escaped(folder, tmp_path):
    """`mem sync status` printed the remote's 'time' of a listed conflict as it was: an ESC sequence
    (or a bidi override) drove the reader's terminal."""
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    other = folder.put(LOG.encode() + b"- W @Peter: from the other machine.\n")
    m["conflicts"] = {DAY: {"mallory": {"rev": other, "against": m["files"][DAY]["rev"], "size": 9,
                                        "time": "\x1b]0;pwned\x07\x1b[2J\u202eevil"}}}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    sync(b, folder, check=0)
    proc = run_mem("-w", b, "sync", "status", check=0)
    assert "on mallory since" in proc.stdout
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\\x1b" in proc.stdout


def test_qa36_a_clone_names_what_it_did_not_bring(folder, tmp_path):
    """`mem sync clone` said 'cloned …: 1 files' and exited 0 while a damaged file was missing and
    refused or colliding entries were left out, without a word."""
    a, b = pair_on(folder, tmp_path)
    tamper(folder, {"memtool.toml": b"[sync]\n", "memory/Plans.md": b"# P\n", "memory/plans.md": b"# p\n"})
    world = manifest(folder)["files"]["bank/world.md"]["rev"]
    folder.damage(world, b"bit rot")
    clone = tmp_path / "third"
    proc = run_mem("sync", "clone", folder.url, clone)
    assert proc.returncode == 6, proc.stderr
    assert "bank/world.md is missing or damaged" in proc.stderr
    assert "refused from the remote's manifest: memtool.toml" in proc.stderr
    assert "not synced: memory/Plans.md" in proc.stderr
    assert (clone / DAY).read_text() == LOG and not (clone / "bank/world.md").exists()


def test_qa36_a_fifo_or_device_on_a_folder_remote_cannot_hang_sync(folder, tmp_path):
    """A FIFO where an object should be blocked the round (and the sync lock) forever; a manifest
    linked to /dev/zero would be read without end."""
    import subprocess
    import sys

    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    r = rev(b"a fifo")
    folder.object_path(r).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder.object_path(r))
    m["files"]["memory/2026-12-02.md"] = {"rev": r, "size": 6}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())

    def sync_within(seconds: float):
        return subprocess.run([sys.executable, "-m", "memtool", "-w", str(b), "sync", "--json"], capture_output=True,
                              text=True, env=mem_env(), timeout=seconds)
    proc = sync_within(30)
    assert proc.returncode == 6, proc.stderr
    assert json.loads(proc.stdout)["damaged"] == ["memory/2026-12-02.md"]
    (folder.root / "manifest.json").unlink()
    os.symlink("/dev/zero", folder.root / "manifest.json")
    proc = sync_within(30)
    assert proc.returncode == 4 and "not a regular file" in proc.stderr, proc.stderr


def test_qa36_watch_sync_says_what_a_round_left_out_once(folder, tmp_path):
    """`mem watch --sync` said nothing of a damaged remote copy, a refused entry or colliding names."""
    import threading

    from memtool.memory import Memory
    from memtool.sync.auto import AutoSync
    from memtool.workspace import Workspace

    a, b = pair_on(folder, tmp_path)
    tamper(folder, {"memtool.toml": b"[sync]\n", "memory/Plans.md": b"# P\n", "memory/plans.md": b"# p\n", **LEGIT})
    folder.damage(manifest(folder)["files"]["memory/2026-12-01.md"]["rev"], b"bit rot")
    said: list[str] = []
    auto = AutoSync(Workspace(b), Memory(Workspace(b), embedder="none").sync, 60.0, said.append, threading.Event())
    auto.tick(1000.0)
    assert any("damaged on the remote" in line and "memory/2026-12-01.md" in line for line in said), said
    assert any("refused from the remote's manifest: memtool.toml" in line for line in said), said
    assert any("not synced: memory/Plans.md" in line for line in said), said
    count = len(said)
    auto.tick(2000.0)  # the next pull: nothing new to say
    assert len(said) == count, said[count:]


def test_qa36_an_s3_answer_cut_short_is_a_clear_failure_not_a_traceback(tmp_path):
    """An S3 endpoint (or the network) that sends less than the Content-Length it announced ended
    `mem sync` with a ResponseStreamingError traceback (exit 1)."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def answer_short():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    request += chunk
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: "e"\r\n\r\n{"format": "memtool-sy')

    threading.Thread(target=answer_short, daemon=True).start()
    try:
        env = mem_env(**S3_ENV, AWS_ENDPOINT_URL=f"http://127.0.0.1:{listener.getsockname()[1]}", AWS_MAX_ATTEMPTS="1")
        ws = tmp_path / "ws"
        write(ws, DAY, LOG)
        proc = run_mem("-w", ws, "sync", "s3://bucket/memory", env=env)
        assert proc.returncode == 6 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("error: S3 read failed") and "hint: " in proc.stderr
        assert (ws / DAY).read_text() == LOG
        proc = run_mem("sync", "clone", "s3://bucket/memory", tmp_path / "clone", env=env)
        assert proc.returncode == 6 and "Traceback" not in proc.stderr, proc.stderr
        assert not (tmp_path / "clone").exists()
    finally:
        listener.close()


def test_qa36_the_fast_path_sends_every_invisible_character_to_the_full_check():
    """`path_problem` skips the per-character check for names outside a few Unicode blocks: those
    blocks must hold every format character, separator and surrogate this Python knows."""
    import re
    import sys
    import unicodedata

    from memtool.sync.plan import _SUSPECT, INVISIBLE, path_problem

    missed = [hex(c) for c in range(0x80, sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in INVISIBLE and not re.search(_SUSPECT, chr(c))]
    assert missed == []
    assert path_problem("memory/caf\u00e9 \u2013 notes.md") is None  # an en dash: a full check, and fine
    assert path_problem("memory/caf\u00e9\u200b.md") and path_problem("bank/\U000e0001tag.md")


def test_qa36_a_file_name_too_long_for_its_temp_file_is_refused_not_fatal(folder, tmp_path):
    """A remote name of 242-255 bytes passed the rule but its temp file (+14 bytes) could not be made:
    the round stopped after publishing (exit 4), every later file unwritten, every later round alike."""
    a, b = pair_on(folder, tmp_path)
    long_name = "memory/" + "a" * 244 + ".md"
    tamper(folder, {long_name: b"long\n", **LEGIT})
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert (b / "memory/2026-12-01.md").exists()
    assert [n.split(":")[0] for n in report["refused"]] == [long_name]
    # Such a name made here is not published either, and is said to be left out.
    write(a, "memory/" + "b" * 230 + ".md", "# too long a name\n")
    proc = sync(a, folder)
    assert proc.returncode == 0 and "not synced: memory/bbb" in proc.stderr and "longer than 200 bytes" in proc.stderr
    assert not any(p.startswith("memory/bbb") for p in manifest(folder)["files"])


def test_qa36_a_conflict_on_a_long_name_keeps_its_copy_and_backup_within_limits(folder, tmp_path):
    """The conflict copy of a 200-byte name (+10 for '.conflict-', + the device) was longer than a name
    sync accepts; with a device name of 11 characters or more (most hostnames) its backup by
    `mem sync resolve` failed with 'File name too long'. The copy's name is now cut to 200 bytes."""
    a, b = pair_on(folder, tmp_path)
    path = "memory/" + "c" * 197 + ".md"
    write(a, path, "# Long\n\n- first line\n")
    sync(a, folder, check=0)
    sync(b, folder, check=0)
    write(a, path, "# Long\n\n- first line, from the laptop\n")
    write(b, path, "# Long\n\n- first line, from the desktop\n")
    sync(a, folder, check=0)
    proc, report = sync_json(b, folder)
    assert proc.returncode == 9 and report["conflicts"] == [path], proc.stderr
    copy = next(p for p in (b / "memory").iterdir() if ".conflict-" in p.name)
    assert len(copy.name.encode()) <= 200 and copy.read_text() == "# Long\n\n- first line, from the laptop\n"
    proc = run_mem("-w", b, "sync", "resolve", path, "--keep", "remote")
    assert proc.returncode == 0, proc.stderr
    assert (b / path).read_text() == "# Long\n\n- first line, from the laptop\n" and not copy.exists()


def test_qa36_a_file_synced_under_an_older_rule_leaves_the_base_and_the_fast_path_returns(folder, tmp_path):
    """A name an older memtool synced (e.g. 230 bytes) stayed in base.json forever: every round then
    saw 'a file gone' and did all its work instead of the one-request check."""
    a, b = pair_on(folder, tmp_path)
    long_path = "memory/" + "d" * 230 + ".md"
    write(b, long_path, "# synced by an older memtool\n")
    base = json.loads((b / ".memory/sync/base.json").read_text())
    st = (b / long_path).stat()
    base["files"][long_path] = [rev((b / long_path).read_bytes()), st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    (b / ".memory/sync/base.json").write_text(json.dumps(base))
    sync(b, folder, check=0)
    assert long_path not in json.loads((b / ".memory/sync/base.json").read_text())["files"]
    assert (b / long_path).exists()  # left alone, never deleted


def test_names_spelt_with_a_zero_width_joiner_or_non_joiner_sync(folder, tmp_path):
    """Refusing every format character refused the zero-width non-joiner and joiner, which are
    spelling: Persian and Indic names (می‌خواهم), emoji sequences (👨‍👩‍👧). Such files stopped syncing,
    with a warning every round; disguise (bidi overrides, zero-width space, BOM) is still refused."""
    from memtool.sync.plan import path_problem

    names = ["bank/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md", "memory/\U0001f468\u200d\U0001f469\u200d\U0001f467.md"]
    assert [path_problem(n) for n in names] == [None, None]
    assert path_problem("bank/a\u200bb.md") and path_problem("bank/a\u202eb.md")
    a, b = pair_on(folder, tmp_path)
    for name in names:
        write(a, name, "- The family trip.\n")
    assert sync(a, folder).returncode == 0
    proc = sync(b, folder)
    assert proc.returncode == 0 and "refused" not in proc.stderr, proc.stderr
    assert all((b / name).read_text(encoding="utf-8") == "- The family trip.\n" for name in names)


MAX_OBJECT_BYTES = 64 * 2**20  # memtool.sync.remotes.MAX_OBJECT_BYTES, as docs/sync.md gives it
HUGE = "memory/2026-12-02.md"


def _plant_huge(store, path: str = HUGE) -> str:
    """A manifest entry for `path` naming a revision of 64 MiB + 1 byte (an older memtool wrote it, or
    it was crafted), beside the legitimate new file of LEGIT; the huge revision's name."""
    huge_rev = rev(b"a crafted revision")
    m = manifest(store)
    if isinstance(store, FolderStore):
        store.object_path(huge_rev).parent.mkdir(parents=True, exist_ok=True)
        with open(store.object_path(huge_rev), "wb") as fh:
            fh.truncate(MAX_OBJECT_BYTES + 1)  # sparse: no 64 MiB written
    else:
        store.damage(huge_rev, b"\0" * (MAX_OBJECT_BYTES + 1))
    m["files"][path] = {"rev": huge_rev, "size": 10, "device": "mallory", "time": "2026-12-01T00:00:00Z"}
    for p, data in LEGIT.items():
        m["files"][p] = {"rev": store.put(data), "size": len(data), "device": "mallory", "time": "2026-12-01T00:00:00Z"}
    m["generation"] = m.get("generation", 0) + 1
    store.set_manifest_bytes(json.dumps(m).encode())
    return huge_rev


def _oversize_object_round(store, tmp_path):
    """A remote revision over the 64 MiB limit stopped every round (exit 6, nothing synced), for ever:
    one such entry froze sync for good. Now it blocks only its own path: named once per round with the
    revision, its size, the limit and how to resolve it (exit 6), never read, never dropped from the
    manifest, never written over the local file; every other file syncs; `mem sync resolve PATH
    --keep local` publishes this machine's version over it on purpose."""
    a, b = pair_on(store, tmp_path)
    write(b, HUGE, "# 2026-12-02\n\n- Written on the desktop.\n")  # a local file at that path: kept
    huge_rev = _plant_huge(store)
    for _ in range(2):  # every round says it again (the fast path does not hide it), once
        proc = sync(b, store)
        assert proc.returncode == 6, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if HUGE in line]
        assert len(lines) == 1, proc.stderr
        assert f"revision {huge_rev[:12]}" in lines[0] and f"{MAX_OBJECT_BYTES + 1:,} bytes" in lines[0]
        assert f"{MAX_OBJECT_BYTES:,}" in lines[0] and f"mem sync resolve {HUGE} --keep local" in lines[0]
        assert "Traceback" not in proc.stderr
        assert (b / "memory/2026-12-01.md").read_bytes() == LEGIT["memory/2026-12-01.md"]  # the rest syncs
        assert (b / HUGE).read_text() == "# 2026-12-02\n\n- Written on the desktop.\n"
        entry = manifest(store)["files"][HUGE]
        assert entry["rev"] == huge_rev and "damaged" not in entry and "deleted" not in entry  # never dropped
    proc, report = sync_json(a, store)
    assert proc.returncode == 6 and [n for n in report["oversize"] if n.startswith(HUGE)], proc.stderr
    assert report["pulled"] == ["memory/2026-12-01.md"] and not (a / HUGE).exists()
    _, status = sync_json(b, store, "status")
    assert list(status["oversize"]) == [HUGE]
    # Resolved on purpose: this machine's version replaces the entry; the huge revision stays on the remote.
    proc = run_mem("-w", b, "sync", "resolve", HUGE, "--keep", "remote")
    assert proc.returncode == 2 and "over the limit" in proc.stderr
    run_mem("-w", b, "sync", "resolve", HUGE, "--keep", "local", check=0)
    proc, report = sync_json(b, store)
    assert proc.returncode == 0 and report["pushed"] == [HUGE] and report["oversize"] == [], proc.stderr
    proc, report = sync_json(a, store)
    assert proc.returncode == 0 and report["pulled"] == [HUGE], proc.stderr
    assert (a / HUGE).read_text() == "# 2026-12-02\n\n- Written on the desktop.\n"
    assert len(store.get(huge_rev)) == MAX_OBJECT_BYTES + 1


def test_a_remote_object_over_the_size_limit_blocks_only_its_path_and_is_said_every_round(folder, tmp_path):
    _oversize_object_round(folder, tmp_path)


def test_a_remote_object_over_the_size_limit_blocks_only_its_path_and_is_said_every_round_s3(s3, tmp_path):
    _oversize_object_round(s3, tmp_path)


def test_a_remote_object_over_the_size_limit_does_not_fail_a_clone(folder, tmp_path):
    a, _ = pair_on(folder, tmp_path)
    huge_rev = _plant_huge(folder)
    proc = run_mem("sync", "clone", folder.url, tmp_path / "third")
    assert proc.returncode == 6 and f"revision {huge_rev[:12]}" in proc.stderr, proc.stderr
    assert (tmp_path / "third" / "memory/2026-12-01.md").exists() and not (tmp_path / "third" / HUGE).exists()


def test_a_local_file_over_the_size_limit_is_named_not_published_and_never_taken_for_deleted(folder, tmp_path):
    """What a replica would refuse to read (over 64 MiB) is not published: named in not_synced, its
    last agreed version stays on the remote and on the other machine (not tombstoned), and a later
    edit of any other file still syncs."""
    a, b = pair_on(folder, tmp_path)
    with open(b / DAY, "r+b") as fh:
        fh.truncate(64 * 2**20)  # sparse
    write(b, "bank/world.md", "# World\n\n- Changed on the desktop.\n")
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert [n for n in report["not_synced"] if n.startswith(DAY)] and "over the" in report["not_synced"][0]
    assert report["pushed"] == ["bank/world.md"] and report["tombstoned"] == [] and report["deleted"] == []
    assert manifest(folder)["files"][DAY]["rev"] == rev(LOG.encode())
    proc, report = sync_json(a, folder)
    assert proc.returncode == 0 and report["deleted"] == [] and (a / DAY).read_text() == LOG
    assert (a / "bank/world.md").read_text().endswith("desktop.\n")


def test_a_local_file_over_the_size_limit_is_neither_a_deletion_in_status_nor_a_change_for_auto_sync(folder, tmp_path):
    """A file sync leaves alone because it is too big was reported by `mem sync status` as deleted
    since the last sync, and kept auto-sync's files "changed" for ever (a round each second: a request
    to the remote each time, on S3 a bill)."""
    import threading

    from memtool.sync.auto import AutoSync
    from memtool.workspace import Workspace

    a, b = pair_on(folder, tmp_path)
    with open(b / DAY, "r+b") as fh:
        fh.truncate(64 * 2**20)  # sparse
    assert sync(b, folder).returncode == 0
    proc, status = sync_json(b, folder, "status")
    assert proc.returncode == 0 and status["local_deletions"] == [] and status["local_changes"] == [], status
    rounds = []
    nothing = {k: [] for k in ("pulled", "pushed", "merged", "deleted", "tombstoned", "new_conflicts", "damaged",
                               "refused", "collisions", "not_synced")}
    auto = AutoSync(Workspace(b), lambda: rounds.append(1) or nothing, 3600.0, lambda line: None, threading.Event())
    auto.schedule.next_pull = float("inf")  # only a local change may start a round here
    for now in (100.0, 200.0, 300.0):
        auto.tick(now)
    assert rounds == []


def _limited(gib: float):
    """A preexec_fn capping the child's address space: a file it reads whole past that fails loudly."""
    import resource

    def limit():
        cap = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    return limit


def _sync_limited(ws: Path, store, *args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), "sync", *map(str, args)],
                          capture_output=True, text=True, env=store.env or mem_env(), timeout=120,
                          preexec_fn=_limited(2))


def _tree(ws: Path) -> dict:
    return {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and not p.name.endswith(".lock")}


def test_a_huge_manifest_on_a_folder_is_refused_unread_and_nothing_changes(folder, tmp_path):
    """manifest.json was read whole into memory: a crafted 3 GiB one (sparse) exhausted the memory of
    a process allowed 2 GiB. Now it is refused by its size, unread, with one line, and nothing changes."""
    a, b = pair_on(folder, tmp_path)
    before = _tree(b)
    with open(folder.root / "manifest.json", "r+b") as fh:
        fh.truncate(3 * 2**30)
    proc = _sync_limited(b, folder)
    assert proc.returncode == 4, proc.stderr
    assert "the manifest on" in proc.stderr and "over the limit of 67,108,864" in proc.stderr
    assert "hint:" in proc.stderr and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert _tree(b) == before


def test_a_huge_manifest_on_s3_is_refused_unread_and_nothing_changes(s3, tmp_path):
    a, b = pair_on(s3, tmp_path)
    before = _tree(b)
    s3.set_manifest_bytes(b" " * (MAX_OBJECT_BYTES + 1))
    proc = sync(b, s3)
    assert proc.returncode == 4, proc.stderr
    assert "the manifest on" in proc.stderr and "over the limit of 67,108,864" in proc.stderr, proc.stderr
    assert _tree(b) == before


def test_a_huge_encryption_marker_is_refused_unread_and_nothing_is_made(folder, tmp_path):
    """encryption.json too was read whole (before any key check): a 3 GiB one now stops the first
    sync and a clone with a clear error; no workspace state, and no clone folder, is made."""
    ws = tmp_path / "ws"
    write(ws, DAY, LOG)
    folder.root.mkdir()
    with open(folder.root / "encryption.json", "wb") as fh:
        fh.truncate(3 * 2**30)
    before = _tree(ws)
    proc = _sync_limited(ws, folder, folder.url)
    assert proc.returncode == 4, proc.stderr
    assert "encryption.json on" in proc.stderr and "over the limit of 65,536" in proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert _tree(ws) == before and not (ws / ".memory").exists()


def test_a_huge_encryption_marker_on_s3_is_refused(s3, tmp_path):
    ws = tmp_path / "ws"
    write(ws, DAY, LOG)
    s3.client.put_object(Bucket=s3.bucket, Key=f"{s3.prefix}/encryption.json", Body=b"{" * (2**16 + 1))
    proc = sync(ws, s3, s3.url)
    assert proc.returncode == 4 and "over the limit of 65,536" in proc.stderr, proc.stderr
    assert not (ws / ".memory").exists()


def test_a_manifest_shard_over_the_size_limit_is_a_clear_error_and_nothing_changes(folder, tmp_path):
    a, b = pair_on(folder, tmp_path)
    write(a, "memory/2026-12-03.md", "- new\n")
    sync(a, folder, check=0)
    root = json.loads(folder.manifest_bytes())
    assert root["format"] == "memtool-sync/2"
    shard = next(iter(root["shards"].values()))
    before = _tree(b)
    with open(folder.object_path(shard), "r+b") as fh:
        fh.truncate(MAX_OBJECT_BYTES + 1)
    proc = sync(b, folder)
    assert proc.returncode == 4, proc.stderr
    assert "a manifest shard on" in proc.stderr and "over the limit" in proc.stderr and "Traceback" not in proc.stderr
    assert _tree(b) == before


def test_a_manifest_over_the_limit_is_never_published(tmp_path):
    """With manifest.json capped on reading, a replica must not publish one over the cap: every replica,
    itself included, would refuse the remote from then on."""
    from memtool.errors import WorkspaceError
    from memtool.sync.remotes import FolderRemote

    remote = FolderRemote(tmp_path / "remote")
    remote.write_manifest(b"{}", None)
    with pytest.raises(WorkspaceError, match="nothing was published"):
        remote.write_manifest(b" " * (MAX_OBJECT_BYTES + 1), remote.read_manifest()[1])
    assert remote.read_manifest()[0] == b"{}"


@contextmanager
def _through_proxy(s3, s3_server):
    """(proxy, store): the S3 test server behind a `_TruncatingProxy` the test steers, and a store whose
    sync goes through it (one attempt per request); the proxy is closed after."""
    proxy = _TruncatingProxy(s3_server)
    try:
        yield proxy, S3Store(s3.client, s3.url, mem_env(**S3_ENV, AWS_ENDPOINT_URL=proxy.url, AWS_MAX_ATTEMPTS="1"))
    finally:
        proxy.close()


class _TruncatingProxy:
    """An HTTP proxy in front of the S3 server that sends GETs of the object named `cut` (when set)
    with their full Content-Length announced but only half the bytes, with `strip_etag` set answers
    without ETag headers, and with `manifest_304` set answers every read of the manifest with 304."""

    def __init__(self, target: str):
        import http.client
        import http.server
        import threading
        from urllib.parse import urlparse

        host, port = urlparse(target).hostname, urlparse(target).port
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy.manifest_304 and self.command == "GET" and self.path.split("?")[0].endswith("/manifest.json"):
                    self.send_response(304)
                    self.send_header("ETag", '"e"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                conn = http.client.HTTPConnection(host, port, timeout=30)
                conn.request(self.command, self.path, body=body, headers=dict(self.headers))
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length") and not (
                            proxy.strip_etag and k.lower() == "etag"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                cut = proxy.cut and self.command == "GET" and self.path.endswith(proxy.cut) and answer.status == 200
                self.wfile.write(data[:len(data) // 2] if cut else data)
                self.close_connection = True

            do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _forward

        self.cut = ""
        self.strip_etag = False
        self.manifest_304 = False
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_an_s3_object_cut_short_in_transit_is_a_network_failure_not_a_damaged_copy(s3, s3_server, tmp_path):
    """A revision whose download ended early (fewer bytes than the Content-Length announced) was taken
    for a damaged remote copy: the round published a false `"damaged": true` mark for it. Now it is a
    failure of the transfer (exit 6, said so), nothing is published or written, and the next round,
    with the line whole again, pulls it."""
    with _through_proxy(s3, s3_server) as (proxy, store):
        a, b = pair_on(store, tmp_path)
        write(a, DAY, NEWER)
        sync(a, store, check=0)
        generation = manifest(store)["generation"]
        proxy.cut = f"/objects/{rev(NEWER.encode())[:2]}/{rev(NEWER.encode())}"
        proc = sync(b, store)
        assert proc.returncode == 6, proc.stderr
        assert "announced arrived" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        proxy.cut = ""
        m = manifest(store)
        assert m["generation"] == generation and "damaged" not in m["files"][DAY]
        assert (b / DAY).read_text() == LOG
        proc, report = sync_json(b, store)
        assert proc.returncode == 0 and report["pulled"] == [DAY] and (b / DAY).read_text() == NEWER


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_link_or_fifo_planted_as_the_folder_remotes_lock_file_is_refused_and_nothing_is_truncated(folder, tmp_path, planted):
    """Whoever writes the remote folder put `.manifest.lock -> a file of this user`: with filelock 3.12
    (what pyproject allows) taking the lock opened it with O_TRUNC through the link and emptied that
    file. Now the lock file is checked first (never through a link, only a regular file): one line, exit 4,
    nothing published, the file pointed at untouched."""
    a, b = pair_on(folder, tmp_path)
    victim = tmp_path / "victim.md"
    victim.write_text("precious\n")
    lock = folder.root / ".manifest.lock"
    lock.unlink(missing_ok=True)
    if planted == "link":
        lock.symlink_to(victim)
    else:
        os.mkfifo(lock)
    before = folder.manifest_bytes()
    write(b, "memory/2026-12-05.md", "- new\n")
    proc = sync(b, folder)
    assert proc.returncode == 4, proc.stderr
    assert ".manifest.lock" in proc.stderr and "not a regular file" in proc.stderr and "hint:" in proc.stderr
    assert victim.read_text() == "precious\n" and folder.manifest_bytes() == before
    lock.unlink()
    assert sync(b, folder).returncode == 0


def test_a_path_below_a_folder_named_like_a_markdown_file_is_refused_not_pulled_then_tombstoned(folder, tmp_path):
    """`memory/notes.md/inner.md` passed the path rule, but memtool never reads below a folder named
    `*.md`: the replica that pulled it saw it gone on its next round and published a tombstone ("deleted
    here"), deleting it on every other replica; beside a file `memory/notes.md` its folder could not
    even be made. Now such a path is refused, like any path sync would not publish."""
    a, b = pair_on(folder, tmp_path)
    tamper(folder, {"memory/notes.md/inner.md": b"- inner\n", "memory/x.md": b"- x\n", "memory/x.md/y.md": b"- y\n"})
    for n in range(2):  # (the second round finds nothing new: refusals are said by the round that finds them)
        write(b, "bank/world.md", f"# World\n\n- Edit {n}.\n")
        proc, report = sync_json(b, folder)
        assert proc.returncode == 0, proc.stderr
        refused = "\n".join(report["refused"])
        assert "memory/notes.md/inner.md" in refused and "memory/x.md/y.md" in refused
        assert report["tombstoned"] == [] and report["deferred"] == []
    assert (b / "memory/x.md").read_text() == "- x\n" and not (b / "memory/notes.md").exists()
    files = manifest(folder)["files"]
    assert files["memory/notes.md/inner.md"]["rev"] == rev(b"- inner\n")  # left as it is on the remote
    from memtool.sync.plan import path_problem
    assert path_problem("memory/notes.md/inner.md") and path_problem("bank/a.md/b/c.md")
    assert path_problem("memory/2026/notes.md") is None and path_problem("memory/v1.mdx/a.md") is None


def test_an_s3_endpoint_answering_without_an_etag_is_a_clear_error_not_a_traceback(s3, s3_server, tmp_path):
    """An endpoint (a proxy, a store that is not quite S3) answering without an ETag ended `mem sync`
    with a KeyError traceback (exit 1), the first time after it had published the manifest. Now it is
    one line naming the ETag (exit 6); nothing here changes, and once the endpoint answers properly
    the next sync completes."""
    with _through_proxy(s3, s3_server) as (proxy, store):
        ws = tmp_path / "ws"
        write(ws, DAY, LOG)
        proxy.strip_etag = True
        for _ in range(2):
            proc = sync(ws, store, store.url)
            assert proc.returncode == 6, proc.stderr
            assert "ETag" in proc.stderr and "hint:" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
            assert (ws / DAY).read_text() == LOG
        proxy.strip_etag = False
        proc, report = sync_json(ws, store, store.url)
        assert proc.returncode == 0, proc.stderr
        write(ws, DAY, NEWER)
        proxy.strip_etag = True
        proc = sync(ws, store)
        assert proc.returncode == 6 and "ETag" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        proxy.strip_etag = False
        proc, report = sync_json(ws, store)
        assert proc.returncode == 0, proc.stderr
        assert manifest(store)["files"][DAY]["rev"] == rev(NEWER.encode()) and (ws / DAY).read_text() == NEWER


def test_an_s3_endpoint_answering_not_modified_to_a_plain_read_is_a_clear_error(s3, s3_server, tmp_path):
    """A 304 (not modified) to a read that named no ETag was taken for "the cached manifest is still
    current" with no cached manifest: a TypeError traceback, in `mem sync` and in `mem sync clone`."""
    with _through_proxy(s3, s3_server) as (proxy, store):
        ws = tmp_path / "ws"
        write(ws, DAY, LOG)
        proxy.manifest_304 = True
        proc = sync(ws, store, store.url)
        assert proc.returncode == 6 and "304" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not (ws / ".memory" / "sync" / "binding.json").exists()
        proc = run_mem("sync", "clone", store.url, tmp_path / "clone", env=store.env)
        assert proc.returncode == 6 and "Traceback" not in proc.stderr and not (tmp_path / "clone").exists(), proc.stderr
        proxy.manifest_304 = False
        assert sync(ws, store, store.url).returncode == 0


def test_a_marker_asking_for_more_scrypt_memory_than_allowed_is_refused_before_deriving(folder, tmp_path):
    """A remote's encryption.json asking for scrypt at N=2^20, r=16 (2 GiB) passed the marker's bounds,
    then hashlib refused it (maxmem must stay below 2^31): a ValueError traceback in clone and sync.
    Now the marker's memory is bounded too (1 GiB): refused with one line (exit 8), no folder made."""
    import base64

    from memtool.sync import encryption as enc

    folder.root.mkdir()
    kdf = {"name": "scrypt", "n": 2**20, "r": 16, "p": 4, "salt": base64.b64encode(os.urandom(16)).decode()}
    (folder.root / "encryption.json").write_bytes(enc.new_marker(os.urandom(32), kdf))
    env = mem_env(MEM_SYNC_PASSPHRASE="a long enough passphrase")
    proc = run_mem("sync", "clone", folder.url, tmp_path / "clone", env=env)
    assert proc.returncode == 8 and "Traceback" not in proc.stderr, proc.stderr
    assert "scrypt" in proc.stderr and "hint:" in proc.stderr and not (tmp_path / "clone").exists()
    salt = base64.b64encode(os.urandom(16)).decode()
    for n, r, ok in ((2**17, 8, True), (2**20, 8, True), (2**19, 16, True), (2**20, 16, False), (2**20, 9, False)):
        marker = enc.new_marker(os.urandom(32), {"name": "scrypt", "n": n, "r": r, "p": 1, "salt": salt})
        if ok:
            enc.parse_marker(marker, "remote")
        else:
            with pytest.raises(enc.SyncKeyError, match="scrypt"):
                enc.parse_marker(marker, "remote")


def test_a_machine_without_the_memory_scrypt_asks_for_gets_a_clear_error(folder, tmp_path):
    """A marker within bounds (scrypt at 1 GiB) on a machine that cannot give that much memory (here an
    address-space cap of 1 GiB) ended clone with a ValueError traceback ("malloc failure")."""
    import base64
    import subprocess
    import sys

    from memtool.sync import encryption as enc

    folder.root.mkdir()
    kdf = {"name": "scrypt", "n": 2**20, "r": 8, "p": 1, "salt": base64.b64encode(os.urandom(16)).decode()}
    (folder.root / "encryption.json").write_bytes(enc.new_marker(os.urandom(32), kdf))
    proc = subprocess.run([sys.executable, "-m", "memtool", "sync", "clone", folder.url, str(tmp_path / "clone")],
                          capture_output=True, text=True, env=mem_env(MEM_SYNC_PASSPHRASE="a long enough passphrase"),
                          timeout=120, preexec_fn=_limited(1))
    assert proc.returncode == 8 and "Traceback" not in proc.stderr, proc.stderr
    assert "memory" in proc.stderr and "hint:" in proc.stderr and not (tmp_path / "clone").exists()


@pytest.mark.parametrize("where", ["path", "device", "listing"])
def test_a_lone_surrogate_anywhere_in_the_manifest_does_not_block_publishing(folder, tmp_path, where):
    """A lone surrogate (`\\ud800`, valid as a JSON escape) in a refused path, in an entry's device or
    time, or in a listed conflict's device, is kept as it is when the manifest is published again; that
    publishing ended in a UnicodeEncodeError traceback, on every replica with something to push, for
    every round after. Now the manifest is written with such characters escaped (valid JSON, as read)."""
    a, b = pair_on(folder, tmp_path)
    m = manifest(folder)
    r = folder.put(b"- x\n")
    if where == "path":
        m["files"]["memory/bad\ud800.md"] = {"rev": r, "size": 4, "device": "m", "time": "t"}
    elif where == "device":
        m["files"]["memory/ok.md"] = {"rev": r, "size": 4, "device": "m\ud800", "time": "t\ud800"}
    else:
        m["conflicts"] = {DAY: {"dev\ud800": {"rev": r, "against": r, "size": 4, "time": "t"}}}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())  # ASCII JSON: the surrogate as an escape
    write(b, "bank/world.md", "# World\n\n- Changed on the desktop.\n")
    proc = sync(b, folder)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    after = manifest(folder)
    assert after["files"]["bank/world.md"]["rev"] == rev(b"# World\n\n- Changed on the desktop.\n")
    if where == "path":
        assert after["files"]["memory/bad\ud800.md"]["rev"] == r  # left as it was
    proc = sync(a, folder)
    assert proc.returncode == 0 and (a / "bank/world.md").read_text().endswith("desktop.\n"), proc.stderr
    assert sync(b, folder).returncode == 0


@pytest.mark.parametrize("memory_id", ["ab\ud800cd", "x" * 100_000, "\x1b[31mred"])
def test_a_manifest_whose_memory_id_is_not_an_id_is_refused_before_anything_changes(folder, tmp_path, memory_id):
    """The manifest's memory_id is stored in binding.json by a workspace's first sync: a lone surrogate
    there ended that sync in a UnicodeEncodeError traceback after it had published and written files
    (and every retry alike); 100 KB or a terminal escape were stored as they came. Now a memory id is
    1-64 letters, digits, '-' or '_' (memtool writes 32 hex digits), else the manifest is refused (exit 4)
    before anything is written here or published."""
    a = tmp_path / "a"
    write(a, DAY, LOG)
    sync(a, folder, folder.url, check=0)
    m = manifest(folder)
    m["memory_id"] = memory_id
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    before = folder.manifest_bytes()
    c = tmp_path / "c"
    write(c, "memory/other.md", "- other\n")
    proc = sync(c, folder, folder.url)
    assert proc.returncode == 4 and "memory_id" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr and len(proc.stderr) < 1000
    assert not (c / DAY).exists() and not (c / ".memory/sync/binding.json").exists()
    assert folder.manifest_bytes() == before


def test_a_listed_conflict_of_a_device_with_an_unusual_name_can_be_resolved_here(folder, tmp_path):
    """`mem sync resolve` of a conflict another machine listed recorded it under the device's name as
    shown (`evil-device`), but the round looked it up under the name as listed (`evil.device`): the
    entry never left the remote's list, and `mem sync status` kept showing it after every resolve."""
    a, b = pair_on(folder, tmp_path)
    theirs = folder.put((LOG + "- theirs\n").encode())
    m = manifest(folder)
    m["conflicts"] = {DAY: {"evil.device": {"rev": theirs, "against": m["files"][DAY]["rev"], "size": 1,
                                            "time": "2026-12-01T00:00:00Z"}}}
    m["generation"] += 1
    folder.set_manifest_bytes(json.dumps(m).encode())
    sync(b, folder, check=0)
    _, status = sync_json(b, folder, "status")
    assert [c["device"] for c in status["conflicts_elsewhere"]] == ["evil-device"]
    run_mem("-w", b, "sync", "resolve", DAY, "--keep", "local", check=0)
    _, status = sync_json(b, folder, "status")
    assert status["conflicts_elsewhere"] == []
    sync(b, folder, check=0)
    assert "conflicts" not in manifest(folder)
    _, status = sync_json(b, folder, "status")
    assert status["conflicts_elsewhere"] == []


def test_a_file_deep_enough_that_its_lock_name_is_too_long_still_syncs(folder, tmp_path):
    """The per-file lock is a file named after the whole path (`/` as `_`): a path over 250 bytes (here
    plain ASCII, within the rule's 1024) gave a lock name the file system refuses, so every pull of a
    change to it failed after publishing (exit 4), round after round."""
    deep = "memory/" + "a" * 120 + "/" + "b" * 120 + "/notes.md"
    a, b = pair_on(folder, tmp_path)
    write(a, deep, "- one\n")
    sync(a, folder, check=0)
    sync(b, folder, check=0)
    write(a, deep, "- one\n- two\n")
    sync(a, folder, check=0)
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0 and report["pulled"] == [deep], proc.stderr
    assert (b / deep).read_text() == "- one\n- two\n"
    from memtool.safe_writes import lock_file_stem

    assert lock_file_stem("memory/2026-11-30.md") == "memory_2026-11-30.md"  # unchanged for the usual names
    assert len(lock_file_stem(deep).encode()) <= 200 and lock_file_stem(deep) != lock_file_stem(deep[:-4] + "x.md")


def test_a_path_of_many_multibyte_characters_is_refused_by_its_bytes(folder, tmp_path):
    """The rule capped a path at 1024 characters: 1019 four-byte characters (4001 bytes) passed, and
    the backup made before its first update (`.memory/backups/<path>.<time>`) was past the 4096 bytes
    a path may have: every round after publishing failed (exit 4). Now the cap is 1024 bytes."""
    comp = "\U0001F600" * 63
    deep = "memory/" + "/".join([comp] * 15) + "/" + "\U0001F600" * 49 + ".md"
    from memtool.sync.plan import path_problem

    assert len(deep) <= 1024 and path_problem(deep) == "path too long"
    assert path_problem("memory/" + "é" * 120 + "/" + "é" * 120 + "/" + "x" * 100 + ".md") is None  # 591 bytes: fine
    a = tmp_path / "a"
    b = tmp_path / "some/longer/folders/where/the/desktop/workspace/lives/x"
    write(a, DAY, LOG)
    (b / "memory").mkdir(parents=True)
    sync(a, folder, folder.url, check=0)
    sync(b, folder, folder.url, check=0)
    tamper(folder, {deep: b"- deep\n"})
    assert sync(b, folder).returncode == 0
    tamper(folder, {deep: b"- deep v2\n", "memory/2026-12-01.md": b"- legit\n"})
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0, proc.stderr
    assert report["pulled"] == ["memory/2026-12-01.md"] and any("path too long" in n for n in report["refused"])


def test_a_file_the_disk_refuses_blocks_only_itself(folder, tmp_path):
    """One file the system refused to write (here: over the process's file size limit, as a quota or
    a full disk would) stopped the round after publishing, with a message naming no file: every file
    after it, in every round, stayed unwritten. Now that file is named (exit 4), everything else is
    written, and the next round, with room again, writes it."""
    import resource
    import subprocess
    import sys

    a, b = pair_on(folder, tmp_path)
    big = "# World\n\n" + "- a line of the world\n" * 50_000  # 1.1 MB
    write(a, "bank/world.md", big)
    write(a, "bank/atlas.md", big)  # new here: created, not replaced
    write(a, DAY, NEWER)
    write(a, "memory/2026-12-09.md", "- new\n")
    sync(a, folder, check=0)

    def small_files_only():
        resource.setrlimit(resource.RLIMIT_FSIZE, (512 * 1024, 512 * 1024))

    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "memtool", "-w", str(b), "sync"], capture_output=True, text=True,
                              env=mem_env(), timeout=120, preexec_fn=small_files_only)
        assert proc.returncode == 4, proc.stderr
        assert "bank/world.md" in proc.stderr and "bank/atlas.md" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
        assert (b / DAY).read_text() == NEWER and (b / "memory/2026-12-09.md").exists()
        assert (b / "bank/world.md").read_text().startswith("# World\n\n- The Elbe")
        assert sorted(p.name for p in (b / "bank").iterdir()) == ["world.md"]  # no temp file left behind
    proc, report = sync_json(b, folder)
    assert proc.returncode == 0 and report["pulled"] == ["bank/atlas.md", "bank/world.md"], proc.stderr
    assert (b / "bank/world.md").read_text() == big == (b / "bank/atlas.md").read_text()
