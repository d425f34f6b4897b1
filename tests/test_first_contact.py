"""What a new user meets in the first hour (issue: first contact): real processes, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mem_env, run_json, run_mem, write
from ollama_stub import OllamaStub


@pytest.fixture
def stub():
    s = OllamaStub(bind="127.0.0.1")
    yield s
    s.stop()


def _notes(ws):
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n- Jonas lives in Leipzig now.\n- Lena rides a red bicycle.\n")


def test_14_2_reads_fill_missing_vectors_when_no_file_changed(tmp_path, stub):
    ws = tmp_path / "ws"
    _notes(ws)
    run_mem("-w", ws, "index", env=mem_env(MEM_EMBEDDER="none"), check=0)  # text only: no vectors yet
    env = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url)
    proc, data = run_json("-w", ws, "recall", "where does Jonas live", env=env)
    assert proc.returncode == 0, proc.stderr
    assert any("Jonas lives in Leipzig now." in t for t in stub.embedded)  # the read embedded what was missing
    assert not [w for w in data["warnings"] if "no vector yet" in w], data["warnings"]
    assert data["mode"] == "hybrid"


def test_14_3_first_index_of_a_new_workspace_says_nothing_changed_and_times_embedding(tmp_path, stub):
    ws = tmp_path / "ws"
    _notes(ws)
    proc = run_mem("-w", ws, "index", env=mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url), check=0)
    assert "changed since this index was built" not in proc.stderr
    assert "newly embedded in" in proc.stderr and "facts read in" in proc.stderr
    proc, data = run_json("-w", ws, "index", "--rebuild", env=mem_env(MEM_EMBEDDER="none"))
    assert data["rebuilt"] is True and "embed_seconds" in data


def test_14_4_starter_text_never_answers_a_question(tmp_path):
    ws = tmp_path / "brain"
    run_mem("init", ws, check=0)
    for query in ("Curated objective facts", "daily logs live in memory", "durable facts preferences",
                  "set up this memory workspace", "what was done and learned", "persona assistant"):
        proc = run_mem("-w", ws, "recall", query, "--json")
        assert json.loads(proc.stdout)["results"] == [], query
    listed = json.loads(run_mem("-w", ws, "recall", "--since", "1990-01-01", "--json").stdout)
    assert listed["results"] == []
    assert "\n- \n" not in (ws / "memory.md").read_text(encoding="utf-8")  # no empty starter bullets
    run_mem("-w", ws, "core", "append", "- Prefers tea.", check=0)
    core = (ws / "memory.md").read_text(encoding="utf-8")
    assert core.endswith("-->\n\n- Prefers tea.\n")
    hit = json.loads(run_mem("-w", ws, "recall", "tea", "--json").stdout)["results"]
    assert [r["source"] for r in hit] == ["memory.md#L6"]


def _run_cron_line(line: str, home) -> subprocess.CompletedProcess:
    """Run a crontab line's command as cron does: a bare environment, /bin/sh."""
    command = line.split(None, 5)[5]
    return subprocess.run(["env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin", "sh", "-c", command],
                          capture_output=True, text=True, timeout=300)


def test_14_7_the_printed_cron_line_runs_under_a_bare_environment(tmp_path):
    ws = tmp_path / "brain"
    run_mem("init", ws, check=0)
    write(ws, "memory/2026-11-02.md", "- W @Jonas: Lives in Leipzig.\n- W @Jonas: Works at Brandt.\n- O @Jonas: Likes tea.\n")
    # As `python -m memtool` (how the tests run it) and as the installed `mem` script, where there is one.
    commands = [[]]
    script = Path(sys.executable).with_name("mem")  # the installed console script beside this interpreter
    if script.is_file():
        commands.append([str(script)])
    for command in commands:
        if command:
            proc = subprocess.run([*command, "-w", str(ws), "schedule", "--json"], capture_output=True, text=True,
                                  env=mem_env(), timeout=120)
            data = json.loads(proc.stdout)
        else:
            _, data = run_json("-w", ws, "schedule")
        line = next(j["line"] for j in data["jobs"] if j["job"] == "reflect")
        assert line.startswith("30 3 * * *  /")
        done = _run_cron_line(line.replace(" reflect", " reflect --force"), tmp_path)
        assert done.returncode == 0, (line, done.stderr)
        assert (ws / "bank" / "entities" / "Jonas.md").is_file()
        (ws / "bank" / "entities" / "Jonas.md").unlink()
    assert "mem: not found" in _run_cron_line("30 3 * * *  mem -w x reflect", tmp_path).stderr  # what it fixes


