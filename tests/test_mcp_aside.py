"""`mem mcp` while a tool waits on a language model: `summarize` and `reflect` give up their turn for
the model's answer (other calls run meanwhile) and take it back to finish; what was written meanwhile
stays, and reflect plans its pages from it. Driven by the official MCP SDK client against `mem mcp` as
a real subprocess; the model is the Ollama stand-in (tests/ollama_stub.py), held until the test lets
it answer."""

import asyncio
import json
import sqlite3
import threading
import time

from test_mcp import session
from test_mcp_busy import DAY, _held, _left_behind, _settings, _until

BULLET = "W @Peter: Keeps his surfboard in Ericeira."
PAGE_NOTE = "Peter's surfboard is a blue 7'2 mini-mal."
WORLD_NOTE = "The Ericeira surf school opens at nine."
REVIEWED = '\n[mcp]\nwait_seconds = 1\n\n[llm]\nmodel = "toy"\n\n[reflect]\nllm_review = true\n'


def test_a_recall_during_a_slow_summarize_answers_promptly(example_ws, stub):
    _settings(example_ws, "\n[mcp]\nwait_seconds = 1\n")
    release = _held(stub)

    async def script(s):
        long = asyncio.create_task(s.call_tool("summarize", {"target": DAY}))
        await _until(lambda: stub.chats)  # summarize waits for the model now
        started = time.monotonic()
        recalled = await asyncio.wait_for(s.call_tool("recall", {"query": "Peter Lisbon"}), 15)
        waited = time.monotonic() - started
        done_early = long.done()
        release.set()
        return recalled, waited, done_early, await long

    recalled, waited, done_early, summary = session(example_ws, script)
    assert not recalled.is_error, recalled.content
    assert waited < 5 and not done_early, waited
    assert json.loads(recalled.content[0].text)["results"]
    assert not summary.is_error, summary.content
    assert "Marrakech" in json.loads(summary.content[0].text)["summary"]
    assert _left_behind(example_ws) == []


