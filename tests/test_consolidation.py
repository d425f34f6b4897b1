"""Consolidation in `mem reflect` on a generated history with planted duplicates, paraphrases,
contradictions, used and unused facts, and trust tiers (bench/consolidation.py writes it and its truth)."""

from __future__ import annotations

import json
import socket
import sys

import pytest

import netns
from conftest import ROOT, mem_env, run_json, run_mem, write
from memtool.memory import Memory
from memtool.workspace import Workspace
from ollama_stub import OllamaStub

sys.path.insert(0, str(ROOT))
from bench.consolidation import generate  # noqa: E402


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """The generated workspace after one forced reflect run (lexical: MEM_EMBEDDER=none)."""
    ws = tmp_path_factory.mktemp("consolidation") / "ws"
    truth = generate(ws)
    proc, data = run_json("-w", ws, "reflect", "--force")
    assert proc.returncode == 0, proc.stderr
    return ws, truth, data


def test_planted_duplicates_are_folded_and_nothing_else_but_exact_repeats(history):
    ws, truth, data = history
    folded = {frozenset((f["kept"], f["other"])): f for f in data["consolidation"]["folded"]}
    planted = {frozenset(d["sources"]) for d in truth["duplicates"]}
    assert planted <= set(folded), planted - set(folded)
    for pair, f in folded.items():
        if pair not in planted:  # the generator's narrative repeats whole sentences: same words, same names
            assert f["words"] == 1.0, f
    paraphrases = {frozenset(d["sources"]) for d in truth["paraphrases"]}
    assert not paraphrases & set(folded), "paraphrases are for review, never folded by rule"


def test_recall_shows_a_folded_fact_once_with_every_source(history):
    ws, truth, _ = history
    dup = truth["duplicates"][0]
    _, data = run_json("-w", ws, "recall", dup["texts"][0], "--k", "5")
    hits = [r for r in data["results"] if r["source"] in dup["sources"] or set(r.get("sources", [])) & set(dup["sources"])]
    assert len(hits) == 1
    assert set(hits[0]["sources"]) >= set(dup["sources"])


def test_contradictions_are_resolved_with_correct_as_of_answers(history):
    ws, truth, data = history
    found = {(s["old"], s["new"]) for s in data["consolidation"]["superseded"]}
    planted = {(c["old"]["source"], c["new"]["source"]) for c in truth["contradictions"]}
    assert found == planted
    mem = Memory(Workspace(ws), embedder="none", track_access=False)
    shown_with_successor = 0
    for c in truth["contradictions"]:
        for question in (c["question_before"], c["question_after"]):
            result = mem.recall(question["query"], as_of=question["as_of"], k=5)
            sources = [r["source"] for r in result.results]
            assert question["expected"] in sources, (question, sources)
            other = c["new"]["source"] if question["expected"] == c["old"]["source"] else c["old"]["source"]
            assert other not in sources, (question, sources)
        # Without --as-of the current fact comes first and carries its history.
        result = mem.recall(c["question_after"]["query"], k=10)
        sources = [r["source"] for r in result.results]
        new = next(r for r in result.results if r["source"] == c["new"]["source"])
        assert new["previously"][0]["source"] == c["old"]["source"]
        old = [r for r in result.results if r["source"] == c["old"]["source"]]
        if old:  # a superseded fact may still answer: then below its successor, and marked
            assert sources.index(c["new"]["source"]) < sources.index(c["old"]["source"])
            assert old[0]["superseded_by"] == {"source": c["new"]["source"], "since": c["new"]["day"]}
            shown_with_successor += 1
    assert shown_with_successor, "no superseded fact answered next to its successor: the checks above proved nothing"


def test_the_journal_reports_each_phase(history):
    ws, truth, data = history
    entry = data["entry"]
    for phrase in ("The memory holds", "folded", "Contradictions resolved", "For review", "Skipped (legal"):
        assert phrase in entry, phrase
    assert entry in (ws / "bank/journal.md").read_text()
    assert "3 O 418/26" not in entry  # the legal page is counted, never quoted


