"""Multi-hop expansion: the best hits pull in facts linked to them — the records around them in
their section (`context`), facts about the same entities (`entities`), or what a second query made
of their own words finds (`second-hop`) — each at a share of the hit's score, before the list is
cut to its line budget. Measured leave-one-conversation-out (docs/recall.md, "Multi-hop"); recall
runs `RECALL` (none); a benchmark sets the variants (`Memory.recall_expansion`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memtool.analyzer import fts_match, query_terms
from memtool.dialogue import speaker_of
from memtool.store import Filters, Store

KINDS = ("none", "context", "entities", "second-hop")
# A capitalised word inside a sentence (not its first word): a name the text mentions.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)")
_SPEAKER = re.compile(r"^\*\*[^*]+\*\*:\s*")


@dataclass(frozen=True)
class Expansion:
    """Which expansion recall runs and its constants (chosen held out; `none` does nothing)."""

    kind: str = "none"
    seeds: int = 3  # how many of the best facts expand
    share: float = 0.3  # of a seed's score that a linked fact gains (times the link's weight)
    window: int = 2  # context: records either side, in the same file and section
    limit: int = 20  # entities, second-hop: linked facts taken per seed

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown expansion {self.kind!r}; one of {', '.join(KINDS)}")


# What recall runs: none. Second-hop (seeds 5, share .35) met the held-out rule for hitL@10 but costs
# hitL@25/50, multiplies lexical latency at 10^4 facts and adds facts without the query's words to
# exact-word queries; not in the default path until that is fixed (docs/recall.md, "Multi-hop").
RECALL = Expansion()
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
    text = _SPEAKER.sub("", content)
    return list(dict.fromkeys(m.group(1) for m in _NAME.finditer(text)))


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


def expand(store: Store, order: list[tuple[int, float]], heads: dict[int, dict], query: str, terms: list[str],
           filters: Filters, how: Expansion) -> list[tuple[int, float]]:
    """`order` (fact id, score, best first) after `how`'s expansion; facts it adds pass `filters`."""
    if how.kind == "none" or not order:
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
