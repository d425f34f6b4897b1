"""MCP v2, as an agent uses it through the real SDK client: note, recall, recent, entities, forget and
reflect in one session, with compact answers, described schemas and errors in the tool's terms."""

import json

from conftest import write
from test_mcp import answer, call, session

PHONE = "+49 171 2345678"


def test_b1_an_agent_session_notes_recalls_lists_forgets_and_reflects(example_ws):
    async def script(s):
        out = {"note": await call(s, "note", text=f"Jonas has a new number: {PHONE}, evenings only."),
               "page": await call(s, "note", text="Jonas sails on the Alster on Sundays.", page="Jonas")}
        out["recall"] = await call(s, "recall", query="Jonas number")
        out["listing"] = await call(s, "recall", entity="Jonas")
        out["recent"] = await call(s, "recent", days=1)
        out["entities"] = await call(s, "entities", query="jon")
        out["preview"] = await call(s, "forget", target=PHONE)
        out["forgot"] = await call(s, "forget", target=PHONE, confirm=True)
        out["after"] = await call(s, "recall", query="2345678")
        out["first"] = await call(s, "reflect")
        out["again"] = await call(s, "reflect")
        out["forced"] = await call(s, "reflect", force=True)
        return out
    r = session(example_ws, script)
    assert not any(x.is_error for x in r.values()), {k: x.content for k, x in r.items() if x.is_error}
    noted = answer(r["note"])["source"]
    assert noted.startswith("memory/") and answer(r["page"])["source"] == "bank/entities/Jonas.md#L3"
    assert noted in [x["source"] for x in answer(r["recall"])["results"]]
    assert "bank/entities/Jonas.md#L3" in [x["source"] for x in answer(r["listing"])["results"]]
    recent = answer(r["recent"])
    assert noted in [f["source"] for d in recent["days"] for f in d["facts"]]
    assert [e["name"] for e in answer(r["entities"])["entities"]] == ["Jonas"]
    preview = answer(r["preview"])
    assert not preview["forgotten"] and [m["source"] for m in preview["matches"]] == [noted]
    assert answer(r["forgot"])["forgotten"] and PHONE not in (example_ws / noted.split("#")[0]).read_text(encoding="utf-8")
    assert answer(r["after"])["results"] == []
    first, again, forced = answer(r["first"]), answer(r["again"]), answer(r["forced"])
    assert "gated" not in first and set(first) >= {"changed", "pages", "consolidation"}
    assert "h ago" in again["gated"] and not again["changed"]  # the gates hold unless forced
    assert "gated" not in forced and "entry" not in forced and forced["seconds"] >= 0
    for x in r.values():  # compact: no indentation, no spaces after separators
        text = x.content[0].text
        assert "\n  " not in text and text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


def test_b1_episodes_and_about_fit_the_default_budget_without_repeating(example_ws):
    async def script(s):
        return (await call(s, "episodes", query="Peter"), await call(s, "about", entity="Peter"),
                await call(s, "episodes", query="Peter", budget=300))
    episodes, about, small = session(example_ws, script)
    for x in (episodes, about):
        assert len(x.content[0].text) <= 2000 * 4 + 200, len(x.content[0].text)
    e = answer(episodes)
    assert e["days"] and all(isinstance(sec["lines"], str) for d in e["days"] for sec in d["sections"])
    assert "hits" not in e["days"][0]  # each hit line is quoted once, in its section
    a = answer(about)
    assert "memtool:begin" not in (a["page"] or {}).get("text", "")  # the generated list is the facts below
    contents = [f["content"] for f in a["facts"]]
    assert len(contents) == len(set(contents)) and all("score" not in f for f in a["facts"])
    s = answer(small)
    assert len(small.content[0].text) <= 300 * 4 + 200 and s["omitted_days"] > 0 and "budget" in s["hint"]


def test_b1_schemas_describe_every_parameter_with_enums_and_bounds(example_ws):
    async def script(s):
        return {t.name: t for t in (await s.list_tools()).tools}
    tools = session(example_ws, script)
    for t in tools.values():
        for name, prop in t.input_schema.get("properties", {}).items():
            assert prop.get("description"), (t.name, name)
            if prop.get("type") == "integer":
                assert "minimum" in prop, (t.name, name)
    kind = tools["recall"].input_schema["properties"]["kind"]
    assert {"world", "log"} <= set(json.dumps(kind) and kind["anyOf"][0]["enum"])
    assert tools["recall"].input_schema.get("required", []) == []  # query is optional: empty lists
    assert tools["forget"].annotations.destructive_hint and "confirm" in tools["forget"].input_schema["properties"]
    assert tools["note"].annotations.read_only_hint is False
    assert "recall" in tools["recall"].description.lower() or "before answering" in tools["recall"].description


def test_b1_errors_speak_in_parameter_names_and_plain_words(example_ws):
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n\nA line.\n")

    async def script(s):
        return [await call(s, "recall", query="x", k="five"), await call(s, "recall", query="x", kind="gossip"),
                await call(s, "recall", query="x", since="last week"), await call(s, "episodes", query="x", budget=5),
                await call(s, "recall", query="x", k=0), await call(s, "forget", target="ab"),
                await call(s, "note", text="two\nlines")]
    results = session(example_ws, script)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results), texts
    for text in texts:
        assert "pydantic" not in text and "http" not in text and "--" not in text and "Arguments" not in text, text
    assert "k must be a whole number" in texts[0] and "kind must be one of" in texts[1]
    assert "since 'last week'" in texts[2] and "budget must be at least" in texts[3] and "k must be at least 1" in texts[4]


def test_b1_an_os_error_is_a_tool_error_with_its_reason(example_ws):
    """A path too long for the file system raised OSError past the tool: the agent read only
    'Error executing tool get' and the server logged a traceback."""
    async def script(s):
        return await call(s, "get", ref="x" * 5000)
    result = session(example_ws, script)
    text = result.content[0].text
    assert result.is_error and "File name too long" in text and "hint:" in text, text