def test_stability_reorders_used_and_unused_facts(tmp_path):
    ws = tmp_path / "ws"
    truth = generate(ws)
    run_mem("-w", ws, "reflect", "--force", check=0)
    mem = Memory(Workspace(ws), embedder="none")
    before = {}
    for pair in truth["usage"]:
        sources = [r["source"] for r in mem.recall(pair["query"], k=10).results]
        before[pair["query"]] = sources.index(pair["used"]) < sources.index(pair["unused"])
    assert not all(before.values()), "the planted pairs tie; only use may lift one"
    for pair in truth["usage"]:
        for _ in range(5):  # the agent keeps using this fact through a specific query
            mem.recall(pair["used_text"], k=1)
    mem.close()
    run_mem("-w", ws, "reflect", "--force", check=0)
    mem = Memory(Workspace(ws), embedder="none", track_access=False)
    for pair in truth["usage"]:
        sources = [r["source"] for r in mem.recall(pair["query"], k=10).results]
        assert sources.index(pair["used"]) < sources.index(pair["unused"]), pair
    # The journal tells what was strengthened; stability is a prior, never a filter.
    journal = (ws / "bank/journal.md").read_text()
    assert "Strengthened" in journal
    assert all(pair["unused"] in [r["source"] for r in mem.recall(pair["query"], k=10).results] for pair in truth["usage"])


def test_gates_and_force(tmp_path):
    ws = tmp_path / "ws"
    generate(ws)
    run_mem("-w", ws, "reflect", check=0)  # the first run passes the gates
    proc = run_mem("-w", ws, "reflect")
    assert proc.returncode == 0 and "not yet" in proc.stderr and "12 h" in proc.stderr
    write(ws, "memtool.toml", "[reflect]\nmin_hours = 0\n")
    proc = run_mem("-w", ws, "reflect")
    assert "not yet" in proc.stderr and "new fact" in proc.stderr
    for i in range(3):
        run_mem("-w", ws, "retain", f"W @Anna: Anna adopted a cat called Nummer {i}.", check=0)
    proc, data = run_json("-w", ws, "reflect")
    assert proc.returncode == 0 and "gated" not in data and data["consolidation"]["examined"] == 3


def test_a_time_limit_ends_the_run_cleanly_and_the_next_run_continues(tmp_path):
    ws = tmp_path / "ws"
    generate(ws)
    proc, data = run_json("-w", ws, "reflect", "--force", "--time-limit", "1e-9")
    assert proc.returncode == 0
    assert data["consolidation"]["stopped_at"] == "dedup" and data["consolidation"]["examined"] == 0
    assert "Stopped at the time limit" in data["entry"]
    _, data = run_json("-w", ws, "reflect", "--force")
    assert data["consolidation"]["examined"] > 300 and data["consolidation"]["stopped_at"] is None


def test_dry_run_writes_nothing(tmp_path):
    ws = tmp_path / "ws"
    generate(ws)
    before = {p: p.read_bytes() for p in ws.rglob("*.md")}
    proc = run_mem("-w", ws, "reflect", "--dry-run")
    assert proc.returncode == 0 and "[DRY RUN]" in proc.stdout and "folded" in proc.stdout
    assert {p: p.read_bytes() for p in ws.rglob("*.md")} == before
    assert Memory(Workspace(ws)).local.counts()["folds"] == 0  # found, reported, not recorded


# --- the model review and trust tiers ---------------------------------------------------------

