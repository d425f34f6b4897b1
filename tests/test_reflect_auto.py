"""Consolidation on its own: `mem watch` and `mem mcp` run reflect when its gates open, one run at a
time (reflect's lock), in a child process so recalls never wait, and leave no process behind."""

import asyncio
import signal
import subprocess
import sys
import threading
import time

from conftest import mem_env, write
from filelock import FileLock

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SOON = '[reflect]\nauto_every_minutes = 0.01\nmin_hours = 0\nmin_new_facts = 0\n'  # every 0.6 s, gates open


def _workspace(ws, config=SOON):
    write(ws, "memtool.toml", config)
    write(ws, "memory/2026-11-20.md", "# 2026-11-20\n\n## Retain\n- W @Jonas: Works at the harbour office.\n"
                                       "- W @Jonas: Sails on the Alster on Sundays.\n- O(c=0.6) @Jonas: Prefers calls.\n")


def _until(check, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_c4_mem_watch_reflects_when_the_gates_open_one_run_at_a_time(tmp_path):
    ws = tmp_path / "w"
    _workspace(ws)
    (ws / ".memory" / "locks").mkdir(parents=True)
    held = FileLock(str(ws / ".memory" / "locks" / "reflect.lock"))
    held.acquire()  # another reflect (cron's) is running: the automatic one must not start a second
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", "0.3"],
                            env=mem_env(), stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        assert _until(lambda: any("another run is in progress; skipped" in x for x in lines), 60)
        assert not (ws / "bank" / "journal.md").exists()
        held.release()
        assert _until(lambda: any("page(s) written" in x for x in lines), 60), lines
        assert (ws / "bank" / "journal.md").exists() and (ws / "bank" / "entities" / "Jonas.md").exists()
    finally:
        held.release()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        reader.join(10)
    assert proc.returncode == 0 and any("reflect runs by itself" in x for x in lines)
    assert not any("reflect failed" in x for x in lines), lines


def test_c4_mem_mcp_reflects_by_itself_and_recall_never_waits(tmp_path):
    ws = tmp_path / "w"
    _workspace(ws)

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"],
                                       env=mem_env())
        async with stdio_client(params) as (read, write_):
            async with ClientSession(read, write_) as s:
                await s.initialize()
                slowest, deadline = 0.0, time.monotonic() + 60
                while time.monotonic() < deadline and not (ws / "bank" / "journal.md").exists():
                    started = time.monotonic()
                    result = await s.call_tool("recall", {"query": "Jonas"})
                    slowest = max(slowest, time.monotonic() - started)
                    assert not result.is_error
                    await asyncio.sleep(0.2)
                return slowest
    slowest = asyncio.run(main())
    assert (ws / "bank" / "journal.md").exists() and slowest < 5


def test_c4_auto_reflect_can_be_switched_off(tmp_path):
    ws = tmp_path / "w"
    _workspace(ws, SOON + "auto = false\n")
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", "0.3"],
                            env=mem_env(), stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert not (ws / "bank" / "journal.md").exists() and "reflect runs by itself" not in err
