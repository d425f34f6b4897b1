"""The meaning-alone diagnosis (bench/meaning_ranks.py): its records are the index's own, embedded
as the index embeds them, and a question's rank counts the records that beat its best evidence."""

import sqlite3
from hashlib import blake2b

import numpy as np

from bench import meaning_ranks
from memtool.memory import Memory
from memtool.workspace import Workspace


def test_records_are_the_indexed_ones_with_the_text_the_index_embeds(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n## Trip\n\n- The ferry leaves at nine.\n- Der Hafen liegt im Norden.\n\n"
        "**Ana**: Where is the harbour?\n\n**Ben**: In the north.\n", encoding="utf-8")
    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "Ana.md").write_text("# Ana\n\nLikes the sea.\n", encoding="utf-8")
    recs = meaning_ranks.records(tmp_path)
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        mem.index()
        index = mem.ws.index_path
    finally:
        mem.close()
    with sqlite3.connect(index) as db:
        rows = db.execute("SELECT path, line_start, line_end, ehash FROM facts").fetchall()
    assert sorted((p, a, b, blake2b(t.encode(), digest_size=12).hexdigest()) for p, a, b, t in recs) == sorted(map(tuple, rows))
    assert any(p == "memory/2026-03-02.md" and "Trip" in t and "ferry" in t for p, _, _, t in recs)
    assert any("harbour" in t and "north" in t for *_, t in recs)  # a reply embedded after its question


def test_rank_counts_the_records_above_the_best_evidence_line():
    recs = [("a.md", 1, 1, "x"), ("a.md", 2, 3, "y"), ("b.md", 5, 5, "z")]
    cos = np.array([0.9, 0.5, 0.7])
    assert meaning_ranks.rank_of(cos, recs, ["a.md#L3"]) == 3  # inside the second record's lines
    assert meaning_ranks.rank_of(cos, recs, ["a.md#L3", "b.md#L5"]) == 2  # the better of two
    assert meaning_ranks.rank_of(cos, recs, ["a.md#L1"]) == 1
    assert meaning_ranks.rank_of(cos, recs, ["c.md#L1"]) is None
