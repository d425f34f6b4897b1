"""Item 1 of sync v2: an encrypted remote (folder and S3) holds no plaintext, refuses a missing or wrong
key before writing anything, and keeps compare-and-swap on its sealed manifest."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import pytest

from conftest import mem_env, run_json, run_mem, write
from memtool.sync import encryption as enc
from memtool.sync.remotes import FolderRemote, StaleManifest

PASS = "correct horse battery staple"
SECRET_FILE = "bank/entities/Zebrafischzucht.md"
FILES = {
    "memory/2026-11-30.md": "# 2026-11-30\n\n## Retain\n- W @Peter: PLAINMARKER-Blutdruck 140/90 seit Oktober.\n",
    SECRET_FILE: "# Zebrafischzucht\n\nPLAINMARKER-Kontostand 12345 EUR bei der Sparkasse.\n",
    "memory.md": "# Core\n\n- PLAINMARKER-prefers tea\n",
}


def env(**extra) -> dict:
    return mem_env(MEM_SYNC_PASSPHRASE=PASS, **extra)


def make_ws(path: Path) -> Path:
    for rel, text in FILES.items():
        write(path, rel, text)
    return path


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def giveaways() -> list[bytes]:
    """What must appear nowhere on the remote: the text, the file names, and the plain SHA-256 of each file
    (a remote that names objects by it confirms a guessed text)."""
    out = [b"PLAINMARKER", b"Zebrafisch", b"2026-11-30", b"Retain", b"memory.md", b"bank/", b"Peter"]
    for text in FILES.values():
        digest = hashlib.sha256(text.encode()).hexdigest()
        out += [digest.encode(), digest[:16].encode()]
    return out


def assert_no_plaintext(blobs: dict[str, bytes]) -> None:
    assert blobs, "the remote is empty: the test would prove nothing"
    for name, data in blobs.items():
        for needle in giveaways():
            assert needle not in data and needle.decode() not in name, f"{needle!r} readable in {name}"


def test_1_encrypted_folder_remote_holds_no_plaintext(tmp_path):
    a, b, remote = make_ws(tmp_path / "a"), tmp_path / "b", tmp_path / "remote"
    proc, report = run_json("-w", a, "sync", remote, "--encrypt", env=env())
    assert proc.returncode == 0, proc.stderr
    assert report["encrypted"] is True and len(report["pushed"]) == 3
    assert json.loads((remote / enc.MARKER).read_bytes())["kdf"]["name"] == "scrypt"
    assert_no_plaintext(tree(remote))
    # The second machine with the passphrase gets every file back, byte for byte.
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", b, "sync", remote, env=env(), check=0)
    assert {rel: (b / rel).read_text() for rel in FILES} == FILES
    # An edit travels back, still sealed; the first machine needs no passphrase any more (kept key).
    write(b, "memory/2026-11-30.md", FILES["memory/2026-11-30.md"] + "- PLAINMARKER-second line\n")
    run_mem("-w", b, "sync", env=mem_env(), check=0)
    run_mem("-w", a, "sync", env=mem_env(), check=0)
    assert "second line" in (a / "memory/2026-11-30.md").read_text()
    assert_no_plaintext(tree(remote))
    assert (a / ".memory/sync/key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("passphrase", [None, "wrong horse battery staple"])
def test_1_missing_or_wrong_key_refuses_and_writes_nothing(tmp_path, passphrase):
    a, b, remote = make_ws(tmp_path / "a"), make_ws(tmp_path / "b"), tmp_path / "remote"
    run_mem("-w", a, "sync", remote, "--encrypt", env=env(), check=0)
    before_ws, before_remote = tree(b), tree(remote)
    extra = {"MEM_SYNC_PASSPHRASE": passphrase} if passphrase else {}
    proc, out = run_json("-w", b, "sync", remote, env=mem_env(**extra))
    assert proc.returncode == 8, proc.stderr
    assert out["error"] == "SyncKeyError"
    assert ("wrong passphrase" if passphrase else "no key") in out["message"]
    assert "MEM_SYNC_PASSPHRASE" in out["hint"] or "again" in out["hint"]
    assert tree(b) == before_ws and tree(remote) == before_remote
    assert "Traceback" not in proc.stderr


def test_1_key_file_made_by_sync_key_create_and_brought_to_a_second_machine(tmp_path):
    a, b, remote = make_ws(tmp_path / "a"), tmp_path / "b", tmp_path / "remote"
    keyfile = tmp_path / "keys" / "sync.key"
    write(a, "memtool.toml", f'[sync]\nkey_file = "{keyfile}"\n')
    assert run_mem("-w", a, "sync", "key", "--create", env=mem_env(), check=0).stdout.strip() == str(keyfile)
    run_mem("-w", a, "sync", remote, "--encrypt", env=mem_env(), check=0)
    assert keyfile.stat().st_mode & 0o777 == 0o600
    assert json.loads((remote / enc.MARKER).read_bytes())["kdf"] == {"name": "key-file"}
    assert not (a / ".memory/sync/key").exists()  # the key file holds it; no second copy
    assert_no_plaintext(tree(remote))
    # `mem sync key --show` prints the line a key file holds; the second machine names it in its config.
    shown = run_mem("-w", a, "sync", "key", "--show", check=0).stdout.strip()
    assert shown == keyfile.read_text().strip()
    copied = tmp_path / "b-key"
    copied.write_text(shown + "\n")
    write(b, "memtool.toml", f'[sync]\nkey_file = "{copied}"\n')
    run_mem("-w", b, "sync", remote, env=mem_env(), check=0)
    assert (b / SECRET_FILE).read_text() == FILES[SECRET_FILE]
    # A passphrase cannot open a key-file remote: said clearly.
    c = tmp_path / "c"
    (c / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    proc = run_mem("-w", c, "sync", remote, env=env())
    assert proc.returncode == 8 and "key file, not a passphrase" in proc.stderr


def test_key_show_without_an_encrypted_remote_is_an_error_not_the_word_none(tmp_path):
    """`mem sync key --show > /media/usb/memory.key` (the documented example) wrote "None" into the
    file and exited 0 where no remote was encrypted: a key backup that holds nothing (qa39)."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n- a line\n")
    for step in ("unbound", "plain"):
        proc = run_mem("-w", ws, "sync", "key", "--show")
        assert proc.returncode == 2 and proc.stdout == "", (step, proc)
        assert "no key to show" in proc.stderr and "hint:" in proc.stderr, proc.stderr
        run_mem("-w", ws, "sync", tmp_path / "remote", check=0)  # bound, not encrypted


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_key_file_that_is_no_plain_file_is_refused_and_nothing_is_written(tmp_path, kind):
    """[sync] key_file = "/dev/zero" read until memory ran out (MemoryError under a 2 GB limit, else the
    machine's RAM); a named pipe blocked `mem sync` for ever (qa39)."""
    import os

    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n- a line\n")
    key = tmp_path / "key"
    if kind == "fifo":
        os.mkfifo(key)
    else:
        key.symlink_to("/dev/zero")
    write(ws, "memtool.toml", f'[sync]\nkey_file = "{key}"\n')
    proc = run_mem("-w", ws, "sync", tmp_path / "remote", "--encrypt")
    assert proc.returncode == 8 and "is not a regular file" in proc.stderr and "hint:" in proc.stderr, proc.stderr
    assert not (tmp_path / "remote").exists() or not any((tmp_path / "remote").iterdir())


