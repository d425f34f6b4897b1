"""Each opinion entity's evidence window: the newest `MAX_K` facts that mention it by key, in the
index's order (date, path, place in the file), of which opinion threads weigh all but opinions and
bank pages (`Store.evidence_rows`). Kept between runs in the local state, one row per entity, and
brought up to date from the files changed since instead of read afresh from the index.

A window holds, per fact, its date, file, place and, if it is weighed, its lines; not its text nor
its id (ids change with `mem index --rebuild`). It is tied to the run whose evidence verdicts
(`cache.weighed`) it belongs to and to the entity's keys. Brought up to date: the facts of changed
files leave it, the changed files' facts that mention one of the keys join it in the index's order,
and it keeps its newest `MAX_K`; when it was full, facts older than its last one stay unknown, so a
window left with fewer than `MAX_K` facts known to come before them is read afresh. A window read
this way has no text: the run takes verdicts on its facts from the last run and compares only the
facts that joined it (read with their text), so an entity is read afresh whenever one of its threads
has no verdicts kept or one of its facts was not weighed then. Missing, damaged or another run's:
read afresh.
"""

from __future__ import annotations

import json

from memtool.recall import source
from memtool.recall.results import time_of
from memtool.reflect.sources import Sources
from memtool.store.local import REFLECT_EVIDENCE

FORMAT = 1  # bump when what a window holds changes


class Windows:
    """The evidence windows of a run: `usable` (tied to the verdicts it read), `now` (entity → (keys,
    complete, facts) of those read afresh or brought up to date; facts are (date, path, place, source
    if weighed else None) in the index's order; `complete`: the window holds every fact of the entity),
    and of those the ones that stayed as kept (`same`)."""

    def __init__(self, src: Sources, changed: set[str] | None = None):
        self.src, self.changed, self.usable = src, changed, changed is not None
        self.now: dict[str, tuple[list[str], bool, list[tuple]]] = {}
        self.same: set[str] = set()
        self.entities: set[str] | None = None  # those with an opinion thread in the run (None: not known)

    def weighable(self, keys: dict[str, list[str]], held: dict[str, frozenset[str]], k: int) -> dict[str, list[tuple]]:
        """name → the facts of the window of each of `keys`' entities whose kept window can be brought
        up to date from the changed files (see `brought_up_to_date`), also put in `now`. A weighed fact
        whose source `held` does not hold for the entity (no verdict on it is taken) carries its
        evidence row, read from the index by place; so does each fact that joined."""
        if not self.usable or not keys:
            return {}
        found = read(self.src, list(keys))
        joined = joining(self.src, self.changed) if found and self.changed else {}
        up, bare = {}, {}
        for name, kept in found.items():
            window = brought_up_to_date(kept, keys[name], self.changed, joined, k)
            if window is not None:
                up[name] = window
                if window[1] is kept[2]:
                    self.same.add(name)
                among = held[name]
                bare[name] = [n for n, f in enumerate(window[1]) if len(f) == 4 and f[3] and f[3] not in among]
        paths = {up[name][1][n][1] for name, places in bare.items() for n in places}
        rows = {(fact[1], fact[2]): fact for _, fact in joining(self.src, paths).values()} if paths else {}
        out = {}
        for name, (complete, facts) in up.items():
            if bare[name]:
                facts = list(facts)
                for n in bare[name]:
                    facts[n] = rows.get((facts[n][1], facts[n][2]))
                if None in facts:
                    continue
            out[name] = facts
            self.now[name] = (keys[name], complete, facts)
        return out


def tag(run: str) -> str:
    return json.dumps({"format": FORMAT, "run": run})


def usable(src: Sources, record: dict | None, changed: set[str] | None) -> bool:
    """Whether the kept windows belong to `record`'s verdicts and may be brought up to date
    (`changed`: the files changed since; None: every entity is recomputed)."""
    return (changed is not None and record is not None and record.get("weighed") is not None
            and src.local.meta(REFLECT_EVIDENCE) == tag(record["weighed"]))


def window(rows: list[tuple], k: int) -> tuple[bool, list[tuple]]:
    """(complete, facts) of a window read from the index (rows of `Store.evidence_rows`)."""
    return len(rows) < k, [(date, path, place, source(path, start, end) if weighed else None)
                           for _, path, start, end, date, _, _, _, _, place, weighed in rows]


def joining(src: Sources, paths: set[str]) -> dict[int, tuple[set[str], tuple]]:
    """fact id → (its keys, (date, path, place, source if weighed, evidence row)) of every fact of
    `paths` that mentions an entity; the evidence row is (content, terms, timestamp)."""
    out: dict[int, tuple[set[str], tuple]] = {}
    for fact_id, key, path, place, date, start, end, a, b, content, terms, weighed in src.store.evidence_of(paths):
        if fact_id not in out:
            out[fact_id] = (set(), (date, path, place, source(path, start, end) if weighed else None,
                                    (content, terms, time_of(a, b, date))))
        out[fact_id][0].add(key)
    return out


