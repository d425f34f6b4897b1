"""Markdown is sacred, under attack: editors saving beside `mem retain`, kill -9, control characters.

Every test drives the real `mem` (subprocesses) or the real MCP server through the SDK client.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import mem_env, run_json, run_mem, write

DAY = "2026-11-30"
DAY_FILE = f"memory/{DAY}.md"

# An editor as people use them: read the whole file, add a line, write a temp file, rename it over.
EDITOR = textwrap.dedent("""
    import os, random, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    rnd = random.Random(13)
    saves = 0
    while not os.path.exists(stop) or saves < 20:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if text and not text.endswith("\\n"):
            text += "\\n"
        tmp = os.path.join(os.path.dirname(path), ".editor-swap")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text + f"\\nEditor note {saves}.\\n")
        os.replace(tmp, path)
        saves += 1
        time.sleep(rnd.uniform(0.02, 0.08))
    print(saves)
""")

# One `mem retain` process after another, as a shell loop would run them.
RETAINER = textwrap.dedent("""
    import subprocess, sys
    ws, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(n):
        subprocess.run([sys.executable, "-m", "memtool", "-w", ws, "retain", "--date", "2026-11-30",
                        f"W: R-{worker}-{i}"], check=True, stdout=subprocess.DEVNULL)
""")


def _lines(ws: Path) -> list[str]:
    return (ws / DAY_FILE).read_text(encoding="utf-8").splitlines()


def _vanished(ws: Path) -> list[dict]:
    _, report = run_json("check", cwd=ws)
    return [d for d in report["diagnostics"] if d["code"] == "retained-line-missing"]


def test_13_6_retain_never_overwrites_an_editors_save_and_lost_retains_come_back(tmp_path):
    ws = tmp_path / "ws"
    write(ws, DAY_FILE, f"# {DAY}\n\nWritten by hand.\n")
    stop = tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(ws / DAY_FILE), str(stop)],
                              stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    workers, per_worker = 4, 12
    try:
        retainers = [subprocess.Popen([sys.executable, "-c", RETAINER, str(ws), str(w), str(per_worker)],
                                      env=mem_env(), cwd=tmp_path) for w in range(workers)]
        assert [p.wait(timeout=120) for p in retainers] == [0] * workers
    finally:
        stop.touch()
        saves = int(editor.communicate(timeout=60)[0])
    lines = _lines(ws)
    lost = [i for i in range(saves) if lines.count(f"Editor note {i}.") != 1]
    assert not lost, f"{len(lost)} of {saves} editor saves were overwritten by mem retain: {lost[:10]}"
    assert lines[:3] == [f"# {DAY}", "", "Written by hand."]

    # The editor, holding an old buffer, may have overwritten retains: each is reported, then put back.
    retained = [f"- W: R-{w}-{i}" for w in range(workers) for i in range(per_worker)]
    gone = [r for r in retained if r not in lines]
    assert sorted(d["message"].split("'")[1] for d in _vanished(ws)) == sorted(gone)
    run_mem("check", "--restore", cwd=ws, check=0 if not gone else None)
    lines = _lines(ws)
    assert all(lines.count(r) == 1 for r in retained), [r for r in retained if lines.count(r) != 1]
    assert all(lines.count(f"Editor note {i}.") == 1 for i in range(saves))
    assert _vanished(ws) == []
    assert not list((ws / "memory").glob(".*.tmp")), "no temp files left behind"
