"""Each entity page's window: the newest `pages.LISTED` facts it is made from (`listing.entity_facts`),
kept between runs in the local state, one row per entity, and brought up to date from the files
changed since instead of listed afresh.

A window holds, per fact in the index's order (date, path, place in the file), what a page counts
(kind, time, names, source, an opinion's confidence), not its id: ids change with `mem index
--rebuild`, so they are worked out from (path, place) when read (`Store.place_offsets`). It is tied
to the run whose record (`cache`) it belongs to, and it is only brought up to date when that is
sound: none of its facts sits in a changed file (so none left or moved), and no bank page changed
(names and aliases; the record then recomputes every entity anyway). New facts of the changed files
that the entity's match finds join it in the index's order, and it keeps its newest `pages.LISTED`;
facts older than its last one stay out, as they did before. Anything else, or a window missing or
damaged: the entity is listed afresh.
"""

from __future__ import annotations

import json

from memtool.recall import source
from memtool.reflect import listing
from memtool.reflect.sources import Sources
from memtool.store.local import REFLECT_WINDOWS

FORMAT = 2  # bump when what a window holds changes (2: read with the files its run wrote)
# A kept window lists each file (and name) once; files its facts no longer come from stay listed,
# unread, until there are more than this many times as many files as its facts come from: then the
# list is made afresh (done at every change, it cost ~0.1 s of a spread run at 10^5 facts).
STALE_FILES = 2


class Windows:
    """The windows a run read (`usable`: tied to its record) and those it listed or brought up to
    date (`now`: name → (facts, places), see `listing.entity_facts`); of the latter, those kept as
    they were (`same`) and those to keep as `kept` holds them (name → the window as kept, updated),
    so that a window is not encoded afresh when new facts only joined its head."""

    def __init__(self, usable: bool = False):
        self.usable = usable
        self.now: dict[str, tuple[list[dict], dict[int, tuple]]] = {}
        self.same: set[str] = set()
        self.kept: dict[str, dict] = {}


def tag(run: str) -> str:
    return json.dumps({"format": FORMAT, "run": run})


def usable(src: Sources, record: dict | None, changed: set[str] | None) -> bool:
    """Whether the kept windows belong to `record`'s run and may be brought up to date (`changed`:
    the files changed since; None: every entity is recomputed)."""
    return (changed is not None and record is not None and record.get("windows") is not None
            and isinstance(record.get("written"), list) and src.local.meta(REFLECT_WINDOWS) == tag(record["windows"]))


def bring_up_to_date(src: Sources, names: list[str], changed: set[str], k: int, out: Windows,
                     rewritten: set[str] = frozenset()) -> None:
    """Put into `out.now` the up-to-date window of each of `names` whose kept one can be brought up
    to date from the `changed` files (the others are listed afresh by the caller). `rewritten`: the
    files the windows' run wrote after it listed them (its pages' generated blocks): their facts are
    the same but may have moved down or up a line, so their lines are read again."""
    raw: dict[str, dict] = {}
    paths: set[str] = set()
    for name, text in src.local.windows(names).items():
        try:
            found = json.loads(text)
            if not all(isinstance(path, str) for path in found["paths"]):
                continue  # damaged: listed afresh
            paths.update(found["paths"])
            raw[name] = found
        except (ValueError, TypeError, KeyError, AttributeError):  # damaged: listed afresh
            continue
    offsets = src.store.place_offsets(sorted(paths)) if raw else {}
    kept: dict[str, tuple[dict, list]] = {}
    for name, found in raw.items():
        try:
            decoded = _decoded(found, offsets, changed)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):  # damaged: listed afresh
            continue
        if decoded is not None:
            kept[name] = decoded
    if not kept:
        return
    moved = src.store.lines_at(sorted(paths & rewritten))
    new_ids = sorted(src.store.ids_at(sorted(changed)).values())
    matches = {name: src.store.entity_match(name) for name in kept}
    naming = src.store.ids_naming(matches, new_ids)
    added, places = listing.shown(src.store, sorted({i for found in naming.values() for i in found}))
    for name, (where, facts) in kept.items():
        relined = False
        if moved:
            for f in facts:
                _, p, o = where[f["id"]]
                if p in rewritten:
                    line = source(p, *moved[(p, o)])
                    relined |= line != f["source"]
                    f["source"] = line
        m, new = matches[name], []
        for i in naming.get(name, ()):
            if i in added:
                f = added[i]
                new.append(f if not m.plain or m.name in f["entities"] else dict(f, entities=[*f["entities"], m.name]))
                where[i] = places[i]
        if not new and not relined:
            out.same.add(name)
        else:
            new = listing.in_order(new, where)
            if not relined and (not facts or _before(where[new[-1]["id"]], where[facts[0]["id"]])):  # usually: newer facts
                _prepend(raw[name], new, where, k)
                out.kept[name] = raw[name]
                facts = new + facts
            else:
                facts = listing.in_order(facts + new, where)
        facts = facts[:k]
        out.now[name] = (facts, {f["id"]: where[f["id"]] for f in facts})


