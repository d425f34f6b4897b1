"""Bring the index in step with the Markdown: plan what changed (pure), then apply it."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from memtool import trust
from memtool.analyzer import index_terms
from memtool.digests import blake2b
from memtool.embedders import BATCH, embed_text
from memtool.errors import WorkspaceError
from memtool.index_plan import STALE_MTIME, IndexPlan, IndexReport, Progress
from memtool.records import Diagnostic, ParsedFile
from memtool.store import Store
from memtool.store.index import Links, fact_links
from memtool.workspace import FileStat, Workspace

COMMIT_EVERY = 500  # files per transaction during a long run, so an interrupted run keeps its work
PARALLEL_MIN_FILES = 64  # below this, worker processes cost more than they save
PARALLEL_WORKERS = 4


def digest(raw: bytes) -> str:
    return blake2b(raw, digest_size=16).hexdigest()


# `json.dumps(x, ensure_ascii=False)`: one encoder, where each such call makes its own (a build asks ~10^5 times)
_json = json.JSONEncoder(ensure_ascii=False).encode


def fact_rows(parsed: ParsedFile) -> list[tuple]:
    """The `facts` rows of one parsed file, in store column order."""
    day = parsed.date.isoformat() if parsed.date else None
    rows = []
    previous = None
    contexts: dict[str, str] = {}  # a file's records share a few contexts: analyse each once
    for ord_, r in enumerate(parsed.records):
        ctx_terms = contexts.get(r.context)
        if ctx_terms is None:
            ctx_terms = contexts[r.context] = index_terms(r.context)
        etext = embed_text(r.content, r.context, previous)
        previous = r.content
        rows.append((
            parsed.path, ord_, r.kind, day,
            r.valid_from.isoformat() if r.valid_from else day,
            r.valid_to.isoformat() if r.valid_to else day,
            r.line_start, r.line_end, r.content, r.context,
            _json(r.entities) if r.entities else "[]", _json(r.fields) if r.fields else None,
            r.confidence, index_terms(r.content), ctx_terms,
            blake2b(etext.encode(), digest_size=12).hexdigest(),
            _json(r.tags) if r.tags else None,
        ))
    return rows


@dataclass
class Loaded:
    """One file read, hashed, decoded and parsed (possibly in a worker process)."""

    stat: FileStat
    digest: str
    parsed: ParsedFile | None = None  # without its records: `rows` and `links` carry what is stored of them
    rows: list[tuple] = field(default_factory=list)
    links: Links | None = None
    diagnostics: list = field(default_factory=list)  # when unreadable
    error: str | None = None  # why the file could not be read at all (permissions, I/O)


def load(root: str, f: FileStat, max_bytes: int, known_digest: str | None = None) -> Loaded | None:
    """Read and parse one file; None if it vanished. Skips parsing when the digest is `known_digest`."""
    from memtool.document import decode, parse  # the parser (~10 ms): only when a file changed

    ws = _workspace(root)
    try:
        raw = ws.read_bytes(f.path)
    except (FileNotFoundError, NotADirectoryError):
        return None  # vanished between scan and read: the next refresh drops it
    except OSError as exc:
        return Loaded(f, "", error=exc.strerror or type(exc).__name__)
    except WorkspaceError as exc:  # became a pipe or device after the scan
        return Loaded(f, "", error=exc.message)
    h = digest(raw)
    if h == known_digest:
        return Loaded(f, h)
    text, diags = decode(raw, f.path, max_bytes)
    if text is None:
        return Loaded(f, h, diagnostics=diags)
    parsed = parse(f.path, text)
    rows, links = fact_rows(parsed), fact_links(parsed.records)
    parsed.records = []  # what crosses the pipe from a worker: rows are far cheaper to unpickle than records
    return Loaded(f, h, parsed, rows, links)


@lru_cache(maxsize=4)
def _workspace(root: str) -> Workspace:
    """The workspace at `root`, its path resolved once per process (not once per file read)."""
    return Workspace(Path(root))


def die_with_parent(parent: int) -> None:
    """Make this worker process end when `parent` does, even by SIGKILL (else a killed `mem` would
    leave workers blocked on their pipe forever): a parent-death signal on Linux, elsewhere a
    thread that watches the parent."""
    import signal
    import sys

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            PR_SET_PDEATHSIG = 1
            armed = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) == 0
        except (OSError, AttributeError):
            armed = False
    if not armed:
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="memtool-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _load_star(args):
    return load(*args)


def _loaded(ws: Workspace, todo: list[FileStat], known: dict, max_bytes: int) -> Iterator[Loaded | None]:
    """Load files in order, in worker processes when there are many and more than one core."""
    jobs = [(str(ws.root), f, max_bytes, known.get(f.path)) for f in todo]
    workers = min(PARALLEL_WORKERS, os.cpu_count() or 1)
    if len(jobs) < PARALLEL_MIN_FILES or workers < 2:
        yield from map(_load_star, jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        yield from pool.map(_load_star, jobs, chunksize=8)


def apply(ws: Workspace, store: Store, p: IndexPlan, max_bytes: int, progress: Progress | None = None) -> IndexReport:
    """Parse and store what the plan names. Each file is replaced in full or not at all."""
    report = IndexReport(files_seen=len(p.new) + len(p.modified) + p.unchanged)
    started = time.perf_counter()
    todo = p.new + p.modified
    known = store.file_digests() if p.modified else {}
    bulk = store.is_empty() and len(todo) >= PARALLEL_MIN_FILES
    total = len(todo) + len(p.removed)
    done = 0
    tx = store.transaction()
    tx.__enter__()
    try:
        store.finish_bulk()  # an earlier bulk run that was interrupted
        if bulk:
            store.begin_bulk()
        for path in p.removed:
            store.remove_file(path)
            report.removed += 1
            done += 1
        for path in p.stale:
            report.unreadable += _unreadable(store, path, 0, "its folder cannot be read")
        for item in _loaded(ws, todo, known, max_bytes):
            done += 1
            if item is None:
                continue
            f = item.stat
            if item.error is not None:
                report.unreadable += _unreadable(store, f.path, f.size, item.error)
            elif item.parsed is None and not item.diagnostics:
                store.touch_file(f.path, f.size, f.mtime_ns, f.ctime_ns)
                report.touched += 1
            elif item.parsed is None:
                store.put_unreadable(f.path, f.size, f.mtime_ns, item.digest, item.diagnostics, f.ctime_ns)
                report.unreadable += 1
            else:
                store.put_file(item.parsed, f.size, f.mtime_ns, f.ctime_ns, item.digest, "ok", item.rows, fts=not bulk,
                               links=item.links)
                report.parsed += 1
                report.facts += len(item.rows)
            if progress:
                progress(done, total)
            if done % COMMIT_EVERY == 0:
                tx.__exit__(None, None, None)
                tx = store.transaction()
                tx.__enter__()
        store.finish_bulk()
    except BaseException as exc:
        tx.__exit__(type(exc), exc, exc.__traceback__)
        raise
    tx.__exit__(None, None, None)
    report.seconds = round(time.perf_counter() - started, 4)
    return report


def _unreadable(store: Store, path: str, size: int, reason: str) -> bool:
    """Record that a file cannot be read now: facts from its last read stay, marked stale, and
    `mem check` names it. False if that was already recorded (nothing new to report)."""
    state = store.file_status(path)
    if state and state[1] == STALE_MTIME:
        return False
    if state and state[0] == "ok":
        message = f"cannot read it ({reason}); the facts from its last read are kept and marked stale"
        store.mark_stale(path, STALE_MTIME, Diagnostic(path, 0, "error", "unreadable", message))
    else:
        message = f"cannot read it ({reason}); not indexed until it can be read"
        store.put_unreadable(path, size, STALE_MTIME, "", [Diagnostic(path, 0, "error", "unreadable", message)])
    return True


@dataclass
class EmbedReport:
    embedded: int = 0
    withheld: int = 0  # not sent: their trust tier may not go to the embedder (see memtool.trust)
    pending: int = 0  # still without a vector (time budget reached)
    dropped: int = 0  # vectors of another model, forgotten
    seconds: float = 0.0


def hash_tiers(sources: list[tuple[str, str, str]], globs: dict) -> dict[str, str]:
    """hash → trust tier of the text: the strictest tier of the files that hold it. Pure;
    `sources` are (hash, path, declared trust) rows."""
    tiers: dict[str, str] = {}
    of_file: dict[tuple[str, str], str] = {}  # many records share a file: its tier is worked out once
    for h, path, declared in sources:
        if (tier := of_file.get((path, declared))) is None:
            tier = of_file[path, declared] = trust.file_tier(path, declared, globs)
        seen = tiers.get(h)
        tiers[h] = tier if seen is None else trust.strictest((seen, tier))
    return tiers


def embed_pending(store: Store, embedder, progress: Progress | None = None,
                  seconds: float | None = None, globs: dict | None = None) -> EmbedReport:
    """Give every record without a vector one, in committed batches (an interrupted run keeps its work).

    With `seconds`, stop after the batch that crosses that budget (what is left stays pending).
    A model with another fingerprint than the stored vectors' replaces them all. Records whose trust
    tier (front matter, `globs`) may not go to the embedder are withheld: never sent, counted, and
    their files stay unmarked so that a later, allowed embedder picks them up.
    """
    report = EmbedReport()
    started = time.perf_counter()
    vectors = store.vectors
    fingerprint = embedder.fingerprint()
    if vectors.fingerprint() != fingerprint:
        with store.transaction():
            report.dropped = vectors.reset(fingerprint, embedder.dim)
    else:
        vectors.ensure_vec_table()
    files = vectors.pending_files()
    sources = vectors.missing_sources()
    tiers = hash_tiers(sources, globs or {})
    withheld = {h for h, tier in tiers.items() if not embedder.destination.allows(tier)}
    holding = {path for h, path, _ in sources if h in withheld}
    todo = [row for row in vectors.missing() if row[0] not in withheld]
    report.withheld = len(withheld)
    total = len(todo)
    deadline = started + seconds if seconds is not None else None
    for i in range(0, total, BATCH):
        if deadline is not None and time.perf_counter() > deadline:
            break
        batch = todo[i:i + BATCH]
        matrix = embedder.embed([embed_text(content, context, previous) for _, content, context, previous in batch],
                                tiers=[tiers.get(h, "legal") for h, *_ in batch])
        with store.transaction():
            vectors.put([h for h, *_ in batch], matrix)
        report.embedded += len(batch)
        if progress:
            progress(report.embedded, total)
    report.pending = total - report.embedded
    files = [f for f in files if f[0] not in holding]
    if not report.pending and files:  # those files need no look next time
        with store.transaction():
            vectors.mark_embedded(files)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
