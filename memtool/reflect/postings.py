"""Reflect's word postings, kept per file in the machine-local state (`.memory/local.sqlite`): which
facts hold each word, so that dedup and contradictions find the candidates of a run's new facts
without visiting every fact's words (see `rules.candidate_pairs`).

Per file, the state holds the word set of each of its facts and a digest of its fact keys; per word,
how many facts hold it and, while no more than `rules.MAX_POSTING` do (more are never read), which.
A run brings only the files whose facts changed up to date. It is a cache: the same postings are
built from every fact when it is missing or does not add up (and the run says so).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import AbstractSet, Callable, Iterable

from memtool import __version__
from memtool.reflect.rules import MAX_POSTING
from memtool.store.driver import sqlite
from memtool.store.local import REFLECT_POSTINGS, LocalState

META = REFLECT_POSTINGS  # local meta key: format, version and totals of the postings
FORMAT = 1
REBUILT = ("reflect's word postings in .memory/local.sqlite were missing or did not add up; "
           "rebuilt them from every fact (a cache: the result is the same)")


@dataclass
class Postings:
    """What `rules.candidate_pairs` reads: facts per word (`df`) and, for words held by no more than
    MAX_POSTING facts, their keys (repeats kept: one per fact row)."""

    df: Counter = field(default_factory=Counter)
    postings: dict[str, list[str]] = field(default_factory=dict)
    notice: str | None = None


def digest(keys: Iterable[str]) -> str:
    """What a file's postings were made from: its facts' keys, in order."""
    return hashlib.blake2b("\n".join(keys).encode(), digest_size=16).hexdigest()


def load(local: LocalState, facts: list[dict], listed: Callable[[str], Iterable[str]], vocabulary: set[str],
         *, save: bool, ran_before: bool = False, live: AbstractSet[str] | None = None) -> Postings:
    """The postings of `vocabulary` over `facts` (dicts with `path` and `key`; `listed(key)` gives a
    fact's distinct words), after bringing the stored ones up to date (stored only when `save`).
    `ran_before`: an earlier run is known, so postings missing altogether are worth a notice.
    `live`: the keys of `facts`, if the caller has them as a set (or a dict's keys)."""
    by_path: dict[str, list[str]] = {}
    for f in facts:
        by_path.setdefault(f["path"], []).append(f["key"])
    digests = {p: digest(keys) for p, keys in by_path.items()}
    stored, notice = _stored(local, ran_before)
    files, updated, out = _brought_up_to_date(local, facts, listed, vocabulary, by_path, digests, stored)
    live = {f["key"] for f in facts} if live is None else live
    if stored and any(len(keys) != out.df[w] or not all(map(live.__contains__, keys))
                      for w, keys in out.postings.items()):
        stored, notice = {}, REBUILT  # keys that are no fact's: made from every fact again
        files, updated, out = _brought_up_to_date(local, facts, listed, vocabulary, by_path, digests, stored)
    if save and (files or notice):
        with local.transaction():
            if notice or not stored:
                local.reset_postings()
            local.put_postings(files, updated)
            local.set_meta(META, json.dumps({"format": FORMAT, "version": __version__,
                                             "rows": len(facts), "occurrences": local.posted_totals()[1]}))
    out.notice = notice
    return out


def _brought_up_to_date(local: LocalState, facts: list[dict], listed, vocabulary: set[str],
                        by_path: dict[str, list[str]], digests: dict[str, str], stored: dict[str, str]):
    """What changes in the stored postings (files, words) and the postings of `vocabulary` after it."""
    changed = [p for p in digests if stored.get(p) != digests[p]]
    gone = [p for p in stored if p not in digests]
    old = local.file_words(changed + gone) if stored else {}
    new = {p: [(k, " ".join(sorted(listed(k)))) for k in by_path[p]] for p in changed}
    delta, dropped, added = _deltas(old, new)
    current = local.postings(set(delta) | vocabulary) if stored else {}
    updated = _updated(current, delta, dropped, added)
    rescan = {w for w, v in updated.items() if v is not None and v[1] is None and v[0] <= MAX_POSTING}
    if rescan:  # words that fell back to few facts: their keys were not kept, so find them
        found = defaultdict(list)
        for f in facts:
            for w in listed(f["key"]):
                if w in rescan:
                    found[w].append(f["key"])
        updated.update({w: (updated[w][0], " ".join(found[w])) for w in rescan})
    out = Postings()
    for w in vocabulary:
        n, keys = updated[w] if w in updated else current.get(w, (0, None))
        if n:
            out.df[w] = n
            if keys is not None:
                out.postings[w] = keys.split()
    files = {p: (digests[p], new[p]) for p in changed} | {p: None for p in gone}
    return files, updated, out


def _stored(local: LocalState, ran_before: bool) -> tuple[dict[str, str], str | None]:
    """The stored digest of each file when the postings add up; else nothing, and why to say so
    (nothing to say when no run is known to have made postings, or `mem forget` or another memtool
    version left them)."""
    try:
        meta = json.loads(local.meta(META) or "null")
        totals = local.posted_totals()
        if meta is None:
            return {}, REBUILT if ran_before or totals != (0, 0) else None
        if not isinstance(meta, dict) or "format" not in meta:
            return {}, REBUILT
        if meta["format"] != FORMAT or meta.get("version") != __version__:
            return {}, None
        if totals != (meta.get("rows"), meta.get("occurrences")):
            return {}, REBUILT
        return local.posted_files(), None
    except (ValueError, sqlite.DatabaseError):
        return {}, REBUILT


def _deltas(old: dict[str, list[tuple[str, str]]], new: dict[str, list[tuple[str, str]]]):
    """Per word: the change in facts holding it, the keys that left (counted) and those that came."""
    delta: Counter = Counter()
    dropped: dict[str, Counter] = defaultdict(Counter)
    added: dict[str, list[str]] = defaultdict(list)
    for rows in old.values():
        for key, words in rows:
            for w in words.split():
                delta[w] -= 1
                dropped[w][key] += 1
    for rows in new.values():
        for key, words in rows:
            for w in words.split():
                delta[w] += 1
                added[w].append(key)
    return delta, dropped, added


def _updated(current: dict[str, tuple[int, str | None]], delta: Counter, dropped: dict[str, Counter],
             added: dict[str, list[str]]) -> dict[str, tuple[int, str | None] | None]:
    """The new postings row of every word a changed file touched (None: no fact holds it now;
    keys None: too many to keep, or not kept before, see the rescan in `load`)."""
    out: dict[str, tuple[int, str | None] | None] = {}
    for w in delta:
        n0, keys = current.get(w, (0, ""))
        n = n0 + delta[w]
        if n <= 0:
            out[w] = None
        elif n > MAX_POSTING or keys is None:
            out[w] = (n, None)
        else:
            leaving = Counter(dropped.get(w, ()))
            kept = []
            for k in keys.split():
                if leaving[k] > 0:
                    leaving[k] -= 1
                else:
                    kept.append(k)
            out[w] = (n, " ".join(kept + added.get(w, [])))
    return out