def _before(a: tuple, b: tuple) -> bool:
    """Whether the fact at place `a` comes before the one at `b` in the index's order (see `listing.in_order`)."""
    if a[0] != b[0]:
        return b[0] is None or (a[0] is not None and a[0] > b[0])
    return a[1:] < b[1:]


def _decoded(found: dict, offsets: dict[str, tuple[int, int]],
             changed: set[str]) -> tuple[dict[int, tuple], list[dict]] | None:
    """A kept window's facts, with the ids they have now (`Store.place_offsets`), and id → place of
    each; None when one of them sits in a `changed` file or is not where the window has it."""
    paths, names = found["paths"], found["names"]
    spans = [None if path in changed else offsets.get(path) for path in paths]
    where, facts = {}, []
    for date, p, o, kind, ts, mentioned, lines, confidence in found["facts"]:
        span = spans[p]
        if span is None or type(o) is not int or not 0 <= o < span[1]:
            return None
        path, i = paths[p], span[0] + o
        where[i] = (date, path, o)
        f = {"id": i, "kind": kind, "timestamp": date if ts is None else ts,
             "entities": [names[n] for n in mentioned], "source": f"{path}#{lines}"}
        if kind == "opinion":
            f["confidence"] = confidence
        facts.append(f)
    return where, facts


def _encoded(facts: list[dict], places: dict[int, tuple]) -> dict:
    """A window as kept: its files and names once, then per fact (date, file, place in it, kind, time
    unless it is the date, names, lines, an opinion's confidence)."""
    found = {"paths": [], "names": [], "facts": []}
    found["facts"] = _rows(found, facts, places)
    return found


def _rows(found: dict, facts: list[dict], places: dict[int, tuple]) -> list[tuple]:
    """The rows of `facts` in the window as kept, `found`, its files and names extended as needed."""
    paths = {p: n for n, p in enumerate(found["paths"])}
    names = {e: n for n, e in enumerate(found["names"])}
    rows = []
    for f in facts:
        date, path, o = places[f["id"]]
        ts = f["timestamp"]
        rows.append((date, paths.setdefault(path, len(paths)), o, f["kind"], None if ts == date else ts,
                     [names.setdefault(e, len(names)) for e in f["entities"]], f["source"].rsplit("#", 1)[1],
                     f.get("confidence")))
    found["paths"], found["names"] = list(paths), list(names)
    return rows


def _prepend(found: dict, facts: list[dict], places: dict[int, tuple], k: int) -> None:
    """Put `facts`, newer than any of the window as kept, `found`, at its head, and keep its newest
    `k`; its lists of files and names are made afresh once they hold too many no fact needs (see
    `STALE_FILES`)."""
    rows = (_rows(found, facts, places) + found["facts"])[:k]
    if len(found["paths"]) > STALE_FILES * len({r[1] for r in rows}):
        paths, names = found["paths"], found["names"]
        unpacked = [(d, paths[p], o, kind, ts, [names[n] for n in ns], lines, c) for d, p, o, kind, ts, ns, lines, c in rows]
        at_path: dict[str, int] = {}
        at_name: dict[str, int] = {}
        rows = [(d, at_path.setdefault(p, len(at_path)), o, kind, ts, [at_name.setdefault(e, len(at_name)) for e in es],
                 lines, c) for d, p, o, kind, ts, es, lines, c in unpacked]
        found["paths"], found["names"] = list(at_path), list(at_name)
    found["facts"] = rows


def save(src: Sources, run: str, windows: Windows, planned: set[str]) -> None:
    """Keep the windows a run listed or brought up to date and, when it read its windows as its
    record's, those of the other `planned` entities (kept: their facts did not change), under the
    run's name."""
    fresh = {name: json.dumps(windows.kept.get(name) or _encoded(facts, places), ensure_ascii=False,
                              separators=(",", ":"))
             for name, (facts, places) in windows.now.items() if name not in windows.same}
    src.local.put_windows(tag(run), fresh, planned - fresh.keys() if windows.usable else set())
