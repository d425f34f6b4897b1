"""Issue 13, part A: trust tiers under attack. Every path that can reach a model (summarize,
reflect --review, index/recall with the Ollama embedder, the MCP tools) runs against a recording
Ollama stand-in; no legal marker may ever arrive, and no private marker off loopback.

The loopback stand-in runs in this process on 127.0.0.1; the non-loopback one (10.200.0.1) only in
a network namespace of the test's own (tests/netns.py), together with the `mem` processes.
"""

from __future__ import annotations

import json

import netns
import pytest
from conftest import mem_env, run_json, run_mem, write
from ollama_stub import OllamaStub

LEGAL, PRIVATE = "LEGALDAY3", "PRIVDAY4"

PETER = {
    "memory/2026-11-10.md": "## Retain\n- W @Peter: Lives in Porto.\n",
    "memory/2026-11-11.md": "## Retain\n- W @Peter: Lives in Porto.\n",
    "memory/2026-11-12.md": "## Retain\n- W @Peter: Lives in Porto.\n",
    "memory/2026-11-20.md": f"---\ntrust: legal\n---\n## Retain\n- W @Peter: Lives in Lisbon {LEGAL}.\n",
    "memory/2026-11-21.md": f"---\ntrust: private\n---\n## Retain\n- W @Peter: Sees a cardiologist {PRIVATE}.\n",
}


@pytest.fixture
def stub():
    server = OllamaStub()
    yield server
    server.stop()


def _ws(tmp_path, files: dict) -> str:
    ws = tmp_path / "ws"
    (ws / ".memory").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        write(ws, rel, text)
    return str(ws)


def _reflected_peter(tmp_path) -> str:
    """The repro of item 1: reflect writes Peter's page, then a person adds a line to it."""
    ws = _ws(tmp_path, PETER)
    run_mem("-w", ws, "reflect", "--force", check=0)
    page = tmp_path / "ws" / "bank" / "entities" / "Peter.md"
    lines = page.read_text(encoding="utf-8").split("\n")
    page.write_text("\n".join(lines[:1] + ["", "- Handwritten ZEBRAWORD."] + lines[1:]), encoding="utf-8")
    return ws


def _summarize(ws, target, stub, **env):
    return run_json("-w", ws, "summarize", target, env=mem_env(OLLAMA_HOST=stub.url, **env))


# --- item 1: derived pages ----------------------------------------------------------------------

def test_a1_legal_text_never_reaches_a_model_via_an_entity_page(tmp_path, stub):
    ws = _reflected_peter(tmp_path)
    page = (tmp_path / "ws" / "bank" / "entities" / "Peter.md").read_text(encoding="utf-8")
    assert "Porto" in page and LEGAL not in page  # legal facts are kept off a normal page
    proc, data = _summarize(ws, "ZEBRAWORD", stub)
    assert proc.returncode == 0, proc.stderr
    sent = stub.sent_text()
    assert "ZEBRAWORD" in sent  # the page did go to the model…
    assert LEGAL not in sent  # …without the legal fact


def test_a1_private_text_never_reaches_a_remote_model_via_an_entity_page(tmp_path):
    ws = _reflected_peter(tmp_path)
    result = netns.run(tmp_path, [{"args": ["-w", ws, "summarize", "ZEBRAWORD", "--json"],
                                   "env": {"OLLAMA_HOST": "{remote}"}}])
    run = result["runs"][0]
    assert run["returncode"] == 0, run["stderr"]
    sent = netns.sent(result, "remote")
    assert "ZEBRAWORD" in sent and PRIVATE not in sent and LEGAL not in sent


def test_a1_a_page_citing_a_legal_source_is_withheld_from_a_model(tmp_path, stub):
    """A page written before the fix (or a generated block edited by hand) still quotes a legal fact:
    text carries the tier of every source it cites."""
    files = dict(PETER)
    files["bank/entities/Peter.md"] = (
        "# Peter\n\n- Handwritten ZEBRAWORD.\n\n<!-- memtool:begin entity -->\n**Facts** (newest first)\n"
        f"- 2026-11-20: Lives in Lisbon {LEGAL}. — `memory/2026-11-20.md#L5`\n<!-- memtool:end entity -->\n")
    ws = _ws(tmp_path, files)
    proc, data = _summarize(ws, "ZEBRAWORD", stub)
    assert LEGAL not in stub.sent_text()
    assert proc.returncode == 2 and "may be sent" in proc.stderr  # said, not silent


