"""Sync figures: `mem sync` with 10^4 files, nothing changed and one file changed, folder and S3.

    python -m bench.sync --files 10000 --runs 5
    python -m bench.sync --scaling 1000,10000,100000   # bytes and requests of one edit, by size (folder)

The S3 figures use a local S3 server (moto, from the test extra) over HTTP: they show the request
count and memtool's own cost, not a network's latency. `git status` on the same files is the
reference for "notice what changed".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _files(ws: Path, n: int) -> None:
    for i in range(n):
        day = f"memory/{2000 + i // 365:04d}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}-{i}.md"
        path = ws / day
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Day {i}\n\n## Retain\n- W @Person{i % 50}: fact number {i} about topic {i % 97}.\n"
                        f"- B: worked on item {i}.\n")


def _mem(ws: Path, *args: str, env: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), "sync", *args, "--json"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return wall, json.loads(proc.stdout)


def bench(files: int, runs: int, workdir: Path, remote: str, env: dict, label: str) -> dict:
    a, b = workdir / f"{label}-a", workdir / f"{label}-b"
    for ws in (a, b):
        shutil.rmtree(ws, ignore_errors=True)
    _files(a, files)
    b.mkdir(parents=True)
    out: dict = {"remote": label, "files": files}
    out["first_push_s"], report = _mem(a, remote, env=env)
    out["first_push_requests"] = sum(report["requests"].values())
    out["first_pull_s"], _ = _mem(b, remote, env=env)
    nothing, one, pull = [], [], []
    for i in range(runs):
        wall, report = _mem(a, env=env)
        assert report["requests"] == {"manifest_read": 1}, report["requests"]
        nothing.append(wall)
        target = a / "memory" / "2000-01-01-0.md"
        target.write_text(target.read_text() + f"- S: change {i} {time.time_ns()}\n")
        wall, report = _mem(a, env=env)
        assert report["pushed"] == ["memory/2000-01-01-0.md"]
        one.append(wall)
        out["one_changed_requests"] = report["requests"]
        wall, report = _mem(b, env=env)
        assert report["pulled"] == ["memory/2000-01-01-0.md"]
        pull.append(wall)
    out["nothing_changed_s"] = statistics.median(nothing)
    out["one_changed_push_s"] = statistics.median(one)
    out["one_changed_pull_s"] = statistics.median(pull)
    out["manifest_bytes"] = (a / ".memory" / "sync" / "manifest.json").stat().st_size
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(a)], check=True)
        subprocess.run(["git", "-C", str(a), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(a), "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "x"],
                       check=True)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(["git", "-C", str(a), "status", "--porcelain"], capture_output=True, check=True)
            times.append(time.perf_counter() - t)
        out["git_status_s"] = statistics.median(times)
        out["nothing_changed_vs_git_status"] = out["nothing_changed_s"] / out["git_status_s"]
    return out


def one_edit_cost(files: int, workdir: Path, env: dict) -> dict:
    """Bytes and requests of a sync after one edit (push on one machine, pull on the other), against
    what the whole-manifest format (1) moves for the same edit: the manifest up, then down."""
    a, b, remote = workdir / f"scale{files}-a", workdir / f"scale{files}-b", workdir / f"scale{files}-remote"
    for path in (a, b, remote):
        shutil.rmtree(path, ignore_errors=True)
    _files(a, files)
    b.mkdir(parents=True)
    _mem(a, str(remote), env=env)
    _mem(b, str(remote), env=env)
    target = a / "memory" / "2000-01-01-0.md"
    target.write_text(target.read_text() + f"- S: one edit {time.time_ns()}\n")
    push_s, push = _mem(a, env=env)
    pull_s, pull = _mem(b, env=env)
    whole = (a / ".memory" / "sync" / "manifest.json").stat().st_size
    edited = target.stat().st_size
    return {"files": files, "push_bytes": push["bytes"]["up"], "push_requests": sum(push["requests"].values()),
            "pull_bytes": pull["bytes"]["down"], "pull_requests": sum(pull["requests"].values()),
            "push_s": push_s, "pull_s": pull_s, "root_bytes": (remote / "manifest.json").stat().st_size,
            "format1_bytes_each_way": whole + edited}


def scaling_table(rows: list[dict]) -> str:
    lines = ["| files | push: bytes up / requests | pull: bytes down / requests | root manifest | "
             "format 1 (whole manifest), each way | push / pull wall |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['files']:,} | {r['push_bytes']:,} B / {r['push_requests']} | {r['pull_bytes']:,} B / "
                     f"{r['pull_requests']} | {r['root_bytes']:,} B | {r['format1_bytes_each_way']:,} B | "
                     f"{r['push_s']:.2f} s / {r['pull_s']:.2f} s |")
    return "\n".join(lines)


ROWS = [
    ("files", "files", "{:,}"),
    ("first sync, push all", "first_push_s", "{:.2f} s"),
    ("first sync, pull all", "first_pull_s", "{:.2f} s"),
    ("sync, nothing changed (1 request)", "nothing_changed_s", "{:.3f} s"),
    ("sync, one file changed: push", "one_changed_push_s", "{:.3f} s"),
    ("sync, one file changed: pull", "one_changed_pull_s", "{:.3f} s"),
    ("manifest size", "manifest_bytes", "{:,} B"),
    ("git status, same files", "git_status_s", "{:.3f} s"),
    ("nothing changed / git status", "nothing_changed_vs_git_status", "{:.1f}×"),
]


def table(results: list[dict]) -> str:
    lines = ["| figure | " + " | ".join(r["remote"] for r in results) + " |", "|---|" + "---:|" * len(results)]
    for label, key, fmt in ROWS:
        lines.append(f"| {label} | " + " | ".join(fmt.format(r[key]) if key in r else "–" for r in results) + " |")
    return "\n".join(lines)


def run(files: int, runs: int, workdir: Path) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k != "MEM_WORKSPACE"}
    env.update(NO_COLOR="1", MEM_EMBEDDER="none")
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(workdir / "remote", ignore_errors=True)
    results = [bench(files, runs, workdir, str(workdir / "remote"), env, "folder")]
    try:
        from moto.server import ThreadedMotoServer
        import boto3
    except ImportError:
        print("moto/boto3 not installed: S3 figures skipped (pip install -e '.[test]')", file=sys.stderr)
        return results
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        creds = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
                 "AWS_ENDPOINT_URL": f"http://{host}:{port}"}
        boto3.client("s3", endpoint_url=creds["AWS_ENDPOINT_URL"], aws_access_key_id="bench",
                     aws_secret_access_key="bench", region_name="us-east-1").create_bucket(Bucket="memtool-bench")
        results.append(bench(files, runs, workdir, "s3://memtool-bench/memory", {**env, **creds}, "S3 (local moto)"))
    finally:
        server.stop()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/memtool-bench/sync")
    ap.add_argument("--scaling", default=None, help="comma-separated file counts: one edit's bytes and requests")
    args = ap.parse_args()
    if args.scaling:
        env = {k: v for k, v in os.environ.items() if k != "MEM_WORKSPACE"}
        env.update(NO_COLOR="1", MEM_EMBEDDER="none")
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        rows = [one_edit_cost(int(n), Path(args.workdir), env) for n in args.scaling.split(",")]
        print(scaling_table(rows))
        out = Path(__file__).resolve().parent / "results"
        out.mkdir(exist_ok=True)
        (out / "sync_scaling.json").write_text(json.dumps(rows, indent=2))
        return
    results = run(args.files, args.runs, Path(args.workdir))
    print(table(results))
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "sync.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
