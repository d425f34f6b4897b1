"""The facts an entity page is made from: each entity's newest facts as `mem recall --entity` lists
them (`memtool.recall.listed`), with only what a page shows of each, for many entities in one pass:
a fact that several entities list is read, named and checked for a successor once."""

from __future__ import annotations

import json

from memtool.recall import source
from memtool.store import Filters, Store
from memtool.store.local import fact_key


def entity_facts(store: Store, names: list[str], k: int, supersessions: dict[str, tuple]) -> dict[str, list[dict]]:
    """name → its newest `k` facts (kind, timestamp, entities, content, source; an opinion's
    confidence; `superseded_by` as recall gives it), newest first. `supersessions`: old key → (new
    key, until, old source, new source), as `LocalState.supersessions` gives them."""
    matches = {name: store.entity_match(name) for name in names}
    ids = {name: store.latest_ids(Filters(entities=[m]), k) for name, m in matches.items()}
    rows = store.listing_rows(sorted({i for found in ids.values() for i in found}))
    shown = _shown_all(store, rows, supersessions)
    out = {}
    for name, m in matches.items():
        listing = [shown[i] for i in ids[name] if i in shown]
        if m.plain:  # found by its name in plain words, perhaps: the entity joins each fact's entities
            listing = [dict(f, entities=list(dict.fromkeys([*f["entities"], m.name]))) for f in listing]
        out[name] = listing
    return out


def _shown_all(store: Store, rows: dict[int, dict], supersessions: dict[str, tuple]) -> dict[int, dict]:
    """id → what a page shows of that fact (mentions resolved to their pages)."""
    parsed = {text: json.loads(text or "[]") for text in {r["entities"] for r in rows.values()}}
    canonical = store.canonical_names({m for found in parsed.values() for m in found})
    names = {text: list(dict.fromkeys(canonical.get(m, m) for m in found)) for text, found in parsed.items()}
    replaced = {(s[2] or "").split("#")[0] for s in supersessions.values()}  # a fact's key holds its path
    if any(not s[2] for s in supersessions.values()):
        replaced = None  # a successor recorded without its old source: look every fact up
    return {i: _shown(r, names[r["entities"]], supersessions, replaced) for i, r in rows.items()}


def _shown(row: dict, names: list[str], supersessions: dict[str, tuple], replaced: set[str] | None) -> dict:
    a, b = row["valid_from"], row["valid_to"]  # recall's timestamp: a validity range, else the day
    fact = {"kind": row["kind"], "timestamp": f"{a}/{b}" if a and b and a != b else a or row["date"],
            "entities": list(names), "content": row["content"],
            "source": source(row["path"], row["line_start"], row["line_end"])}
    if row["kind"] == "opinion":
        fact["confidence"] = row["confidence"]
    later = supersessions.get(fact_key(row["path"], row["content"])) if replaced is None or row["path"] in replaced \
        else None
    if later:
        fact["superseded_by"] = {"source": later[3], "since": later[1]}
    return fact