def test_a1_journal_and_opinions_carry_no_stricter_facts(tmp_path, stub):
    files = dict(PETER)
    files["memory/2026-11-22.md"] = f"---\ntrust: legal\n---\n## Retain\n- O(c=0.9) @Peter: Is unreliable {LEGAL}.\n"
    files["memory/2026-11-23.md"] = "## Retain\n- O(c=0.8) @Peter: Is punctual.\n"
    ws = _ws(tmp_path, files)
    run_mem("-w", ws, "reflect", "--force", check=0)
    bank = tmp_path / "ws" / "bank"
    for rel in ("opinions.md", "journal.md", "entities/Peter.md"):
        text = (bank / rel).read_text(encoding="utf-8")
        assert LEGAL not in text and PRIVATE not in text and "2026-11-20.md" not in text, rel
    assert "punctual" in (bank / "opinions.md").read_text(encoding="utf-8")



def test_a1_a_page_never_cites_or_hints_at_a_stricter_fact_that_superseded_one_it_shows(tmp_path):
    """A private note (CRLF, a mixed-case `Trust: PRIVATE`) says Peter moved: his normal entity page and
    bank/world.md still list the older normal fact, but neither mark it superseded nor cite the
    private successor (its place and its existence are private too); a private page shows both."""
    files = {"memory/2026-11-10.md": "## Retain\n- W @Peter: Peter lives in Porto.\n- W @Peter: Peter works at Acme.\n",
             "memory/2026-11-12.md": ("---\r\nTrust: PRIVATE\r\n---\r\n## Retain\r\n"
                                      f"- W @Peter: Peter moved to Faro {PRIVATE} now, no longer lives in Porto.\r\n")}
    ws = _ws(tmp_path, files)
    run_mem("-w", ws, "reflect", "--force", check=0)
    bank = tmp_path / "ws" / "bank"
    for rel in ("entities/Peter.md", "world.md", "journal.md"):
        text = (bank / rel).read_text(encoding="utf-8")
        assert "2026-11-12" not in text and PRIVATE not in text, (rel, text)
        assert rel == "journal.md" or ("lives in Porto" in text and "superseded" not in text), (rel, text)
    page = bank / "entities/Peter.md"
    page.write_text("---\ntrust: private\n---\n" + page.read_text(encoding="utf-8"), encoding="utf-8")
    run_mem("-w", ws, "reflect", "--force", check=0)
    assert "*(superseded by [memory/2026-11-12.md#L5]" in page.read_text(encoding="utf-8")


def test_a1_the_journal_names_no_connection_drawn_from_stricter_facts(tmp_path):
    """Entities mentioned together only in a legal file: the connection (their names, how often)
    is derived from legal text, so the journal (a normal page, synced) does not suggest it."""
    files = dict(PETER)
    files["memory/2026-11-24.md"] = ("---\ntrust: legal\n---\n## Retain\n" + "".join(
        f"- W @Peter @Divorcecase: hearing {n}.\n" for n in range(3)))
    files["memory/2026-11-25.md"] = "## Retain\n" + "".join(f"- W @Peter @Anna: lunch {n}.\n" for n in range(3))
    ws = _ws(tmp_path, files)
    run_mem("-w", ws, "reflect", "--force", check=0)
    text = (tmp_path / "ws" / "bank" / "journal.md").read_text(encoding="utf-8")
    assert "Divorcecase" not in text and "Anna ↔ Peter" in text
    assert "item(s) from sources of a stricter trust tier out of this journal" in text
    queue = run_json("-w", ws, "review", "list")[1]["items"]  # a decision would name the pair in bank/decisions.md
    assert [(i["a"]["name"], i["b"]["name"]) for i in queue if i["kind"] == "connection"] == [("Anna", "Peter")]

