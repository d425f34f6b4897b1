"""The facade: every operation the CLI and the MCP server offer, one method each."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from memtool import indexer, trust
from memtool.analyzer import ANALYZER_VERSION
from memtool.config import MODES, Config
from memtool.errors import IndexUnavailable, MemError, ProviderUnavailable, UsageError, WorkspaceError
from memtool.recall import MAX_K, build_query, fold_duplicates, fuse, pack, rerank, to_result
from memtool.records import PARSER_VERSION, Diagnostic
from memtool.store import DRIVER, SCHEMA_VERSION, Filters, Store
from memtool.workspace import Workspace, discover

CANDIDATES = 100  # lexical and semantic candidates each, before fusion
TEXT_VERSION = f"{ANALYZER_VERSION}.{PARSER_VERSION}"  # a change to either rebuilds the index
SETTLE_BY_STAT_MAX = 5000  # files: a stat of each (~9 µs) is cheaper than waiting for a marker event (~50 ms)
BECAUSE_MAX, BECAUSE_LINES = 5, 20  # causal links followed per answer, lines quoted per link
GET_MAX_CHARS = 100_000  # characters one `get` returns at most (a 20 MB line would flood a terminal or a context)
CORE_EDIT_ATTEMPTS = 20  # an edit of memory.md re-read and re-applied when an editor saved it meanwhile
SUPERSEDED_WEIGHT = 0.5  # a fact a newer one replaced still answers, below its successor


@dataclass
class RecallResult:
    query: str
    mode: str
    results: list[dict]
    terms: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: str | None = None  # why the requested mode could not run in full

    def to_dict(self) -> dict:
        out = {"query": self.query, "mode": self.mode, "count": len(self.results), "results": self.results,
               "warnings": self.warnings}
        if self.degraded:
            out["degraded"] = self.degraded
        return out


class Memory:
    """One workspace and its index."""

    def __init__(self, workspace: Workspace, config: Config | None = None, embedder: str | None = None):
        self.ws = workspace
        self.config = (config or Config.load(workspace.config_path)).with_env()
        self.embedder_name = (embedder or self.config.embedder).strip().lower()
        self._embedder = None
        self._embedder_problem: str | None = None
        self._store: Store | None = None
        self.last_refresh: indexer.IndexReport | None = None
        self.notices: list[str] = list(self.config.warnings)  # things to tell the user (e.g. a recovered index)
        self._states: tuple[int, dict] | None = None  # (data_version, file states) seen last
        self._local = None
        self._feed = None  # a ChangeFeed while following file events (see `follow`)
        self._rebuilding = False  # `index(rebuild=True)` may set aside an index of a newer memtool
        self.unlisted: list = []  # ScanProblems of the last full scan: what it left out, and why
        self.track_access = self.config.track_access  # recalls feed stability (off for benchmarks)

    @classmethod
    def open(cls, workspace: str | os.PathLike | None = None, embedder: str | None = None) -> "Memory":
        """The workspace named by `-w`, `MEM_WORKSPACE` or the current directory's ancestry."""
        return cls(discover(workspace), embedder=embedder)

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = Store.open(self.ws.index_path)
            except IndexUnavailable as exc:
                if not (exc.corrupt or (exc.newer and self._rebuilding)):
                    raise
                # The index is derived: keep the old file (for inspection, or the newer memtool) and start anew.
                aside = _aside_name(self.ws.index_path, "corrupt" if exc.corrupt else "newer")
                self.ws.index_path.rename(aside)
                for suffix in ("-wal", "-shm"):
                    Path(str(self.ws.index_path) + suffix).unlink(missing_ok=True)
                self.notices.append(f"{exc.message}; moved it to {aside.name} and rebuilt the index from the Markdown")
                self._store = Store.open(self.ws.index_path)
        return self._store

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self.ws.written = None
            self._feed = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._local is not None:
            self._local.close()
            self._local = None

    @property
    def embedder(self):
        """The configured embedder, or None for `none` (a UsageError for an unknown name)."""
        if self._embedder is None and self.embedder_name != "none":
            from memtool import embedders

            self._embedder = embedders.get(self.embedder_name, self.config.embed_model,
                                           work_providers=self.config.work_providers)
        return self._embedder

    # --- index -----------------------------------------------------------------------------

    def index(self, rebuild: bool = False, progress: indexer.Progress | None = None,
              embed_progress: indexer.Progress | None = None) -> indexer.IndexReport:
        """Bring the index up to date (only changed files are read, only new text is embedded).

        `rebuild` re-reads every file; vectors are kept, since they are keyed by the text they embed.
        An index written by a newer memtool is set aside then (kept beside it) instead of refused.
        """
        self._rebuilding = rebuild
        report = self._index_text(rebuild, progress)
        if self.embedder is not None:
            try:
                emb = indexer.embed_pending(self.store, self.embedder, embed_progress, globs=self.config.trust_globs)
            except ProviderUnavailable as exc:
                report.degraded = f"{exc.message} ({exc.hint})"
                report.notices.append(f"no vectors made: {report.degraded}")
            else:
                report.embedded, report.embed_seconds = emb.embedded, emb.seconds
                if not self.store.vectors.accelerated:
                    report.notices.append(f"vector search uses the {self.store.vectors.search_path()}")
                if emb.dropped:
                    report.notices.append(f"the embedding model changed: dropped {emb.dropped} old vectors and re-embedded")
                if emb.withheld:
                    report.notices.append(f"{emb.withheld} record(s) withheld from the embedder at "
                                          f"{self.embedder.destination.url} by their trust tier; recall finds them by words")
            with self.store.transaction():
                self.store.vectors.gc(None if rebuild else self.store.take_dropped_hashes())
        return report

    def _index_text(self, rebuild: bool, progress: indexer.Progress | None,
                    paths: set[str] | None = None) -> indexer.IndexReport:
        """Re-index what changed: among all files, or only among `paths` (from file events)."""
        with self.ws.lock("index"):
            notices = []
            built_with = self.store.meta("analyzer_version")
            if not rebuild and built_with != TEXT_VERSION:
                rebuild = True
                if built_with is not None or self.store.file_states():  # a new index is simply built
                    notices.append("the parser or text analyzer changed since this index was built; rebuilt it")
            if rebuild:
                paths = None
                with self.store.transaction():
                    self.store.clear()
                    self.store.set_meta("analyzer_version", TEXT_VERSION)
            p = self._plan(paths, self.store.file_states())
            report = indexer.apply(self.ws, self.store, p, self.config.max_file_bytes, progress)
            if rebuild or not p.empty:
                self.store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            self._states = None
        report.rebuilt = rebuild
        report.notices = notices
        return report

    def _plan(self, paths: set[str] | None, stored: dict) -> indexer.IndexPlan:
        problems: list = []
        if paths is None:
            scanned = self.ws.scan(problems)
            self.unlisted = problems
        else:
            scanned = self.ws.stat_paths(paths, problems)
            stored = {p: stored[p] for p in paths if p in stored}
        return indexer.plan(scanned, stored, [p.path for p in problems if p.code == "unreadable"])

    def refresh(self, progress: indexer.Progress | None = None, embed: bool = False,
                embed_progress: indexer.Progress | None = None) -> indexer.IndexReport:
        """What every read does first: a stat check and re-indexing of changed files.

        The stat check covers every file, or, while following file events (`follow`), only the
        files named by events since the last read. With `embed` (semantic reads), new records also
        get vectors, within the configured time budget.
        """
        paths = self._changed_paths()
        try:
            report = None
            if self.store.meta("analyzer_version") == TEXT_VERSION:
                p = self._plan(paths, self._file_states())
                if p.empty and self.store.meta("fts_pending") is None:
                    report = indexer.IndexReport(files_seen=p.unchanged)
            if report is None:
                self._states = None
                report = self._index_text(False, progress, paths)
        except BaseException:
            if self._feed is not None:  # not done: check them (or everything) again next time
                for rel in paths or ():
                    self._feed.note(rel)
                if paths is None:
                    self._feed.request_full()
            raise
        self.last_refresh = report
        if embed and self._vectors_usable() is None and self.store.vectors.count_missing():
            try:
                indexer.embed_pending(self.store, self.embedder, embed_progress, globs=self.config.trust_globs,
                                      seconds=self.config.embed_on_read_seconds)
            except ProviderUnavailable:
                pass  # recall reports it as degraded
        return report

    def follow(self) -> str | None:
        """Follow file events from now on (long-running processes): reads then stat only the files
        events name, plus every file once a minute. Returns None, or why events cannot be used (reads
        then keep checking every file)."""
        if self._feed is None:
            from memtool.changes import ChangeFeed

            self._feed = ChangeFeed(self.ws.root)
            self.ws.written = self._feed.note
        return self._feed.problem

    def _notice(self, message: str) -> None:
        if message not in self.notices:  # a long-running process says each thing once
            self.notices.append(message)

    def settle(self) -> None:
        """Make the next read see every save made before this call, even while following file events
        (which arrive a few milliseconds after a save): stat every file, or for a large workspace,
        where that costs more, wait for the events to arrive (~50 ms)."""
        if self._feed is None:
            return
        if len(self._file_states()) > SETTLE_BY_STAT_MAX and self._feed.barrier():
            return
        self._feed.request_full()

    def _changed_paths(self) -> set[str] | None:
        """Files to stat-check on this read: those named by file events, or None for all of them."""
        if self._feed is None:
            return None
        paths = self._feed.take()
        if paths is None and self._feed.problem:
            self._notice(f"{self._feed.problem}; every read checks every file again")
        return paths

    def watch(self, interval: float = 2.0, on_change=None, rounds: int | None = None, on_round=None,
              lock=None) -> None:
        """Keep the index current, re-indexing and embedding what changed: as file events arrive
        (after `follow`), else with a stat check every `interval` seconds.

        `on_change(report)` is called after each round that changed something, `on_round()` after
        every round; `rounds` bounds the loop (None: until interrupted). `lock` (e.g. shared with a
        `ReadServer`) is held during each round.
        """
        from contextlib import nullcontext

        done = 0
        while rounds is None or done < rounds:
            try:
                with lock or nullcontext():
                    report = self.refresh(embed=True)
            except (MemError, OSError) as exc:  # e.g. the index lock held elsewhere: say so, try again
                message = exc.message if isinstance(exc, MemError) else str(exc)
                self._notice(f"this round failed ({message}); trying again")
                report = indexer.IndexReport()
            if on_change and (report.parsed or report.removed or report.unreadable or report.touched):
                on_change(report)
            if on_round:
                on_round()
            done += 1
            if rounds is None or done < rounds:
                if self._feed is not None and self._feed.active:
                    self._feed.wait(interval)
                else:
                    time.sleep(interval)

    def _file_states(self) -> dict:
        """The index's file table, re-read only when some connection has written to it since."""
        version = self.store.data_version()
        if self._states is None or self._states[0] != version:
            self._states = (version, self.store.file_states())
        return self._states[1]

    def _vectors_usable(self) -> str | None:
        """None when semantic search can run; otherwise the reason it cannot."""
        if self.embedder is None:
            return "the embedder is 'none'"
        if self._embedder_problem:
            return self._embedder_problem
        stored = self.store.vectors.fingerprint()
        try:
            current = self.embedder.fingerprint()
        except ProviderUnavailable as exc:
            self._embedder_problem = f"{exc.message}; {exc.hint}"
            return self._embedder_problem
        if stored is not None and stored != current:
            return (f"the vectors in the index were made as {stored}, the embedder now makes {current};"
                    " run 'mem index' to re-embed")
        return None

    # --- recall ----------------------------------------------------------------------------

    def recall(self, query: str, *, k: int = 10, since: str | None = None, until: str | None = None,
               as_of: str | None = None, kinds: list[str] | tuple = (), entities: list[str] | tuple = (),
               budget: int | None = None, mode: str | None = None, today: date | None = None,
               fields: list[str] | tuple = (), tags: list[str] | tuple = (),
               progress: indexer.Progress | None = None,
               embed_progress: indexer.Progress | None = None) -> RecallResult:
        """Ranked, cited facts for `query`: lexical (BM25) and semantic (vectors) fused, then filtered.

        `as_of` answers as of a date: only facts written by then, and none that a fact written by
        then had superseded (see `mem reflect`)."""
        if mode is None and self.embedder_name == "none":
            mode = "lexical"  # the embedder was switched off on purpose: nothing is degraded
        mode = (mode or self.config.recall_mode).lower()
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", f"use one of: {', '.join(MODES)}")
        as_of_day = None
        if as_of:
            from memtool.dates import parse_until

            as_of_day = parse_until(as_of, today or date.today(), option="--as-of")
            if until is None or parse_until(until, today or date.today()) > as_of_day:
                until = as_of_day.isoformat()
        q = build_query(query, k=k, since=since, until=until, kinds=kinds, entities=entities, budget=budget,
                        fields=fields, tags=tags, today=today or date.today())
        self.refresh(progress, embed=bool(q.terms) and mode != "lexical", embed_progress=embed_progress)
        filters = Filters(kinds=q.kinds, since=q.since, until=q.until,
                          entities=[self.store.entity_match(e) for e in q.entities], fields=q.fields,
                          tags=q.tags)
        warnings = self.notices + list(q.notices) + self._health_warnings()
        degraded = None
        if not q.terms:
            rows, used = self.store.latest(filters, q.k), "filter"
        else:
            scores, used, degraded = self._candidates(query, q.terms, filters, mode, max(CANDIDATES, q.k), warnings)
            rows = self._ranked_rows(scores, filters, query, q.k * 3)
        rows = self._consolidated(rows, as_of_day, reorder=bool(q.terms))
        canonical = self.store.canonical_names({m for r in rows for m in _mentions(r)})
        about = [m.name for m in filters.entities if m.plain]
        results = fold_duplicates([to_result(r, canonical, about) | {"_fold": r["_fold"]} for r in rows])[: q.k]
        if q.budget:
            results = pack(results, q.budget)
        if self.track_access:
            self._record_access([r.pop("_key") for r in results])
        stale = set(self.store.paths_with_status("stale"))
        for r in results:
            r.pop("_key", None)
            if r["source"].split("#")[0] in stale:
                r["stale"] = True
        warnings.extend(n for n in self.notices if n not in warnings)
        return RecallResult(query=query, mode=used, results=results, terms=q.terms, warnings=warnings,
                            degraded=degraded)

    @property
    def local(self):
        """Machine-local state (access log, stability, consolidation decisions), opened on first use."""
        if self._local is None:
            from memtool.store.local import LocalState

            self._local = LocalState(self.ws.state_dir / "local.sqlite")
        return self._local

    def _consolidated(self, rows: list[dict], as_of: date | None, reorder: bool) -> list[dict]:
        """Apply what `mem reflect` decided: folds, supersessions (or `as_of`), and the stability prior."""
        from memtool import stability
        from memtool.store.local import fact_key

        keys = [fact_key(r["path"], r["content"]) for r in rows]
        known = (self.ws.state_dir / "local.sqlite").exists()
        try:
            info = self.local.lookup(keys) if known and rows else {}
        except Exception as exc:  # derived hints only: a damaged file must not stop recall
            self._notice(f".memory/local.sqlite cannot be read ({exc}); answering without folds,"
                         " supersessions and stability; move the file aside to start it afresh")
            info = {}
        now = time.time()
        out = []
        for row, key in zip(rows, keys):
            i = info.get(key, {})
            row = dict(row, _key=key, _fold=(row["ehash"], i.get("folded_into", key)))
            sup = i.get("superseded")
            if sup and as_of is not None and sup["until"] and sup["until"] <= as_of.isoformat():
                continue  # it had been replaced by then
            if sup and as_of is None:
                row["_superseded"] = sup
                if row.get("score") is not None:
                    row["score"] *= SUPERSEDED_WEIGHT
            if i.get("previously") and as_of is None:
                row["_previously"] = i["previously"]
            use = i.get("usage")
            if use and row.get("score") is not None:
                row["score"] *= stability.prior(use["stability"], (now - use["last_used"]) / 86400, use["uses"])
            out.append(row)
        if reorder:
            out.sort(key=lambda r: -(r.get("score") or 0.0))
        return out

    def _record_access(self, keys: list[str]) -> None:
        try:
            self.local.record_access(keys)
        except Exception as exc:  # the access log is a ranking hint: never fail a recall over it
            self._notice(f"could not record this recall for stability ({exc})")

    def list_facts(self, kinds=(), entities=(), since: str | None = None, k: int = MAX_K) -> list[dict]:
        """Facts matching filters only, newest first, as recall results (no refresh: callers refresh first)."""
        from memtool.dates import parse_since

        filters = Filters(kinds=list(kinds), since=parse_since(since, date.today()) if since else None,
                          entities=[self.store.entity_match(e) for e in entities])
        rows = self._consolidated(self.store.latest(filters, k), None, reorder=False)
        canonical = self.store.canonical_names({m for r in rows for m in _mentions(r)})
        about = [m.name for m in filters.entities if m.plain]
        return [to_result({**r, "_key": None}, canonical, about) for r in rows]

    def _candidates(self, query: str, terms: list[str], filters: Filters, mode: str, n: int,
                    warnings: list[str]) -> tuple[dict[int, float], str, str | None]:
        """Fused candidate scores, the mode that actually ran, and why it is degraded (if it is)."""
        semantic, degraded = [], None
        if mode != "lexical":
            degraded = self._vectors_usable()
            if degraded is None:
                semantic = self._semantic_candidates(query, filters, n)
                missing, _withheld = self._vector_gaps()  # withheld: by trust tier, found by words (see status)
                if missing:
                    warnings.append(f"{missing} records have no vector yet and are found only by words; run 'mem index'")
            else:
                warnings.append(f"semantic search unavailable, answering by words only: {degraded}")
        lexical = []
        if mode != "semantic" or degraded:
            from memtool.analyzer import fts_match

            lexical = [(r["id"], r["score"]) for r in self.store.search(fts_match(terms), filters, n, full=False)]
        used = "lexical" if degraded or mode == "lexical" else mode
        return fuse(lexical, semantic if used != "lexical" else []), used, degraded

    def _ranked_rows(self, scores: dict[int, float], filters: Filters, query: str, n: int) -> list[dict]:
        """The best `n` full rows after the dialogue priors, each with its final score.

        Ranking reads only kind and text of the candidates; full rows are read for the best `n`."""
        from memtool.document import speaker_of

        heads = self.store.fact_heads(list(scores))
        turns = [fid for fid, row in heads.items() if speaker_of(row["content"])]
        neighbours = self.store.neighbours(turns)  # only dialogue turns pass score to neighbours
        heads.update(self.store.fact_heads(sorted({x for xs in neighbours.values() for x in xs} - heads.keys())))
        if filters.active:  # neighbours pulled in by the dialogue prior must pass the filters too
            allowed = self.store.filter_ids(list(heads), filters)
            heads = {i: r for i, r in heads.items() if i in allowed}
        naming = self.store.facts_naming(query, list(heads))
        ranked = [(fid, s) for fid, s in rerank(scores, heads, neighbours, query, naming) if fid in heads][:n]
        rows = {row["id"]: row for row in self.store.facts_by_id([fid for fid, _ in ranked])}
        return [dict(rows[fid], score=score) for fid, score in ranked if fid in rows]

    def _semantic_candidates(self, query: str, filters: Filters, n: int) -> list[tuple[int, float]]:
        """(fact id, cosine) of the facts nearest to the query, filters applied."""
        qvec = self.embedder.embed([query], tiers=["normal"], query=True)[0]  # the caller's own words
        hits = self.store.vectors.nearest(qvec, n * 4 if filters.active else n)
        return self.store.ids_for_hashes(hits, filters)[:n]

    def _vector_gaps(self) -> tuple[int, int]:
        """(records waiting for a vector, records withheld from the embedder by their trust tier)."""
        vectors = self.store.vectors
        missing = vectors.count_missing()
        if not missing or self.embedder is None:
            return missing, 0
        tiers = indexer.hash_tiers(vectors.missing_sources(), self.config.trust_globs)
        withheld = sum(1 for tier in tiers.values() if not self.embedder.destination.allows(tier))
        return missing - withheld, withheld

    def _health_warnings(self) -> list[str]:
        from memtool import retain_log

        out = []
        bad = len(self.store.paths_with_status("unreadable"))
        if bad:
            out.append(f"{bad} file(s) could not be indexed and are not searched; run 'mem check' for details")
        stale = len(self.store.paths_with_status("stale"))
        if stale:
            out.append(f"{stale} file(s) cannot be read now; their facts from the last read are kept and marked"
                       " stale; run 'mem check' for details")
        gone = retain_log.vanished(self.ws)
        if gone:
            out.append(f"{len(gone)} line(s) written by mem retain are gone from {', '.join(sorted({e.path for e in gone}))}"
                       " (saved over by an editor?); 'mem check --restore' puts them back, 'mem check --ack' accepts the deletion")
        for p in self._unreadable_paths():
            out.append(f"cannot read {p.path} ({p.reason}); facts from an earlier read are kept, marked stale;"
                       " run 'mem check'")
        return out

    def _unreadable_paths(self) -> list:
        return sorted(p for p in self.unlisted if p.code == "unreadable")

    def _unlisted_diagnostics(self) -> list[Diagnostic]:
        out = []
        for p in sorted(self.unlisted):
            if p.code == "unreadable":
                out.append(Diagnostic(p.path, 0, "error", "unreadable", f"cannot read it ({p.reason}); not indexed,"
                                      " facts from an earlier read are kept and marked stale"))
            else:
                out.append(Diagnostic(p.path, 0, "warning", p.code, p.reason))
        return out

    # --- retain ----------------------------------------------------------------------------

    def retain(self, bullet: str, day: date | None = None) -> dict:
        """Append a line to a day's log (today by default): a typed Retain bullet, or a plain `log`
        line when it has no type letter. Only appends, so no line moves; returns where it landed."""
        from memtool import control_chars, retain_log
        from memtool.retain import BulletError, parse_line

        text = bullet.strip()
        if text.startswith(("- ", "* ")):
            text = text[2:].strip()
        if not text:
            raise UsageError("the bullet is empty", 'e.g. mem retain "W @Peter: Moved to Lisbon in May."')
        if "\n" in text or "\r" in text:
            raise UsageError("a Retain bullet is one line", "join the lines, or write longer notes into the daily log")
        control_chars.refuse(text, "the bullet")
        try:
            parsed = parse_line(text)
        except BulletError as exc:
            raise UsageError(f"not a valid Retain bullet: {exc}",
                             'format: "W|B|O|S[(c=0..1)] [@Entity…]: text", e.g. "O(c=0.8) @Peter: Prefers short replies."'
                             ' (a line without a type letter is kept as a plain log line)') from None
        retain_log.check_item(text, parsed.kind)
        day = day or date.today()
        rel = self.ws.daily_path(day)
        line = retain_log.write(self.ws, rel, text, parsed.kind, day.isoformat())
        return {"path": rel, "line": line, "source": f"{rel}#L{line}", "kind": parsed.kind,
                "entities": parsed.entities, "confidence": parsed.confidence, "content": parsed.text}

    def retained_gone(self, fresh: bool = False) -> list[dict]:
        """Lines `mem retain` wrote that are no longer in their files (see `memtool.retain_log`)."""
        from memtool import retain_log

        return [e.to_dict() for e in retain_log.vanished(self.ws, fresh=fresh)]

    def restore_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Put vanished retained lines back at the end of their files (all, or those `refs` name)."""
        from memtool import retain_log

        return retain_log.restore(self.ws, list(refs))

    def acknowledge_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Accept vanished retained lines as deleted on purpose; they are not reported again."""
        from memtool import retain_log

        return retain_log.acknowledge(self.ws, list(refs))

    # --- reading ---------------------------------------------------------------------------

    def get(self, ref: str, max_lines: int = 200, follow: bool = True) -> dict:
        """Numbered lines of a workspace file: `path`, `path#L3` or `path#L3-L9` (confined to the workspace).

        With `follow`, `because` holds what the lines' `[because:: path#L…]` fields point to."""
        import re

        from memtool.document import split_lines

        m = re.fullmatch(r"(.+?)(?:#L(\d+)(?:-L?(\d+))?)?", ref.strip())
        if not m:
            raise UsageError(f"cannot read {ref!r}", "use path, path#L12 or path#L12-L20")
        rel = m.group(1)
        path = self.ws.resolve(rel)
        if not path.is_file():
            raise UsageError(f"{rel} is not a file in the workspace", "paths are relative to the workspace, e.g. memory.md")
        if max_lines < 1:
            raise UsageError("max_lines must be at least 1")
        lines = split_lines(self.ws.read_text(self.ws.relative(path)))
        start = int(m.group(2) or 1)
        end = int(m.group(3) or (m.group(2) or len(lines)))
        if start < 1 or end < start or start > max(1, len(lines)):
            raise UsageError(f"lines {start}-{end} are outside {rel} (1-{len(lines)})")
        end = min(end, len(lines))
        shown = min(end, start + max_lines - 1)
        out, cut, budget = [], None, GET_MAX_CHARS
        for n in range(start, shown + 1):
            text = lines[n - 1]
            if len(text) > budget:  # bound the characters too: one huge line must not flood the reader
                cut = {"line": n, "shown_chars": budget, "total_chars": len(text)}
                out.append({"n": n, "text": text[:budget] + f" … [cut: {len(text) - budget:,} more characters]"})
                shown = n
                break
            budget -= len(text)
            out.append({"n": n, "text": text})
        data = {"path": self.ws.relative(path), "start": start, "end": shown, "total_lines": len(lines),
                "truncated": shown < end or cut is not None, "lines": out, "text": "\n".join(line["text"] for line in out)}
        if cut:
            data["cut"] = cut
        if follow:
            data["because"] = self._because(data["text"])
        return data

    def _because(self, text: str) -> list[dict]:
        """The sources that `[because:: path#L…]` fields in `text` point to, read (a few, briefly),
        or why one cannot be read."""
        from memtool.retain import inline_field_values

        out = []
        for ref in inline_field_values(text, "because")[:BECAUSE_MAX]:
            try:
                span = self.get(ref, max_lines=BECAUSE_LINES, follow=False)
            except (UsageError, WorkspaceError) as exc:
                out.append({"ref": ref, "error": exc.message})
            else:
                out.append({"ref": ref, "path": span["path"], "start": span["start"], "end": span["end"],
                            "text": span["text"]})
        return out

    def about(self, entity: str, k: int = 20) -> dict:
        """An entity's page (if any), aliases and the facts that mention it, newest first."""
        name = entity.lstrip("@").strip()
        if not name:
            raise UsageError("the entity name is empty", "e.g. mem about Peter")
        result = self.recall("", entities=[name], k=k)
        page = self.store.entity_page(name)
        out = {"entity": page["entity"] if page else name, "aliases": [], "page": None, "facts": result.results,
               "warnings": result.warnings}
        if page:
            from memtool import frontmatter
            from memtool.document import split_lines

            text = self.ws.read_text(page["path"])
            meta, _, _ = frontmatter.split(split_lines(text), page["path"])
            aliases = meta.get("aliases", [])
            out["aliases"] = [aliases] if isinstance(aliases, str) else list(aliases)
            out["page"] = {"path": page["path"], "text": text}
        return out

    def entity_names(self) -> list[str]:
        """Every entity the index knows (page names, else their most common spelling), A to Z."""
        return sorted((name for name, _ in self.store.entity_counts(1)), key=str.casefold)

    def opinions(self, entity: str | None = None, k: int = 50) -> dict:
        """Opinions with confidence (moved by evidence since the last explicit c=…), trend and evidence."""
        from memtool.reflect import opinions

        return opinions.listing(self.opinion_threads(entity), entity, k)

    def opinion_threads(self, entity: str | None = None):
        """Every opinion thread (see `memtool.reflect.opinions`), optionally only those about one entity."""
        from memtool import reflect

        return reflect.opinion_threads(self.store, entity, refresh=self.refresh)

    def episodes(self, query: str, k: int = 30, since: str | None = None, until: str | None = None) -> dict:
        """Recall hits grouped by day, bucketed by kind, with each day's relevant sections quoted."""
        from memtool import episodes
        from memtool.document import split_lines

        result = self.recall(query, k=k, since=since, until=until)
        groups = episodes.group(result.results)
        for g in groups:
            lines = split_lines(self.ws.read_text(g["path"]))
            g["sections"] = episodes.sections(lines, [h.pop("_lines") for h in g["hits"]])
            g["buckets"] = dict(g["buckets"])
            for hit in g["hits"]:
                if "because" in (hit.get("fields") or {}):
                    hit["because"] = self._because(hit["content"])
        return {"query": query, "mode": result.mode, "timeline": episodes.timeline(groups), "days": groups,
                "warnings": result.warnings, **({"degraded": result.degraded} if result.degraded else {})}

    def summarize(self, target: str, lang: str = "auto", model: str | None = None) -> dict:
        """A 3-5 sentence recap of a day or of a query's episodes by a local model (Ollama)."""
        from memtool import summary
        from memtool.analyzer import detect_language
        from memtool.dates import parse_day
        from memtool.llm import OllamaChat

        if lang not in ("auto", "de", "en"):
            raise UsageError(f"unknown language {lang!r}", "use de, en or auto")
        llm = OllamaChat(model or self.config.llm_model, timeout=self.config.llm_timeout,
                         work_providers=self.config.work_providers)
        try:
            day = parse_day(target, date.today())
        except UsageError:
            day = None
        if day is not None:
            rel = self.ws.daily_path(day)
            if not (self.ws.root / rel).is_file():
                raise UsageError(f"there is no daily log for {day.isoformat()}", f"expected {rel}")
            sources, subject = [(rel, day.isoformat(), self.ws.read_text(rel))], f"the day {day.isoformat()}"
        else:
            found = self.episodes(target, k=20)
            sources = [(g["path"], g["date"] or g["path"], "\n".join(l["text"] for s in g["sections"] for l in s["lines"]))
                       for g in found["days"]]
            subject = f"what the notes say about: {target}"
        tier_of = self.tier_lookup()
        tiers = [trust.text_tier(tier_of(path), text, tier_of) for path, _, text in sources]
        withheld = [label for (_, label, _), tier in zip(sources, tiers) if not llm.destination.allows(tier)]
        kept = [(label, text, tier) for (_, label, text), tier in zip(sources, tiers) if llm.destination.allows(tier)]
        if not kept:
            raise UsageError(f"nothing to summarize for {target!r}" + (" that may be sent to the model" if withheld else ""),
                             "try another day or query" + ("; legal text never goes to a model, private and work "
                                                          "text only to one on this machine" if withheld else ""))
        text, used = summary.material([(label, text) for label, text, _ in kept])
        language = detect_language(target if day is None else text) if lang == "auto" else lang
        tier = trust.strictest(t for _, _, t in kept)
        recap = llm.chat(summary.system_prompt(language), summary.user_prompt(subject, text), tier=tier)
        return {"target": target, "summary": recap, "lang": language, "model": llm.model, "sources": used,
                "withheld": withheld}

    # --- trust tiers ---------------------------------------------------------------------------

    def tier_lookup(self):
        """A function path → that file's trust tier as it stands now (remembered per call site).

        The strictest of the front matter in the file today, the index's record of it, and the
        `[trust]` globs; a file that cannot be read counts as legal (see memtool.trust)."""
        from memtool import frontmatter
        from memtool.document import split_lines

        known: dict[str, str] = {}

        def tier_of(path: str) -> str:
            if path not in known:
                try:
                    lines = split_lines(self.ws.read_text(path))
                except (MemError, OSError):
                    known[path] = trust.STRICTEST
                    return known[path]
                declared, _ = trust.declared(lines, frontmatter.split(lines, path)[1])
                indexed = self.store.trust_levels([path]).get(path, "normal")
                known[path] = trust.file_tier(path, trust.strictest((declared, indexed)), self.config.trust_globs)
            return known[path]

        return tier_of

    # --- reflect ------------------------------------------------------------------------------

    def reflect(self, dry_run: bool = False, force: bool = False, since: str | None = None,
                overwrite_edits: bool = False, review: bool | None = None, time_limit: float | None = None) -> dict:
        """Consolidate, then write entity pages (generated blocks only), opinions and a journal entry.

        `dry_run` writes nothing; `force` ignores the gates; `since` limits pages to entities with
        facts from that time on; `overwrite_edits` regenerates blocks a person edited.
        """
        from memtool import reflect

        return reflect.run(reflect.Sources(ws=self.ws, config=self.config, store=self.store, open_local=lambda: self.local,
                                           refresh=self.refresh, facts=self.list_facts, tier_lookup=self.tier_lookup,
                                           vectors_usable=self._vectors_usable),
                           dry_run=dry_run, force=force, since=since, overwrite_edits=overwrite_edits, review=review,
                           time_limit=time_limit)

    # --- core memory -------------------------------------------------------------------------

    def core_read(self) -> dict:
        text = self.ws.read_text("memory.md")
        return {"path": "memory.md", "text": text, "chars": len(text), "limit": self.config.core_max_chars}

    def core_append(self, text: str) -> dict:
        """Append to memory.md (size-limited)."""
        from memtool import core_memory

        return self._core_edit(lambda current: core_memory.append(current, text))

    def core_replace(self, old: str, new: str) -> dict:
        """Replace the one occurrence of `old` in memory.md (the previous file is backed up)."""
        from memtool import core_memory

        return self._core_edit(lambda current: core_memory.replace(current, old, new))

    def core_insert(self, line: int, text: str) -> dict:
        """Insert before 1-based `line` of memory.md (size-limited)."""
        from memtool import core_memory

        return self._core_edit(lambda current: core_memory.insert(current, line, text))

    def _core_edit(self, change) -> dict:
        """Apply `change` to memory.md; an editor's save in between makes it start again on that save."""
        from memtool import core_memory
        from memtool.workspace import FileChanged

        with self.ws.lock("memory.md"):
            for attempt in range(CORE_EDIT_ATTEMPTS):
                current = self.ws.read_text("memory.md")  # valid UTF-8: encoding it gives back the bytes read
                new = change(current)
                core_memory.check_size(new, self.config.core_max_chars)
                backup = self.ws.backup("memory.md") if current else None
                try:
                    self.ws.write_atomic("memory.md", new, expect=current.encode("utf-8"))
                    break
                except FileChanged:
                    if attempt == CORE_EDIT_ATTEMPTS - 1:
                        raise
        return {"path": "memory.md", "chars": len(new), "limit": self.config.core_max_chars,
                "backup": backup, "text": new}

    # --- sync ----------------------------------------------------------------------------------

    def sync(self, remote: str | None = None, progress: dict | None = None) -> dict:
        """One three-way sync round with `remote` (else the bound or configured one).

        `progress` maps "upload" / "download" to a `progress(done, total)` callback."""
        from memtool.sync import engine

        return engine.run(self.ws, remote, endpoint_url=self.config.sync_endpoint_url,
                          region=self.config.sync_region, configured=self.config.sync_remote, progress=progress)

    def sync_status(self) -> dict:
        from memtool.sync import engine

        return engine.status(self.ws)

    def sync_resolve(self, path: str, keep: str) -> dict:
        from memtool.sync import engine

        return engine.resolve(self.ws, path, keep)

    def sync_switch(self, on: bool) -> dict:
        from memtool.sync import engine

        return engine.set_off(self.ws, not on)

    def sync_restore(self, backup_id: str | None = None) -> dict:
        from memtool.sync import engine

        return engine.restore(self.ws, backup_id)

    # --- status and check --------------------------------------------------------------------

    def status(self, probe: bool = True) -> dict:
        """Counts, index health, and which providers are in effect and answer."""
        report = self.refresh()
        stats = self.store.stats()
        for p in self.unlisted:
            stats["diagnostics"]["errors" if p.code == "unreadable" else "warnings"] += 1
        stats["stale_files"] = self.store.paths_with_status("stale")
        stats["unreadable"] = sorted(self.store.paths_with_status("unreadable") + [p.path for p in self._unreadable_paths()])
        stats["warnings"] = self._health_warnings()
        size = sum(p.stat().st_size for p in self.ws.state_dir.glob("index.sqlite*") if p.exists())
        vectors = self.store.vectors
        problem = self._vectors_usable()
        if problem is None and probe and self.embedder is not None:
            try:
                self.embedder.probe()
            except ProviderUnavailable as exc:
                problem = f"{exc.message}; {exc.hint}"
        embedded = vectors.count()
        from memtool import __version__
        from memtool.analyzer import ANALYZER_VERSION
        from memtool.llm import OllamaChat

        llm = OllamaChat(self.config.llm_model, work_providers=self.config.work_providers)
        missing, withheld = self._vector_gaps()
        llm_version = llm.probe() if probe else None
        stats.update({
            "workspace": str(self.ws.root),
            "index": {"path": str(self.ws.index_path), "bytes": size, "schema": SCHEMA_VERSION, "driver": DRIVER,
                      "fresh": True, "indexed_at": self.store.meta("indexed_at"),
                      "refreshed_files": report.parsed + report.removed + report.unreadable},
            "embedder": {"name": self.embedder_name, "fingerprint": vectors.fingerprint(), "answers": problem is None,
                         "problem": problem, "vectors": embedded, "missing": missing,
                         "withheld": withheld,
                         "vector_search": vectors.search_path()},
            "search": {"lexical": True, "semantic": problem is None, "default_mode": self.config.recall_mode},
            "llm": {"provider": "ollama", "host": llm.host, "local": llm.local, "model": llm.model, "answers": llm_version is not None,
                    "version": llm_version, "used_by": "mem summarize, mem reflect --review"},
            "memory": self._local_summary(),
            "retained_gone": self.retained_gone(),
            "versions": {"memtool": __version__, "schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION,
                         "sqlite": self.store.conn.execute("SELECT sqlite_version()").fetchone()[0],
                         "sqlite_vec": vectors.version()},
        })
        return stats

    def _local_summary(self) -> dict:
        """Consolidation and sync state, read cheaply (nothing is created by asking)."""
        from memtool.sync.state import SyncState

        sync = SyncState(self.ws)
        binding = sync.binding() or {}
        out = {"sync": {"remote": binding.get("remote"), "off": bool(sync.off()), "conflicts": len(sync.conflicts())}}
        if (self.ws.state_dir / "local.sqlite").exists():
            counts = self.local.counts()
            out["consolidation"] = {"folded": counts["folds"], "superseded": counts["supersede"],
                                    "for_review": counts["review"], "used_facts": counts["usage"],
                                    "recalls_logged": counts["access"]}
        return out

    def check(self) -> list[Diagnostic]:
        """Every diagnostic of every indexed file (refreshing first), and every retained line that is gone."""
        from memtool import retain_log

        self.refresh()
        gone = [e.diagnostic() for e in retain_log.vanished(self.ws, fresh=True)]
        found = ([Diagnostic(*row) for row in self.store.diagnostics()] + self._unlisted_diagnostics()
                 + self._access_diagnostics() + self._link_diagnostics() + gone)
        return sorted(found, key=lambda d: (d.severity != "error", d.path, d.line))  # errors first

    def _link_diagnostics(self) -> list[Diagnostic]:
        """`[[links]]` that reach an entity page only through its aliases: memtool follows them, but
        editors that resolve links by file name (Obsidian) do not."""
        from memtool.retain import wiki_links

        names = {p.stem.casefold() for p in self.ws.root.rglob("*.md")}
        out, said = [], set()
        for path, line, content in self.store.facts_with_links():
            for target in wiki_links(content):
                page = self.store.entity_page(target)
                if page is None or target.casefold() in names or (path, target) in said:
                    continue
                said.add((path, target))
                out.append(Diagnostic(path, line, "warning", "link-by-alias",
                                      f"[[{target}]] reaches {page['path']} only through its aliases; editors that"
                                      f" resolve links by file name (Obsidian) will not find it: rename the page to"
                                      f" '{target}.md' or write [[{Path(page['path']).stem}|{target}]]"))
        return out

    def _access_diagnostics(self) -> list[Diagnostic]:
        """Indexed files this user cannot read now, though unchanged since (chmod keeps the mtime)."""
        out = []
        for path in self.store.paths_with_status("ok"):
            if not os.access(self.ws.root / path, os.R_OK):
                out.append(Diagnostic(path, 0, "error", "unreadable", "cannot read it now (permissions); its facts"
                                      " are from the last read, and changes will not be seen until it can be read"))
        return out


def _aside_name(index: Path, why: str) -> Path:
    """A new name beside the index for a copy set aside (`corrupt`, `newer`): UTC time to the
    nanosecond, never one in use."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n = 0
    while True:
        aside = index.with_name(f"{index.name}.{why}-{stamp}-{time.time_ns() % 1_000_000_000:09d}"
                                + (f"-{n}" if n else ""))
        if not aside.exists():
            return aside
        n += 1


def _mentions(row: dict) -> list[str]:
    import json

    return json.loads(row["entities"] or "[]")
