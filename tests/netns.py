"""Run `mem` against recording Ollama stand-ins inside a network namespace of the test's own.

A stand-in on a non-loopback address (10.200.0.1) must never be the machine's real address: the
driver (tests/netns_driver.py) runs under `unshare --net`, so both the stand-ins and every `mem`
process live in a fresh namespace where that address exists on loopback only. Skips loudly where
namespaces cannot be created.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mem_env

DRIVER = Path(__file__).with_name("netns_driver.py")


def run(tmp_path: Path, runs: list[dict], chat_reply: str | None = None) -> dict:
    """Each of `runs` ({"args": [...], "env": {...}}) as `mem ARGS` inside a new network namespace;
    `{remote}` / `{local}` stand for the stand-ins' URLs. Returns {"runs": [...], "requests":
    {"remote": [(path, body)…], "local": […]}}."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs `unshare` and `ip` (util-linux, iproute2) to run a stand-in off loopback safely")
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip() or probe.returncode}")
    spec = tmp_path / "netns-spec.json"
    spec.write_text(json.dumps({"runs": runs, "chat_reply": chat_reply}), encoding="utf-8")
    proc = subprocess.run(["unshare", "--net", sys.executable, str(DRIVER), str(spec)], capture_output=True,
                          text=True, env=mem_env(), timeout=600)
    assert proc.returncode == 0, f"driver failed:\n{proc.stderr}"
    return json.loads(proc.stdout)


def sent(result: dict, where: str) -> str:
    """Everything the stand-in `where` (remote or local) received, as one string."""
    return "\n".join(json.dumps(body, ensure_ascii=False) for _, body in result["requests"][where])