TRUST_WS = {
    "memory/2026-11-02.md": "# 2026-11-02\n\n## Retain\n- W @Anna: Anna runs every morning along the Alster.\n"
                            "- W @Brandt: Brandt handles the deposit dispute with the landlord.\n"
                            "- W @Kenji: Kenji speaks fluent German and Japanese.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n## Retain\n- W @Kenji: Japanese and German are languages Kenji speaks fluently.\n",
    "bank/private/health.md": "---\ntrust: private\n---\n# Health\n\n- @Anna: Anna runs every morning along the Alster, "
                              "knee permitting (ferritin 11 ng/ml).\n",
    "bank/legal/case.md": "# Case\n\n- @Brandt: Brandt handles the deposit dispute with the landlord, file 3 O 418/26.\n",
    "memtool.toml": "[trust]\nlegal = [\"bank/legal/*\"]\n",
}


def _trust_ws(tmp_path):
    ws = tmp_path / "ws"
    for rel, text in TRUST_WS.items():
        write(ws, rel, text)
    return ws


@pytest.fixture
def stub():
    server = OllamaStub()
    server.chat_reply = lambda body: json.dumps({"decision": "merge", "reason": "same fact, reworded",
                                                 "narrative": "Two notes said the same thing."})
    yield server
    server.stop()


def _sent(stub) -> str:
    return "\n".join(m["content"] for chat in stub.chats for m in chat["messages"])


def test_model_review_with_a_local_server_never_sees_legal_text(stub, tmp_path):
    ws = _trust_ws(tmp_path)
    proc, data = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=stub.url))
    assert proc.returncode == 0, proc.stderr
    llm = data["consolidation"]["llm"]
    assert llm["asked"] >= 2 and llm["withheld"] == 0
    assert data["consolidation"]["skipped_legal"] == 1  # the legal line is never even a candidate
    sent = _sent(stub)
    assert "3 O 418/26" not in sent and "deposit dispute" not in sent  # legal: never, not even its pair
    assert "ferritin" in sent  # private: allowed, the model is on this machine
    assert {d["decision"] for d in llm["decided"]} == {"merge"}
    assert "Model review" in data["entry"]
    # The model's merge is applied: recall shows one result citing both notes.
    _, result = run_json("-w", ws, "recall", "Kenji languages German Japanese", "--k", "3")
    kenji = [r for r in result["results"] if "Kenji" in r["content"]]
    assert len(kenji) == 1 and len(kenji[0]["sources"]) == 2


def test_private_text_never_goes_to_a_remote_server(tmp_path):
    """The 'remote' server is a stand-in on 10.200.0.1 inside the test's own network namespace."""
    ws = _trust_ws(tmp_path)
    reply = json.dumps({"decision": "merge", "reason": "same fact, reworded", "narrative": "Two notes said the same thing."})
    result = netns.run(tmp_path, [{"args": ["-w", str(ws), "reflect", "--force", "--review", "--json"],
                                   "env": {"OLLAMA_HOST": "{remote}"}}], chat_reply=reply)
    run = result["runs"][0]
    assert run["returncode"] == 0, run["stderr"]
    data = json.loads(run["stdout"])
    assert data["consolidation"]["llm"]["local"] is False and data["consolidation"]["llm"]["withheld"] >= 1
    sent = netns.sent(result, "remote")
    assert result["requests"]["remote"] and "Kenji" in sent  # normal text is reviewed
    assert "ferritin" not in sent and "knee" not in sent and "3 O 418/26" not in sent


def test_malformed_model_answers_are_rejected_and_reported(stub, tmp_path):
    ws = _trust_ws(tmp_path)
    stub.chat_reply = lambda body: "Sure! I think they are the same. {decision: merge"
    proc, data = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=stub.url))
    assert proc.returncode == 0
    llm = data["consolidation"]["llm"]
    assert llm["rejected"] == llm["asked"] >= 1 and not llm["decided"]
    assert "malformed" in proc.stderr
    assert Memory(Workspace(ws)).local.counts()["folds"] == 0


