"""Opinions whose confidence moves with evidence. Pure.

An opinion thread is a chain of `O` bullets about the same entity saying much the same thing
(term overlap). The newest explicit `O(c=…)` is the anchor: a person's own number. Facts written
after the anchor about the same entity that share its terms are evidence: they support it, or
contradict it when exactly one side is negated ("not", "no longer", "nicht", "kein", "nie", …).
Evidence is counted in independent sources (distinct files); the confidence follows `update`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

SUPPORT_STEP = 0.10  # each independent supporting source closes 10 % of the distance to 1
CONTRADICT_STEP = 0.15  # each independent contradicting source removes 15 % of the confidence
DEFAULT_ANCHOR = 0.5  # an opinion written without c=…
SAME_THREAD = 0.16  # term overlap (Jaccard) for two opinion bullets to be one opinion (tuned on the example)
EVIDENCE = 0.25  # term overlap for a fact to count as evidence for an opinion
_NEGATION = re.compile(r"\b(not|no|never|no longer|nicht|kein|keine|keinen|nie|niemals|nicht mehr|doesn't|don't|isn't|won't|can't)\b",
                       re.I)


def update(anchor: float, supporting: int, contradicting: int) -> float:
    """Confidence after `supporting` and `contradicting` independent sources since the anchor.

    c = 1 − (1 − a·(1−β)^d)·(1−α)^s with α = 0.10, β = 0.15. Properties (tested): c stays in [0, 1];
    it depends on counts only, so the order of evidence does not matter; steps shrink as evidence
    accumulates; one contradiction takes 0.9 to 0.765 — four are needed to go below 0.5.
    """
    a = min(1.0, max(0.0, anchor))
    base = a * (1.0 - CONTRADICT_STEP) ** max(0, contradicting)
    return 1.0 - (1.0 - base) * (1.0 - SUPPORT_STEP) ** max(0, supporting)


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def overlap(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)  # |a ∪ b|, without making it


@dataclass
class Opinion:
    entity: str
    statement: str  # the newest bullet's text
    source: str  # the newest bullet
    date: str | None
    anchor: float
    anchor_source: str
    terms: set[str]
    history: list[str] = field(default_factory=list)  # older bullets of the thread
    supporting: list[str] = field(default_factory=list)
    contradicting: list[str] = field(default_factory=list)

    @property
    def confidence(self) -> float:
        return update(self.anchor, len(_files(self.supporting)), len(_files(self.contradicting)))

    @property
    def key(self) -> str:
        return self.history[0] if self.history else self.source

    def to_dict(self) -> dict:
        return {"entity": self.entity, "statement": self.statement, "source": self.source, "last_updated": self.date,
                "confidence": round(self.confidence, 3), "anchor": self.anchor, "anchor_source": self.anchor_source,
                "supporting": self.supporting, "contradicting": self.contradicting, "history": self.history}


def _files(sources: list[str]) -> set[str]:
    return {s.split("#")[0] for s in sources}


def build(opinion_facts: list[dict], other_facts: list[dict], terms) -> list[Opinion]:
    """Threads from opinion facts (oldest first) and their evidence among `other_facts`.

    Facts are recall results plus `entity` (the entity they are filed under); `terms(text)` gives a
    fact's analysed terms.
    """
    terms_of = cached_terms(terms)
    return weigh(group(opinion_facts, terms_of), other_facts, terms_of)


def group(opinion_facts: list[dict], terms) -> list[Opinion]:
    """The threads of opinion facts (oldest first), without evidence yet (see `weigh`)."""
    threads: list[Opinion] = []
    by_entity: dict[str, list[Opinion]] = {}
    for f in opinion_facts:
        t = terms(f["content"])
        same = by_entity.setdefault(f["entity"], [])
        match = next((o for o in reversed(same) if overlap(o.terms, t) >= SAME_THREAD), None)
        explicit = f.get("confidence")
        if match is None:
            thread = Opinion(f["entity"], f["content"], f["source"], _day(f["source"]) or f.get("timestamp"),
                             explicit if explicit is not None else DEFAULT_ANCHOR, f["source"], t)
            threads.append(thread)
            same.append(thread)
            continue
        match.history.append(match.source)
        match.statement, match.source, match.terms = f["content"], f["source"], match.terms | t
        match.date = _day(f["source"]) or f.get("timestamp")  # the day written, not a validity date
        if explicit is not None:  # a person's number resets the evidence
            match.anchor, match.anchor_source = explicit, f["source"]
            match.supporting, match.contradicting = [], []
    return threads


@dataclass
class Known:
    """Verdicts an earlier run reached (see `weigh`): entity → (sources weighed then, fingerprint →
    (supporting, contradicting) sets), for facts whose text has not changed since; `taken` counts
    the verdicts a run took from here instead of comparing."""

    entities: dict = field(default_factory=dict)
    taken: int = 0
    prints: dict = field(default_factory=dict)  # id of a thread → its `fingerprint`, made once

    def fingerprint(self, o: Opinion) -> str:
        """`fingerprint(o)`, made once per thread a run holds."""
        if id(o) not in self.prints:
            self.prints[id(o)] = fingerprint(o)
        return self.prints[id(o)]

    def all_held(self, threads: list[Opinion]) -> bool:
        """Whether each of `threads` (one entity's) has its verdicts held: none of the facts weighed then is
        compared afresh."""
        return all(o.entity in self.entities and self.entities[o.entity][0]
                   and self.fingerprint(o) in self.entities[o.entity][1] for o in threads)


def weigh(threads: list[Opinion], other_facts: list[dict], terms, known: Known | None = None) -> list[Opinion]:
    """`threads` with their evidence among `other_facts` (facts filed under an entity): supporting or
    contradicting, in the order of `other_facts`. A thread's evidence depends on its own entity's facts only.

    With `known`, a thread whose `fingerprint` it holds takes its verdict on each fact weighed then
    from there (without visiting those facts: ~240,000 verdicts a run after new facts at 10^5); only
    the other facts are compared."""
    others: dict[str, list[dict]] = {}
    for f in other_facts:
        others.setdefault(f["entity"], []).append(f)
    analysed: dict[str, list] = {}  # entity → (day, terms, negated) of each of its facts, made on first need
    split: dict[str, _Weighed] = {}  # entity → its facts by whether `known` weighed them, made on first need
    for o in threads:
        weighed, verdicts = known.entities.get(o.entity, (frozenset(), {})) if known else (frozenset(), {})
        before = verdicts.get(known.fingerprint(o)) if weighed else None
        facts = others.get(o.entity, ())
        verdict = _verdicts(o, facts, analysed.setdefault(o.entity, [None] * len(facts)), terms)
        skip = {*o.history, o.source}
        if before is None:
            for n, f in enumerate(facts):
                if f["source"] not in skip:
                    found = verdict(n)
                    if found is not None:
                        found.append(f["source"])
            continue
        at = split.get(o.entity) or split.setdefault(o.entity, _Weighed(facts, weighed))
        known.taken += at.count - sum(len(at.places.get(s, ())) for s in skip)
        supporting = [n for s in before[0] if s not in skip for n in at.places.get(s, ())]
        contradicting = [n for s in before[1] if s not in skip and s not in before[0] for n in at.places.get(s, ())]
        for n in at.others:
            if facts[n]["source"] not in skip:
                found = verdict(n)
                if found is not None:
                    (supporting if found is o.supporting else contradicting).append(n)
        o.supporting.extend(facts[n]["source"] for n in sorted(supporting))
        o.contradicting.extend(facts[n]["source"] for n in sorted(contradicting))
    return threads


class _Weighed:
    """An entity's facts (their places in its list) split by whether an earlier run weighed them."""

    def __init__(self, facts: list[dict], weighed: frozenset[str]):
        self.places: dict[str, list[int]] = {}  # source weighed → its places
        self.others: list[int] = []
        for n, f in enumerate(facts):
            if f["source"] in weighed:
                self.places.setdefault(f["source"], []).append(n)
            else:
                self.others.append(n)
        self.count = len(facts) - len(self.others)


def _verdicts(o: Opinion, facts: list[dict], done: list, terms):
    """n → the list of `o` that the `n`th of `facts` belongs in (supporting or contradicting), or None."""
    anchor_day = _day(o.anchor_source)
    denies = negated(o.statement)

    def verdict(n: int) -> list[str] | None:
        seen = done[n]
        if seen is None:
            f = facts[n]
            seen = done[n] = ((f.get("timestamp") or "")[:10], terms(f["content"]), negated(f["content"]))
        day, their_terms, their_denial = seen
        if anchor_day and day and day < anchor_day:
            return None
        if overlap(o.terms, their_terms) < EVIDENCE:
            return None
        return o.contradicting if their_denial != denies else o.supporting

    return verdict


def fingerprint(o: Opinion) -> str:
    """What a thread's verdict on a fact depends on, besides the fact: its terms, bullets, anchor and
    negation (a hash)."""
    given = [sorted(o.terms), o.history, o.source, o.anchor_source, negated(o.statement)]
    return hashlib.blake2b(json.dumps(given, ensure_ascii=False).encode(), digest_size=12).hexdigest()


def newest(threads: list[Opinion], k: int | None = None) -> list[Opinion]:
    """The `k` (default: all) most recently written threads, newest first."""
    return sorted(threads, key=lambda o: (o.date or "", o.source), reverse=True)[:k]


def cached_terms(terms):
    """`terms(text)`, computed once per text."""
    cache: dict[str, set[str]] = {}

    def cached(text: str) -> set[str]:
        if text not in cache:
            cache[text] = terms(text)
        return cache[text]

    return cached


def series(o: Opinion, written: dict[str, float | None]) -> list[dict]:
    """How an opinion's confidence moved over time, replayed from the Markdown: each bullet of the
    thread (its own `c=…`, else the value before it; `written` maps source → explicit c), then each
    piece of evidence after the newest anchor, in date order, through `update`. Oldest first."""
    points, c = [], None
    for source in [*o.history, o.source]:
        explicit = written.get(source)
        c = explicit if explicit is not None else (c if c is not None else DEFAULT_ANCHOR)
        points.append({"day": _day(source), "confidence": round(c, 3), "source": source, "why": "written"})
        if source == o.anchor_source:
            break
    evidence = sorted([(_day(s) or "", s, "supporting") for s in o.supporting]
                      + [(_day(s) or "", s, "contradicting") for s in o.contradicting])
    seen: dict[str, set[str]] = {"supporting": set(), "contradicting": set()}
    for day, source, why in evidence:
        seen[why].add(source.split("#")[0])
        c = update(o.anchor, len(seen["supporting"]), len(seen["contradicting"]))
        points.append({"day": day or None, "confidence": round(c, 3), "source": source, "why": why})
    return points


def _day(source: str) -> str | None:
    m = re.match(r"memory/(?:[^/]+/)*(\d{4}-\d{2}-\d{2})\.md", source)
    return m.group(1) if m else None


def trend(before: float | None, after: float) -> str:
    if before is None or abs(after - before) < 0.005:
        return "→"
    return "↑" if after > before else "↓"


def listing(threads: list[Opinion], entity: str | None, k: int) -> dict:
    """What `mem opinions` shows: the `k` newest threads with confidence, trend and evidence."""
    out = []
    for o in newest(threads, k):
        d = o.to_dict()
        d["trend"] = trend(o.anchor, o.confidence)
        out.append(d)
    return {"entity": entity, "count": len(out), "opinions": out}
