"""Shared fixtures: real temporary workspaces and the real `mem` command in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

EXAMPLE = ROOT / "examples" / "workspace"
# Every process this test run starts carries this mark (children inherit the environment), so
# `no_process_left_behind` can find any that outlive their test, and only ours.
RUN_MARK = "MEMTOOL_TEST_RUN"
os.environ[RUN_MARK] = f"{os.getpid()}-{os.urandom(4).hex()}"

# Tests stop `mem watch` and servers with Ctrl-C (SIGINT). A test run started in the background of a
# non-interactive shell (`cmd &`, as CI wrappers and nohup do) inherits SIGINT ignored, and so would
# every child: a watch would then never stop. Children of this process get the default again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def no_vectors_by_default():
    """Most tests exercise text, index and CLI behaviour; they run without vectors for speed (for
    `Memory` in the test process and every `mem` it starts). Tests of semantic recall choose their
    embedder explicitly (the real embedded model, or a local stand-in)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEM_EMBEDDER", "none")
        yield


# Three days of notes about bicycles, tea and trains: small workspaces for recall's threads
BICYCLE_NOTES = {
    "memory/2026-11-01.md": "# 2026-11-01\n- Bought a red bicycle for the commute.\n- The plumber fixed the kitchen sink.\n"
                            "- The bicycle shop on Hauptstraße sells red helmets.\n",
    "memory/2026-11-02.md": "# 2026-11-02\n## Retain\n- W @Peter: Peter moved to Lisbon.\n- O(c=0.8) @Peter: Peter prefers tea over coffee.\n"
                            "- Peter rides a bicycle to the tea shop in Lisbon.\n",
    "memory/2026-11-03.md": "# 2026-11-03\n- **Anna**: Did you book the train?\n- **Lena**: Yes, the night train to Vienna.\n"
                            "- **Anna**: Is there a bicycle wagon on the night train?\n",
}


def mem_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MEM_WORKSPACE",)}
    env.update({"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"})
    env.update(extra)
    return env


def run_mem(*args, cwd=None, input=None, env=None, check=None) -> subprocess.CompletedProcess:
    """Run `mem ARGS…` as a real process (python -m memtool, same interpreter)."""
    proc = subprocess.run([sys.executable, "-m", "memtool", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, env=env or mem_env(), timeout=120)
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def run_json(*args, **kw):
    proc = run_mem(*args, "--json", **kw)
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else None


@pytest.fixture
def example_ws(tmp_path) -> Path:
    """A private copy of examples/workspace (without any index)."""
    dest = tmp_path / "ws"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".memory"))
    return dest


@pytest.fixture
def stub(monkeypatch):
    """The Ollama stand-in (tests/ollama_stub.py) on loopback, named by OLLAMA_HOST for the test."""
    from ollama_stub import OllamaStub

    s = OllamaStub()
    monkeypatch.setenv("OLLAMA_HOST", s.url)
    yield s
    s.stop()


@pytest.fixture
def empty_ws(tmp_path) -> Path:
    """A workspace with only the folders, no files."""
    ws = tmp_path / "empty"
    (ws / "memory").mkdir(parents=True)
    (ws / "bank" / "entities").mkdir(parents=True)
    return ws


def indexed(root: Path, files: dict[str, str], env: dict) -> Path:
    """`root` with `files` (relative path → text) written and indexed by `mem index` under `env`."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        write(root, rel, text)
    run_json("index", cwd=root, env=env)
    return root


def edit(ws: Path, op: str, rel: str, text: str) -> None:
    """One step of a random edit history: "write" `text`, "append" it, "delete" the file, or "touch"
    it (a second later, same content); a step on a file that does not exist does nothing but write."""
    path = ws / rel
    if op == "write":
        write(ws, rel, text)
    elif not path.exists():
        return
    elif op == "append":
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    elif op == "delete":
        path.unlink()
    elif op == "touch":
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def write(ws: Path, rel: str, text: str | bytes) -> Path:
    p = ws / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def our_processes() -> list[int]:
    """Live processes (not zombies) carrying this test run's mark, other than pytest itself."""
    mark = f"{RUN_MARK}={os.environ[RUN_MARK]}".encode()
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if mark in fh.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found


@pytest.fixture(autouse=True)
def no_process_left_behind():
    """Fail a test that leaves a process of ours running (a worker, a server, a `mem watch`)."""
    yield
    import signal
    import time

    deadline = time.monotonic() + 5.0
    left = our_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = our_processes()
    if left:
        described = []
        for pid in left:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
                described.append(f"{pid}: {cmdline}")
                os.kill(pid, signal.SIGKILL)  # leave nothing for the next test, then fail this one
            except OSError:
                continue
        pytest.fail("processes left behind by this test:\n" + "\n".join(described), pytrace=False)


@pytest.fixture
def small_disk(tmp_path):
    """A 8 MB tmpfs (root only); unmounted afterwards."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("SKIPPED LOUDLY: mounting a small tmpfs for the full-disk test needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8M", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"SKIPPED LOUDLY: cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