def test_a_model_answer_writes_one_journal_line_however_it_is_spelt(stub, tmp_path):
    """A narrative with line breaks and an escape sequence (a note the model read can steer it) went into
    bank/journal.md as headings, bullets and raw ESC (qa39): it is one line, control characters escaped."""
    ws = _trust_ws(tmp_path)
    stub.chat_reply = lambda body: json.dumps({"decision": "keep_both", "reason": "differ\n## Retain",
                                               "narrative": "Fine.\n\n## Retain\n- W @Kenji: INJECTED line\x1b[2J"})
    proc, data = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=stub.url))
    assert proc.returncode == 0, proc.stderr
    journal = (ws / "bank" / "journal.md").read_text(encoding="utf-8")
    assert "\x1b" not in journal and "\n## Retain" not in journal and "\n- W @Kenji: INJECTED" not in journal
    assert "Fine. ## Retain - W @Kenji: INJECTED line\\x1b[2J" in journal


def test_an_unreachable_model_degrades_to_the_rules(tmp_path):
    ws = _trust_ws(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    proc, data = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=f"http://127.0.0.1:{port}"))
    assert proc.returncode == 0
    assert "not reachable" in proc.stderr and "rule-based" in proc.stderr
    assert data["consolidation"]["review"] or data["consolidation"]["unclear"]


def test_the_generated_history_with_the_model_stand_in(stub, tmp_path):
    """Same rule results with the model on; the model decides what rules left open; the legal page's
    marker never reaches it."""
    ws = tmp_path / "ws"
    truth = generate(ws)
    stub.chat_reply = lambda body: json.dumps({"decision": "keep_both", "reason": "different facts",
                                               "narrative": "Kept both notes."})
    proc, data = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=stub.url))
    assert proc.returncode == 0, proc.stderr
    c = data["consolidation"]
    assert {frozenset(d["sources"]) for d in truth["duplicates"]} <= {frozenset((f["kept"], f["other"])) for f in c["folded"]}
    assert {(s["old"], s["new"]) for s in c["superseded"]} == {(x["old"]["source"], x["new"]["source"])
                                                                for x in truth["contradictions"]}
    assert c["llm"]["asked"] >= 1 and {d["decision"] for d in c["llm"]["decided"]} == {"keep_both"}
    legal = next(t for t in truth["trusted"] if t["trust"] == "legal")
    assert stub.chats and legal["marker"] not in _sent(stub)


def test_connections_are_suggested_not_linked(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "bank/entities/Anna.md", "# Anna\n\nA friend.\n")
    write(ws, "bank/entities/Ida.md", "# Ida\n\nAnna's daughter.\n")
    days = ["- B @Anna @Ida: Took Anna and Ida to the zoo.", "- B @Anna @Ida: Anna and Ida baked a cake.",
            "- W @Anna @Ida: Anna and Ida visit the grandparents on Sundays."]
    for i, line in enumerate(days):
        write(ws, f"memory/2026-11-0{i + 1}.md", f"# 2026-11-0{i + 1}\n\n## Retain\n{line}\n")
    before = {p: p.read_bytes() for p in (ws / "bank/entities").iterdir()}
    _, data = run_json("-w", ws, "reflect", "--force")
    assert {frozenset((c["a"], c["b"])) for c in data["consolidation"]["connections"]} == {frozenset(("Anna", "Ida"))}
    assert "Connections discovered" in data["entry"] and "Anna ↔ Ida" in data["entry"]
    for page in before:  # suggested only: the hand-written text of both pages is unchanged
        assert page.read_text().startswith(before[page].decode())


def test_a_damaged_local_state_never_stops_recall(tmp_path):
    ws = tmp_path / "ws"
    generate(ws)
    run_mem("-w", ws, "reflect", "--force", check=0)
    (ws / ".memory" / "local.sqlite").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (ws / ".memory" / f"local.sqlite{suffix}").unlink(missing_ok=True)
    proc, data = run_json("-w", ws, "recall", "Anna lives")
    assert proc.returncode == 0 and data["results"]
    assert any("local.sqlite" in w for w in data["warnings"])
    proc = run_mem("-w", ws, "reflect", "--force")
    assert proc.returncode == 4 and "local.sqlite is damaged" in proc.stderr and "hint:" in proc.stderr


