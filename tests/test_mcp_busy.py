"""`mem mcp` under a long call: a call waits at most `[mcp] wait_seconds` behind it, then answers "busy"
(never hangs), and a retried write never writes its line twice. Driven by the official MCP SDK client
against `mem mcp` as a real subprocess; the long call is a `retain` to a daily log whose lock another
writer (this test) holds until it lets go. (A call waiting on a model gives its turn up meanwhile:
tests/test_mcp_aside.py.)"""

import asyncio
import json
import threading
import time
from contextlib import contextmanager

from conftest import mem_env

from test_mcp import session

DAY = "2026-11-27"
HELD_DAY = "2026-11-28"  # the long call's log: its lock is held by the test
BULLET = "W @Peter: Keeps his surfboard in Ericeira."


@contextmanager
def _log_locked(ws):
    """Hold the lock of HELD_DAY's log as another mem process would (memtool's own lock)."""
    from memtool.safe_writes import lock

    with lock(ws / ".memory" / "locks", f"memory/{HELD_DAY}.md"):
        yield


def _long_call(s):
    """A retain to HELD_DAY: it waits for the log's lock in its turn."""
    return asyncio.create_task(s.call_tool("retain", {"bullet": "S: written once the lock is free.", "date": HELD_DAY}))


def _held(stub) -> threading.Event:
    """Make every chat request to the stand-in wait until the returned event is set."""
    release = threading.Event()

    def reply(body):
        release.wait(60)
        return f"Lena flew to Marrakech for Andy's birthday [{DAY}]."

    stub.chat_reply = reply
    return release