def test_a1_stricter_facts_never_move_an_opinions_confidence(tmp_path):
    """Four legal facts agreeing with a normal opinion moved its confidence on bank/opinions.md (a
    normal page, synced) and its counts in the journal, in `mem opinions` and in recall's answer: a
    number drawn from legal text. Evidence is now drawn from files no stricter than normal, [trust]
    globs included."""
    files = {
        "memory/2026-11-10.md": "## Retain\n- O(c=0.5) @Peter: Peter is reliable.\n",
        "memory/2026-11-20.md": "---\ntrust: legal\n---\n## Retain\n" + "".join(
            f"- W @Peter: Peter was reliable at hearing {n}.\n" for n in range(3)),
        "memory/health/2026-11-21.md": "## Retain\n- W @Peter: Peter was reliable with the insurer.\n",
        "memtool.toml": '[trust]\nprivate = ["memory/health/*"]\n',
    }
    ws = _ws(tmp_path, files)
    run_mem("-w", ws, "reflect", "--force", check=0)
    bank = tmp_path / "ws" / "bank"
    assert "0.50 →" not in (bank / "opinions.md").read_text(encoding="utf-8")
    assert "supporting" not in (bank / "journal.md").read_text(encoding="utf-8")
    [thread] = run_json("-w", ws, "opinions", "--entity", "Peter")[1]["opinions"]
    assert thread["confidence"] == 0.5 and thread["supporting"] == [] and thread["contradicting"] == []
    hits = run_json("-w", ws, "recall", "is Peter reliable", "--min-score", "0", "--k", "10")[1]["results"]
    [opinion] = [h for h in hits if h["kind"] == "opinion"]
    assert opinion["confidence"] == 0.5 and opinion["evidence"] == {"supporting": [], "contradicting": []}
    # the same facts in a normal file do move it (the test can fail)
    (tmp_path / "ws" / "memory/2026-11-20.md").write_text(files["memory/2026-11-20.md"].split("---\n", 2)[2])
    [thread] = run_json("-w", ws, "opinions", "--entity", "Peter")[1]["opinions"]
    assert thread["confidence"] > 0.5 and len(thread["supporting"]) == 3


# --- item 2: [trust] globs --------------------------------------------------------------------

GLOBS = {
    "memtool.toml": '[trust]\nlegal = ["bank/legal/*"]\nprivate = ["memory/health/*"]\n',
    "bank/legal/settlement.md": "# Settlement\n\nThe settlement figure is LEGALGLOB forty thousand.\n",
    "memory/health/insurer.md": "# Insurer\n\nThe settlement with the insurer covers PRIVGLOB therapy.\n",
    "memory/2026-11-05.md": "# 2026-11-05\n\nTalked about the settlement with Anna over NORMALGLOB coffee.\n",
}


def test_a2_summarize_honours_trust_globs(tmp_path, stub):
    ws = _ws(tmp_path, GLOBS)
    proc, data = _summarize(ws, "settlement", stub)
    assert proc.returncode == 0, proc.stderr
    sent = stub.sent_text()
    assert "NORMALGLOB" in sent and "PRIVGLOB" in sent  # a loopback model may see private text
    assert "LEGALGLOB" not in sent
    assert "bank/legal/settlement.md" in data["withheld"]


def test_a2_a_trust_glob_holds_a_folder_spelled_in_another_case(tmp_path, stub):
    """`legal = ["bank/legal/*"]` and a folder `bank/Legal/` (one folder on a case-insensitive disk):
    its text went to the model as normal text."""
    files = {k.replace("bank/legal/", "bank/Legal/"): v for k, v in GLOBS.items()}
    files["memtool.toml"] = '[trust]\nlegal = ["bank/legal/*"]\nprivate = ["Memory/Health/*"]\n'
    ws = _ws(tmp_path, files)
    proc, data = _summarize(ws, "settlement", stub)
    assert proc.returncode == 0, proc.stderr
    sent = stub.sent_text()
    assert "NORMALGLOB" in sent and "PRIVGLOB" in sent and "LEGALGLOB" not in sent
    assert "bank/Legal/settlement.md" in data["withheld"]


def test_a2_a_private_glob_never_goes_to_a_remote_model(tmp_path):
    ws = _ws(tmp_path, GLOBS)
    result = netns.run(tmp_path, [{"args": ["-w", ws, "summarize", "settlement", "--json"],
                                   "env": {"OLLAMA_HOST": "{remote}"}}])
    assert result["runs"][0]["returncode"] == 0, result["runs"][0]["stderr"]
    sent = netns.sent(result, "remote")
    assert "NORMALGLOB" in sent and "PRIVGLOB" not in sent and "LEGALGLOB" not in sent


