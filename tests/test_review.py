"""The review queue (`mem review`, MCP `review`): decisions are Markdown lines in bank/decisions.md,
so they survive a rebuild, reach a second machine through sync, and reflect honours them."""

from __future__ import annotations

import json
import shutil

from conftest import run_json, run_mem, write
from test_mcp import call, session

from memtool.reflect import decisions

LOGS = {
    "memory/2026-11-02.md": "# 2026-11-02\n\n## Retain\n- W @Kenji: Kenji speaks fluent German and Japanese.\n"
                            "- W @Anna: Anna runs every morning along the Alster.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n## Retain\n- W @Kenji: Japanese and German are languages Kenji speaks fluently.\n",
}


def _ws(tmp_path, name="ws"):
    ws = tmp_path / name
    for rel, text in LOGS.items():
        write(ws, rel, text)
    (ws / "bank" / "entities").mkdir(parents=True, exist_ok=True)
    return ws


def _kenji_sources(ws) -> list[list[str]]:
    _, data = run_json("-w", ws, "recall", "Kenji languages")
    return [r.get("sources") or [r["source"]] for r in data["results"] if "Kenji" in r["content"]]


def _item(ws, status="open") -> dict:
    proc, data = run_json("-w", ws, "review", "list", "--status", status)
    assert proc.returncode == 0, proc.stderr
    return data


def test_20_a_review_decision_round_trips_through_markdown_rebuild_and_sync(tmp_path):
    a, b, remote = _ws(tmp_path, "laptop"), tmp_path / "desktop", tmp_path / "remote"
    run_mem("-w", a, "reflect", "--force", check=0)
    items = _item(a)["items"]
    assert [i["kind"] for i in items] == ["contradiction"], items
    item = items[0]
    assert {item["a"]["source"], item["b"]["source"]} == {"memory/2026-11-02.md#L4", "memory/2026-11-20.md#L4"}
    assert len(_kenji_sources(a)) == 2  # not folded yet: two results
    proc, done = run_json("-w", a, "review", "decide", item["id"][:6], "fold", "--note", "same languages")
    assert proc.returncode == 0, proc.stderr
    page = (a / decisions.PAGE).read_text()
    assert done["line"] in page and f"fold {item['id']}" in page and "[note:: same languages]" in page
    assert done["source"] == f"{decisions.PAGE}#L{page.splitlines().index(done['line']) + 1}"
    assert [len(s) for s in _kenji_sources(a)] == [2]  # folded at once: one result citing both
    run_mem("-w", a, "index", "--rebuild", check=0)
    assert _item(a, "decided")["items"][0]["decision"]["action"] == "fold"
    assert [len(s) for s in _kenji_sources(a)] == [2]
    # A second machine: the decision arrives with the Markdown; its own reflect honours it.
    run_mem("-w", a, "sync", remote, check=0)
    (b / "memory").mkdir(parents=True)  # a workspace: -w refuses an empty folder
    run_mem("-w", b, "sync", remote, check=0)
    assert (b / decisions.PAGE).read_text() == page
    run_mem("-w", b, "reflect", "--force", check=0)
    assert _item(b)["items"] == []  # not asked again
    assert [i["decision"]["action"] for i in _item(b, "all")["items"]] == ["fold"]
    assert [len(s) for s in _kenji_sources(b)] == [2]


def test_20_reflect_honours_keep_even_with_fresh_local_state(tmp_path):
    ws = _ws(tmp_path)
    run_mem("-w", ws, "reflect", "--force", check=0)
    item = _item(ws)["items"][0]
    run_mem("-w", ws, "review", "decide", item["id"], "supersede", check=0)
    _, data = run_json("-w", ws, "recall", "Kenji languages", "--as-of", "2026-11-10")
    assert any("fluent German" in r["content"] for r in data["results"])
    _, now = run_json("-w", ws, "recall", "Kenji languages")
    old = next(r for r in now["results"] if "fluent German" in r["content"])
    assert old["superseded_by"]["source"] == "memory/2026-11-20.md#L4"
    # The newest line wins: keep both undoes the supersession, also after local state is lost.
    run_mem("-w", ws, "review", "decide", item["id"], "keep", check=0)
    shutil.rmtree(ws / ".memory")
    _, data = run_json("-w", ws, "reflect", "--force")
    assert data["consolidation"]["unclear"] == []
    _, now = run_json("-w", ws, "recall", "Kenji languages")
    assert all("superseded_by" not in r for r in now["results"])
    assert [i["status"] for i in _item(ws, "all")["items"]] == ["keep"]


