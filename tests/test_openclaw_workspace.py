"""Another agent's workspace used as it is (issue 17, item 2): OpenClaw's `MEMORY.md` is core memory,
its `memory/` logs are ours, and `CLAUDE.md`/`AGENTS.md`-style files at the root are pages. Read in
place, never rewritten."""

import hashlib
from pathlib import Path

import pytest

from conftest import run_json, run_mem, write

MEMORY = """# MEMORY.md - Long-term memory

## Preferences
- Always answer with metric units (km, kg, °C), never imperial.
- The user's projects use pnpm, never npm or yarn.
"""
CLAUDE = """# CLAUDE.md

This repository is a Rust workspace. Run `cargo nextest run` before every commit.
"""
AGENTS = """# AGENTS.md

## Every session
1. Read SOUL.md and USER.md first.
2. Never push to the release branch without asking.
"""
DAILY = """# 2026-11-01

- Helped plan the garden shed with Jonas; he wants larch cladding.
"""


@pytest.fixture
def openclaw(tmp_path) -> Path:
    """An OpenClaw workspace as `openclaw setup` and a few days of use leave it (no memtool files)."""
    root = tmp_path / "openclaw"
    write(root, "MEMORY.md", MEMORY)
    write(root, "CLAUDE.md", CLAUDE)
    write(root, "AGENTS.md", AGENTS)
    write(root, "memory/2026-11-01.md", DAILY)
    return root


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file outside .memory/ and its content hash."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".memory" not in p.relative_to(root).parts}


def recalled(ws: Path, query: str) -> list[dict]:
    proc, data = run_json("-w", ws, "recall", query)
    assert proc.returncode == 0, proc.stderr
    return data["results"]


def test_item2_openclaw_memory_md_and_claude_md_are_recalled_with_citations(openclaw):
    for query, cited, words in [("metric units", "MEMORY.md#L4", "metric units"), ("pnpm", "MEMORY.md#L5", "pnpm"),
                                ("cargo nextest", "CLAUDE.md#L3", "nextest"),
                                ("release branch", "AGENTS.md#L5", "release branch"),
                                ("larch cladding", "memory/2026-11-01.md#L3", "larch")]:
        results = recalled(openclaw, query)
        assert results, f"{query!r}: nothing found"
        assert results[0]["source"] == cited and words in results[0]["content"], (query, results[0])
        assert results[0]["kind"] == "page" if not cited.startswith("memory/") else "log"


def test_item2_reading_another_agents_workspace_never_rewrites_it(openclaw):
    before = tree_hashes(openclaw)
    run_mem("-w", openclaw, "index", check=0)
    run_mem("-w", openclaw, "recall", "pnpm", check=0)
    run_mem("-w", openclaw, "reflect", "--force", check=0)
    run_mem("-w", openclaw, "check")
    after = tree_hashes(openclaw)
    assert {p: h for p, h in after.items() if p in before} == before
    assert not any(p.startswith("memory/") or p in ("MEMORY.md", "CLAUDE.md", "AGENTS.md")
                   for p in set(after) - set(before)), set(after) - set(before)


def test_item2_openclaw_memory_md_is_the_core_memory(openclaw):
    proc, data = run_json("-w", openclaw, "core", "show")
    assert proc.returncode == 0, proc.stderr
    assert data["path"] == "MEMORY.md" and "pnpm" in data["text"]
    run_mem("-w", openclaw, "core", "append", "- Prefers tea in the afternoon.", check=0)
    assert (openclaw / "MEMORY.md").read_text(encoding="utf-8") == MEMORY + "- Prefers tea in the afternoon.\n"
    assert not (openclaw / "memory.md").exists()  # one core memory, where it already was


def test_item2_openclaw_workspace_is_found_from_inside_it(openclaw):
    (openclaw / "memory").rename(openclaw / "logs-elsewhere")  # MEMORY.md alone marks the workspace
    proc = run_mem("recall", "pnpm", cwd=openclaw)
    assert proc.returncode == 0 and "MEMORY.md#L5" in proc.stdout, proc.stderr


def test_item2_only_named_root_files_are_indexed(openclaw):
    write(openclaw, "README.md", "# A project readme about quokkas\n")
    write(openclaw, "notes.md", "quokkas live on Rottnest Island\n")
    proc, data = run_json("-w", openclaw, "recall", "quokkas")
    assert proc.returncode == 0 and data["results"] == []


def test_item2_root_agent_files_take_their_trust_tier_like_any_file(openclaw):
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    write(openclaw, "memtool.toml", '[trust]\nlegal = ["CLAUDE.md"]\n')
    write(openclaw, "USER.md", "---\ntrust: private\n---\n# USER.md\n\n- Lives in Freiburg.\n")
    mem = Memory(Workspace(openclaw), embedder="none")
    try:
        mem.refresh()
        tier_of = mem.tier_lookup()
        assert (tier_of("CLAUDE.md"), tier_of("USER.md"), tier_of("MEMORY.md")) == ("legal", "private", "normal")
        assert mem.recall("Freiburg").results[0]["source"] == "USER.md#L6"
    finally:
        mem.close()


def test_item2_mem_init_in_an_openclaw_workspace_adds_no_second_core_memory(openclaw):
    before = tree_hashes(openclaw)
    run_mem("init", openclaw, check=0)
    assert not (openclaw / "memory.md").exists()
    after = tree_hashes(openclaw)
    assert {p: h for p, h in after.items() if p in before} == before  # nothing of OpenClaw's changed
    proc, data = run_json("-w", openclaw, "core", "show")
    assert data["path"] == "MEMORY.md"


def test_qa36_core_memory_messages_name_memory_md_as_openclaw_spells_it(openclaw):
    """Errors and reports of `mem core` named `memory.md`, a file this workspace does not have."""
    proc = run_mem("-w", openclaw, "core", "append", "- Prefers tea in the afternoon.", check=0)
    assert "MEMORY.md: " in proc.stderr + proc.stdout and "memory.md" not in proc.stderr + proc.stdout
    before = (openclaw / "MEMORY.md").read_bytes()
    for args, says in [(["replace", "no such text", "x"], "does not occur in MEMORY.md"),
                       (["insert", "999", "- x"], "outside MEMORY.md"),
                       (["append", "- " + "x" * 6000], "MEMORY.md would have"),
                       (["append", "<!-- open"], "what follows in MEMORY.md")]:
        proc = run_mem("-w", openclaw, "core", *args)
        assert proc.returncode == 2 and says in proc.stderr and "memory.md" not in proc.stderr, (args, proc.stderr)
    assert (openclaw / "MEMORY.md").read_bytes() == before and not (openclaw / "memory.md").exists()


def test_qa36_reflects_journal_suggests_for_memory_md_as_openclaw_spells_it(example_ws):
    (example_ws / "memory.md").rename(example_ws / "MEMORY.md")
    proc, data = run_json("-w", example_ws, "reflect", "--force")
    assert proc.returncode == 0 and data["suggestions"], proc.stderr
    journal = (example_ws / "bank/journal.md").read_text(encoding="utf-8")
    assert "Suggested for MEMORY.md" in journal and "for memory.md" not in journal
    assert not (example_ws / "memory.md").exists()
