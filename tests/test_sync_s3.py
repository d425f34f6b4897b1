"""`mem sync s3://…` against a real S3-speaking server (moto in server mode) over HTTP."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from remote_manifest import whole
from conftest import mem_env, run_json, run_mem, write
from s3_server import S3_ENV, CuttableProxy, start_s3

DAY = "memory/2026-11-30.md"
LOG = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


@pytest.fixture(scope="module")
def s3():
    server, endpoint = start_s3()
    yield endpoint
    server.stop()


@pytest.fixture
def bucket(s3, monkeypatch):
    """A fresh bucket; returns (url, env for `mem` processes, a boto3 client)."""
    import boto3

    for key, value in S3_ENV.items():
        monkeypatch.setenv(key, value)
    client = boto3.client("s3", endpoint_url=s3)
    name = f"mem-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return f"s3://{name}/team/memory", mem_env(**S3_ENV, AWS_ENDPOINT_URL=s3), client


def manifest(client, url: str) -> dict:
    bucket, prefix = url[5:].split("/", 1)
    get = lambda key: client.get_object(Bucket=bucket, Key=f"{prefix}/{key}")["Body"].read()  # noqa: E731
    return whole(get("manifest.json"), lambda r: get(f"objects/{r[:2]}/{r}"))


def test_two_workspaces_converge_through_s3(bucket, tmp_path):
    url, env, client = bucket
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, DAY, LOG)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", a, "sync", url, env=env, check=0)
    run_mem("-w", b, "sync", url, env=env, check=0)
    assert (b / DAY).read_text() == LOG
    # Two machines append to the same daily log: merged without a conflict.
    write(a, DAY, LOG + "- laptop line\n")
    write(b, DAY, LOG + "- desktop line\n")
    run_mem("-w", a, "sync", env=env, check=0)
    proc, report = run_json("-w", b, "sync", env=env)
    assert proc.returncode == 0 and report["merged"] == [DAY]
    run_mem("-w", a, "sync", env=env, check=0)
    assert (a / DAY).read_text() == (b / DAY).read_text() == LOG + "- desktop line\n- laptop line\n"
    # Nothing changed: one conditional manifest read (answered 304 Not Modified).
    _, report = run_json("-w", a, "sync", env=env)
    assert report["requests"] == {"manifest_read": 1}
    # Overlapping edits: a conflict, resolved, then converged.
    write(a, DAY, (a / DAY).read_text().replace("likes", "loves"))
    write(b, DAY, (b / DAY).read_text().replace("likes", "hates"))
    run_mem("-w", a, "sync", env=env, check=0)
    assert run_mem("-w", b, "sync", env=env).returncode == 9
    run_mem("-w", b, "sync", "resolve", DAY, "--keep", "both", env=env, check=0)
    run_mem("-w", b, "sync", env=env, check=0)
    run_mem("-w", a, "sync", env=env, check=0)
    assert (a / DAY).read_text() == (b / DAY).read_text()
    assert "loves" in (a / DAY).read_text() and "hates" in (a / DAY).read_text()
    m = manifest(client, url)
    assert m["format"] == "memtool-sync/1" and set(m["files"]) == {DAY}


def test_manifest_compare_and_swap_rejects_stale_writes(bucket, s3):
    from memtool.sync.remotes import NOT_MODIFIED, S3Remote, StaleManifest

    url, _, _ = bucket
    remote = S3Remote(url, endpoint_url=s3)
    assert remote.read_manifest() is None
    etag = remote.write_manifest(b'{"v": 1}', None)
    with pytest.raises(StaleManifest):
        remote.write_manifest(b'{"v": "other creator"}', None)
    etag2 = remote.write_manifest(b'{"v": 2}', etag)
    with pytest.raises(StaleManifest):
        remote.write_manifest(b'{"v": "stale"}', etag)
    assert remote.read_manifest(etag2) is NOT_MODIFIED
    assert remote.read_manifest(etag)[0] == b'{"v": 2}'
    remote.put_object("ab" * 32, b"x")
    remote.put_object("ab" * 32, b"x")  # immutable: a second upload is a no-op
    assert remote.get_object("ab" * 32) == b"x"


def test_missing_bucket_is_a_clear_error(bucket, tmp_path):
    _, env, _ = bucket
    ws = tmp_path / "ws"
    write(ws, DAY, LOG)
    proc = run_mem("-w", ws, "sync", "s3://no-such-bucket-here/x", env=env)
    assert proc.returncode == 6 and "S3" in proc.stderr and "hint:" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 2


def test_a_cut_network_mid_upload_loses_nothing_and_the_next_sync_completes(bucket, s3, tmp_path):
    url, env, client = bucket
    host, port = s3.rsplit("/", 1)[-1].split(":")
    proxy = CuttableProxy((host, int(port)))
    a, b = tmp_path / "a", tmp_path / "b"
    for i in range(200):
        write(a, f"memory/2026-10-{1 + i % 28:02d}-{i}.md", f"# {i}\n- fact {i} " + "y" * 300 + "\n")
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    before = {p.name: p.read_bytes() for p in (a / "memory").iterdir()}
    cut_env = dict(env, AWS_ENDPOINT_URL=proxy.url, AWS_MAX_ATTEMPTS="1")  # no retries: fail at the cut
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(a), "sync", url], env=cut_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while proxy.bytes_up < 40_000 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proxy.cut()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 6, err
    assert "S3" in err and "hint:" in err
    assert {p.name: p.read_bytes() for p in (a / "memory").iterdir()} == before
    bucket_name, prefix = url[5:].split("/", 1)
    objects = {o["Key"] for o in client.list_objects_v2(Bucket=bucket_name).get("Contents", [])}
    assert f"{prefix}/manifest.json" not in objects  # nothing was published
    assert 0 < len(objects) < 200
    proxy.restore()
    run_mem("-w", a, "sync", url, env=cut_env, check=0)
    proxy.close()
    run_mem("-w", b, "sync", url, env=env, check=0)
    assert {p.name: p.read_bytes() for p in (b / "memory").iterdir()} == before


def test_a3_sync_gc_deletes_the_revisions_holding_forgotten_text_on_s3(bucket, tmp_path):
    url, env, client = bucket
    a = tmp_path / "a"
    write(a, DAY, LOG + "- W @Peter: Phone +49 171 2345678.\n")
    run_mem("-w", a, "sync", url, env=env, check=0)
    run_mem("-w", a, "forget", "+49 171 2345678", "--yes", env=env, check=0)
    run_mem("-w", a, "sync", env=env, check=0)
    proc, young = run_json("-w", a, "sync", "gc", env=env)  # default: only revisions older than 10 minutes
    # unnamed now: the old revision of the file and the old manifest shard that named it
    assert proc.returncode == 0 and young["deleted"] == [] and young["too_young"] == 2
    proc, gc = run_json("-w", a, "sync", "gc", "--min-age", "0", env=env)
    assert proc.returncode == 0 and len(gc["deleted"]) == 2, proc.stderr
    name, prefix = url[5:].split("/", 1)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=name, Prefix=prefix).get("Contents", [])]
    assert not any(b"2345678" in client.get_object(Bucket=name, Key=k)["Body"].read() for k in keys)
    assert (a / DAY).read_text() == LOG and len([k for k in keys if "/objects/" in k]) == 2  # the file and its shard
