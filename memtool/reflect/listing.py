"""The facts an entity page is made from: each entity's newest facts as `mem recall --entity` lists
them (`memtool.recall.listed`), with only what a page shows of each, for many entities in one pass:
a fact that several entities list is read, named and checked for a successor once.

An entity listed by an earlier run (`before`: the (id, path, ord) of each fact it listed, newest
first) is brought up to date from the files changed since (`changed`) instead of being listed
afresh: its facts elsewhere stay where they were, and only its facts in those files are looked up.
That holds unless the earlier listing was full and lost facts (the next ones are unknown), or a
kept fact is no longer where it was (the index was rebuilt): then the entity is listed afresh.
"""

from __future__ import annotations

import json

from memtool.recall import source, timestamp
from memtool.store import Filters, Store
from memtool.store.local import fact_key

Listed = list[list]  # [id, path, ord] of each fact an entity lists, newest first


def entity_facts(store: Store, names: list[str], k: int, supersessions: dict[str, tuple],
                 before: dict[str, Listed] | None = None, changed: set[str] | None = None) -> tuple[dict, dict]:
    """(name → its newest `k` facts, name → where they are (`Listed`)). Each fact: kind, timestamp,
    entities, content, source; an opinion's confidence; `superseded_by` as recall gives it.
    `supersessions`: old key → (new key, until, old source, new source) (`LocalState.supersessions`);
    `before` and `changed`: see the module's docstring (None: every entity is listed afresh)."""
    matches = {name: store.entity_match(name) for name in names}
    ids, kept = {}, {}
    for name, m in matches.items():
        kept[name] = _kept(before.get(name), changed, k) if before is not None and changed is not None else None
        if kept[name] is None:
            ids[name] = store.latest_ids(Filters(entities=[m]), k)
        else:
            ids[name] = [i for i, _, _ in kept[name]] + (store.ids_in(Filters(entities=[m]), changed) if changed else [])
    rows = store.listing_rows(sorted({i for found in ids.values() for i in found}))
    for name, m in matches.items():
        if kept[name] is None:
            continue
        if all(i in rows and (rows[i]["path"], rows[i]["ord"]) == (p, o) for i, p, o in kept[name]):
            ids[name] = sorted(ids[name], key=lambda i: (rows[i]["path"], rows[i]["ord"]))  # the index's order:
            ids[name].sort(key=lambda i: (rows[i]["date"] is not None, rows[i]["date"] or ""), reverse=True)
            ids[name] = ids[name][:k]  # date newest first (none last), then path and ord
        else:  # not where it was: list afresh
            ids[name] = store.latest_ids(Filters(entities=[m]), k)
            rows.update(store.listing_rows([i for i in ids[name] if i not in rows]))
    shown = _shown_all(store, rows, supersessions)
    out = {}
    for name, m in matches.items():
        listing = [shown[i] for i in ids[name] if i in shown]
        if m.plain:  # found by its name in plain words, perhaps: the entity joins each fact's entities
            listing = [dict(f, entities=list(dict.fromkeys([*f["entities"], m.name]))) for f in listing]
        out[name] = listing
    return out, {name: [[i, rows[i]["path"], rows[i]["ord"]] for i in ids[name] if i in rows] for name in names}


def _kept(listed: Listed | None, changed: set[str], k: int) -> Listed | None:
    """The facts of an earlier listing outside the `changed` files, if they are all it needs."""
    if listed is None:
        return None
    kept = [x for x in listed if x[1] not in changed]
    return kept if len(kept) == len(listed) or len(listed) < k else None


def moved(listed: dict[str, Listed], written: set[str], ids_at: dict[tuple[str, int], int]) -> dict[str, Listed]:
    """`listed` after the run re-indexed the files it `written` (its own pages: their facts are the
    same, with new ids, `ids_at`); an entity with a fact no longer there is left out."""
    out = {}
    for name, facts in listed.items():
        now = [[ids_at.get((p, o)) if p in written else i, p, o] for i, p, o in facts]
        if all(i is not None for i, _, _ in now):
            out[name] = now
    return out


def _shown_all(store: Store, rows: dict[int, dict], supersessions: dict[str, tuple]) -> dict[int, dict]:
    """id → what a page shows of that fact (mentions resolved to their pages)."""
    parsed: dict[str | None, list[str]] = {}  # many facts mention the same entities
    mentions = {i: parsed[r["entities"]] if r["entities"] in parsed
                else parsed.setdefault(r["entities"], json.loads(r["entities"] or "[]")) for i, r in rows.items()}
    canonical = store.canonical_names({m for found in mentions.values() for m in found})
    return {i: _shown(r, [canonical.get(m, m) for m in mentions[i]], supersessions) for i, r in rows.items()}


def _shown(row: dict, names: list[str], supersessions: dict[str, tuple]) -> dict:
    fact = {"kind": row["kind"], "timestamp": timestamp(row), "entities": list(dict.fromkeys(names)),
            "content": row["content"], "source": source(row["path"], row["line_start"], row["line_end"])}
    if row["kind"] == "opinion":
        fact["confidence"] = row["confidence"]
    later = supersessions.get(fact_key(row["path"], row["content"]))
    if later:
        fact["superseded_by"] = {"source": later[3], "since": later[1]}
    return fact
