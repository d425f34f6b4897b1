"""`mem mcp` while a tool waits on a language model: `summarize` and `reflect` give up their turn for
the model's answer (other calls run meanwhile) and take it back to finish; what was written meanwhile
stays, and reflect plans its pages from it. Driven by the official MCP SDK client against `mem mcp` as
a real subprocess; the model is the Ollama stand-in (tests/ollama_stub.py), held until the test lets
it answer."""

import asyncio
import json
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
