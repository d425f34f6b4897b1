"""Packing: the best hits, in rank order, that fit a token budget. Pure."""

from __future__ import annotations

from memtool.recall.results import Hit


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters a token), enough to pack a budget."""
    return max(1, (len(text) + 3) // 4)


def cost(hit: Hit) -> int:
    """The tokens `hit` takes in a packed answer: its content, its source, and a little framing."""
    return estimate_tokens(hit.content) + estimate_tokens(hit.source) + 4


def pack(hits: list[Hit], budget: int) -> list[Hit]:
    """The best hits, in rank order, whose content and source fit in `budget` tokens."""
    out, used = [], 0
    for h in hits:
        cost_ = cost(h)
        if used + cost_ > budget:
            continue
        out.append(h)
        used += cost_
    return out
