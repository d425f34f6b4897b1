"""Consolidation's ledger: what a run reads of every fact but its text (key, kind, day, entities,
place, embedding hash), kept per file in the machine-local state (`.memory/local.sqlite`), so that a
run reads from the index only the facts of files that changed and the texts it compares.

A file's entry holds while the index has the file with the same content hash and its facts at the
same ids (first, last, how many), and the index was analysed by the same memtool. A fact's text
(`content`, `terms`) is read when first asked for, and checked against its key: a text that does not
match says the ledger is stale (`Stale`), and the caller reads every fact afresh. A cache: missing,
damaged or another version's, it is made again from every fact.
"""

from __future__ import annotations

import json
from operator import itemgetter
from typing import Callable

from memtool import __version__, trust
from memtool.store import Store
from memtool.store.driver import sqlite
from memtool.store.local import REFLECT_LEDGER, LocalState, fact_key

META = REFLECT_LEDGER  # local meta key: the format and versions the ledger was made by
FORMAT = 1
JOURNAL = "bank/journal.md"  # never consolidated (as `Store.consolidation_rows`)
REBUILT = ("reflect's fact ledger in .memory/local.sqlite did not match the index; "
           "read every fact afresh (a cache: the result is the same)")
_TEXTS = ("content", "terms")


class Stale(Exception):
    """A fact's text is not the one its ledger key was made from."""


def source(path: str, line: int, end: int | None) -> str:
    return f"{path}#L{line}" + (f"-L{end}" if end and end != line else "")


def facts(store: Store, local: LocalState, globs: dict[str, list[str]], *, save: bool) -> list[dict]:
    """Every fact consolidation considers, in the index's order, as `consolidation.load_facts` gives
    them; the facts of files whose ledger entry holds come without their text until asked for."""
    spans = store.fact_spans(JOURNAL)
    declared_of = store.file_trust()
    hashes = store.file_hashes()
    meta = json.dumps({"format": FORMAT, "version": __version__, "analyzer": store.meta("analyzer_version")})
    stored = _stored(local, meta)
    stamps = {p: f"{hashes.get(p)}:{a}:{b}:{n}" for p, (a, b, n) in spans.items() if p in declared_of}
    texts = _texts(store)
    fact_class = type("Fact", (_Fact,), {"read": staticmethod(texts)})
    tiers = {p: trust.file_tier(p, declared_of[p], globs) for p in stamps}
    parsed: dict[str | None, list[str]] = {}
    files: list[tuple[int, list[dict]]] = []  # (first id, facts) per file
    reread = []
    for path, stamp in stamps.items():
        entry = stored.get(path)
        made = _kept(fact_class, path, tiers[path], entry[1], spans[path][2], parsed) \
            if entry is not None and entry[0] == stamp else None
        if made is None:
            reread.append(path)
        else:
            files.append((spans[path][0], made))
    fresh: dict[str, list] = {}
    made_of: dict[str, list[dict]] = {}
    for fid, path, line, end, kind, day, entities, content, ehash, analysed in store.consolidation_rows_of(reread):
        day = (day or "")[:10] or None
        key = fact_key(path, content)
        fresh.setdefault(path, []).append([fid, key, kind, day, entities, line, end, ehash])
        names = parsed.get(entities)
        if names is None:
            names = parsed[entities] = json.loads(entities or "[]")
        made_of.setdefault(path, []).append(fact_class(
            {"key": key, "path": path, "source": source(path, line, end), "kind": kind, "day": day, "entities": names,
             "content": content, "ehash": ehash, "trust": tiers[path], "terms": analysed, "_id": fid}))
    files += [(spans[p][0], made) for p, made in made_of.items()]
    files.sort(key=itemgetter(0))
    out = [f for _, made in files for f in made]
    if any(a["_id"] >= b["_id"] for a, b in zip(out, out[1:])):  # files whose ids interleave
        out.sort(key=itemgetter("_id"))
    gone = [p for p in stored if p not in stamps]
    if save and (fresh or gone):
        with local.transaction():
            if not stored:
                local.reset_ledger()
            local.put_ledger({p: (stamps[p], json.dumps(rows, ensure_ascii=False)) for p, rows in fresh.items()}
                             | {p: None for p in gone})
            local.set_meta(REFLECT_LEDGER, meta)
    return out


def read_texts(facts: list[dict]) -> None:
    """Read the texts of `facts` that lack them, in one query (see `_Fact`)."""
    lazy = [f for f in facts if isinstance(f, _Fact) and "content" not in f]
    if lazy:
        lazy[0].read(lazy)


class _Fact(dict):
    """A fact of the ledger: `source` is made and the text (`content`, `terms`) read when first asked
    for. Each ledger's subclass carries its reader (`read`)."""

    read: Callable[[list[dict]], None]

    def __missing__(self, name: str):
        if name == "source":
            value = self["source"] = source(self["path"], self["_line"], self["_end"])
            return value
        if name in _TEXTS:
            self.read([self])
            return dict.__getitem__(self, name)
        raise KeyError(name)

    def get(self, name: str, default=None):
        return self[name] if name in self or name in _TEXTS or name == "source" else default


def _texts(store: Store) -> Callable[[list[dict]], None]:
    def read(facts: list[dict]) -> None:
        texts = store.fact_texts_by_id([f["_id"] for f in facts])
        for f in facts:
            content, analysed = texts.get(f["_id"], (None, None))
            if content is None or fact_key(f["path"], content) != f["key"]:
                raise Stale(f"{f['path']}: fact {f['_id']} is not the one the ledger holds")
            f["content"], f["terms"] = content, analysed
    return read


def _kept(fact_class: type, path: str, tier: str, text: str, n: int, parsed: dict) -> list[dict] | None:
    """The facts of one file from its ledger rows (None: damaged, or not its `n` facts)."""
    try:
        rows = json.loads(text)
        if len(rows) != n:
            return None
        out = []
        for fid, key, kind, day, entities, line, end, ehash in rows:
            names = parsed.get(entities)
            if names is None:
                names = parsed[entities] = json.loads(entities or "[]")
            out.append(fact_class(key=key, path=path, kind=kind, day=day, entities=names, ehash=ehash, trust=tier,
                                  _id=fid, _line=line, _end=end))  # keywords: no dict made first and copied
        return out
    except (ValueError, TypeError):
        return None


def _stored(local: LocalState, meta: str) -> dict[str, tuple[str, str]]:
    """path → (stamp, rows) of the stored ledger, if it was made by this format, version and analyser."""
    try:
        if local.meta(REFLECT_LEDGER) != meta:
            return {}
        return local.ledger()
    except sqlite.DatabaseError:
        return {}