def test_14_8_periodic_notes_layout_is_a_daily_log(tmp_path):
    ws = tmp_path / "vault"
    write(ws, "memory/2025/10/2025-10-01.md", "# 2025-10-01\n\n- Jonas moved to Leipzig.\n")
    write(ws, "memory/daily/2025-10-02.md", "- Lena bought a red bicycle.\n")
    proc, data = run_json("-w", ws, "check")
    assert data["errors"] == 0, proc.stdout
    proc, data = run_json("-w", ws, "recall", "Leipzig", "--since", "2025-10-01", "--until", "2025-10-01")
    assert [(r["source"], r["timestamp"]) for r in data["results"]] == [("memory/2025/10/2025-10-01.md#L3", "2025-10-01")]
    proc, data = run_json("-w", ws, "retain", "W @Jonas: Works at Brandt.", "--date", "2025-10-01")
    assert data["path"] == "memory/2025/10/2025-10-01.md", data  # the day's existing file
    proc, data = run_json("-w", ws, "retain", "W: Rain all day.", "--date", "2025-10-03")
    assert data["path"] == "memory/2025/10/2025-10-03.md", data  # this month's folder exists
    assert not (ws / "memory" / "2025-10-03.md").exists()


def test_14_9_plain_name_mentions_count_once_a_page_exists(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "- Jonas called about the flat.\n- Jonas ist jetzt nach Leipzig gezogen.\n"
                                      "- Anna Müller sent the contract.\n- Jonasson is someone else.\n")
    write(ws, "memory/2026-11-02.md", "## Retain\n- W @Jonas: Works at Brandt.\n")
    by_mention = ["memory/2026-11-02.md#L2"]
    _, data = run_json("-w", ws, "recall", "--entity", "Jonas")
    assert [r["source"] for r in data["results"]] == by_mention  # no page yet: only @mentions count
    write(ws, "bank/entities/Jonas.md", "---\naliases: [Jo]\n---\n# Jonas\n")
    write(ws, "bank/entities/Anna-Mueller.md", "---\naliases: [Anna Müller]\n---\n# Anna Müller\n")
    _, data = run_json("-w", ws, "recall", "--entity", "Jonas")
    sources = {r["source"] for r in data["results"]}
    assert {"memory/2026-11-01.md#L1", "memory/2026-11-01.md#L2", "memory/2026-11-02.md#L2"} <= sources
    assert "memory/2026-11-01.md#L4" not in sources  # whole words only
    proc, data = run_json("-w", ws, "about", "Jonas")
    assert proc.returncode == 0 and "memory/2026-11-01.md#L2" in {r["source"] for r in data["facts"]}
    _, data = run_json("-w", ws, "recall", "--entity", "Anna-Mueller")
    assert "memory/2026-11-01.md#L3" in {r["source"] for r in data["results"]}


def test_14_9_about_and_recall_agree_on_an_unknown_entity(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "- Jonas called.\n")
    about = run_mem("-w", ws, "about", "Nobody")
    recall = run_mem("-w", ws, "recall", "--entity", "Nobody")
    assert about.returncode == recall.returncode == 0, (about.stderr, recall.stderr)
    assert "nothing" in about.stderr and not about.stdout
    proc, data = run_json("-w", ws, "about", "Nobody")
    assert proc.returncode == 0 and data["facts"] == [] and data["page"] is None


