"""Concurrent writers: 8 processes × 50 retains into the same day lose nothing."""

import subprocess
import sys
import textwrap

from memtool.document import parse

WORKERS, PER_WORKER = 8, 50

SCRIPT = textwrap.dedent("""
    import sys
    from datetime import date
    from memtool.memory import Memory
    from memtool.workspace import Workspace
    mem = Memory(Workspace(__import__("pathlib").Path(sys.argv[1])))
    worker = int(sys.argv[2])
    for i in range(int(sys.argv[3])):
        mem.retain(f"W @Worker{worker}: fact number {i} from worker {worker}", date(2026, 11, 30))
""")


def test_parallel_retains_lose_nothing(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    day = ws / "memory" / "2026-11-30.md"
    day.write_text("# 2026-11-30\n\nA note written by hand first.\n\n## Retain\n- S: existing bullet\n\n## Later\nkept\n",
                   encoding="utf-8")
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(ws), str(w), str(PER_WORKER)])
             for w in range(WORKERS)]
    assert [p.wait(timeout=300) for p in procs] == [0] * WORKERS
    text = day.read_text(encoding="utf-8")
    lines = text.splitlines()
    for w in range(WORKERS):
        for i in range(PER_WORKER):
            assert lines.count(f"- W @Worker{w}: fact number {i} from worker {w}") == 1
    # well-formed: hand-written lines where they were, all bullets in one new Retain section at the end
    # (a retain never moves a line), order per worker kept
    assert lines[:12] == ["# 2026-11-30", "", "A note written by hand first.", "", "## Retain", "- S: existing bullet",
                          "", "## Later", "kept", "", "## Retain", lines[11]]
    assert all(line.startswith("- W @Worker") for line in lines[11:])
    parsed = parse("memory/2026-11-30.md", text)
    assert not parsed.diagnostics
    assert sum(r.kind == "world" for r in parsed.records) == WORKERS * PER_WORKER
    for w in range(WORKERS):
        mine = [int(line.split("number ")[1].split()[0]) for line in lines if f"@Worker{w}:" in line]
        assert mine == list(range(PER_WORKER))
    assert not list(ws.joinpath("memory").glob(".*.tmp")), "no temp files left behind"
