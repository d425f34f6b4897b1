"""How long a fact stays present, pure: the stability update `mem reflect` makes from the access log,
and the ranking prior recall applies. Shared by both, so it belongs to neither.

Stability S (days) grows with spaced use and fades without it, never below a floor; a used fact's
retention is exp(−t/S) (Ebbinghaus). Recall multiplies a score by a prior within [1, 1.15]: use lifts
a fact, lack of use never pushes one down or filters it out.
"""

from __future__ import annotations

import math

STABILITY_DEFAULT = 14.0  # days: the floor; a fact never used stays here
STABILITY_MAX = 365.0
BOOST = 1.2  # per distinct day a fact was recalled since the last run
DECAY = 0.8  # per run for a fact with a history that was not recalled since the last run
PRIOR_WEIGHT = 0.15  # ranking multiplier is 1 + PRIOR_WEIGHT · retention · frequency, so within [1, 1.15]
FREQUENT = 10  # uses at which frequency counts in full


def next_stability(stability: float, recalled_days: int, default: float = STABILITY_DEFAULT) -> float:
    """One run's update: ×1.2 per distinct day recalled since the last run, else ×0.8, within [default, max]."""
    s = stability * (BOOST ** recalled_days if recalled_days else DECAY)
    return min(STABILITY_MAX, max(default, s))


def retention(stability: float, days_since_use: float) -> float:
    """How present a used fact still is: exp(−t/S) (Ebbinghaus; S grows with spaced use)."""
    return math.exp(-max(0.0, days_since_use) / max(stability, 1e-6))


def prior(stability: float | None, days_since_use: float | None, uses: int = 1) -> float:
    """The ranking multiplier, 1 + 0.15 · retention · frequency, so within [1, 1.15]: facts never used
    stay at 1 (never a penalty, never a filter); frequency log(1+uses)/log(11) saturates at 10 uses."""
    if stability is None or days_since_use is None:
        return 1.0
    frequency = min(1.0, math.log1p(max(uses, 0)) / math.log1p(FREQUENT))
    return 1.0 + PRIOR_WEIGHT * retention(stability, days_since_use) * frequency
