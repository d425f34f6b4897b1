"""Agent-facing operations: episodes, get, about, opinions, core memory, summarize."""


import pytest
from conftest import mem_env, run_json, run_mem, write

from memtool.errors import ProviderUnavailable, UsageError
from memtool.memory import Memory
from memtool.workspace import Workspace


@pytest.fixture
def mem(example_ws):
    return Memory(Workspace(example_ws), embedder="none")


def test_episodes_group_by_day_with_sections(mem):
    data = mem.episodes("Marrakech Andy Geburtstag", k=10)
    dates = [d["date"] for d in data["days"] if d["date"]]
    assert dates == sorted(dates, reverse=True) and len(dates) >= 3
    assert "2026-11-28: 1 experience" in data["timeline"]
    for day in data["days"]:
        assert sum(day["buckets"].values()) == len(day["hits"])
        hits = [l for s in day["sections"] for l in s["lines"] if l["hit"]]
        assert hits, day["path"]
        text = (mem.ws.root / day["path"]).read_text(encoding="utf-8").split("\n")
        for s in day["sections"]:
            for l in s["lines"]:
                assert text[l["n"] - 1] == l["text"]


def test_get_reads_spans_and_refuses_escapes(mem, example_ws, tmp_path):
    data = mem.get("memory/2026-10-27.md#L12")
    assert data["lines"] == [{"n": 12, "text": (example_ws / "memory/2026-10-27.md").read_text(encoding="utf-8").split("\n")[11]}]
    assert mem.get("memory.md", max_lines=3)["truncated"]
    (tmp_path / "outside.md").write_text("secret\n", encoding="utf-8")
    (example_ws / "bank" / "link.md").symlink_to(tmp_path / "outside.md")
    for bad in ["../outside.md", str(tmp_path / "outside.md"), "bank/link.md", "memory/../../outside.md",
                "memory.md#L999", "memory.md#L5-L2", "nope.md"]:
        with pytest.raises(UsageError):
            mem.get(bad)


def test_about_resolves_aliases_and_opinions_filter(mem):
    data = mem.about("Pete")
    assert data["entity"] == "Peter" and "Pete" in data["aliases"]
    assert data["page"]["path"] == "bank/entities/Peter.md"
    assert data["facts"] and all("Peter" in f["entities"] for f in data["facts"])
    nobody = mem.about("Nobody-Known")  # "nothing found" is a result, as for recall --entity
    assert nobody["page"] is None and nobody["facts"] == []
    ops = mem.opinions(entity="Peter")
    assert ops["count"] >= 3 and all(o["entity"] == "Peter" for o in ops["opinions"])
    assert all(0 <= o["confidence"] <= 1 and o["trend"] in "↑↓→" for o in mem.opinions()["opinions"])


def test_core_memory_edits_are_exact_limited_and_backed_up(mem, example_ws):
    path = example_ws / "memory.md"
    original = path.read_text(encoding="utf-8")
    out = mem.core_append("- Prefers oat milk.")
    assert path.read_text(encoding="utf-8") == original + "- Prefers oat milk.\n"
    assert out["backup"] and (example_ws / out["backup"]).read_text(encoding="utf-8") == original
    mem.core_replace("Prefers oat milk.", "Prefers soy milk.")
    assert "Prefers soy milk." in path.read_text(encoding="utf-8")
    with pytest.raises(UsageError, match="does not occur"):
        mem.core_replace("not in there", "x")
    write(example_ws, "memory.md", "- a\n- a\n")
    with pytest.raises(UsageError, match="2 times"):
        mem.core_replace("- a", "- b")
    mem.core_insert(2, "- inserted")
    assert path.read_text(encoding="utf-8") == "- a\n- inserted\n- a\n"
    with pytest.raises(UsageError, match="outside"):
        mem.core_insert(9, "x")
    before = path.read_text(encoding="utf-8")
    with pytest.raises(UsageError, match="over its limit"):
        mem.core_append("x" * 6000)
    assert path.read_text(encoding="utf-8") == before, "a refused edit changes nothing"


def test_core_limit_is_configurable_and_cli_reports_errors(example_ws):
    write(example_ws, "memtool.toml", "[core]\nmax_chars = 1600\n")
    proc = run_mem("core", "append", "- " + "y" * 400, cwd=example_ws)
    assert proc.returncode == 2 and "over its limit of 1,600" in proc.stderr and "hint:" in proc.stderr
    proc, data = run_json("core", "replace", "Lena Vogt", "Lena V.", cwd=example_ws)
    assert proc.returncode == 0 and data["backup"].startswith(".memory/backups/memory.md.")


def test_summarize_a_day_and_a_query(mem, stub):
    day = mem.summarize("2026-11-27")
    assert day["summary"].startswith("Lena flew") and day["sources"] == ["2026-11-27"] and day["lang"] == "en"
    sent = stub.chats[-1]["messages"]
    assert "Marrakech" in sent[1]["content"] and "English" in sent[0]["content"]
    topic = mem.summarize("Wann war der Geburtstag in Marrakech?")
    assert topic["lang"] == "de" and "German" in stub.chats[-1]["messages"][0]["content"]
    assert topic["sources"] and all(s[:4] == "2026" or s.endswith(".md") for s in topic["sources"])


def test_summarize_never_sends_legal_text(mem, stub):
    data = mem.summarize("Mietvertrag Eigenbedarf Kastanienallee")
    assert "bank/entities/Mietvertrag.md" in data["withheld"]
    assert all("Eigenbedarf" not in m["content"] or "Mietvertrag.md" not in m["content"]
               for m in stub.chats[-1]["messages"])
    assert "### bank/entities/Mietvertrag.md" not in stub.chats[-1]["messages"][1]["content"]


@pytest.mark.parametrize("mode,needle", [("malformed", "cannot read"), ("empty", "no text"), ("slow", "did not answer")])
def test_summarize_provider_failures_are_clear(example_ws, stub, mode, needle):
    stub.chat_mode = mode
    write(example_ws, "memtool.toml", "[llm]\ntimeout = 1\n")
    mem = Memory(Workspace(example_ws), embedder="none")
    with pytest.raises(ProviderUnavailable, match=needle) as info:
        mem.summarize("2026-11-27")
    assert "ollama pull" in info.value.hint


def test_summarize_without_ollama_is_a_friendly_error_and_recall_still_works(example_ws):
    env = mem_env(OLLAMA_HOST="http://127.0.0.1:9")
    proc = run_mem("summarize", "2026-11-27", cwd=example_ws, env=env)  # a day with a log, whatever today is
    assert proc.returncode == 6 and "Ollama" in proc.stderr and "hint:" in proc.stderr
    assert run_mem("recall", "Marrakech", cwd=example_ws, env=env).returncode == 0


def test_cli_episodes_tree_and_json(example_ws):
    proc = run_mem("episodes", "Marrakech", "-k", "5", cwd=example_ws, check=0)
    assert "›" in proc.stdout and "memory/" in proc.stdout
    proc, data = run_json("episodes", "Marrakech", "-k", "5", cwd=example_ws)
    assert data["timeline"] and data["days"][0]["sections"][0]["lines"]


def test_status_reports_providers_and_versions(mem, stub):
    data = mem.status()
    assert data["llm"]["answers"] and data["llm"]["version"] == "0.0.0-stub"
    assert data["versions"]["memtool"] and data["versions"]["schema"] >= 2
    stub.stop()
    assert not Memory(Workspace(mem.ws.root), embedder="none").status()["llm"]["answers"]