def test_20_bad_decisions_are_refused_or_reported_and_change_nothing(tmp_path):
    ws = _ws(tmp_path)
    run_mem("-w", ws, "reflect", "--force", check=0)
    item = _item(ws)["items"][0]
    for args, message in ((["r-nothere", "fold"], "not in the review queue"),
                          ([item["id"], "link"], "not an action for a contradiction")):
        proc = run_mem("-w", ws, "review", "decide", *args)
        assert proc.returncode == 2 and message in proc.stderr and "hint:" in proc.stderr
    assert not (ws / decisions.PAGE).exists()
    line = f"- 2026-12-01 link {item['id']}: by hand [kind:: contradiction] [a:: {item['a']['key']}] [b:: {item['b']['key']}]\n"
    write(ws, decisions.PAGE, "# Review decisions\n\n" + line)
    data = _item(ws)
    assert [i["id"] for i in data["items"]] == [item["id"]]  # still open
    assert any("bank/decisions.md:3" in w and "stays open" in w for w in data["warnings"])


def test_a_decision_note_with_an_escape_sequence_is_refused(tmp_path):
    """A note with ESC (from the web form or the CLI) reached bank/decisions.md raw: `cat` of the page
    ran the sequence (qa39). Retain and note refuse control characters; so does a decision's note."""
    ws = _ws(tmp_path)
    run_mem("-w", ws, "reflect", "--force", check=0)
    item = _item(ws)["items"][0]
    proc = run_mem("-w", ws, "review", "decide", item["id"], "dismiss", "--note", "ok \x1b]0;owned\x07 fine")
    assert proc.returncode == 2 and "control character" in proc.stderr and "hint:" in proc.stderr, proc.stderr
    assert not (ws / decisions.PAGE).exists()


def test_20_connections_are_linked_through_the_queue(tmp_path):
    ws = tmp_path / "ws"
    for i, line in enumerate(["- B @Anna @Ida: Took Anna and Ida to the zoo.", "- B @Anna @Ida: Anna and Ida baked a cake.",
                              "- W @Anna @Ida: Anna and Ida visit the grandparents on Sundays."]):
        write(ws, f"memory/2026-11-0{i + 1}.md", f"# 2026-11-0{i + 1}\n\n## Retain\n{line}\n")
    run_mem("-w", ws, "reflect", "--force", check=0)
    item = next(i for i in _item(ws)["items"] if i["kind"] == "connection")
    proc, shown = run_json("-w", ws, "review", "show", item["id"])
    assert len(shown["evidence"]) == 3
    run_mem("-w", ws, "review", "decide", item["id"], "link", check=0)
    assert "link" in (ws / decisions.PAGE).read_text()
    write(ws, "memory/2026-11-09.md", "# 2026-11-09\n\n## Retain\n- B @Anna @Ida: Anna and Ida went swimming.\n")
    _, data = run_json("-w", ws, "reflect", "--force")
    assert data["consolidation"]["connections"] == [] and _item(ws)["items"] == []


def test_20_the_mcp_review_tool_decides_like_the_cli(tmp_path):
    ws = _ws(tmp_path)
    run_mem("-w", ws, "reflect", "--force", check=0)

    async def script(s):
        listed = await call(s, "review")
        item = json.loads(listed.content[0].text)["items"][0]["id"]
        decided = await call(s, "review", action="decide", item=item, decision="dismiss")
        wrong = await call(s, "review", action="decide", item=item)
        return item, json.loads(decided.content[0].text), wrong
    item, decided, wrong = session(ws, script)
    assert decided["action"] == "dismiss" and f"dismiss {item}" in (ws / decisions.PAGE).read_text()
    assert wrong.is_error and "hint" in wrong.content[0].text


def test_20_world_and_experience_are_generated_indexes_of_typed_facts(tmp_path):
    ws = _ws(tmp_path)
    write(ws, "bank/world.md", "# World\n\nMy own notes stay.\n")
    write(ws, "bank/legal/x.md", "# X\n\n- W @Anna: Anna's case number is 3 O 418/26.\n")
    write(ws, "memtool.toml", "[trust]\nlegal = [\"bank/legal/*\"]\n")
    write(ws, "memory/2026-11-21.md", "# 2026-11-21\n\n## Retain\n- B: I fixed the boiler with Anna's help.\n")
    run_mem("-w", ws, "reflect", "--force", check=0)
    world, experience = (ws / "bank/world.md").read_text(), (ws / "bank/experience.md").read_text()
    assert world.startswith("# World\n\nMy own notes stay.\n") and "<!-- memtool:begin world" in world
    lines = [x for x in world.splitlines() if x.startswith("- ")]
    assert [x.split(":")[0] for x in lines] == ["- 2026-11-20", "- 2026-11-02", "- 2026-11-02"]
    assert "[memory/2026-11-20.md#L4](../memory/2026-11-20.md)" in world
    assert "3 O 418" not in world  # a legal fact never moves to a page of a weaker tier
    assert "I fixed the boiler" in experience and "<!-- memtool:begin experience" in experience
    _, data = run_json("-w", ws, "recall", "Kenji languages")
    assert all(not r["source"].startswith("bank/world.md") for r in data["results"])  # the block is not indexed