# --- item 3: the embedder ---------------------------------------------------------------------

EMBED = {
    "memtool.toml": '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n\n[trust]\nlegal = ["bank/legal/*"]\n',
    "memory/2026-11-01.md": "## Retain\n- W @Peter: Peter plays chess on NORMEMB Sundays.\n",
    "memory/2026-11-02.md": "---\ntrust: legal\n---\n## Retain\n- W @Peter: Peter signed the LEGALEMB settlement.\n",
    "memory/2026-11-03.md": "---\ntrust: private\n---\n## Retain\n- W @Peter: Peter takes PRIVEMB tablets.\n",
    "bank/legal/peter.md": "# Peter case\n\nPeter's GLOBEMB court date is in March.\n",
}


def _embed_runs(ws: str, host: str) -> list[dict]:
    env = {"MEM_EMBEDDER": "ollama", "OLLAMA_HOST": host}
    return [{"args": ["-w", ws, "index"], "env": env},
            {"args": ["-w", ws, "recall", "Peter", "--k", "10", "--json"], "env": env},
            {"args": ["-w", ws, "status", "--json"], "env": env},
            {"args": ["-w", ws], "env": env, "mcp": [{"tool": "recall", "args": {"query": "Peter tablets"}},
                                                     {"tool": "summarize", "args": {"target": "Peter"}}]}]


def test_a3_the_ollama_embedder_never_sends_legal_or_private_text_off_loopback(tmp_path):
    ws = _ws(tmp_path, EMBED)
    result = netns.run(tmp_path, _embed_runs(ws, "{remote}"))
    index, recall, status, mcp = result["runs"]
    assert index["returncode"] == 0 and recall["returncode"] == 0 and status["returncode"] == 0, index["stderr"]
    sent = netns.sent(result, "remote")
    assert "NORMEMB" in sent  # normal text is embedded (and summarized) remotely
    for marker in ("LEGALEMB", "PRIVEMB", "GLOBEMB"):
        assert marker not in sent, marker
    assert "withheld" in index["stderr"] and "trust tier" in index["stderr"]  # said, not silent
    found = " ".join(r["content"] for r in json.loads(recall["stdout"])["results"])
    assert "LEGALEMB" in found and "PRIVEMB" in found  # still found, by words
    assert json.loads(status["stdout"])["embedder"]["withheld"] >= 3
    assert any(path == "/api/embed" for path, _ in result["requests"]["remote"])
    assert any(path == "/api/chat" for path, _ in result["requests"]["remote"])  # the MCP summarize went out
    assert not any(call["error"] for call in mcp["tools"]), mcp


def test_a3_a_loopback_embedder_gets_private_text_but_never_legal(tmp_path):
    ws = _ws(tmp_path, EMBED)
    result = netns.run(tmp_path, _embed_runs(ws, "{local}"))
    sent = netns.sent(result, "local")
    assert "NORMEMB" in sent and "PRIVEMB" in sent
    assert "LEGALEMB" not in sent and "GLOBEMB" not in sent
    assert json.loads(result["runs"][2]["stdout"])["embedder"]["withheld"] >= 2


# --- item 4: unreadable trust fails closed ----------------------------------------------------

MALFORMED = {
    "memory/2026-12-01.md": "---\ntrust: legal  # lawyer only\n---\n## Retain\n- W @Peter: Peter lives near the river COMMENTLEGAL.\n",
    "memory/2026-12-02.md": "---\ntrust: [legal]\n---\n## Retain\n- W @Peter: Peter lives near the river FLOWLEGAL.\n",
    "memory/2026-12-03.md": "\n---\ntrust: legal\n---\n## Retain\n- W @Peter: Peter lives near the river BLANKLEGAL.\n",
    "memory/2026-12-04.md": "## Retain\n- W @Peter: Peter lives near the river.\n",
    "memory/2026-12-05.md": "---\n{trust: legal, tags: [law]}\n---\n## Retain\n- W @Peter: Peter lives near the river MAPLEGAL.\n",
    "memory/2026-12-06.md": '---\n{"trust": "private"}\n---\n## Retain\n- W @Peter: Peter lives near the river JSONLEGAL.\n',
}
MARKERS = ("COMMENTLEGAL", "FLOWLEGAL", "BLANKLEGAL", "MAPLEGAL", "JSONLEGAL")


