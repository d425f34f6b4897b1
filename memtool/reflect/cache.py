"""What a reflect run may reuse from the last one, kept in `.memory/local.sqlite` (a cache: deleting
it only makes the next run do the full work; its output is the same either way).

A run's output depends on the index (the Markdown as indexed: facts, pages, front matter,
`bank/decisions.md`, `memory.md`), on reflect's decisions in the local state (folds, supersessions,
review items, the facts examined), on the configuration and on the run's options. A completed run
records, after its own Markdown was written and indexed:

- its `signature`, a hash of all of those. A later run with the same signature has nothing new:
  it replays the recorded plan (every page unchanged, or left alone for the same reason; the same
  opinions and suggestions) instead of scanning every fact, page and opinion. What changes without
  the Markdown (recall usage and stability, embedding counts) is still computed live;
- what each entity's page and opinion threads were made from (the files its page's facts come
  from, the confidences it shows, the evidence of its threads), with each file's hash and the
  entity keys its facts mention. A later run recomputes only the entities a changed file, a new
  supersession or a moved confidence touches. A change to any bank page (aliases, titles, front
  matter, decisions), to reflect's decisions from outside a run, or to the configuration or the
  options, and every entity is recomputed;
- beside it (its own key, read only by a run that does not replay), which facts each entity's
  opinion threads were weighed against and the verdicts, per thread (`opinions.fingerprint`): a
  recomputed entity compares its threads only with facts of changed files and facts it did not
  weigh before.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import date

from memtool import __version__
from memtool.recall import MAX_K
from memtool.reflect import evidence as kept_evidence, opinions, pages, windows as kept_windows
from memtool.reflect.sources import Sources
from memtool.store.local import REFLECT_CACHE, REFLECT_WEIGHED

KEY = REFLECT_CACHE  # local meta key (`mem forget` drops it whole: its JSON escapes would hide a quote)
FORMAT = 2  # bump when what a run plans from the same inputs changes (2: evidence no stricter than normal)
STATIC_ORIENT = ("facts", "kinds", "folders", "trust", "embedded", "not_embedded")  # see consolidation.orient_from


def options(src: Sources, since: str | None, overwrite_edits: bool) -> str:
    """A hash of the configuration and the run's options (`since` is relative to today, so today counts)."""
    given = [FORMAT, __version__, repr(src.config), since, date.today().isoformat() if since else None, overwrite_edits]
    return hashlib.blake2b(json.dumps(given).encode(), digest_size=16).hexdigest()


def signature(opts: str, files: dict[str, list], decisions: str) -> str:
    """A hash of everything a run's plan depends on: `opts`, the indexed files (`Store.file_rows`) and
    reflect's decisions (`LocalState.decisions_signature`)."""
    h = hashlib.blake2b(opts.encode(), digest_size=16)
    for path in sorted(files):
        h.update(json.dumps([path, *files[path]]).encode())
    h.update(decisions.encode())
    return h.hexdigest()


def previous(src: Sources, opts: str) -> dict | None:
    """What the last completed run recorded, if it ran with the same configuration and options."""
    try:
        cached = json.loads(src.local.meta(KEY) or "null")
    except ValueError:
        return None
    return cached if isinstance(cached, dict) and cached.get("format") == FORMAT and cached.get("options") == opts else None


def forget(src: Sources) -> None:
    """Drop the record (a run that may change the inputs drops it before it writes anything)."""
    src.local.set_meta(KEY, "null")


@dataclass
class Changes:
    """What changed since the last completed run (see `since_last`)."""

    paths: set[str] = field(default_factory=set)  # files added, changed or removed; old facts newly superseded
    files: set[str] = field(default_factory=set)  # files added, changed or removed (the entity windows' changes)
    keys: set[str] = field(default_factory=set)  # entity keys their facts mention, before and after
    words: set[str] = field(default_factory=set)  # the words of their facts' analysed terms now
    entities: dict = field(default_factory=dict)  # entity → what its page was made from last time
    evidence: dict = field(default_factory=dict)  # entity → its threads' (supporting, contradicting) last time
    file_keys: dict = field(default_factory=dict)  # path → entity keys mentioned, for the next record
    written: set[str] = field(default_factory=set)  # files the last run wrote after reading them (its pages)

    def named(self, keys: list[str]) -> bool:
        """Whether changed facts mention one of `keys`, or may name it in plain words."""
        return bool(self.keys.intersection(keys)) or any(
            all(w in self.words for w in key.split("-")) for key in keys if key)


def since_last(src: Sources, record: dict | None, files: dict[str, list], decisions: str) -> Changes | None:
    """What changed between `record` and the run that starts with `files` and `decisions` (None:
    recompute every entity)."""
    if record is None or record.get("decisions") != decisions:
        return None
    before = record["files"]
    paths = {p for p in files.keys() | before.keys() if files.get(p) != before.get(p)}
    if any(p.startswith("bank/") for p in paths):
        return None  # aliases, titles, front matter, decisions: they reach every page
    found = src.store.file_mentions(paths)
    changes = Changes(paths=paths, files=set(paths), entities=record["entities"], evidence=record["evidence"],
                      file_keys={p: k for p, k in record["file_keys"].items() if p not in paths},
                      written=set(record.get("written") or ()))
    for p in paths:
        changes.keys.update(record["file_keys"].get(p, ()))
        keys, words = found.get(p, (set(), set()))
        changes.keys |= keys
        changes.words |= words
        if keys:
            changes.file_keys[p] = sorted(keys)
    return changes


def superseded_paths(before: dict[str, tuple], after: dict[str, tuple]) -> set[str]:
    """Files of facts whose supersession a run added, changed or dropped (their pages mark it)."""
    return {(row[2] or "").split("#")[0] for old in before.keys() | after.keys()
            if before.get(old) != after.get(old) for row in (before.get(old) or after.get(old),)}


