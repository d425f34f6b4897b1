"""Lexical recall in a large index ranks only the facts holding a query's rarer word (by the whole
query's BM25), falls back to the whole query when fewer than k such facts pass, and leaves small
indexes alone (issue 19, item 4)."""

from contextlib import contextmanager

import pytest
from conftest import write

from memtool.analyzer import fts_match, query_terms
from memtool.config import Config
from memtool.memory import Memory
from memtool.store.index import PRUNE_MIN_FACTS
from memtool.store import Filters
from memtool.workspace import Workspace

QUERY = "Zaunkönig Kanban"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """200 facts: `Kanban` in 18 (short ones among them), `Zaunkönig` in 6 long ones (3 with Kanban)."""
    ws = tmp_path_factory.mktemp("rare") / "ws"
    lines = [f"- Filler note number {i} about nothing in particular." for i in range(176)]
    lines += [f"- Kanban {'kanban ' * (i % 3)}{'board ' * i}review." for i in range(15)]
    long = "with a long story about the garden, the weather, the neighbours and the old shed " * 2
    lines += [f"- Zaunkönig seen at the fence {'again ' * i}{long}." for i in range(3)]
    lines += [f"- Zaunkönig on the Kanban board {'again ' * i}{long}." for i in range(3)]
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n" + "\n".join(lines) + "\n")
    mem = Memory(Workspace(ws), Config(), embedder="none")
    mem.index()
    yield mem.store
    mem.close()


@contextmanager
def sized(store, min_facts: int, rare_facts: int | None = None):
    """The store with its size gate (`prune_min_facts`) at `min_facts` and its rare-word threshold
    (`rare_facts`) at `rare_facts` for the block."""
    saved = store.prune_min_facts, store.rare_facts
    store.prune_min_facts, store.rare_facts = min_facts, saved[1] if rare_facts is None else rare_facts
    try:
        yield store
    finally:
        store.prune_min_facts, store.rare_facts = saved


def _whole(store, terms, k, only=None):
    """The whole OR query's best k (of the facts in `only`, when given): the reference."""
    found = store.search_ids(fts_match(terms), Filters(), 1000)
    return [(i, s) for i, s in found if only is None or i in only][:k]


def _same(got, want):
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


def test_4_word_groups_keep_a_words_stems_and_prefix_together():
    from memtool.analyzer import word_groups

    terms = query_terms("issues Zaunkönig")
    groups = word_groups(terms)
    assert len(groups) == 2 and sorted(t for g in groups for t in g) == sorted(terms)
    assert "issues*" in groups[0] and "issu" in groups[0]


def test_4_rare_split_sets_apart_the_rare_words_or_else_the_rarest():
    from memtool.store.queries import rare_split

    groups = [["kanban", "kanban*"], ["zaun", "zaun*"], ["board"]]
    docs = {"kanban": 50_000, "zaun": 900, "board": 30_000}
    assert rare_split(groups, docs, 10_000) == (["zaun", "zaun*"], ["kanban", "kanban*", "board"])
    assert rare_split(groups, docs, 100) == (["zaun", "zaun*"], ["kanban", "kanban*", "board"])  # the rarest
    assert rare_split(groups, docs, 60_000) is None  # every word rare: the whole query
    assert rare_split(groups[:1], docs, 100) is None  # one word: nothing to set apart


def test_4_large_index_ranks_only_facts_holding_the_rare_word_by_the_whole_query(store):
    terms = query_terms(QUERY)
    rare = {i for i, _ in store.search_ids(fts_match(query_terms("Zaunkönig")), Filters(), 1000)}
    assert len(rare) == 6
    assert not {i for i, _ in _whole(store, terms, 5)} <= rare  # a Kanban-only fact is among the whole query's best
    with sized(store, 0, 0):  # as in an index of 10^6 facts: the rarest word is set apart
        got = store.search_terms(terms, Filters(), 5)
    _same(got, _whole(store, terms, 5, only=rare))  # the same facts, scores and order as the whole query's


def test_4_fewer_rare_facts_than_k_falls_back_to_the_whole_query(store):
    terms = query_terms(QUERY)
    with sized(store, 0, 0):
        got = store.search_terms(terms, Filters(), 10)  # 6 facts hold the rare word
    _same(got, _whole(store, terms, 10))


def test_4_small_index_ranks_the_whole_query(store):
    terms = query_terms(QUERY)
    assert store.prune_min_facts == PRUNE_MIN_FACTS >= 50_000
    with sized(store, PRUNE_MIN_FACTS, 0):  # the index's size alone keeps the query whole
        _same(store.search_terms(terms, Filters(), 5), _whole(store, terms, 5))
    with sized(store, 0):  # a large index with no word in more than RARE_FACTS facts: whole too
        _same(store.search_terms(terms, Filters(), 5), _whole(store, terms, 5))


def test_4_known_terms_probes_the_posting_lists(store):
    held = {"kanban", "zaunkonig", "fence"} & {t for t in query_terms("Kanban Zaunkönig fence")}
    assert store.known_terms(held | {"nowhere", "fen"}) == held
    assert store.known_terms(set()) == set()


# --- the second hop (memtool.recall.expansion) ranks through `search_terms` too -------------------

