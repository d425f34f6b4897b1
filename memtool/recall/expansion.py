"""Multi-hop expansion: the best hits pull in facts linked to them — the records around them in
their section (`context`), facts about the same entities (`entities`), or what a second query made
of their own words finds (`second-hop`) — each at a share of the hit's score, before the list is
cut to its line budget; or they lend their rarest words to the candidates already found
(`feedback`). Measured leave-one-conversation-out (docs/recall-experiments.md, "Multi-hop"); recall runs
`RECALL` (feedback); a benchmark sets the variants (`Memory.recall_expansion`)."""

from __future__ import annotations

import re

from memtool.analyzer import STOPWORDS, fold, fts_match, query_terms, words
from memtool.dialogue import speaker_of
from memtool.store import Filters, Store
from memtool.value import FrozenValue

SEED_FLOOR = 0.5  # feedback: seeds score at least this share of the best hit (LoCoMo, docs/recall-experiments.md)
# feedback: the facts its words may hold together, at most. Its query costs ~0.6 µs of BM25 per fact
# matched: rarest words first up to this many facts (at 10^6: 20 -> 6 ms a query, top 10 .993 the
# same); conversations and notes of a few thousand facts never reach it (docs/recall-experiments.md, "Feedback").
# In a large index the facts of a word's stems count too (`matched_counts`): at 10^6 feedback's mean
# 6.9 -> 4.0 ms of a hybrid recall (docs/benchmarks.md, 10⁶ facts).
FEEDBACK_FACTS = 2_000
KINDS = ("none", "context", "entities", "second-hop", "feedback")
# A capitalised word inside a sentence (not its first word): a name the text mentions.
# Compiled by `re` on first use (its cache): most recalls never read names from a hit.
_NAME = r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)"
_SPEAKER = r"^\*\*[^*]+\*\*:\s*"


class Expansion(FrozenValue):
    """Which expansion recall runs and its constants (chosen held out; `none` does nothing)."""

    __slots__ = ("kind", "seeds", "share", "window", "limit", "words")

    def __init__(self, kind: str = "none", seeds: int = 3, share: float = 0.3, window: int = 2, limit: int = 20,
                 words: int = 6):
        # seeds: how many of the best facts expand; share: of a seed's score that a linked fact gains
        # (times the link's weight); window: context: records either side, in the same file and section;
        # limit: entities, second-hop: linked facts taken per seed; words: feedback: the seeds' rarest words searched
        if kind not in KINDS:
            raise ValueError(f"unknown expansion {kind!r}; one of {', '.join(KINDS)}")
        self._set(kind, seeds, share, window, limit, words)


# What recall runs: feedback from the 8 best hits' 6 rarest words at 0.1: the point the held-out rule
# (bench/multihop.py) picks on all three LoCoMo dev conversations; held out, no fold loses a category
# at 10/25/50 lines and cat 1–4 / multi-hop gain (docs/recall-experiments.md, "Multi-hop").
# Second-hop (seeds 5, share .35) met the held-out rule for hitL@10 but costs hitL@25/50, multiplies
# lexical latency at 10^4 facts and adds facts without the query's words to exact-word queries.
RECALL = Expansion(kind="feedback", seeds=8, share=0.1, words=6)
BEST_MEASURED = Expansion(kind="second-hop", seeds=5, share=0.35)


def spread(order: list[tuple[int, float]], links: dict[int, list[tuple[int, float]]], seeds: int,
           share: float) -> list[tuple[int, float]]:
    """The order after the first `seeds` facts pass `share` × link weight × their score to the facts
    linked to them (a fact keeps the most any seed gives it, on top of its own score). Pure."""
    own = dict(order)
    out = dict(own)
    for fid, score in order[:seeds]:
        for other, weight in links.get(fid, ()):
            if other != fid:
                out[other] = max(out.get(other, 0.0), own.get(other, 0.0) + share * weight * score)
    return sorted(out.items(), key=lambda x: (-x[1], x[0]))


def names_in(content: str) -> list[str]:
    """The capitalised names inside a record's sentences (not a sentence's first word, not the
    speaker of a dialogue turn): `Paris`, `Matt Patterson`. Pure."""
    text = re.sub(_SPEAKER, "", content)
    return list(dict.fromkeys(m.group(1) for m in re.finditer(_NAME, text)))


def context_links(store: Store, seeds: list[int], window: int) -> dict[int, list[tuple[int, float]]]:
    """Seed → the records within `window` of it in its file and section, weighted 1/distance."""
    return {fid: [(other, 1.0 / dist) for other, dist in near] for fid, near in store.nearby(seeds, window).items()}


def entity_links(store: Store, seeds: list[int], heads: dict[int, dict], query: str, filters: Filters,
                 limit: int) -> dict[int, list[tuple[int, float]]]:
    """Seed → facts about the entities it mentions: its @mentions and links, then the names in its
    text (best BM25 first); the query's own words and the seeds' speakers are left out (they link
    nearly everything)."""
    asked = {t.casefold() for t in re.findall(r"\w+", query)}
    speakers = {s.casefold() for fid in seeds if (s := speaker_of(heads.get(fid, {}).get("content", "")))}
    out = {}
    for fid in seeds:
        found = store.facts_sharing_entities(fid, filters, limit)
        names = [n for n in names_in(heads.get(fid, {}).get("content", ""))
                 if not {w.casefold() for w in n.split()} & (asked | speakers)]
        terms = query_terms(" ".join(names)) if names else []
        if terms:
            found += [i for i, _ in store.search_ids(fts_match(terms), filters, limit + 1) if i != fid]
        out[fid] = [(other, 1.0) for other in dict.fromkeys(found)][: limit]
    return out


