"""The facts an entity page is made from: each entity's newest facts as `mem recall --entity` lists
them (`memtool.recall.listed`), with only what a page shows of each, for many entities in one pass:
a fact that several entities list is read, named and checked for a successor once."""

from __future__ import annotations

import json

from memtool.recall import source, timestamp
from memtool.store import Filters, Store
from memtool.store.local import fact_key


def entity_facts(store: Store, names: list[str], k: int, supersessions: dict[str, tuple]) -> dict[str, list[dict]]:
    """name → its newest `k` facts (kind, timestamp, entities, content, source; an opinion's
    confidence; `superseded_by` as recall gives it), newest first. `supersessions`: old key → (new
    key, until, old source, new source), as `LocalState.supersessions` gives them."""
    matches = {name: store.entity_match(name) for name in names}
    ids = {name: store.latest_ids(Filters(entities=[m]), k) for name, m in matches.items()}
    rows = store.listing_rows(sorted({i for found in ids.values() for i in found}))
    parsed: dict[str | None, list[str]] = {}  # many facts mention the same entities
    mentions = {i: parsed[r["entities"]] if r["entities"] in parsed
                else parsed.setdefault(r["entities"], json.loads(r["entities"] or "[]")) for i, r in rows.items()}
    canonical = store.canonical_names({m for found in mentions.values() for m in found})
    shown = {i: _shown(r, [canonical.get(m, m) for m in mentions[i]], supersessions) for i, r in rows.items()}
    out = {}
    for name, m in matches.items():
        listing = [shown[i] for i in ids[name] if i in shown]
        if m.plain:  # found by its name in plain words, perhaps: the entity joins each fact's entities
            listing = [dict(f, entities=list(dict.fromkeys([*f["entities"], m.name]))) for f in listing]
        out[name] = listing
    return out


def _shown(row: dict, names: list[str], supersessions: dict[str, tuple]) -> dict:
    fact = {"kind": row["kind"], "timestamp": timestamp(row), "entities": list(dict.fromkeys(names)),
            "content": row["content"], "source": source(row["path"], row["line_start"], row["line_end"])}
    if row["kind"] == "opinion":
        fact["confidence"] = row["confidence"]
    later = supersessions.get(fact_key(row["path"], row["content"]))
    if later:
        fact["superseded_by"] = {"source": later[3], "since": later[1]}
    return fact