def test_h2_second_hop_ranks_a_seeds_rarer_words_in_a_large_index_and_is_unchanged_in_a_small_one(store):
    from memtool.recall.expansion import second_hop_links

    terms = query_terms(QUERY)
    holding = {i for i, _ in store.search_ids(fts_match(query_terms("Zaunkönig")), Filters(), 100)}
    seed = {-1: {"content": QUERY}}  # a seed saying the query's words (asked for: other words)

    def hop():
        return second_hop_links(store, [-1], seed, ["unrelated"], Filters(), limit=4)[-1]

    with sized(store, 1, rare_facts=6):
        large, want = hop(), store.search_terms(terms, Filters(), 5)
    assert not {i for i, _ in _whole(store, terms, 4)} <= holding  # the whole query brings Kanban-only facts...
    assert [i for i, _ in large] == [i for i, _ in want][:4] and {i for i, _ in large} <= holding  # ...the hop, not
    with sized(store, PRUNE_MIN_FACTS):
        small = hop()
    whole = _whole(store, terms, 5)
    assert small == [(i, s / whole[0][1]) for i, s in whole][:4]


# --- one common word in a large index: ranked among its newest facts ------------------------------

def test_h3_one_common_word_in_a_large_index_is_ranked_among_its_newest_facts(store):
    terms = query_terms("Kanban")  # in 18 facts
    holding = sorted(i for i, _ in store.search_ids(fts_match(terms), Filters(), 100))
    newest = set(holding[-10:])
    saved = store.recent_facts
    try:
        store.recent_facts = 10
        with sized(store, 1):
            windowed, fallback = store.search_terms(terms, Filters(), 5), store.search_terms(terms, Filters(), 12)
        with sized(store, PRUNE_MIN_FACTS):
            small = store.search_terms(terms, Filters(), 5)
    finally:
        store.recent_facts = saved
    _same(windowed, _whole(store, terms, 5, only=newest))  # the whole query's BM25, among the newest 10
    assert not {i for i, _ in _whole(store, terms, 5)} <= newest  # (which differs from the whole top 5)
    _same(fallback, _whole(store, terms, 12))  # fewer than k among the newest: the whole query
    _same(small, _whole(store, terms, 5))  # a small index: untouched


def test_h3_the_newest_facts_rank_alike_unfiltered_and_filtered_ties_included(tmp_path):
    """Unfiltered, the window is read and ranked in one statement; filtered, its edge is found
    first. A filter every fact passes gives the same facts, scores and order, ties in id order."""
    ws = tmp_path / "ws"
    lines = [f"- Heron at the pond{' again' * (i % 4)}." for i in range(40)]  # four texts, ten facts each: ties
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n" + "\n".join(lines) + "\n")
    mem = Memory(Workspace(ws), Config(), embedder="none")
    try:
        mem.index()
        store, terms = mem.store, query_terms("heron")
        holding = sorted(i for i, _ in store.search_ids(fts_match(terms), Filters(), 100))
        kind = store.facts_by_id(holding[:1])[0]["kind"]
        store.recent_facts = 30
        with sized(store, 1):
            unfiltered = store.search_terms(terms, Filters(), 12)
            filtered = store.search_terms(terms, Filters(kinds=[kind]), 12)
        want = _whole(store, terms, 12, only=set(holding[-30:]))
        assert unfiltered == filtered
        _same(unfiltered, want)
        assert len({s for _, s in want}) < len(want)  # the case holds ties
    finally:
        mem.close()


# --- a prefix that only its own word begins is searched as that word -------------------------------

def test_h4_a_prefix_no_longer_term_begins_scores_as_its_word_until_one_does(tmp_path):
    """`heron*` while no term but `heron` begins with it: searched as `heron`, with the same facts and
    scores to the bit as the prefix; `pond*` (`ponder` too) stays a prefix. A fact with a longer
    term, written through this connection or another, makes the word a prefix again at once."""
    ws = tmp_path / "ws"
    lines = [f"- Heron at the pond{' again' * (i % 4)}." for i in range(8)]
    lines += ["- Ponder the pond, said the heron.", "- A grebe on the lake."]
    note = write(ws, "memory/2026-11-03.md", "# 2026-11-03\n" + "\n".join(lines) + "\n")
    mem, other = Memory(Workspace(ws), Config(), embedder="none"), None
    try:
        mem.index()
        store, terms = mem.store, query_terms("heron pond grebe")
        assert {"heron*", "pond*", "grebe*"} <= set(terms)
        assert store._match(terms).count("*") == 1  # `pond*` alone
        assert store.search_terms(terms, Filters(), 20) == store.search_ids(fts_match(terms), Filters(), 20)

        def found_with(line: str, word: str, writer: Memory) -> None:
            with note.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
            writer.index()
            new = {i for i, _ in store.search_ids(fts_match([word]), Filters(), 5)}
            got = store.search_terms(terms, Filters(), 20)
            assert len(new) == 1 and new <= {i for i, _ in got}
            assert got == store.search_ids(fts_match(terms), Filters(), 20)

        found_with("- Grebes everywhere.", "grebes", mem)
        other = Memory(Workspace(ws), Config(), embedder="none")
        found_with("- A heronry by the lake.", "heronry", other)
    finally:
        mem.close()
        if other is not None:
            other.close()