@pytest.mark.parametrize("day", ["2026-12-01", "2026-12-02", "2026-12-03", "2026-12-05", "2026-12-06"])
def test_a4_an_unreadable_trust_value_is_treated_as_legal(tmp_path, stub, day):
    ws = _ws(tmp_path, MALFORMED)
    proc, _ = _summarize(ws, day, stub)
    assert proc.returncode == 2 and "may be sent" in proc.stderr
    assert not any(m in stub.sent_text() for m in MARKERS)
    _, diags = run_json("-w", ws, "check")
    warned = {d["path"] for d in diags["diagnostics"] if d["code"] == "bad-trust"}
    assert f"memory/{day}.md" in warned


def test_a4_malformed_front_matter_never_reaches_a_model_through_any_path(tmp_path, stub):
    ws = _ws(tmp_path, MALFORMED)
    stub.chat_reply = lambda body: json.dumps({"decision": "keep_both", "reason": "r", "narrative": "n"})
    env = mem_env(OLLAMA_HOST=stub.url)
    run_mem("-w", ws, "reflect", "--force", "--review", env=env, check=0)
    run_mem("-w", ws, "summarize", "river", env=env)
    run_mem("-w", ws, "summarize", "Peter", env=env)
    assert "Peter lives near the river." in stub.sent_text()  # the normal day did reach the model
    assert not any(m in stub.sent_text() for m in MARKERS)


def test_a4_trust_declarations_are_read_strictly():
    def tier(text: str) -> str:
        from memtool.document import parse
        return parse("memory/2026-01-01.md", text).trust

    assert tier("---\ntrust: private\n---\nx\n") == "private"
    assert tier("---\ntrust: 'work'\n---\nx\n") == "work"
    assert tier("---\ntrust: private # doctor\n---\nx\n") == "legal"
    assert tier("---\ntrust:\n  - private\n---\nx\n") == "legal"
    assert tier("---\ntrust: normal\ntrust: legal\n---\nx\n") == "legal"
    assert tier("---\ntrust: private\nnever closed\n") == "private"
    assert tier("\ufeff---\ntrust: private\n---\nx\n") == "private"
    assert tier("---\n  trust: legal\n---\nx\n") == "legal"  # indented: not read as a key, still counted
    assert tier("---\naliases: [P]\n---\nx\n") == "normal"
    assert tier("---\n{trust: private}\n---\nx\n") == "legal"  # a flow mapping: a form it does not read
    assert tier("---\ntrust\uff1a private\n---\nx\n") == "legal"
    assert tier("---\ntitle: Trust: a memoir\n---\nx\n") == "normal"  # a value that starts with the word
    assert tier("# Title\n\n---\ntrust: legal\n---\n") == "normal"  # a later block is text, not front matter


# --- item 5: what counts as local -------------------------------------------------------------

def test_a5_user_info_does_not_make_a_remote_host_local(tmp_path):
    ws = _ws(tmp_path, {"memory/2026-11-25.md": "---\ntrust: private\n---\n## Retain\n- W @Peter: PRIVFIVE note.\n",
                        "memory/2026-11-26.md": "## Retain\n- W @Peter: NORMALFIVE note.\n"})
    host = "http://127.0.0.1@{remote_hostport}"
    result = netns.run(tmp_path, [{"args": ["-w", ws, "summarize", "2026-11-25"], "env": {"OLLAMA_HOST": host}},
                                  {"args": ["-w", ws, "summarize", "2026-11-26"], "env": {"OLLAMA_HOST": host}}])
    private, normal = result["runs"]
    assert private["returncode"] == 2 and "may be sent" in private["stderr"]
    assert normal["returncode"] == 0, normal["stderr"]
    sent = netns.sent(result, "remote")
    assert "NORMALFIVE" in sent and "PRIVFIVE" not in sent