def test_14_11_items_flagged_without_review_are_sent_by_a_later_review(tmp_path):
    ws = _trust_ws(tmp_path)
    proc, first = run_json("-w", ws, "reflect", "--force")  # no model: the items stay open
    flagged = len(first["consolidation"]["review"]) + len(first["consolidation"]["unclear"])
    assert proc.returncode == 0 and flagged >= 2
    server = OllamaStub(bind="127.0.0.1")
    server.chat_reply = lambda body: json.dumps({"decision": "keep", "reason": "different facts", "narrative": "-"})
    try:
        proc, second = run_json("-w", ws, "reflect", "--force", "--review", env=mem_env(OLLAMA_HOST=server.url))
    finally:
        server.stop()
    llm = second["consolidation"]["llm"]
    assert proc.returncode == 0 and llm["asked"] + llm["withheld"] == flagged, llm


def test_14_11_entity_pages_mark_what_consolidation_superseded(history):
    ws, truth, data = history
    marked = 0
    for c in truth["contradictions"]:
        pages = [p for p in (ws / "bank" / "entities").glob("*.md") if c["old"]["source"] in p.read_text(encoding="utf-8")]
        for page in pages:
            line = next(l for l in page.read_text(encoding="utf-8").splitlines() if f"[{c['old']['source']}]" in l)
            assert f"*(superseded by [{c['new']['source']}](" in line, (page.name, line)
            marked += 1
    assert marked, "no contradiction reached an entity page: the test would prove nothing"


def test_reflect4_item2_contradictions_take_the_index_terms_of_a_fact_without_inline_fields(history):
    """Contradictions compare facts by their analysed terms, inline fields left out: the terms the index
    stored for each fact are used as they are (not analysed again) exactly where that gives the same set."""
    from memtool.analyzer import index_terms
    from memtool.reflect.consolidation import FIELD, fact_terms, load_facts, term_set

    ws, _, _ = history
    write(ws, "memory/2026-10-02.md", "# 2026-10-02\n\n- @Vera moved to Porto [cost:: 2h] [mood:: calm].\n")
    mem = Memory(Workspace(ws), embedder="none")
    try:
        mem.refresh()
        facts = load_facts(mem.store, mem.config.trust_globs)
    finally:
        mem.close()
    with_field = [f for f in facts if FIELD.search(f["content"])]
    assert with_field and len(facts) > 100
    for f in facts:
        assert fact_terms(f) == term_set(index_terms(FIELD.sub(" ", f["content"]))), f["source"]
    vera = next(f for f in with_field if f["path"] == "memory/2026-10-02.md")
    assert "calm" not in fact_terms(vera) and "calm" in term_set(vera["terms"]) and "porto" in fact_terms(vera)


def test_reflect5_classify_pairs_measures_listed_words_as_the_jaccard_of_their_sets():
    """The other fact of a pair is measured from its listed words (no set made): the same folds and
    reviews as the Jaccard of the sets, fillers and empty word lists included."""
    import random

    from memtool.reflect import rules

    rng = random.Random(5)
    vocab = ["ferry", "harbour", "boat", "still", "again", "auch", "noch", "berlin", "lisbon", "tea"]
    by_key, sets = {}, {}
    for n in range(60):
        k = f"k{n}"
        sets[k] = frozenset(rng.sample(vocab, rng.randint(0, 6)))
        by_key[k] = {"key": k, "trust": "normal", "day": f"2026-01-{n % 28 + 1:02d}", "source": f"memory/x.md#L{n}",
                     "entities": ["Ana"] if n % 2 else [], "content": " ".join(sorted(sets[k]))}
    pairs = {(f"k{a}", f"k{b}"): None for a in range(10) for b in range(60) if a != b}
    texts = {k: " ".join(sorted(s)) for k, s in sets.items()}
    with_sets = rules.classify_pairs(pairs, by_key, sets, review_lex=0.3)
    listed = rules.classify_pairs(pairs, by_key, sets, review_lex=0.3, listed=lambda k: texts[k].split())
    assert with_sets.folds or with_sets.review
    assert (listed.folds, listed.review) == (with_sets.folds, with_sets.review)
    folds, review = set(), set()  # the rule, from the Jaccard of the sets
    for a, b in pairs:
        lex = rules.jaccard(sets[a] - rules.FILLERS, sets[b] - rules.FILLERS)
        if lex >= 0.85 and rules._same_names(by_key[a], by_key[b], sets[a], sets[b]):
            folds.add(frozenset((a, b)))
        elif lex >= 0.3 and rules._same_entity(by_key[a], by_key[b]):
            review.add(frozenset((a, b)))
    assert {frozenset(p[:2]) for p in listed.folds} == folds and {frozenset(p[:2]) for p in listed.review} == review