def test_1_encrypt_refused_on_a_remote_holding_plaintext(tmp_path):
    a, b, remote = make_ws(tmp_path / "a"), make_ws(tmp_path / "b"), tmp_path / "remote"
    run_mem("-w", a, "sync", remote, env=mem_env(), check=0)  # an existing unencrypted remote …
    before = tree(remote)
    proc = run_mem("-w", b, "sync", remote, "--encrypt", env=env())
    assert proc.returncode == 2 and "already holds an unencrypted memory" in proc.stderr
    assert tree(remote) == before
    run_mem("-w", a, "sync", env=mem_env(), check=0)  # … keeps working as it was


def test_1_a_forged_manifest_or_a_removed_marker_is_refused(tmp_path):
    a, remote = make_ws(tmp_path / "a"), tmp_path / "remote"
    run_mem("-w", a, "sync", remote, "--encrypt", env=env(), check=0)
    sealed = (remote / "manifest.json").read_bytes()
    # Someone without the key writes a well-formed plaintext manifest that deletes a file.
    forged = {"format": "memtool-sync/1", "memory_id": "x", "generation": 99, "files": {SECRET_FILE: {"deleted": True}}}
    (remote / "manifest.json").write_text(json.dumps(forged))
    before = tree(a)
    proc = run_mem("-w", a, "sync", env=mem_env())
    assert proc.returncode == 4 and "does not decrypt" in proc.stderr
    assert tree(a) == before
    # The marker removed (an attempt to downgrade to plaintext): the bound workspace goes on sealing.
    (remote / "manifest.json").write_bytes(sealed)
    (remote / enc.MARKER).unlink()
    write(a, "memory/2026-12-01.md", "- PLAINMARKER-new day\n")
    proc, report = run_json("-w", a, "sync", env=mem_env())
    assert proc.returncode == 0 and report["encrypted"] and report["pushed"] == ["memory/2026-12-01.md"]
    assert_no_plaintext(tree(remote))


def test_1_compare_and_swap_holds_on_the_sealed_manifest(tmp_path):
    keys = enc.keys_of(enc.new_master())
    remote = enc.SealedRemote(FolderRemote(tmp_path / "remote"), keys)
    first = remote.write_manifest(b'{"n": 1}', None)
    data, etag = remote.read_manifest()
    assert data == b'{"n": 1}' and etag == first
    remote.write_manifest(b'{"n": 2}', etag)  # another machine publishes
    with pytest.raises(StaleManifest):
        remote.write_manifest(b'{"n": 3}', etag)  # a stale swap is rejected
    assert remote.read_manifest()[0] == b'{"n": 2}'


