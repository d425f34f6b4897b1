"""Held-out evaluation: leave-one-conversation-out folds, AUC, floors and their tables. Pure.

Every parameter a report sweeps is chosen on the training part of a fold and reported on its
held-out part; the figures printed are the held-out ones, per fold and their mean.
"""

from __future__ import annotations

import math
import statistics
from typing import Callable, Iterable, Sequence

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BUDGETS = ("hitL@10", "hitL@25", "hitL@50")
MAX_LOSS = 0.03  # answerable questions that may lose their evidence from the first 10 lines to a floor
MIN_REJECT = 0.80  # off-topic questions a floor should answer "nothing relevant"


def folds(groups: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(held-out group, training groups) for each group in turn."""
    return [(g, [x for x in groups if x != g]) for g in groups]


def mean_of(rows: list[dict], metric: str) -> float | None:
    vals = [r["score"][metric] for r in rows if r["score"].get(metric) is not None]
    return statistics.mean(vals) if vals else None


def choose(options: dict, train_rows: Callable[[object], list[dict]], metric: str = "hitL@10"):
    """The option whose training rows score best on `metric` (ties: the first given)."""
    return max(options, key=lambda o: (mean_of(train_rows(o), metric) or 0.0, -list(options).index(o)))


def category_figures(rows: list[dict]) -> dict[str, dict[str, float | None]]:
    """hitL@10/25/50 and n for cat1-4 overall and per category (adversarial kept apart)."""
    out = {"cat1-4": [r for r in rows if r["category"] in (1, 2, 3, 4)]}
    for c, name in CATEGORIES.items():
        out[name] = [r for r in rows if r["category"] == c]
    return {name: {"n": len([r for r in sel if r["score"].get("hitL@10") is not None]),
                   **{m: mean_of(sel, m) for m in BUDGETS}} for name, sel in out.items()}


def auc(positives: Iterable[float], negatives: Iterable[float]) -> float | None:
    """P(a random positive scores above a random negative), ties counting half (Mann-Whitney)."""
    pos, neg = sorted(positives), sorted(negatives)
    if not pos or not neg:
        return None
    ranked = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # mean 1-based rank of the tie block
        rank_sum += mid * sum(1 for _, y in ranked[i:j] if y)
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def floor_rates(floor: float, answerable: list[dict], offtopic: list[dict], signal: str) -> dict:
    """What a floor does: share of off-topic queries answered "nothing relevant", share of answerable
    questions that lose evidence found in the first 10 lines, and share of answerable ones refused."""
    lost = [r for r in answerable if r["score"].get("hitL@10") == 1.0 and r[signal] < floor]
    return {"floor": floor,
            "offtopic_refused": sum(r[signal] < floor for r in offtopic) / len(offtopic) if offtopic else None,
            "answerable_lost": len(lost) / len(answerable) if answerable else None,
            "answerable_refused": sum(r[signal] < floor for r in answerable) / len(answerable) if answerable else None}


def choose_floor(answerable: list[dict], offtopic: list[dict], signal: str, max_loss: float = MAX_LOSS) -> float:
    """The highest floor that costs at most `max_loss` of the answerable questions their evidence in
    the first 10 lines (the highest refuses the most off-topic queries: both rates only grow with it)."""
    found = sorted(r[signal] for r in answerable if r["score"].get("hitL@10") == 1.0)
    allowed = math.floor(max_loss * len(answerable))
    if not found:
        return -math.inf
    if allowed >= len(found):
        return math.inf
    return found[allowed]  # `allowed` found questions fall below this value, the next one does not


def highest_floor(grid: Sequence[float], loss: Callable[[float], float], max_loss: float = MAX_LOSS) -> float:
    """The highest floor of `grid` (ascending) whose `loss` is at most `max_loss` (loss grows with the floor)."""
    lo, hi = 0, len(grid) - 1
    if loss(grid[lo]) > max_loss:
        return grid[lo]
    while lo < hi:  # bisection: the last grid index whose loss is allowed
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if loss(grid[mid]) <= max_loss else (lo, mid - 1)
    return grid[lo]


def calibration(model: dict) -> tuple[float, float]:
    """(value at which P = 0.5, scale) of a one-signal logistic model: P = 1 / (1 + exp(-(x - x0) / scale))."""
    (name,), (w,) = model["names"], model["w"]
    mu, sd = model["stats"][name]
    return mu - model["b"] * sd / w, sd / w


def standardise(rows: list[dict], names: Sequence[str]):
    """Means and standard deviations of the named signals over `rows`."""
    stats = {}
    for n in names:
        vals = [r[n] for r in rows]
        sd = statistics.pstdev(vals) or 1.0
        stats[n] = (statistics.mean(vals), sd)
    return stats


def fit_logistic(rows: list[dict], labels: list[int], names: Sequence[str], steps: int = 3000, lr: float = 0.5,
                 l2: float = 1e-3, balanced: bool = False) -> dict:
    """A logistic model P(answerable | signals) by gradient descent on standardised signals;
    `balanced` weighs both classes equally (P is then read at equal base rates)."""
    import numpy as np

    stats = standardise(rows, names)
    x = np.array([[(r[n] - stats[n][0]) / stats[n][1] for n in names] for r in rows])
    y = np.array(labels, dtype=float)
    weight = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum()))) if balanced else np.ones(len(y))
    w, b = np.zeros(len(names)), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        err = weight * (p - y)
        w -= lr * (x.T @ err / len(y) + l2 * w)
        b -= lr * float(np.mean(err))
    return {"names": list(names), "stats": stats, "w": w.tolist(), "b": b}


def predict(model: dict, row: dict) -> float:
    z = model["b"] + sum(w * (row[n] - model["stats"][n][0]) / model["stats"][n][1]
                         for n, w in zip(model["names"], model["w"]))
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


def fmt(v, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
