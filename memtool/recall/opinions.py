"""Opinion hits as `mem opinions` sees them: the confidence moved by later evidence (not the `c`
written in the bullet), its trend, and the evidence cited (memtool.reflect.opinions)."""

from __future__ import annotations

from collections.abc import Callable

from memtool.recall.results import Hit
from memtool.store import Store


def thread_view(o) -> dict:
    """What a hit shows of its opinion thread: the numbers of `mem opinions --json`."""
    from memtool.reflect.opinions import trend

    d = o.to_dict()
    return {"confidence": d["confidence"], "anchor": d["anchor"], "anchor_source": d["anchor_source"],
            "trend": trend(o.anchor, o.confidence), "supporting": d["supporting"], "contradicting": d["contradicting"],
            "latest": d["source"]}


def with_opinions(hits: list[Hit], store: Store, notice: Callable[[str], None],
                  tiers: Callable[[], Callable[[str], str]] | None = None) -> None:
    """Give each opinion hit its thread's current confidence, trend and evidence (`Hit.opinion`),
    weighed on evidence no stricter than normal (`tiers()`: the path → tier lookup, made only when
    a hit is an opinion; without it, the index's record of each file's declared tier).

    Threads are read per entity the hits are filed under (a thread belongs to the first entity its
    bullets mention, so one entity's threads are whole), all of them for opinions about none."""
    wanted = [h for h in hits if h.kind == "opinion"]
    if not wanted:
        return
    from memtool.reflect.runner import opinion_threads  # reflect reads recall's helpers: import when used

    names = {h.mentions[0] if h.mentions else None for h in wanted}
    scopes = [None] if None in names else sorted(names)
    sources = {h.source for h in wanted}

    def hit(threads: list) -> list:  # evidence is read only for the threads of the hits
        return [o for o in threads if o.source in sources or sources.intersection(o.history)]

    try:
        tier_of = tiers() if tiers is not None else _declared(store)
        threads = [o for name in scopes
                   for o in opinion_threads(store, name, refresh=_ready, pick=hit, filed=True, tier_of=tier_of)]
    except Exception as exc:  # a hint on top of recall: never fail a recall over it
        notice(f"could not weigh the evidence for opinions ({exc}); showing their written c")
        return
    by_source = {}
    for o in threads:
        for src in (o.source, *o.history):
            by_source.setdefault(src, o)
    for h in wanted:
        o = by_source.get(h.source)
        if o is not None:
            h.opinion = thread_view(o)


def _ready() -> None:
    """Recall has brought the index up to date already."""


def _declared(store: Store) -> Callable[[str], str]:
    """path → the tier the index recorded for it (its front matter; legal for a file it does not know)."""
    recorded = {path: state[-1] for path, state in store.indexed_trust().items()}
    return lambda path: recorded.get(path, "legal")