def test_writes_during_a_slow_reflect_are_kept_and_on_its_pages(example_ws, stub):
    _settings(example_ws, REVIEWED)
    release = _held(stub)
    peter = example_ws / "bank" / "entities" / "Peter.md"

    async def script(s):
        long = asyncio.create_task(s.call_tool("reflect", {"force": True}))
        await _until(lambda: stub.chats)  # reflect asks the model about what its rules left open
        writes = [await asyncio.wait_for(s.call_tool(*call), 15) for call in (
            ("retain", {"bullet": BULLET, "date": DAY}),
            ("note", {"text": PAGE_NOTE, "page": "Peter"}),
            ("note", {"text": WORLD_NOTE, "page": "bank/world.md"}))]
        done_early = long.done()
        release.set()
        return writes, done_early, await long

    writes, done_early, reflected = session(example_ws, script)
    assert not any(w.is_error for w in writes), [w.content for w in writes]
    assert not done_early and not reflected.is_error, reflected.content
    answer = json.loads(reflected.content[0].text)
    day = (example_ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    assert day.count(f"- {BULLET}") == 1
    page = peter.read_text(encoding="utf-8")
    assert page.count(PAGE_NOTE) == 1  # the note stands beside the page's regenerated block
    assert "Keeps his surfboard in Ericeira" in page  # planned from the files as they were after the model
    assert (example_ws / "bank" / "world.md").read_text(encoding="utf-8").count(WORLD_NOTE) == 1
    assert {p["path"] for p in answer["pages"]} >= {"bank/entities/Peter.md", "bank/world.md"}
    assert set(answer["written_meanwhile"]) >= {f"memory/{DAY}.md", "bank/entities/Peter.md", "bank/world.md"}
    assert _left_behind(example_ws) == []


def test_a_summarize_given_up_on_during_the_model_s_answer_leaves_the_turn_free(example_ws, stub):
    """The client stops waiting while the model answers: the call finishes in the server, hands its turn
    on, and every later call is answered (none waits for a turn that was never given back)."""
    _settings(example_ws, "\n[mcp]\nwait_seconds = 1\n")
    release = _held(stub)

    async def script(s):
        try:
            gone = await s.call_tool("summarize", {"target": DAY}, read_timeout_seconds=1.0)
        except Exception as exc:  # the SDK's timeout error (it sends notifications/cancelled)
            gone = exc
        during = await asyncio.wait_for(s.call_tool("recall", {"query": "Peter Lisbon"}), 15)
        release.set()
        await asyncio.sleep(0.5)
        after = [await asyncio.wait_for(s.call_tool(*c), 15) for c in
                 (("retain", {"bullet": BULLET, "date": DAY}), ("summarize", {"target": DAY}),
                  ("recall", {"query": "surfboard Ericeira"}))]
        return gone, during, after

    gone, during, after = session(example_ws, script)
    assert isinstance(gone, Exception), gone
    assert not during.is_error and not any(a.is_error for a in after), [a.content for a in after]
    assert _left_behind(example_ws) == []


def test_forget_and_a_second_reflect_during_a_slow_reflect_are_refused_loudly(example_ws, stub):
    """Both need reflect's own lock, which the slow run holds: refused at once, nothing removed. (forget
    waited for the lock up to 30 s in its turn, so the run could not take its turn back meanwhile.)"""
    _settings(example_ws, REVIEWED)
    release = _held(stub)

    async def script(s):
        long = asyncio.create_task(s.call_tool("reflect", {"force": True}))
        await _until(lambda: stub.chats)
        listed = await asyncio.wait_for(s.call_tool("forget", {"target": "Ericeira"}), 15)
        forgot = await asyncio.wait_for(s.call_tool("forget", {"target": "Ericeira", "confirm": True,
                                                                "plan": json.loads(listed.content[0].text)["plan"]}), 15)
        again = await asyncio.wait_for(s.call_tool("reflect", {"force": True}), 15)
        release.set()
        return forgot, again, await long

    before = {p: p.read_bytes() for p in (example_ws / "memory").glob("*.md")}
    forgot, again, reflected = session(example_ws, script)
    for refused in (forgot, again):
        assert refused.is_error and "mem reflect or mem forget is running" in refused.content[0].text
    assert not reflected.is_error, reflected.content
    assert {p: p.read_bytes() for p in (example_ws / "memory").glob("*.md")} == before


def test_a_person_s_decision_made_while_the_model_answers_stands_over_the_model_s(example_ws, stub):
    """A pair the person decides (keep both) through `review` while reflect waits on the model's review
    of that same pair: the model's 'merge' came back after and folded the pair anyway (reflect honoured
    the decisions it had read before the model, not the one made meanwhile), so recall hid a fact the
    person had just said to keep, until the next run."""
    from conftest import mem_env, run_mem

    run_mem("-w", example_ws, "reflect", "--force", env=mem_env(MEM_EMBEDDER="none"), check=0)  # the rules' queue
    _settings(example_ws, REVIEWED)
    release = threading.Event()
    stub.chat_reply = lambda body: (release.wait(60), '{"decision": "merge", "reason": "the same fact"}')[1]

    async def script(s):
        items = json.loads((await s.call_tool("review", {"action": "list"})).content[0].text)["items"]
        pair = next(i for i in items if i["kind"] == "near-duplicate")
        long = asyncio.create_task(s.call_tool("reflect", {"force": True}))
        await _until(lambda: stub.chats)  # reflect waits for the model's review of the open pairs
        decided = await asyncio.wait_for(s.call_tool("review", {"action": "decide", "item": pair["id"],
                                                                "decision": "keep", "note": "both hold"}), 15)
        release.set()
        return pair, decided, await long

    pair, decided, reflected = session(example_ws, script)
    assert not decided.is_error and not reflected.is_error, (decided.content, reflected.content)
    a, b = pair["a"]["key"], pair["b"]["key"]
    conn = sqlite3.connect(example_ws / ".memory" / "local.sqlite")
    try:
        folds = conn.execute("SELECT key, kept, how FROM folds WHERE (key = ? AND kept = ?) OR (key = ? AND kept = ?)",
                             (a, b, b, a)).fetchall()
    finally:
        conn.close()
    assert folds == [], folds


def test_the_anyio_memtool_asks_for_has_what_the_turns_use():
    """`Turns.aside` imports anyio.RunFinishedError, which anyio has since 4.11; the mcp SDK accepts
    anyio 4.9, so an install that kept 4.9 or 4.10 failed every summarize (ImportError, a traceback)."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = [d.split(";")[0].replace(" ", "") for d in project["dependencies"] if d.replace(" ", "").startswith("anyio")]
    assert pins and all(tuple(map(int, p.split(">=")[1].split(",")[0].split(".")[:2])) >= (4, 11) for p in pins), pins