def test_reflect8_classify_pairs_filters_before_sorting_with_the_same_findings_in_the_same_order():
    """Pairs are grouped by their new fact and only the similar ones sorted: the same folds and
    reviews, in the same order, as classifying every pair in sorted order (cosines, legal facts and
    an insertion order of the pairs that is not sorted included)."""
    import random

    from memtool.reflect import rules

    rng = random.Random(8)
    vocab = ["ferry", "harbour", "boat", "still", "again", "berlin", "lisbon", "tea", "Porto", "now"]
    by_key, sets = {}, {}
    for n in range(80):
        k = f"k{n:02d}"
        sets[k] = frozenset(rng.sample(vocab, rng.randint(1, 6)))
        by_key[k] = {"key": k, "trust": "legal" if n % 17 == 3 else "normal", "day": f"2026-01-{n % 28 + 1:02d}",
                     "source": f"memory/x.md#L{n}", "entities": ["Ana"] if n % 3 else ["Ben"],
                     "content": " ".join(sorted(sets[k]))}
    keys = list(by_key)
    pairs = {(a, b): rng.choice([None, 0.9, 0.96, 0.99]) for a in keys[:15] for b in keys if a != b}
    shuffled = dict(rng.sample(list(pairs.items()), len(pairs)))
    found = rules.classify_pairs(shuffled, by_key, sets, review_lex=0.3)
    folds, review, legal = [], [], set()  # every pair in sorted order, as the rule reads
    for (a, b), cos in sorted(pairs.items()):
        fa, fb = by_key[a], by_key[b]
        if "legal" in (fa["trust"], fb["trust"]):
            legal.update(k for k in (a, b) if by_key[k]["trust"] == "legal")
            continue
        lex = rules.jaccard(sets[a] - rules.FILLERS, sets[b] - rules.FILLERS)
        kept, other = sorted((fa, fb), key=lambda f: (f["day"], f["source"]))
        if lex >= 0.85 and (cos is None or cos >= 0.95) and rules._same_names(fa, fb, sets[a], sets[b]):
            folds.append((kept["key"], other["key"], cos, lex))
        elif rules._same_entity(fa, fb) and (cos >= 0.95 if cos is not None else lex >= 0.3):
            review.append((kept["key"], other["key"], cos, lex))
    assert folds and review and legal
    assert (found.folds, found.review, found.skipped_legal) == (folds, review, len(legal))


