"""Lexical recall in a large index leaves out very common query terms when a rarer one remains."""

from conftest import write

from memtool.analyzer import query_terms
from memtool.config import Config
from memtool.memory import Memory
from memtool.store.index import PRUNE_MIN_FACTS
from memtool.workspace import Workspace


def test_4_very_common_terms_are_left_out_only_in_a_large_index(tmp_path):
    ws = tmp_path / "ws"
    lines = "".join(f"- The weekly meeting number {i} went fine.\n" for i in range(40))
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n" + lines + "- A meeting about the Zaunkönig survey.\n")
    mem = Memory(Workspace(ws), Config(), embedder="none")
    mem.index()
    store = mem.store
    both, common_only = query_terms("meeting Zaunkönig"), query_terms("weekly meeting")
    assert PRUNE_MIN_FACTS >= 50_000 and store.prune_common(both) == both  # a small index: every term ranks

    store.prune_min_facts = 0  # as in an index of PRUNE_MIN_FACTS facts or more
    kept = store.prune_common(both)
    assert kept == [t for t in both if t not in query_terms("meeting")] and kept
    assert store.prune_common(common_only) == common_only  # nothing rarer: the query stays whole
    result = mem.recall("meeting Zaunkönig", k=3, mode="lexical")
    assert result.results[0]["source"] == "memory/2026-11-01.md#L42"
    mem.close()