async def _until(check, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def _left_behind(ws) -> list[str]:
    """Processes whose command line names the workspace (the server and anything it started)."""
    from pathlib import Path

    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if str(ws).encode() in args:
            out.append(cmdline.parent.name)
    return out


def _settings(ws, text: str) -> None:
    path = ws / "memtool.toml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_call_behind_a_long_one_answers_busy_instead_of_hanging(example_ws):
    _settings(example_ws, "\n[mcp]\nwait_seconds = 1\n")

    async def script(s):
        with _log_locked(example_ws):
            long = _long_call(s)
            await asyncio.sleep(1.0)  # the retain has its turn and waits for the lock
            started = time.monotonic()
            try:
                behind = await asyncio.wait_for(s.call_tool("recall", {"query": "Peter Lisbon"}), 15)
            except asyncio.TimeoutError:
                behind = None  # hung behind the retain
            waited = time.monotonic() - started
        written = await long
        after = await s.call_tool("recall", {"query": "Peter Lisbon"})
        assert _left_behind(example_ws)  # the server, seen while it runs
        return behind, waited, written, after

    behind, waited, written, after = session(example_ws, script)
    assert behind is not None, "recall hung behind the retain"
    assert behind.is_error and waited < 10, (waited, behind.content)
    text = behind.content[0].text
    assert text.startswith("busy: retain is running") and "retry in a moment" in text, text
    assert not written.is_error and not after.is_error  # the long call finished; the next one is answered
    assert _left_behind(example_ws) == []


def test_core_memory_is_read_while_a_long_call_runs(example_ws):
    """memory://core waited behind a long call and failed busy: it is a plain file read, not queued."""
    _settings(example_ws, "\n[mcp]\nwait_seconds = 1\n")

    async def script(s):
        with _log_locked(example_ws):
            long = _long_call(s)
            await asyncio.sleep(1.0)
            try:
                core = await asyncio.wait_for(s.read_resource("memory://core"), 15)
            except Exception as exc:  # busy (an MCP error) or hung
                core = exc
        await long
        return core

    core = session(example_ws, script)
    assert not isinstance(core, Exception), core
    assert core.contents[0].text == (example_ws / "memory.md").read_text(encoding="utf-8")


def test_a_retain_retried_after_a_client_timeout_is_written_once(example_ws):
    async def script(s):
        with _log_locked(example_ws):
            long = _long_call(s)
            await asyncio.sleep(1.0)
            try:  # the client gives up on the first try while it waits behind the long call …
                first = await s.call_tool("retain", {"bullet": BULLET, "date": DAY}, read_timeout_seconds=0.5)
            except Exception as exc:  # the SDK's timeout error
                first = exc
            retry = asyncio.create_task(s.call_tool("retain", {"bullet": BULLET, "date": DAY}))  # … and tries again
            await asyncio.sleep(1.0)
        await long
        return first, await retry

    first, retry = session(example_ws, script)
    assert isinstance(first, Exception), first
    assert not retry.is_error, retry.content
    text = (example_ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    assert text.count(BULLET) == 1, text
    answer = json.loads(retry.content[0].text)
    assert text.splitlines()[answer["line"] - 1] == f"- {BULLET}"
    assert _left_behind(example_ws) == []


def test_a_write_repeated_within_the_window_is_answered_not_written_again(example_ws):
    """A client that restarted the server after a timeout retries on a new one: the retain log
    (.memory/retained.jsonl) says the line was written a moment ago and is still there."""
    async def write_all(s):
        out = []
        for _ in range(2):
            out.append(await s.call_tool("retain", {"bullet": BULLET, "date": DAY}))
            out.append(await s.call_tool("note", {"text": "Jonas moved the meeting to Friday."}))
            out.append(await s.call_tool("core_append", {"text": "- Prefers tea in the afternoon."}))
        return out

    first = session(example_ws, write_all)
    second = session(example_ws, write_all)  # a new server process
    answers = [json.loads(r.content[0].text) for r in first + second]
    assert not any(r.is_error for r in first + second), [r.content for r in first + second]
    day = (example_ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    assert day.count(BULLET) == 1
    assert (example_ws / "memory.md").read_text(encoding="utf-8").count("Prefers tea in the afternoon.") == 1
    today = answers[1]["path"]
    assert (example_ws / today).read_text(encoding="utf-8").count("Jonas moved the meeting to Friday.") == 1
    assert [bool(a.get("repeated")) for a in answers] == [False, False, False] + [True] * 9
    assert answers[3]["source"] == answers[0]["source"] and answers[4]["source"] == answers[1]["source"]


def test_the_cli_still_writes_a_line_retained_twice_twice(example_ws):
    from conftest import run_mem

    for _ in range(2):
        run_mem("-w", example_ws, "retain", "--date", DAY, BULLET, check=0, env=mem_env(MEM_EMBEDDER="none"))
    assert (example_ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8").count(BULLET) == 2


def test_mcp_settings_are_checked(tmp_path):
    import pytest

    from memtool.config import Config
    from memtool.errors import WorkspaceError

    path = tmp_path / "memtool.toml"
    path.write_text("[mcp]\nwait_seconds = 2.5\nrepeat_seconds = 0\n", encoding="utf-8")
    config = Config.load(path)
    assert (config.mcp_wait, config.mcp_repeat, config.warnings) == (2.5, 0.0, ())
    path.write_text("[mcp]\nwait_seconds = -1\n", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="mcp.wait_seconds must be a number of seconds from 0 to 3600"):
        Config.load(path)


def test_a_person_s_write_does_not_make_an_agent_s_write_a_repeat(example_ws):
    """`mem note` then MCP `note` of the same text: the agent's is written (only MCP writes count);
    a second MCP call is a retry; `again: true` writes it anyway."""
    from conftest import run_mem

    text = "Took ibuprofen 400 mg."
    run_mem("-w", example_ws, "note", text, check=0, env=mem_env(MEM_EMBEDDER="none"))

    async def calls(s):
        return [await s.call_tool("note", {"text": text}), await s.call_tool("note", {"text": text}),
                await s.call_tool("note", {"text": text, "again": True})]

    answers = [json.loads(r.content[0].text) for r in session(example_ws, calls)]
    assert [bool(a.get("repeated")) for a in answers] == [False, True, False]
    assert (example_ws / answers[0]["path"]).read_text(encoding="utf-8").count(text) == 3


def test_two_copies_appended_are_no_repeat_of_one(example_ws):
    async def calls(s):
        return [await s.call_tool("core_append", {"text": "- Likes rain."}),
                await s.call_tool("core_append", {"text": "- Likes rain.\n- Likes rain."})]

    answers = [json.loads(r.content[0].text) for r in session(example_ws, calls)]
    assert [bool(a.get("repeated")) for a in answers] == [False, False]
    assert (example_ws / "memory.md").read_text(encoding="utf-8").count("- Likes rain.") == 3


def test_the_write_tools_say_how_a_repeat_is_told_and_forced(example_ws):
    async def tools(s):
        return (await s.list_tools()).tools

    described = {t.name: t for t in session(example_ws, tools)}
    for name in ("note", "retain", "core_append", "core_insert"):
        assert "again=true" in described[name].description and "again" in described[name].input_schema["properties"]
