"""Recall over the example workspace: languages, filters, hostile queries, exact citations."""

import re
from datetime import date

import pytest

from memtool.document import split_lines
from memtool.errors import UsageError
from memtool.memory import Memory
from memtool.workspace import Workspace

TODAY = date(2026, 11, 30)


@pytest.fixture
def mem(example_ws):
    m = Memory(Workspace(example_ws))
    m.index()
    return m


def sources(result):
    return [r["source"] for r in result.results]


def read_span(ws, source):
    m = re.fullmatch(r"(.+)#L(\d+)(?:-L(\d+))?", source)
    path, a, b = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
    lines = split_lines((ws / path).read_text(encoding="utf-8"))
    return "\n".join(lines[a - 1:b])


@pytest.mark.parametrize("query,expect", [
    ("Strasse", "Straße"), ("Muller", "Müller"), ("Haus", "Häuser"), ("run", "running"),
    ("Reisepass", "Reisepass"), ("ありがとう", "ありがとう"), ("Steuer", "Steuerberaterin"),
])
def test_folding_and_inflection_in_both_languages(mem, query, expect):
    result = mem.recall(query, k=20, today=TODAY)
    assert any(expect in r["content"] for r in result.results), sources(result)


def test_every_citation_holds_its_content(mem, example_ws):
    for query in ["Peter", "Marrakech", "warelay Baileys", "Steuer", "Hausverwaltung", "sqlite-vec", "Tom"]:
        results = mem.recall(query, k=50, today=TODAY).results
        assert results, query
        for r in results:
            span = read_span(example_ws, r["source"])
            for piece in r["content"].split("\n"):
                assert piece.strip() in span, (r["source"], piece)


def test_result_schema(mem):
    r = mem.recall("Peter prefers short messages", kinds=["opinion"], today=TODAY).results[0]
    assert set(r) >= {"kind", "timestamp", "entities", "content", "source", "score", "confidence"}
    assert r["kind"] == "opinion" and 0 <= r["confidence"] <= 1 and "Peter" in r["entities"]


def test_since_until_kind_entity_filters(mem):
    since = mem.recall("Peter", k=100, since="2026-11-20", today=TODAY).results
    assert since and all((r["timestamp"] or "")[-10:] >= "2026-11-20" for r in since)
    until = mem.recall("Peter", k=100, until="2026-10-10", today=TODAY).results
    assert until and all(r["timestamp"][:10] <= "2026-10-10" for r in until)
    relative = mem.recall("Peter", k=100, since="30d", today=TODAY).results
    assert {r["source"] for r in since} <= {r["source"] for r in relative}
    worlds = mem.recall("Peter", k=100, kinds=["world"], today=TODAY).results
    assert worlds and {r["kind"] for r in worlds} == {"world"}


def test_entity_filter_resolves_aliases(mem):
    by_alias = mem.recall("", entities=["Pete"], k=200, today=TODAY).results
    by_slug = mem.recall("", entities=["@peter"], k=200, today=TODAY).results
    assert by_alias and sources_of(by_alias) == sources_of(by_slug)
    assert all("Peter" in r["entities"] for r in by_alias)
    both = mem.recall("", entities=["Pete", "warelay"], k=200, today=TODAY).results
    assert both and all({"Peter", "warelay"} <= set(r["entities"]) for r in both)
    anna = mem.recall("Steuer", entities=["Frau Müller"], k=50, today=TODAY).results
    assert anna and all("Anna-Mueller" in r["entities"] for r in anna)


def sources_of(results):
    return sorted(r["source"] for r in results)


@pytest.mark.parametrize("query", [
    '"', "'", '"unbalanced', "*", "Peter*", "AND(", "NEAR(Peter Lisbon)", "-Peter", "Peter -Lisbon", "(((", ")",
    "col:Peter", "^Peter", "Peter OR", "🎉🎉", "x" * 100_000, "Peter " * 20_000, "\x00", "NOT", "a:b:c",
])
def test_any_query_string_is_safe(mem, query):
    try:
        result = mem.recall(query, today=TODAY)
    except UsageError as exc:  # only for queries with nothing searchable, and it says so
        assert "searchable" in exc.message or "empty" in exc.message
    else:  # answered: by the words in it, whatever syntax surrounds them
        assert result.terms and len(result.results) <= 10
        # (stopwords or emoji only, "AND(", "NOT", "🎉🎉": nothing relevant, with the reason; see test_relevance)
        assert bool(result.results) == (query not in ('"unbalanced', "🎉🎉", "x" * 100_000, "AND(", "NOT")), result.terms
        assert (result.verdict.reason is not None) == (query in ("AND(", "NOT", "🎉🎉"))
        assert all(r["kind"] and r["source"] and r["content"] for r in result.results)


def test_empty_query_is_a_clear_error_but_filters_alone_list_facts(mem):
    with pytest.raises(UsageError, match="empty"):
        mem.recall("   ", today=TODAY)
    listed = mem.recall("", kinds=["opinion"], k=5, today=TODAY).results
    assert len(listed) == 5 and all(r["kind"] == "opinion" for r in listed)
    dates = [r["source"][7:17] for r in listed if r["source"].startswith("memory/")]
    assert dates == sorted(dates, reverse=True)


@pytest.mark.parametrize("kw", [{"k": 0}, {"k": 5000}, {"since": "yesterdayish"}, {"kinds": ["fact"]},
                                {"since": "2026-11-20", "until": "2026-11-01"}, {"budget": 0}])
def test_bad_options_are_usage_errors(mem, kw):
    with pytest.raises(UsageError):
        mem.recall("Peter", today=TODAY, **kw)


def test_budget_packs_results(mem):
    full = mem.recall("Peter", k=30, today=TODAY).results
    packed = mem.recall("Peter", k=30, budget=120, today=TODAY).results
    assert 0 < len(packed) < len(full)
    assert sum(len(r["content"]) for r in packed) <= 120 * 4
