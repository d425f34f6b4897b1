"""`mem reflect` (entity pages and journal): hand-written text is sacred, runs are idempotent and exclusive."""

import re

import pytest
from conftest import mem_env, run_json, run_mem, write

from memtool import blocks
from memtool.document import split_lines
from memtool.memory import Memory
from memtool.workspace import Workspace


def markdown(ws):
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*.md") if ".memory" not in p.parts}


@pytest.fixture
def mem(example_ws):
    return Memory(Workspace(example_ws), embedder="none")


def test_pages_get_blocks_that_cite_real_lines(mem, example_ws):
    result = mem.reflect()
    assert result["changed"] and {p["entity"] for p in result["pages"]} >= {"Peter", "warelay", "Tom"}
    page = (example_ws / "bank/entities/Peter.md").read_text(encoding="utf-8")
    block = blocks.find(page, "entity")
    assert block and not block.edited
    cites = re.findall(r"— `([^`]+)#L(\d+)(?:-L(\d+))?`", block.body)
    assert len(cites) >= 8
    for path, a, b in cites:
        lines = split_lines((example_ws / path).read_text(encoding="utf-8"))
        assert lines[int(a) - 1].strip(), (path, a)
    assert "bank/journal.md" not in block.body
    journal = (example_ws / "bank/journal.md").read_text(encoding="utf-8")
    assert "— reflect" in journal and "Peter" in journal


def test_hand_written_text_survives_ten_runs(mem, example_ws):
    path = example_ws / "bank/entities/Peter.md"
    original = path.read_text(encoding="utf-8")
    for i in range(10):
        mem.retain(f"W @Peter: fact number {i} for the page", None)
        mem.reflect()
        text = path.read_text(encoding="utf-8")
        block = blocks.find(text, "entity")
        assert text[: block.start] == original + "\n", "text before the block is untouched"
        assert text[block.end:] == ""
    assert "fact number 9" in blocks.find(path.read_text(encoding="utf-8"), "entity").body


def test_second_run_changes_nothing_and_dry_run_writes_nothing(mem, example_ws):
    mem.reflect()
    before = markdown(example_ws)
    again = mem.reflect()
    assert not again["changed"] and markdown(example_ws) == before
    mem.retain("W @Tom: Tom opened a fourth store.", None)
    before = markdown(example_ws)
    dry = mem.reflect(dry_run=True)
    assert dry["entry"].startswith("## ") and "[DRY RUN]" in dry["entry"] and "Tom" in dry["entry"]
    assert markdown(example_ws) == before


def test_edits_inside_a_block_are_kept_until_force(mem, example_ws):
    mem.reflect()
    path = example_ws / "bank/entities/Tom.md"
    edited = path.read_text(encoding="utf-8").replace("Tom Becker runs", "Tom Becker (my best client) runs")
    path.write_text(edited, encoding="utf-8")
    mem.retain("W @Tom: Tom switched to Zammad cloud.", None)
    result = mem.reflect()
    assert {p["path"]: p["action"] for p in result["pages"]}["bank/entities/Tom.md"] == "skipped"
    assert path.read_text(encoding="utf-8") == edited
    proc = run_mem("reflect", cwd=example_ws)
    assert proc.returncode == 0 and "left alone" in proc.stderr
    forced = mem.reflect(force=True)
    assert {p["path"]: p["action"] for p in forced["pages"]}["bank/entities/Tom.md"] == "update"
    assert "Zammad cloud" in path.read_text(encoding="utf-8")
    assert list((example_ws / ".memory" / "backups").glob("bank/entities/Tom.md.*")), "replaced text is backed up"


def test_generated_blocks_are_not_indexed(mem):
    mem.reflect()
    hits = mem.recall("Fastest code reviewer", k=20).results
    assert hits and all(not (h["source"].startswith("bank/entities/Peter.md") and "Generated" in h["content"]) for h in hits)
    assert all("— `memory/" not in h["content"] for h in hits)


def test_concurrent_runs_never_interleave(example_ws):
    ws = Workspace(example_ws)
    with ws.lock("reflect"):
        proc, data = run_json("reflect", cwd=example_ws, env=mem_env())
    assert proc.returncode == 7 and "another mem reflect is running" in proc.stderr
    assert data["error"] == "Busy"
    assert run_mem("reflect", cwd=example_ws).returncode == 0


def test_new_entities_get_new_pages(example_ws, mem):
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n## Retain\n- W @Zoe-K: Zoe joined the warelay team.\n"
                                              "- O(c=0.6) @Zoe-K: Zoe writes very clear tickets.\n")
    result = mem.reflect()
    assert {p["path"]: p["action"] for p in result["pages"]}["bank/entities/Zoe-K.md"] == "create"
    text = (example_ws / "bank/entities/Zoe-K.md").read_text(encoding="utf-8")
    assert text.startswith("# Zoe-K\n") and "c=0.60" in text
