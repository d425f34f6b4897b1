"""Issue 16 item 6: multi-hop expansion (memtool.recall.expansion). A question's words find one
fact; the fact that completes the answer shares none of them, and is found only through the first:
beside it in its section (context), about the same entity (entities), or by the first fact's own
words (second-hop). Recall runs none of those by default (docs/recall-experiments.md, "Multi-hop": measured,
not kept), but feedback: the best hits' rarest words lift the candidates the query found that hold
them (chosen leave one conversation out); `Memory.recall_expansion` is the benchmark's switch."""

from __future__ import annotations

from datetime import date

import pytest

from memtool.memory import Memory
from memtool.recall.expansion import BEST_MEASURED, RECALL, Expansion, names_in, spread
from memtool.workspace import Workspace
from tests.conftest import run_json, write

LOG = """# 2026-03-02

## Monday
- Jon booked the flights to Lisbon for the conference.
- He stays at a small place near the harbour, two nights.

## Errands
- The workshop venue is the Kesselhaus, booked with @Marta.
- The Kesselhaus has no ramp at the side door.

## Garden
- Planted tomatoes along the south fence.
- The compost bin needs turning every week.
"""
PEOPLE = """# 2026-03-03

- @Marta answers mail only after ten in the morning.
"""


@pytest.fixture
def mem(tmp_path):
    write(tmp_path, "memory/2026-03-02.md", LOG)
    write(tmp_path, "memory/2026-03-03.md", PEOPLE)
    m = Memory(Workspace(tmp_path), embedder="none", track_access=False)
    yield m
    m.close()


def contents(mem: Memory, query: str, how: Expansion) -> list[str]:
    mem.recall_expansion = how
    return [r["content"] for r in mem.recall(query, k=10, mode="lexical", today=date(2026, 3, 4)).results]


def test_6_context_expansion_brings_the_next_line_of_the_section(mem):
    plain = contents(mem, "conference flights", Expansion())
    assert not any("harbour" in c for c in plain)  # its words are not the question's
    expanded = contents(mem, "conference flights", Expansion(kind="context", seeds=1, window=1))
    assert expanded[0].startswith("Jon booked the flights")
    assert any("harbour" in c for c in expanded)
    assert not any("tomatoes" in c for c in expanded)  # another section is not context


def test_6_entity_expansion_brings_facts_about_the_same_entity(mem):
    assert not any("mail" in c for c in contents(mem, "workshop venue", Expansion()))
    expanded = contents(mem, "workshop venue", Expansion(kind="entities", seeds=1))
    assert any("answers mail" in c for c in expanded)  # shares @Marta with the venue line


def test_6_second_hop_requery_finds_what_the_first_hit_names(mem):
    assert not any("ramp" in c for c in contents(mem, "workshop venue", Expansion()))
    expanded = contents(mem, "workshop venue", Expansion(kind="second-hop", seeds=1))
    assert any("no ramp" in c for c in expanded)  # found by "Kesselhaus", a word of the first hit


def test_6_recall_runs_feedback_by_default_and_it_adds_no_fact(mem, tmp_path):
    assert mem.recall_expansion == RECALL == Expansion(kind="feedback", seeds=8, share=0.1, words=6)
    _, out = run_json("recall", "workshop venue", "--k", "5", cwd=tmp_path, check=0)
    assert [r["content"] for r in out["results"]] == ["The workshop venue is the Kesselhaus, booked with @Marta."]
    mem.recall_expansion = BEST_MEASURED  # the variant that came closest, as the bench runs it
    assert any("no ramp" in r["content"] for r in mem.recall("workshop venue", k=10, today=date(2026, 3, 4)).results)


def test_6_expansion_respects_filters(mem):
    mem.recall_expansion = Expansion(kind="entities", seeds=1)
    found = mem.recall("workshop venue", k=10, mode="lexical", until="2026-03-02", today=date(2026, 3, 4)).results
    assert found and not any("answers mail" in r["content"] for r in found)


def test_6_spread_gives_a_share_of_the_seed_score_and_keeps_the_best():
    order = [(1, 1.0), (2, 0.8), (3, 0.5)]
    out = dict(spread(order, {1: [(3, 1.0), (4, 0.5)], 2: [(4, 1.0)]}, seeds=2, share=0.3))
    assert out[3] == pytest.approx(0.8)  # own 0.5 + 0.3 × 1.0
    assert out[4] == pytest.approx(0.24)  # the larger of 0.15 (from 1) and 0.24 (from 2)
    assert out[1] == 1.0 and out[2] == 0.8
    assert spread(order, {3: [(9, 1.0)]}, seeds=2, share=0.3) == order  # only seeds spread


def test_6_names_in_skips_the_speaker_and_sentence_starts():
    assert names_in("**Jon**: We went to Paris. Then Rome with Matt Patterson, Gina!") == \
        ["Paris", "Rome", "Matt Patterson", "Gina"]


def test_6_unknown_expansion_is_refused():
    with pytest.raises(ValueError):
        Expansion(kind="everything")