def test_14_13_fields_are_filterable_from_the_cli_and_mcp(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "## Retain\n- B @warelay: Fixed the WS crash. [outcome:: fixed] [cost:: 2h]\n"
                                      "- B @warelay: Tried a new parser. [outcome:: abandoned]\n- W: No fields here.\n")
    _, data = run_json("-w", ws, "recall", "--field", "outcome=Fixed")
    assert [r["source"] for r in data["results"]] == ["memory/2026-11-01.md#L2"]
    _, data = run_json("-w", ws, "recall", "warelay", "--field", "outcome")
    assert {r["source"] for r in data["results"]} == {"memory/2026-11-01.md#L2", "memory/2026-11-01.md#L3"}
    _, data = run_json("-w", ws, "recall", "--field", "outcome=fixed", "--field", "cost=3h")
    assert data["results"] == []
    for bad in ("=fixed", "1x=2", ""):
        proc = run_mem("-w", ws, "recall", "--field", bad)
        assert proc.returncode == 2 and "--field" in proc.stderr, (bad, proc.stderr)
    proc = run_mem("-w", ws, "recall", "x", "--entity", "")
    assert proc.returncode == 2 and "--entity" in proc.stderr

    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def ask():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", "-w", str(ws), "mcp"],
                                       env=mem_env())
        async with stdio_client(params) as (read, write_):
            async with ClientSession(read, write_) as session:
                await session.initialize()
                return await session.call_tool("recall", {"query": "", "field": "outcome=fixed"})

    answer = asyncio.run(ask())
    assert [r["source"] for r in json.loads(answer.content[0].text)["results"]] == ["memory/2026-11-01.md#L2"]


def test_14_13_because_links_are_followed_by_get_and_episodes(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- The Baileys socket dropped every hour.\n")
    write(ws, "memory/2026-11-27.md", "## Retain\n- B @warelay: Wrapped the handlers in try/catch."
                                      " [outcome:: fixed] [because:: memory/2026-11-20.md#L3]\n"
                                      "- B: Bad link. [because:: ../../etc/passwd#L1]\n")
    proc, data = run_json("-w", ws, "get", "memory/2026-11-27.md#L2")
    assert data["because"] == [{"ref": "memory/2026-11-20.md#L3", "path": "memory/2026-11-20.md", "start": 3,
                                "end": 3, "text": "- The Baileys socket dropped every hour."}]
    human = run_mem("-w", ws, "get", "memory/2026-11-27.md#L2", check=0)
    assert "because → memory/2026-11-20.md#L3" in human.stdout and "dropped every hour" in human.stdout
    _, data = run_json("-w", ws, "get", "memory/2026-11-27.md#L3")
    assert data["because"][0]["ref"] == "../../etc/passwd#L1" and "error" in data["because"][0]
    _, data = run_json("-w", ws, "episodes", "try/catch handlers")
    hit = next(h for d in data["days"] for h in d["hits"] if "try/catch" in h["content"])
    assert hit["because"][0]["text"] == "- The Baileys socket dropped every hour."


def test_14_12_result_lines_render_plainly(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-03.md", "- Line one of a poem\n  continues here\n")
    colour = run_mem("-w", ws, "recall", "poem", env=mem_env(FORCE_COLOR="1", NO_COLOR="", TERM="xterm-256color"), check=0).stdout
    first = colour.splitlines()[0]
    assert "\x1b[2m" in first and first.index("Line one of a") > first.index("\x1b[0m")  # only the number is dim
    assert "\x1b[2mLine" not in first and not first.startswith("\x1b[2m 1. log")
    assert colour.splitlines()[1] == "    continues here"  # continuation lines are indented
    plain = run_mem("-w", ws, "recall", "poem", env=mem_env(FORCE_COLOR="1", NO_COLOR="1", TERM="xterm-256color"), check=0)
    assert "\x1b[" not in plain.stdout + plain.stderr and "poem" in plain.stdout


def _complete(words: str, cwd=None) -> list[str]:
    env = mem_env(_MEM_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split(" ")) - 1))
    proc = subprocess.run([sys.executable, "-m", "memtool"], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return proc.stdout.split()


def test_14_12_shell_completion_offers_kinds_and_entities(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "## Retain\n- W @Jonas: Lives in Leipzig.\n- W @Jana: Plays chess.\n")
    run_mem("-w", ws, "index", check=0)
    assert _complete("mem recall --kind o") == ["opinion", "observation"]
    assert _complete(f"mem -w {ws} recall --entity Ja") == ["Jana"]
    assert _complete("mem about J", cwd=ws) == ["Jana", "Jonas"]
    assert _complete("mem about J", cwd=tmp_path) == []  # no workspace: no values, no error


def test_14_12_index_with_the_embedder_down_is_a_documented_degraded_success(tmp_path):
    ws = tmp_path / "ws"
    _notes(ws)
    down = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST="http://127.0.0.1:9")  # nothing listens on port 9
    proc, data = run_json("-w", ws, "index", env=down)
    assert proc.returncode == 0 and data["degraded"] and data["facts"] == 2 and data["embedded"] == 0
    assert "no vectors made" in proc.stderr
    proc, data = run_json("-w", ws, "recall", "Leipzig", env=down)
    assert data["results"] and data["degraded"]