def second_hop_links(store: Store, seeds: list[int], heads: dict[int, dict], terms: list[str], filters: Filters,
                     limit: int) -> dict[int, list[tuple[int, float]]]:
    """Seed → what its own words find that the query's did not ask for (BM25 divided by the best)."""
    asked = set(terms)
    out = {}
    for fid in seeds:
        own = [t for t in query_terms(heads.get(fid, {}).get("content", "")) if t not in asked]
        if not own:
            continue
        found = store.search_terms(own, filters, limit + 1)  # a large index ranks by the seed's rarer words
        best = max((s for _, s in found), default=0.0) or 1.0
        out[fid] = [(other, s / best) for other, s in found if other != fid][:limit]
    return out


def feedback_words(seeds: list[str], query: str, speakers: set[str], counts) -> list[str]:
    """The words of the `seeds`' texts that another fact holds too, rarest first (ties: first
    seen): four letters or more, not stopwords or numbers, not a form of the query's words, not a
    speaker's name — what the best hits say that the question did not. `counts(words)` gives each
    word's document frequency. Pure."""
    asked = set(query_terms(query))
    skip = {fold(s) for s in speakers}
    found = dict.fromkeys(f for text in seeds for _, _, w in words(text)
                          if len(f := fold(w)) >= 4 and f not in STOPWORDS and f not in skip and not f.isdigit()
                          and not asked & set(query_terms(f)))  # `painting` is the question's `paint`
    df = counts(list(found))
    return sorted((w for w in found if df.get(w, 0) >= 2), key=lambda w: df[w])


def affordable(words: list[str], counts: dict[str, int], budget: int) -> list[str]:
    """Of `words` (rarest first), each that still fits with those kept before it in `budget` facts
    held together: what a feedback query may rank without costing more than the query it follows (a
    word over the budget is passed over, not the end: its stems may make it dearer than the next
    word). Pure."""
    kept, total = [], 0
    for w in words:
        if total + counts.get(w, 0) <= budget:
            total += counts.get(w, 0)
            kept.append(w)
    return kept


def matched_counts(store: Store, words: list[str]) -> dict[str, int]:
    """word → the facts counted against FEEDBACK_FACTS for it: in a large index (`Store.large`) the
    facts holding the word or one of its stems, which its search ranks too (`synced` in 285 facts of
    10^6, its stem `sync` in 45,376): the most of its forms' counts, since a fact holding the word
    holds its stems too (their sum counted those facts twice); in a smaller one those holding the
    word, as before the stems were counted (no quality set reaches the budget)."""
    if not store.large():
        return store.term_counts(words)
    forms = {w: {t for t in query_terms(w) if not t.endswith("*")} for w in words}
    counts = store.term_counts(sorted(set().union(*forms.values())))
    return {w: max((counts[t] for t in f), default=0) for w, f in forms.items()}


def feedback(store: Store, order: list[tuple[int, float]], heads: dict[int, dict], query: str,
             known: set[int], filters: Filters, how: Expansion) -> dict[int, float]:
    """Pseudo-relevance feedback: fact id → the extra score (`how.share` × BM25 over the best) that a
    `known` candidate earns by holding the rarest words of the first `how.seeds` facts of `order`
    (as many as FEEDBACK_FACTS allow). Only candidates already found gain: nothing is added that the
    query itself did not find."""
    top = order[0][1] if order else 0.0
    seeds = [fid for fid, s in order[: how.seeds] if fid in heads and s >= SEED_FLOOR * top]
    speakers = {s for row in heads.values() if (s := speaker_of(row["content"]))}
    rare = feedback_words([heads[fid]["content"] for fid in seeds], query, speakers, store.term_counts)[: how.words]
    rare = affordable(rare, matched_counts(store, rare), FEEDBACK_FACTS)
    if not rare:
        return {}
    found = store.search_terms(query_terms(" ".join(rare)), filters, 100)  # rare-word ranking at scale
    best = max((s for _, s in found), default=0.0) or 1.0
    return {fid: how.share * s / best for fid, s in found if fid in known}


def expand(store: Store, order: list[tuple[int, float]], heads: dict[int, dict], query: str, terms: list[str],
           filters: Filters, how: Expansion) -> list[tuple[int, float]]:
    """`order` (fact id, score, best first) after `how`'s expansion; facts it adds pass `filters`."""
    if how.kind in ("none", "feedback") or not order:  # feedback runs before the priors (ranking.ranked)
        return order
    seeds = [fid for fid, _ in order[: how.seeds]]
    if how.kind == "context":
        links = context_links(store, seeds, how.window)
    elif how.kind == "entities":
        links = entity_links(store, seeds, heads, query, filters, how.limit)
    else:
        links = second_hop_links(store, seeds, heads, terms, filters, how.limit)
    if filters.active:
        allowed = store.filter_ids(list({o for xs in links.values() for o, _ in xs}), filters)
        links = {fid: [(o, w) for o, w in xs if o in allowed] for fid, xs in links.items()}
    return spread(order, links, how.seeds, how.share)
