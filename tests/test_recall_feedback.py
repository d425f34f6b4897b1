"""Issue 16, multi-hop: pseudo-relevance feedback (memtool.recall.expansion.feedback). The best
hits' rarest words, the ones the question did not use, lift the candidates the query already found
that hold them; nothing the query did not find is added. Chosen leave one conversation out on
LoCoMo (docs/recall-experiments.md, "Multi-hop")."""

from __future__ import annotations

from datetime import date

from memtool.memory import Memory
from memtool.recall.expansion import RECALL, Expansion
from memtool.workspace import Workspace
from tests.conftest import write

TRIP = """# 2026-03-09

- Conference travel: Jon flies to Lisbon on Monday, hotel in Alfama booked.
- Travel insurance is due.
- Travel from the Lisbon airport to Alfama: the metro takes forty minutes, change at Alameda.
- Bought new running shoes.
"""


def test_2_feedback_lifts_the_candidate_sharing_the_best_hits_rare_words(tmp_path):
    write(tmp_path, "memory/2026-03-09.md", TRIP)
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        def order(how):
            mem.recall_expansion = how
            return [r["content"][:12] for r in mem.recall("conference travel", k=5, mode="lexical",
                                                           today=date(2026, 3, 10)).results]
        plain, fed = order(Expansion()), order(RECALL)
    finally:
        mem.close()
    assert plain == ["Conference t", "Travel insur", "Travel from "], plain  # the short line wins on words
    assert fed == ["Conference t", "Travel from ", "Travel insur"], fed  # Lisbon, Alfama: the best hit's words


def test_2_feedback_words_are_the_seeds_rarest_words_the_question_did_not_use():
    from memtool.recall.expansion import feedback_words

    df = {"lisbon": 2, "alfama": 3, "monday": 9, "booked": 1, "flies": 4, "hotel": 2, "travelling": 5}
    got = feedback_words(["**Ana**: Conference travelling: Jon flies to Lisbon on Monday, hotel in Alfama booked, "
                          "Ana 2026."], "conference travel?", {"Ana"}, lambda ws: {w: df.get(w, 0) for w in ws})
    # not a form of the query's words (travelling), a speaker's name, a one-fact word or a short one
    assert got == ["lisbon", "hotel", "alfama", "flies", "monday"]


RUNS = """# 2026-09-25

- Jonas' Laufstrecke führt am Kanal entlang.
- Jonas' Laufstrecke führt am Deich entlang.
- Am Kanal liegt ein Café mit Blick aufs Wasser.
- Der Deich ist im Winter gesperrt.
"""


def test_2_feedback_never_lifts_a_candidate_past_the_first_hit(tmp_path):
    write(tmp_path, "memory/2026-09-25.md", RUNS)
    mem = Memory(Workspace(tmp_path), embedder="none", track_access=False)
    try:
        exact = mem.recall("Jonas' Laufstrecke führt am Deich entlang.", k=3, mode="lexical", today=date(2026, 9, 26))
    finally:
        mem.close()
    # the other run shares all words but one, and its "Kanal" is a seed's rare word: it may come
    # close, never first
    assert exact.results[0]["content"] == "Jonas' Laufstrecke führt am Deich entlang.", exact.results


def test_2_feedback_words_keep_within_the_facts_they_may_rank_together():
    """Issue 19: at 10^6 facts the seeds' rarest words can still be held by 10^5 facts, and ranking
    them cost 22 ms a query; rarest first, each is kept while the facts kept add up within the budget
    (one over it is passed over: in a large index its stems can make it dearer than the next)."""
    from memtool.recall.expansion import FEEDBACK_FACTS, affordable

    counts = {"alfama": 3, "lisbon": 900, "hotel": 1_200, "monday": 150_000}
    assert affordable(["alfama", "lisbon", "hotel", "monday"], counts, 2_000) == ["alfama", "lisbon"]
    assert affordable(["monday", "alfama"], counts, 2_000) == ["alfama"]  # too common alone: passed over
    assert affordable(["alfama", "lisbon", "hotel"], counts, 10**9) == ["alfama", "lisbon", "hotel"]
    assert affordable(["alfama", "monday"], counts, FEEDBACK_FACTS) == ["alfama"]  # the shipped budget


SYNCS = """# 2026-09-26

- The calendars synced overnight.
- The phone synced the photos again.
- Sync job failed at 3am.
- Sync the drive before the trip.
- Ask Jon to sync the shared folder.
- The sync button is greyed out.
"""


def test_19_in_a_large_index_a_feedback_word_counts_the_facts_its_stems_hold_too(tmp_path):
    """At 10^6 facts `synced` was held by 285 facts and its stem `sync`, which its search ranks too, by
    45,376: counted as 285 against the budget, it made the feedback query cost ~4 ms of a recall's 50.
    In a large index (`Store.large`) the stems count; a smaller one is left as it was."""
    from memtool.recall.expansion import affordable, matched_counts

    write(tmp_path, "memory/2026-09-26.md", SYNCS)
    mem = Memory(Workspace(tmp_path), embedder="none", track_access=False)
    try:
        mem.refresh()
        store = mem.store
        small = matched_counts(store, ["synced", "photos"])
        store.prune_min_facts = 1  # the gates of a large index
        large = matched_counts(store, ["synced", "photos"])
        stem = store.term_counts(["sync"])["sync"]
    finally:
        mem.close()
    assert small == {"synced": 2, "photos": 1}
    assert stem == 6 and large == {"synced": stem, "photos": 1}  # the facts holding it or its stem, each once
    assert affordable(["synced", "photos"], small, 5) == ["synced", "photos"]
    # its stem is held by too many facts: passed over, and the next word still fits
    assert affordable(["synced", "photos"], large, 5) == ["photos"]
