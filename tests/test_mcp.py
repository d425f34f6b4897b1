"""`mem mcp` driven by the official MCP SDK client over stdio, compared with the CLI's --json."""

import asyncio
import json
import subprocess
import sys

import pytest
from conftest import mem_env, run_json

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {"recall", "episodes", "retain", "get", "about", "opinions", "status", "core_append", "core_replace",
         "core_insert", "summarize", "note", "recent", "entities", "forget", "reflect", "review"}


def answer(result):
    """A tool's answer: its one compact JSON text."""
    assert len(result.content) == 1 and result.structured_content is None
    return json.loads(result.content[0].text)


def session(ws, script):
    """Run `script(session)` against `mem -w ws mcp` started as a subprocess."""
    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"],
                                       env=mem_env(MEM_EMBEDDER="none"))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await script(s)
    return asyncio.run(main())


def call(s, name, **args):
    async def go():
        return await s.call_tool(name, args)
    return go()


def test_tools_are_listed_small_and_annotated(example_ws):
    async def script(s):
        return (await s.list_tools()).tools
    tools = {t.name: t for t in session(example_ws, script)}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert len(t.input_schema.get("properties", {})) <= 9, t.name  # few parameters (recall: query, k, filters, min_score)
        assert t.description and t.annotations is not None
    for name in ("recall", "episodes", "get", "about", "opinions", "status"):
        assert tools[name].annotations.read_only_hint, name
    assert tools["core_replace"].annotations.destructive_hint
    assert not tools["retain"].annotations.read_only_hint
    assert "Straße" in tools["recall"].description  # the description teaches the query syntax


@pytest.mark.parametrize("tool,args,cli", [
    ("recall", {"query": "Peter Lisbon", "k": 5}, ["recall", "Peter Lisbon", "--k", "5"]),
    ("recall", {"query": "Steuer", "kind": "world", "entity": "Anna"}, ["recall", "Steuer", "--kind", "world", "-e", "Anna"]),
    ("episodes", {"query": "Marrakech", "k": 8}, ["episodes", "Marrakech", "--k", "8", "--budget", "2000"]),
    ("get", {"ref": "memory/2026-10-27.md#L10-L13"}, ["get", "memory/2026-10-27.md#L10-L13"]),
    ("about", {"entity": "Pete", "k": 5, "budget": 500}, ["about", "Pete", "--k", "5", "--budget", "500"]),
    ("entities", {"query": "pe"}, ["entities", "pe"]),
    ("recent", {"days": 3650}, ["recent", "--days", "3650", "--budget", "2000"]),
    ("opinions", {"entity": "Peter"}, ["opinions", "--entity", "Peter"]),
])
def test_tools_answer_like_the_cli(example_ws, tool, args, cli):
    async def script(s):
        return await call(s, tool, **args)
    result = session(example_ws, script)
    assert not result.is_error, result.content
    proc, expected = run_json(*cli, cwd=example_ws, env=mem_env(MEM_EMBEDDER="none"))
    assert proc.returncode == 0
    assert answer(result) == expected


def test_status_retain_core_and_resource(example_ws):
    async def script(s):
        status = await call(s, "status")
        retained = await call(s, "retain", bullet="W @Peter: Learned to surf in Ericeira.", date="2026-11-30")
        bad = await call(s, "retain", bullet="X: not a type")
        appended = await call(s, "core_append", text="- Surfing lessons on Saturdays.")
        replaced = await call(s, "core_replace", old="Surfing lessons on Saturdays.", new="Surfing on Sundays.")
        twice = await call(s, "core_replace", old="- ", new="* ")
        big = await call(s, "core_append", text="z" * 6000)
        inserted = await call(s, "core_insert", line=1, text="<!-- edited by an agent -->")
        resource = await s.read_resource("memory://core")
        return status, retained, bad, appended, replaced, twice, big, inserted, resource
    status, retained, bad, appended, replaced, twice, big, inserted, resource = session(example_ws, script)
    assert answer(status)["facts"] > 300 and "embedder" in answer(status)
    assert answer(retained)["source"] == "memory/2026-11-30.md#L4"
    assert bad.is_error and "unknown type" in bad.content[0].text
    assert not appended.is_error and not replaced.is_error and not inserted.is_error
    assert twice.is_error and "times" in twice.content[0].text
    assert big.is_error and "over its limit" in big.content[0].text
    core = (example_ws / "memory.md").read_text(encoding="utf-8")
    assert core.startswith("<!-- edited by an agent -->\n") and core.endswith("- Surfing on Sundays.\n")
    assert resource.contents[0].text == core
    assert len(list((example_ws / ".memory" / "backups").glob("memory.md.*"))) == 3


def test_path_escapes_are_refused(example_ws, tmp_path):
    (tmp_path / "secret.md").write_text("top secret\n", encoding="utf-8")
    (example_ws / "bank" / "escape.md").symlink_to(tmp_path / "secret.md")

    async def script(s):
        return [await call(s, "get", ref=ref) for ref in
                ["../secret.md", str(tmp_path / "secret.md"), "bank/escape.md", "memory/../../secret.md", "/etc/passwd"]]
    for result in session(example_ws, script):
        assert result.is_error and "top secret" not in result.content[0].text