def test_reflect12_contradictions_compare_only_the_texts_contradiction_reads_names(history):
    """`rules.contradiction_reads` names every fact whose text `rules.contradictions` reads: with the
    others' texts taken away, the planted history's newest days give the same findings."""
    from collections import defaultdict

    from memtool.analyzer import index_terms
    from memtool.reflect import rules
    from memtool.reflect.consolidation import fact_terms, load_facts, word_set

    class Textless(dict):
        def __getitem__(self, name):
            assert name not in ("content", "terms"), f"read the text of {dict.__getitem__(self, 'source')}"
            return dict.__getitem__(self, name)

    ws, _, _ = history
    mem = Memory(Workspace(ws), embedder="none")
    try:
        facts = load_facts(mem.store, mem.config.trust_globs)
    finally:
        mem.close()
    days = sorted({f["day"] for f in facts if f["day"]})
    names = defaultdict(set)
    for e in {e for f in facts for e in f["entities"]}:
        names[e.lower()].update(index_terms(e).split())
    names = {k: frozenset(v) for k, v in names.items()}
    compared = 0
    for since in days[-12:]:
        new = [f for f in facts if f["day"] and f["day"] >= since]
        read = {id(f) for f in new + rules.contradiction_reads(new, facts)}
        some = [f if id(f) in read else Textless(f) for f in facts]
        by_key, some_by_key = {f["key"]: f for f in facts}, {f["key"]: f for f in some}
        expected = rules.contradictions(new, facts, {k: fact_terms(f) for k, f in by_key.items()}, names, {},
                                        {k: word_set(f["content"]) for k, f in by_key.items()}, set(), by_key)
        terms = type("Terms", (dict,),
                     {"__missing__": lambda self, k: self.setdefault(k, fact_terms(some_by_key[k]))})()
        got = rules.contradictions(new, some, terms, names, {}, {}, set(), some_by_key)
        assert got == expected, since
        about = rules.subjects(new, some)  # what both look at: the same answers from these alone
        assert rules.contradictions(new, about, terms, names, {}, {}, set(), some_by_key) == expected, since
        assert {id(f) for f in rules.contradiction_reads(new, about)} == {id(f) for f in rules.contradiction_reads(new, some)}
        compared += len(expected[0])
        assert len(read) < len(facts)
    assert compared


def test_reflect13_candidate_pairs_keep_every_pair_that_can_be_a_finding():
    """Candidates whose entities cannot make a fold (other entities), a review or a possible
    contradiction (another first entity) are dropped before they are measured: the same folds,
    reviews and possible contradictions as from every pair sharing a word (case, order and repeats of
    entities, facts without one, legal facts included)."""
    import random
    from collections import Counter

    from memtool.reflect import rules
    from memtool.reflect.postings import Postings

    rng = random.Random(13)
    vocab = ["ferry", "harbour", "boat", "still", "again", "berlin", "lisbon", "tea", "porto", "works"]
    spellings = [[], ["Ana"], ["ana"], ["Ana", "Ben"], ["Ben", "Ana"], ["ben", "ANA"], ["Ben"], ["Ana", "Ana"], ["Cleo"]]
    by_key, sets = {}, {}
    for n in range(120):
        k = f"k{n:03d}"
        sets[k] = frozenset(rng.sample(vocab, rng.randint(1, 5)))
        by_key[k] = {"key": k, "trust": "legal" if n % 29 == 5 else "normal", "day": f"2026-01-{n % 9 + 1:02d}",
                     "path": f"memory/x{n % 4}.md", "source": f"memory/x{n % 4}.md#L{n}", "kind": "world",
                     "entities": rng.choice(spellings), "content": " ".join(sorted(sets[k]))}
    index = Postings(df=Counter(w for s in sets.values() for w in s))
    for k, s in sets.items():
        for w in s:
            index.postings.setdefault(w, []).append(k)
    new = [by_key[k] for k in list(by_key)[:40]]
    kept = rules.candidate_pairs(new, index, sets, lambda f: 0.0, by_key)  # threshold 0: every shared word
    every = {(f["key"], k) for f in new for k in by_key if k != f["key"] and sets[k] & sets[f["key"]]}
    assert kept < every and len(kept) < len(every) * 0.6

    def findings(pairs):
        sims = dict.fromkeys(pairs)
        found = rules.classify_pairs(sims, by_key, sets, review_lex=0.3)
        _, unclear = rules.contradictions(new, list(by_key.values()), sets, {}, sims, sets, set(), by_key)
        return found.folds, found.review, unclear

    folds, review, unclear = findings(every)
    assert folds and review and unclear
    assert findings(kept) == (folds, review, unclear)