def replayable(record: dict | None, sig: str) -> bool:
    return record is not None and record.get("signature") == sig


def weighed(src: Sources, record: dict | None, changes: Changes | None) -> opinions.Known:
    """The evidence verdicts `record`'s run reached (see `opinions.weigh`'s `known`), for facts of
    the files unchanged since: entity → (sources, fingerprint → (supporting, contradicting)). Empty
    without a record, after a change that recomputes every entity, or when they are not that run's
    (each names the run that saved it; a replay that re-saves its record keeps the name)."""
    out = opinions.Known()
    if record is None or changes is None:
        return out
    try:
        found = json.loads(src.local.meta(REFLECT_WEIGHED) or "null")
        if not isinstance(found, dict) or found.get("run") is None or found.get("run") != record.get("weighed"):
            return out
        for entity, (sources, threads) in found["entities"].items():
            kept = frozenset(s for s in sources if s.split("#")[0] not in changes.paths)
            out.entities[entity] = (kept, {fp: (set(sup), set(con)) for fp, (sup, con) in threads.items()})
    except (ValueError, TypeError, AttributeError, KeyError):  # damaged: weighed afresh (a cache)
        return opinions.Known()
    return out


def save(src: Sources, opts: str, files: dict[str, list], written: list[str], plan: pages.Plan, report: dict,
         opinions: dict, entities: dict, evidence: dict, changes: Changes | None, weighed: dict | None = None,
         windows: kept_windows.Windows | None = None, evidence_windows: kept_evidence.Windows | None = None) -> None:
    """Record what a run that started with the indexed `files` and wrote `written` plans: the files as
    the run saw them (a file changed meanwhile stays changed for the next run), its own pages as
    written (they are up to date now); `weighed`: entity → [sources, {fingerprint: [supporting,
    contradicting]}] of its opinion evidence; `windows`: the entity windows it read and made (see
    `memtool.reflect.windows`), kept under its name, like `evidence_windows` (`memtool.reflect.evidence`)."""
    files = _as_written(src, files, written)
    if changes is None:
        file_keys = {p: sorted(k) for p, (k, _) in src.store.file_mentions(files).items() if k}
    else:
        file_keys = changes.file_keys  # the run's own writes are bank pages: any change there recomputes all
    decisions = src.local.decisions_signature()
    sig = signature(opts, files, decisions)
    src.local.set_meta(REFLECT_WEIGHED, json.dumps({"run": sig, "entities": weighed or {}},
                                                   ensure_ascii=False, separators=(",", ":")))
    if evidence_windows is not None:
        kept_evidence.save(src, sig, evidence_windows, written, MAX_K)
    # windows carried from the last run keep the lines they had before the files it wrote: still to read again
    carried = changes.written if changes is not None and windows is not None and windows.usable else set()
    if windows is not None:  # a page never modified (trust: legal) records no files: its window is not carried
        kept_windows.save(src, sig, windows, {name for name, rec in entities.items() if rec["paths"]})
    done = lambda action: "unchanged" if action in ("create", "update") else action  # noqa: E731
    src.local.set_meta(KEY, json.dumps({
        "format": FORMAT, "options": opts, "signature": sig, "weighed": sig,
        "windows": sig if windows is not None else None,
        "decisions": decisions, "files": files, "file_keys": file_keys, "written": sorted(set(written) | carried),
        "pages": [[p.entity, p.path, done(p.action), p.reason] for p in plan.pages],
        "facts": plan.facts, "held_back": plan.held_back, "suggestions": plan.suggestions,
        "orient": _orient(src, report["orient"], written), "skipped_legal": report["skipped_legal"],
        "opinions": opinions, "evidence": evidence,
        "entities": {name: {k: v for k, v in rec.items() if k not in ("text", "was")} | {"action": done(rec["action"])}
                     for name, rec in entities.items()},
    }, ensure_ascii=False, separators=(",", ":")))


def resave(src: Sources, record: dict, files: dict[str, list], written: list[str]) -> None:
    """Keep a replayed record valid after its run wrote `written` (a journal entry)."""
    files = _as_written(src, files, written)
    decisions = src.local.decisions_signature()
    record.update(files=files, decisions=decisions, signature=signature(record["options"], files, decisions),
                  written=sorted(set(record.get("written") or ()) | set(written)),
                  orient=_orient(src, record["orient"], written))
    src.local.set_meta(KEY, json.dumps(record, ensure_ascii=False, separators=(",", ":")))


def _orient(src: Sources, orient: dict, written: list[str]) -> dict:
    """The orient figures to record: the embedding counts as they are after the run's own writes."""
    out = {k: orient[k] for k in STATIC_ORIENT if k in orient}
    if written:  # the journal's new lines have no vector yet
        out.update(embedded=src.store.vectors.count(), not_embedded=src.store.vectors.count_missing())
    return out


def _as_written(src: Sources, files: dict[str, list], written: list[str]) -> dict[str, list]:
    """The files as a run saw them when it started, with the ones it wrote as they are now."""
    now = src.store.file_rows()
    files = dict(files)
    for p in written:
        if p in now:
            files[p] = now[p]
        else:
            files.pop(p, None)
    return files


def plan_from(record: dict) -> pages.Plan:
    """The recorded plan (its consolidation part is filled in by the caller)."""
    return pages.Plan(pages=[pages.PagePlan(entity, path, action, reason=reason)
                             for entity, path, action, reason in record["pages"]],
                      facts=record["facts"], held_back=record["held_back"], suggestions=record["suggestions"])