def test_a5_destinations_are_parsed_not_prefix_matched():
    from memtool import trust

    assert not trust.destination("http://127.0.0.1@10.200.0.1:9").loopback
    assert trust.destination("http://127.0.0.1@10.200.0.1:9").url == "http://10.200.0.1:9"
    assert not trust.destination("http://127.0.0.1.example.invalid:9").loopback
    assert not trust.destination("http://0.0.0.0:9").loopback
    assert trust.destination("http://127.0.0.2:9").loopback
    assert trust.destination("http://[::1]:9").loopback
    assert trust.destination("localhost:9").url == "http://127.0.0.1:9"  # resolved once, connected as checked
    dest = trust.destination("http://127.0.0.1@10.200.0.1:9")
    assert not dest.allows("private") and not dest.allows("work") and dest.allows("normal")
    assert not trust.destination("http://127.0.0.1:9").allows("legal")
    with pytest.raises(trust.EgressRefused):
        trust.check_egress([("x", "normal"), ("y", "private")], dest)


# --- the work tier ------------------------------------------------------------------------------

def test_work_text_goes_off_loopback_only_to_a_provider_trusted_for_work(tmp_path):
    ws = _ws(tmp_path, {"memory/2026-11-27.md": "---\ntrust: work\n---\n## Retain\n- W @Acme: WORKMARK roadmap.\n"})
    toml = str(tmp_path / "ws" / "memtool.toml")
    runs = [{"args": ["-w", ws, "summarize", "2026-11-27"], "env": {"OLLAMA_HOST": "{remote}"}},
            {"write": toml, "text": '[trust]\nwork_providers = ["{remote}"]\n'},
            {"args": ["-w", ws, "summarize", "2026-11-27"], "env": {"OLLAMA_HOST": "{remote}"}}]
    result = netns.run(tmp_path, runs)
    assert result["runs"][0]["returncode"] == 2  # not trusted for work: withheld
    assert result["runs"][2]["returncode"] == 0, result["runs"][2]["stderr"]
    assert len([r for r in result["requests"]["remote"] if r[0] == "/api/chat"]) == 1
    assert "WORKMARK" in netns.sent(result, "remote")


def test_a4_core_edits_never_lower_the_trust_of_memory_md(tmp_path):
    """`mem core replace 'trust: legal' 'trust: normal'` (or the MCP core tools, an agent's) made a
    legal memory.md normal: its text could then reach models and generated pages. Refused; stricter is fine."""
    legal = "---\ntrust: legal\n---\n# Core\n\n- Settlement is CORELEGAL.\n"
    ws = _ws(tmp_path, {"memory.md": legal})
    core = tmp_path / "ws" / "memory.md"
    for edit in (("replace", "trust: legal", "trust: normal"), ("replace", "legal", "private"),
                 ("replace", "---\ntrust: legal\n---\n", ""), ("insert", "1", "---\ntrust: normal\n---")):
        proc = run_mem("-w", ws, "core", *edit, check=2)
        assert "less strict" in proc.stderr and "Traceback" not in proc.stderr, edit
        assert core.read_text(encoding="utf-8") == legal, edit
    core.write_text("# Core\n", encoding="utf-8")
    run_mem("-w", ws, "core", "insert", "1", "---\ntrust: private\n---", check=0)
    assert core.read_text(encoding="utf-8").startswith("---\ntrust: private\n---\n# Core")


def test_a1_reflect_never_modifies_a_legal_journal_or_opinions_page(tmp_path):
    """`trust: legal` files are never modified by reflect: it skipped legal entity pages and typed
    indexes, but rewrote a legal bank/opinions.md and appended to a legal bank/journal.md."""
    files = dict(PETER)
    files["memory/2026-11-23.md"] = "## Retain\n- O(c=0.8) @Peter: Is punctual.\n"
    files["bank/journal.md"] = "---\ntrust: legal\n---\n# Journal\n\nMy own, legal.\n"
    files["bank/opinions.md"] = "---\ntrust: legal\n---\n# Opinions\n\nMine, legal.\n"
    ws = _ws(tmp_path, files)
    bank = tmp_path / "ws" / "bank"
    before = {name: (bank / name).read_bytes() for name in ("journal.md", "opinions.md")}
    proc, data = run_json("-w", ws, "reflect", "--force")
    assert proc.returncode == 0, proc.stderr
    assert {name: (bank / name).read_bytes() for name in before} == before
    skipped = {p["path"]: p["reason"] for p in data["pages"] if p["action"] == "skipped"}
    assert "legal" in skipped["bank/journal.md"] and "legal" in skipped["bank/opinions.md"], skipped
    assert (bank / "entities/Peter.md").exists()  # the rest of the run stands
