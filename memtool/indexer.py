"""Bring the index in step with the Markdown: plan what changed (pure), then apply it."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Callable

from memtool.analyzer import index_terms
from memtool.document import decode, parse
from memtool.records import ParsedFile
from memtool.store import Store
from memtool.workspace import FileStat, Workspace

Progress = Callable[[int, int], None]
COMMIT_EVERY = 500  # files per transaction during a long run, so an interrupted run keeps its work


@dataclass
class IndexPlan:
    """Which files to parse, which only to re-check, which to drop."""

    new: list[FileStat] = field(default_factory=list)
    modified: list[FileStat] = field(default_factory=list)  # size or mtime differ: hash decides
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.new or self.modified or self.removed)


@dataclass
class IndexReport:
    files_seen: int = 0
    parsed: int = 0
    removed: int = 0
    touched: int = 0  # stat changed but content identical
    unreadable: int = 0
    facts: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def plan(scanned: list[FileStat], stored: dict[str, tuple[int, int, str]]) -> IndexPlan:
    """Compare a directory scan with the index's file table. Pure."""
    p = IndexPlan()
    seen = set()
    for f in scanned:
        seen.add(f.path)
        old = stored.get(f.path)
        if old is None:
            p.new.append(f)
        elif (old[0], old[1]) != (f.size, f.mtime_ns):
            p.modified.append(f)
        else:
            p.unchanged += 1
    p.removed = sorted(set(stored) - seen)
    return p


def digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def fact_rows(parsed: ParsedFile) -> list[tuple]:
    """The `facts` rows of one parsed file, in store column order."""
    day = parsed.date.isoformat() if parsed.date else None
    rows = []
    for ord_, r in enumerate(parsed.records):
        rows.append((
            parsed.path, ord_, r.kind, day,
            r.valid_from.isoformat() if r.valid_from else day,
            r.valid_to.isoformat() if r.valid_to else day,
            r.line_start, r.line_end, r.content, r.context,
            json.dumps(r.entities, ensure_ascii=False), json.dumps(r.fields, ensure_ascii=False) if r.fields else None,
            r.confidence, index_terms(r.content), index_terms(r.context),
        ))
    return rows


def apply(ws: Workspace, store: Store, p: IndexPlan, max_bytes: int, progress: Progress | None = None) -> IndexReport:
    """Parse and store what the plan names. Each file is replaced in full or not at all."""
    report = IndexReport(files_seen=len(p.new) + len(p.modified) + p.unchanged)
    started = time.perf_counter()
    todo = p.new + p.modified
    stored_hash = store.file_states() if p.modified else {}
    total = len(todo) + len(p.removed)
    done = 0
    tx = store.transaction()
    tx.__enter__()
    try:
        for path in p.removed:
            store.remove_file(path)
            report.removed += 1
            done += 1
        for f in todo:
            try:
                raw = ws.read_bytes(f.path)
            except OSError:
                continue  # vanished between scan and read: the next refresh drops it
            h = digest(raw)
            old = stored_hash.get(f.path)
            if old and old[2] == h:
                store.touch_file(f.path, f.size, f.mtime_ns)
                report.touched += 1
            else:
                text, diags = decode(raw, f.path, max_bytes)
                if text is None:
                    store.put_unreadable(f.path, f.size, f.mtime_ns, h, diags)
                    report.unreadable += 1
                else:
                    parsed = parse(f.path, text)
                    store.put_file(parsed, f.size, f.mtime_ns, h, "ok", fact_rows(parsed))
                    report.parsed += 1
                    report.facts += len(parsed.records)
            done += 1
            if progress:
                progress(done, total)
            if done % COMMIT_EVERY == 0:
                tx.__exit__(None, None, None)
                tx = store.transaction()
                tx.__enter__()
    except BaseException as exc:
        tx.__exit__(type(exc), exc, exc.__traceback__)
        raise
    tx.__exit__(None, None, None)
    report.seconds = round(time.perf_counter() - started, 4)
    return report
