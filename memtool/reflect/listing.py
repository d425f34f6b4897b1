"""The facts an entity page is made from: each entity's newest facts as `mem recall --entity` lists
them (`memtool.recall.listed`), with only what a page shows of each, for many entities in one pass:
a fact that several entities list is read and named once.

A page counts all of them (kinds, days, related entities, the files they come from) but prints only
its newest few in full: a listing leaves out each fact's text and successor, and `complete` adds
them to the facts a page prints (`pages.printed`)."""

from __future__ import annotations

import json

from memtool.recall import source
from memtool.store import Filters, Store
from memtool.store.index import FactOrder
from memtool.store.local import fact_key

AT_ONCE = 8  # from this many entities on, their facts are found in one ordering pass (see `Store.latest_ids_each`)


def entity_facts(store: Store, names: list[str], k: int, order: FactOrder | None = None,
                 places: dict[int, tuple] | None = None) -> dict[str, list[dict]]:
    """name → its newest `k` facts (id, kind, timestamp, entities, source; an opinion's confidence),
    newest first, without their text (see `complete`). `order`: `Store.fact_order()`, read once
    for many calls (from `AT_ONCE` names on, it is read if not given); `places` receives each
    listed fact's place in the index's order, (date, path, place in its file), by id."""
    matches = {name: store.entity_match(name) for name in names}
    if order is None and len(names) < AT_ONCE:
        ids = {name: store.latest_ids(Filters(entities=[m]), k) for name, m in matches.items()}
    else:
        ids = store.latest_ids_each(matches, k, store.fact_order() if order is None else order)
    shown, at = _shown_all(store, store.listing_rows(sorted({i for found in ids.values() for i in found})))
    if places is not None:
        places.update(at)
    out = {}
    for name, m in matches.items():
        listing = [shown[i] for i in ids[name] if i in shown]
        if m.plain:  # found by its name in plain words, perhaps: the entity joins each fact's entities
            listing = [f if m.name in f["entities"] else dict(f, entities=[*f["entities"], m.name]) for f in listing]
        out[name] = listing
    return out


def shown(store: Store, ids: list[int]) -> tuple[dict[int, dict], dict[int, tuple]]:
    """id → what a page shows of each of `ids` (as `entity_facts` lists it, before an entity found by
    plain name joins it), and id → its place in the index's order."""
    return _shown_all(store, store.listing_rows(ids))


def in_order(facts: list[dict], places: dict[int, tuple]) -> list[dict]:
    """`facts` in the index's order (`Store.latest`: date, newest first, facts without one last; then
    path and place in the file), `places` holding each one's (date, path, place) by id."""
    facts = sorted(facts, key=lambda f: places[f["id"]][1:])
    return sorted(facts, key=lambda f: (places[f["id"]][0] is not None, places[f["id"]][0] or ""), reverse=True)


def complete(store: Store, facts: list[dict], supersessions: dict[str, tuple]) -> None:
    """Add each fact's text (`content`) and, as recall gives it, `superseded_by`, in place.
    `supersessions`: old key → (new key, until, old source, new source), as
    `LocalState.supersessions` gives them."""
    todo = [f for f in facts if "content" not in f]
    if not todo:
        return
    texts = store.fact_contents(sorted({f["id"] for f in todo}))
    for f in todo:
        f["content"] = texts.get(f["id"], "")
        later = supersessions.get(fact_key(f["source"].rsplit("#", 1)[0], f["content"]))
        if later:
            f["superseded_by"] = {"source": later[3], "since": later[1]}


def _shown_all(store: Store, rows: list[tuple]) -> tuple[dict[int, dict], dict[int, tuple]]:
    """id → what a page shows of that fact (mentions resolved to their pages), but its text, and id
    → (date, path, place in its file), from `Store.listing_rows`."""
    parsed = {text: json.loads(text or "[]") for text in {r[8] for r in rows}}
    canonical = store.canonical_names({m for found in parsed.values() for m in found})
    names = {text: list(dict.fromkeys(canonical.get(m, m) for m in found)) for text, found in parsed.items()}
    return {row[0]: _shown(row, names[row[8]]) for row in rows}, {row[0]: (row[3], row[1], row[10]) for row in rows}


def _shown(row: tuple, names: list[str]) -> dict:
    i, path, kind, date, a, b, start, end, _, confidence, _ord = row
    # recall's timestamp: a validity range (a, b), else the day
    fact = {"id": i, "kind": kind, "timestamp": f"{a}/{b}" if a and b and a != b else a or date,
            "entities": list(names), "source": source(path, start, end)}
    if kind == "opinion":
        fact["confidence"] = confidence
    return fact