def test_a_misspelt_argument_is_an_error_not_dropped(example_ws):
    """`recall(query=…, entities="Peter")` answered unfiltered: the SDK drops arguments a tool does not take."""
    async def script(s):
        return [await call(s, "recall", query="Lisbon", entities="Peter"), await call(s, "retain", text="W: x"),
                await call(s, "status", verbose=True)]
    recall, retain, status = session(example_ws, script)
    assert recall.is_error and "unknown argument 'entities'" in recall.content[0].text
    assert "entity" in recall.content[0].text  # it names what the tool takes
    assert retain.is_error and "'text'" in retain.content[0].text
    assert status.is_error and "it takes none" in status.content[0].text
    assert "W: x" not in "".join(p.read_text(encoding="utf-8") for p in (example_ws / "memory").glob("*.md"))


def test_concurrent_retains_from_mcp_and_cli_lose_nothing(example_ws):
    n = 40

    async def script(s):
        clis = [subprocess.Popen([sys.executable, "-m", "memtool", "retain", f"S: cli fact {i}", "--date", "2026-11-30"],
                                 cwd=example_ws, env=mem_env(), stdout=subprocess.DEVNULL) for i in range(0, n, 4)]
        results = [await call(s, "retain", bullet=f"S: mcp fact {i}", date="2026-11-30") for i in range(n)]
        assert [p.wait(timeout=120) for p in clis] == [0] * len(clis)
        return results
    results = session(example_ws, script)
    assert not any(r.is_error for r in results)
    lines = (example_ws / "memory" / "2026-11-30.md").read_text(encoding="utf-8").splitlines()
    assert all(lines.count(f"- S: mcp fact {i}") == 1 for i in range(n))
    assert all(lines.count(f"- S: cli fact {i}") == 1 for i in range(0, n, 4))


def test_5_mcp_recall_shows_an_opinions_updated_confidence_trend_and_evidence(example_ws):
    async def script(s):
        return (await call(s, "recall", query="Lisbon good for Peter relaxed", kind="opinion", k=3),
                await call(s, "opinions", entity="Peter"))
    recalled, listed = session(example_ws, script)
    (op,) = [o for o in answer(listed)["opinions"] if "Lisbon will be good" in o["statement"]]
    assert op["trend"] == "↑" and op["supporting"]  # the example's evidence moved it
    (hit,) = [r for r in answer(recalled)["results"] if r["source"] == op["source"]]
    assert (hit["confidence"], hit["trend"], hit["written_confidence"]) == (op["confidence"], "↑", op["anchor"])
    assert hit["evidence"]["supporting"] == op["supporting"]


def test_qa36_a_date_before_1900_is_refused_by_cli_and_mcp_alike(example_ws):
    """`0001-01-01` (a typo) used to create memory/0001-01-01.md; now every date option refuses it."""
    from conftest import run_mem
    before = sorted(p.name for p in (example_ws / "memory").iterdir())
    for args in (["retain", "W @Peter: typo day.", "--date", "0001-01-01"], ["note", "typo day", "--date", "0025-11-30"],
                 ["recall", "Lisbon", "--since", "0001-01-01"], ["recall", "Lisbon", "--until", "1899"],
                 ["recall", "Lisbon", "--as-of", "0001-01-01"], ["episodes", "Lisbon", "--since", "0999-01"]):
        proc = run_mem("-w", example_ws, *args, env=mem_env(MEM_EMBEDDER="none"))
        assert proc.returncode == 2 and "before 1900" in proc.stderr and "hint:" in proc.stderr, (args, proc.stderr)

    async def script(s):
        return [await call(s, "retain", bullet="W @Peter: typo day.", date="0001-01-01"),
                await call(s, "recall", query="Lisbon", since="0001-01-01"),
                await call(s, "episodes", query="Lisbon", until="1899-12-31")]
    for result in session(example_ws, script):
        assert result.is_error and "before 1900" in result.content[0].text
    assert sorted(p.name for p in (example_ws / "memory").iterdir()) == before


def test_qa36_core_tools_name_memory_md_as_the_workspace_spells_it(example_ws):
    """In an OpenClaw workspace the core tools and resource described `memory.md`, a file it does not have."""
    (example_ws / "memory.md").rename(example_ws / "MEMORY.md")

    async def script(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        resources = (await s.list_resources()).resources
        replaced = await call(s, "core_replace", old="no such text", new="x")
        return tools, resources, replaced
    tools, resources, replaced = session(example_ws, script)
    for name in ("core_append", "core_replace", "core_insert"):
        assert "MEMORY.md" in tools[name].description and "memory.md" not in tools[name].description
    assert "MEMORY.md" in tools["core_replace"].input_schema["properties"]["old"]["description"]
    assert resources[0].description.startswith("MEMORY.md")
    assert replaced.is_error and "does not occur in MEMORY.md" in replaced.content[0].text
