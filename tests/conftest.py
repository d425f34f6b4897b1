"""Shared fixtures: real temporary workspaces and the real `mem` command in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Most tests exercise text, index and CLI behaviour; they run without vectors for speed. Tests of
# semantic recall choose their embedder explicitly (the real embedded model, or a local stand-in).
os.environ["MEM_EMBEDDER"] = "none"
EXAMPLE = ROOT / "examples" / "workspace"


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
def empty_ws(tmp_path) -> Path:
    """A workspace with only the folders, no files."""
    ws = tmp_path / "empty"
    (ws / "memory").mkdir(parents=True)
    (ws / "bank" / "entities").mkdir(parents=True)
    return ws


def write(ws: Path, rel: str, text: str | bytes) -> Path:
    p = ws / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p