def test_14_8_tags_are_filterable(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "- Kickoff for the new shop #project/alpha\n- Tom paid invoice #2026-031.\n"
                                      "- See http://x.org/page#frag and `#code` here.\n")
    write(ws, "bank/health.md", "---\ntags: [Health, family]\n---\n# Health\n\nBlood pressure is fine. #doctor\n")
    _, data = run_json("-w", ws, "recall", "--tag", "project")
    assert [(r["source"], r["tags"]) for r in data["results"]] == [("memory/2026-11-01.md#L1", ["project/alpha"])]
    _, data = run_json("-w", ws, "recall", "--tag", "#Project/Alpha")
    assert [r["source"] for r in data["results"]] == ["memory/2026-11-01.md#L1"]
    _, data = run_json("-w", ws, "recall", "--tag", "health", "--tag", "doctor")
    assert [(r["source"], r["tags"]) for r in data["results"]] == [("bank/health.md#L6", ["doctor", "health", "family"])]
    for not_a_tag in ("frag", "code"):  # a URL fragment, a code span
        assert run_json("-w", ws, "recall", "--tag", not_a_tag)[1]["results"] == [], not_a_tag
    proc = run_mem("-w", ws, "recall", "--tag", "2026-031")
    assert proc.returncode == 2 and "--tag" in proc.stderr  # digits only: not a tag (Obsidian's rule)


def test_14_12_an_index_from_a_newer_memtool_is_set_aside_by_the_rebuild_its_hint_names(tmp_path):
    import sqlite3

    ws = tmp_path / "ws"
    _notes(ws)
    run_mem("-w", ws, "index", check=0)
    with sqlite3.connect(ws / ".memory" / "index.sqlite") as conn:
        conn.execute("PRAGMA user_version = 999")
    proc = run_mem("-w", ws, "recall", "Leipzig")
    assert proc.returncode == 5 and "mem index --rebuild" in proc.stderr
    proc = run_mem("-w", ws, "index", "--rebuild")
    assert proc.returncode == 0, proc.stderr
    assert "moved it to index.sqlite.newer-" in proc.stderr
    assert list((ws / ".memory").glob("index.sqlite.newer-*"))  # the newer memtool's index is kept
    _, data = run_json("-w", ws, "recall", "Leipzig")
    assert data["results"]