@pytest.fixture(scope="module")
def s3():
    from s3_server import start_s3

    server, endpoint = start_s3()
    yield endpoint
    server.stop()


def test_1_encrypted_s3_remote_holds_no_plaintext(s3, tmp_path):
    import boto3

    from s3_server import S3_ENV

    client = boto3.client("s3", endpoint_url=s3, **{k.lower(): v for k, v in S3_ENV.items()
                                                     if k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")},
                          region_name="us-east-1")
    bucket = f"mem-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/team/memory"
    s3env = env(**S3_ENV, AWS_ENDPOINT_URL=s3)
    a, b = make_ws(tmp_path / "a"), tmp_path / "b"
    run_mem("-w", a, "sync", url, "--encrypt", env=s3env, check=0)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", b, "sync", url, env=s3env, check=0)
    assert (b / SECRET_FILE).read_text() == FILES[SECRET_FILE]
    blobs = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for obj in page.get("Contents", []):
            blobs[obj["Key"]] = client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
    assert any(key.endswith("manifest.json") for key in blobs) and len(blobs) >= 5
    assert_no_plaintext(blobs)


def test_1_gc_on_an_encrypted_sharded_remote_keeps_what_the_manifest_names(tmp_path):
    """`mem sync gc` reads the manifest as sync does (sealed, in shards): it deletes only the revision
    that held forgotten text, and a second machine still gets every file from the remote."""
    a, b, remote = make_ws(tmp_path / "a"), tmp_path / "b", tmp_path / "remote"
    keyfile = tmp_path / "keys" / "sync.key"
    write(a, "memtool.toml", f'[sync]\nkey_file = "{keyfile}"\n')
    run_mem("-w", a, "sync", "key", "--create", env=mem_env(), check=0)
    run_mem("-w", a, "sync", remote, "--encrypt", env=mem_env(), check=0)
    run_mem("-w", a, "forget", "PLAINMARKER-prefers tea", "--yes", env=mem_env(), check=0)
    run_mem("-w", a, "sync", env=mem_env(), check=0)
    proc, gc = run_json("-w", a, "sync", "gc", "--min-age", "0", env=mem_env())
    assert proc.returncode == 0 and gc["deleted"], proc.stderr
    write(b, "memtool.toml", f'[sync]\nkey_file = "{keyfile}"\n')
    run_mem("-w", b, "sync", remote, env=mem_env(), check=0)
    assert (b / SECRET_FILE).read_text() == FILES[SECRET_FILE]
    assert (b / "memory/2026-11-30.md").read_text() == FILES["memory/2026-11-30.md"]
    assert "PLAINMARKER-prefers tea" not in (b / "memory.md").read_text()


def test_a_key_file_named_in_memtool_toml_is_never_created_as_a_side_effect(tmp_path):
    """[sync] key_file travels with the workspace (sync, git): `mem sync REMOTE --encrypt` created the
    file it names wherever it pointed (and its folders). Now only `mem sync key --create` makes it."""
    ws, remote = make_ws(tmp_path / "ws"), tmp_path / "remote"
    keyfile = tmp_path / "elsewhere" / "deep" / "sync.key"
    write(ws, "memtool.toml", f'[sync]\nkey_file = "{keyfile}"\n')
    for args in (["sync", remote, "--encrypt"], ["sync", "key"], ["sync", "key", "--show"], ["status"], ["sync", "status"]):
        run_mem("-w", ws, *args, env=mem_env())
        assert not (tmp_path / "elsewhere").exists(), args
    proc = run_mem("-w", ws, "sync", remote, "--encrypt", env=mem_env())
    assert proc.returncode == 8 and "does not exist; nothing was written" in proc.stderr, proc.stderr
    assert "mem sync key --create" in proc.stderr and not (remote / enc.MARKER).exists()
    proc, made = run_json("-w", ws, "sync", "key", "--create", env=mem_env())
    assert proc.returncode == 0 and made == {"key_path": str(keyfile), "created": True}
    assert keyfile.stat().st_mode & 0o777 == 0o600 and keyfile.parent.stat().st_mode & 0o777 == 0o700
    line = keyfile.read_bytes()
    proc, again = run_json("-w", ws, "sync", "key", "--create", env=mem_env())
    assert again["created"] is False and keyfile.read_bytes() == line  # an existing key is never replaced
    assert run_mem("-w", ws, "sync", remote, "--encrypt", env=mem_env()).returncode == 0


def test_sync_key_create_without_a_key_file_in_memtool_toml_says_what_to_add(tmp_path):
    ws = make_ws(tmp_path / "ws")
    proc = run_mem("-w", ws, "sync", "key", "--create", env=mem_env())
    assert proc.returncode == 2 and "names no key file" in proc.stderr and "[sync] key_file" in proc.stderr
