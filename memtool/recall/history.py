"""Folding and history: what `mem reflect` decided about the hits (folds, supersessions, or the
state as of a day) and the stability prior from their use; then duplicates folded into one hit."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date

from memtool.stability import prior
from memtool.recall.results import Hit
from memtool.store.local import LocalStateFile, fact_key

SUPERSEDED_WEIGHT = 0.5  # a fact a newer one replaced still answers, below its successor


def decided(local: LocalStateFile, hits: list[Hit], notice: Callable[[str], None]) -> dict[str, dict]:
    """key → what local state knows of each hit (nothing when it has no file yet, or a damaged one)."""
    known = local.exists()  # asking creates nothing
    try:
        return local.open().lookup([h.key for h in hits]) if known and hits else {}
    except Exception as exc:  # derived hints only: a damaged file must not stop recall
        notice(f".memory/local.sqlite cannot be read ({exc}); answering without folds,"
               " supersessions and stability; move the file aside to start it afresh")
        return {}


def consolidated(hits: list[Hit], local: LocalStateFile, as_of: date | None, reorder: bool,
                 notice: Callable[[str], None]) -> list[Hit]:
    """Apply what `mem reflect` decided: folds, supersessions (or `as_of`), and the stability prior."""
    for h in hits:
        h.key = fact_key(h.path, h.content)
    info = decided(local, hits, notice)
    now = time.time()
    out = []
    for h in hits:
        i = info.get(h.key, {})
        h.folded_into = i.get("folded_into", h.key)
        sup = i.get("superseded")
        if sup and as_of is not None and sup["until"] and sup["until"] <= as_of.isoformat():
            continue  # it had been replaced by then
        if sup and as_of is None:
            h.superseded = sup
            if h.score is not None:
                h.score *= SUPERSEDED_WEIGHT
        if i.get("previously") and as_of is None:
            h.previously = i["previously"]
        use = i.get("usage")
        if use and h.score is not None:
            h.score *= prior(use["stability"], (now - use["last_used"]) / 86400, use["uses"])
        out.append(h)
    if reorder:
        out.sort(key=lambda h: -(h.score or 0.0))
    return out


def fold_duplicates(hits: list[Hit]) -> list[Hit]:
    """Fold hits that share a fold key (same embedded text, or folded by `mem reflect`) into the
    best-ranked one, which lists every source."""
    out: list[Hit] = []
    seen: dict[str, Hit] = {}
    for h in hits:
        keys = h.fold_keys
        first = next((seen[k] for k in keys if k in seen), None)
        if first is None:
            out.append(h)
            first = h
        else:
            if first.sources is None:
                first.sources = [first.source]
            first.sources.append(h.source)
        for k in keys:
            seen.setdefault(k, first)
    return out
