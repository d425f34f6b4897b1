"""A hostile or careless agent against `mem mcp`: odd bytes, huge arguments, wrong types, paths outside
the workspace, two clients writing at once, a client that goes away mid-call. Driven by the official
MCP SDK client (and raw JSON-RPC where a client must vanish) against `mem mcp` as a real subprocess."""

import asyncio
import json
import subprocess
import sys
import threading
import time

from conftest import mem_env

from test_mcp import session
from test_mcp_busy import DAY, _left_behind, _until


def _text(result) -> str:
    return result.content[0].text


def test_a_line_number_past_any_file_is_refused_not_a_crash(example_ws):
    """`get` with a line number of 5,000 digits failed inside int() ('Error executing tool get', a traceback)."""
    async def script(s):
        return [await s.call_tool("get", {"ref": "memory.md#L" + "9" * 5000}),
                await s.call_tool("get", {"ref": "memory.md#L1-L" + "9" * 5000})]

    far, to_far = session(example_ws, script)
    assert far.is_error and "outside memory.md" in _text(far), _text(far)[:300]
    assert not to_far.is_error and json.loads(_text(to_far))["start"] == 1


def test_a_page_named_by_a_path_outside_bank_is_refused(example_ws):
    """'../../etc/passwd' became the new page bank/entities/etc-passwd.md, 'Peter/../../evil' the page
    bank/entities/Peter-..-..-evil.md: a path where an entity's name belongs is refused, nothing written."""
    before = sorted(p.name for p in (example_ws / "bank" / "entities").iterdir())

    async def script(s):
        return [await s.call_tool("note", {"text": "Escaped.", "page": page})
                for page in ("../../../../etc/passwd", "Peter/../../evil", "/etc/passwd", "./Peter", "~/notes")]

    for result in session(example_ws, script):
        assert result.is_error and "path" in _text(result), _text(result)
    assert sorted(p.name for p in (example_ws / "bank" / "entities").iterdir()) == before
    assert "Escaped." not in "".join(p.read_text(encoding="utf-8") for p in example_ws.rglob("*.md"))


def test_writes_too_large_for_their_file_are_refused_at_once(example_ws):
    """A 12 MB note (over [index] max_file_bytes) or core append (over core's limit) was parsed as
    Markdown before the size was checked: tens of seconds in the call's turn, every other call busy."""
    big = "Lorem ipsum " * 1_000_000

    async def script(s):
        out = []
        for name, args in (("note", {"text": big}), ("core_append", {"text": big}),
                           ("retain", {"bullet": "W: " + big}), ("note", {"text": big, "page": "bank/world.md"})):
            started = time.monotonic()
            out.append((await s.call_tool(name, args), time.monotonic() - started))
        return out

    before = {p: p.read_bytes() for p in example_ws.rglob("*.md")}
    for result, seconds in session(example_ws, script):
        assert result.is_error and ("max_file_bytes" in _text(result) or "limit" in _text(result)), _text(result)[:300]
        assert seconds < 6, seconds
    assert {p: p.read_bytes() for p in example_ws.rglob("*.md")} == before


def test_a_note_holding_a_line_separator_is_one_line_to_the_retain_log(example_ws):
    """U+2028 and U+2029 are no line breaks in Markdown (one line is written), but the retain log split
    files and its own JSON lines at them: the note read as gone ('saved over by an editor') and a
    retried call wrote it twice."""
    text = "Walks\u2028daily\u2029at seven."

    async def script(s):
        return [await s.call_tool("note", {"text": text}), await s.call_tool("note", {"text": text}),
                await s.call_tool("recall", {"query": "walks daily seven", "min_score": 0})]

    first, again, recalled = session(example_ws, script)
    assert not first.is_error and not again.is_error, (_text(first), _text(again))
    path = json.loads(_text(first))["path"]
    assert json.loads(_text(again)).get("repeated") is True
    assert (example_ws / path).read_text(encoding="utf-8").count(text) == 1
    assert not any("gone" in w for w in json.loads(_text(recalled)).get("warnings", [])), _text(recalled)[:500]


def test_two_clients_writing_at_once_lose_nothing(example_ws):
    """Two `mem mcp` servers (two agents) append to core memory, the same bank page and the same
    day's log at once: every line once, memory.md within its limit."""
    n = 12

    async def client(tag: str):
        async def script(s):
            for i in range(n):
                for name, args in (("core_append", {"text": f"- {tag} prefers tea no. {i}."}),
                                   ("note", {"text": f"{tag} saw the harbour, visit {i}.", "page": "Peter"}),
                                   ("retain", {"bullet": f"S: {tag} observation {i}.", "date": DAY})):
                    result = await s.call_tool(name, args)
                    assert not result.is_error, _text(result)
        return await asyncio.to_thread(session, example_ws, script)

    async def both():
        await asyncio.gather(client("Ana"), client("Ben"))

    asyncio.run(both())
    core = (example_ws / "memory.md").read_text(encoding="utf-8")
    page = (example_ws / "bank" / "entities" / "Peter.md").read_text(encoding="utf-8")
    day = (example_ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    for tag in ("Ana", "Ben"):
        for i in range(n):
            assert core.count(f"- {tag} prefers tea no. {i}.") == 1
            assert page.count(f"{tag} saw the harbour, visit {i}.") == 1
            assert day.count(f"- S: {tag} observation {i}.") == 1
    assert _left_behind(example_ws) == []


def _raw_server(ws, env):
    """`mem mcp` with a client that speaks JSON-RPC by hand (so that it can vanish mid-call)."""
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    assert json.loads(proc.stdout.readline())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc, send


def test_a_client_gone_while_a_model_answers_leaves_no_server_behind(example_ws, stub):
    """The client went away while summarize waited on the model: once the model answered, the server
    waited forever to take its turn back from an event loop that was ending (spinning a core)."""
    release = threading.Event()
    stub.chat_reply = lambda body: (release.wait(60), f"A recap [{DAY}].")[1]
    proc, send = _raw_server(example_ws, mem_env(MEM_EMBEDDER="none"))
    try:
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "summarize", "arguments": {"target": DAY}}})
        asyncio.run(_until(lambda: stub.chats))
        proc.stdin.close()  # the client is gone
        time.sleep(0.5)
        release.set()  # the model answers
        assert proc.wait(20) == 0
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _left_behind(example_ws) == []