def brought_up_to_date(found: tuple[list[str], bool, list[tuple]], keys: list[str], changed: set[str],
                       joined: dict[int, tuple[set[str], tuple]], k: int) -> tuple[bool, list[tuple]] | None:
    """A kept window (keys, complete, facts) after the `changed` files, whose facts that mention an
    entity are `joined` (see `joining`); None when it is not these `keys`' or cannot be known without
    reading the index. Facts that joined carry their evidence row as a fifth item."""
    kept_keys, complete, facts = found
    if sorted(kept_keys) != sorted(keys):
        return None
    wanted = set(keys)
    new = [fact for named, fact in joined.values() if not named.isdisjoint(wanted)]
    stay = [f for f in facts if f[1] not in changed]
    if len(stay) == len(facts) and not new:
        return complete, facts
    if len(new) == len(facts) - len(stay) and {f[:4] for f in new} == {f[:4] for f in facts if f[1] in changed}:
        return complete, facts  # the same facts where they were (a page its run wrote)
    boundary = None if complete or not facts else (*facts[-1][:3], None)
    merged = _in_order(stay + new + ([boundary] if boundary else []))
    if boundary is not None:
        merged = merged[:next(n for n, f in enumerate(merged) if f is boundary)]
        if len(merged) < k:
            return None  # older facts than the window's last may belong in it now
        return False, merged[:k]
    return len(merged) < k, merged[:k]


def _in_order(facts: list[tuple]) -> list[tuple]:
    """`facts` in the index's order: date (newest first, none last), then path and place (stable:
    equal places keep their order)."""
    facts = sorted(facts, key=lambda f: (f[1], f[2]))
    return sorted(facts, key=lambda f: f[0] or "", reverse=True)


def evidence(name: str, facts: list[tuple]) -> list[dict]:
    """What `opinions.weigh` reads of a window's weighed facts: a fact that carries its evidence row
    with its text and time, the others by source alone (their verdicts are taken, never compared)."""
    out = []
    for f in facts:
        if f[3] is None:
            continue
        if len(f) > 4:
            content, _, timestamp = f[4]
            out.append({"content": content, "timestamp": timestamp, "entity": name, "source": f[3]})
        else:
            out.append({"content": None, "timestamp": None, "entity": name, "source": f[3]})
    return out


def read(src: Sources, names: list[str]) -> dict[str, tuple[list[str], bool, list[tuple]]]:
    """entity → its kept window (keys, complete, facts), for those of `names` with a readable one."""
    out = {}
    for name, (keys, text) in src.local.evidence_windows(names).items():
        try:
            found = json.loads(text)
            paths = found["paths"]
            out[name] = ([str(key) for key in json.loads(keys)], bool(found["complete"]),
                         [(d, paths[p], o, None if lines is None else f"{paths[p]}#{lines}")
                          for d, p, o, lines in found["facts"]])
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):  # damaged: read afresh
            continue
    return out


def save(src: Sources, run: str, windows: Windows, written: list[str], k: int) -> None:
    """Keep the windows of a run that wrote `written` (and re-indexed them) under its name: those it
    read or brought up to date and, when it read its windows as its verdicts', the others kept (their
    facts did not change) of entities that still have an opinion thread; each brought up to date with
    what the run wrote (its pages: a created page's facts are new)."""
    joined = joining(src, set(written)) if written else {}
    named = {key for keys, _ in joined.values() for key in keys}
    kept = {}
    if windows.usable:
        for name, keys in src.local.evidence_keys().items():
            if windows.entities is not None and name not in windows.entities:
                continue  # no opinion thread any more: a run from scratch keeps no window for it
            try:
                kept[name] = set(json.loads(keys))
            except (ValueError, TypeError):
                continue
    now = dict(windows.now)
    touched = read(src, [name for name, keys in kept.items() if name not in now and not named.isdisjoint(keys)])
    fresh, same = {}, set()
    for name, (keys, complete, facts) in (now | touched).items():
        before = facts
        if not named.isdisjoint(keys):
            up = brought_up_to_date((keys, complete, facts), keys, set(written), joined, k)
            if up is None:
                continue
            complete, facts = up
        if facts is before and (name in touched or name in windows.same):
            same.add(name)
        else:
            fresh[name] = (json.dumps(keys, ensure_ascii=False), _encoded(complete, facts))
    src.local.put_evidence_windows(tag(run), fresh, same | {name for name, keys in kept.items()
                                                              if name not in now and named.isdisjoint(keys)})


def _encoded(complete: bool, facts: list[tuple]) -> str:
    paths: dict[str, int] = {}
    rows = [(d, paths.setdefault(p, len(paths)), o, None if s is None else s[len(p) + 1:]) for d, p, o, s, *_ in facts]
    return json.dumps({"complete": complete, "paths": list(paths), "facts": rows}, ensure_ascii=False,
                      separators=(",", ":"))
