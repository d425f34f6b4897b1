"""The facade: every operation the CLI and the MCP server offer, one method each."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from memtool import indexer
from memtool.config import Config
from memtool.errors import IndexUnavailable, UsageError
from memtool.recall import build_query, pack, to_result
from memtool.records import Diagnostic
from memtool.store import DRIVER, SCHEMA_VERSION, Filters, Store, entity_key
from memtool.workspace import Workspace, discover


@dataclass
class RecallResult:
    query: str
    mode: str
    results: list[dict]
    terms: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"query": self.query, "mode": self.mode, "count": len(self.results), "results": self.results,
                "warnings": self.warnings}


class Memory:
    """One workspace and its index."""

    def __init__(self, workspace: Workspace, config: Config | None = None):
        self.ws = workspace
        self.config = config or Config.load(workspace.config_path)
        self._store: Store | None = None
        self.last_refresh: indexer.IndexReport | None = None
        self.notices: list[str] = []  # things the caller should tell the user (e.g. a recovered index)
        self._states: tuple[int, dict] | None = None  # (data_version, file states) seen last

    @classmethod
    def open(cls, workspace: str | os.PathLike | None = None) -> "Memory":
        """The workspace named by `-w`, `MEM_WORKSPACE` or the current directory's ancestry."""
        return cls(discover(workspace))

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = Store.open(self.ws.index_path)
            except IndexUnavailable as exc:
                if not exc.corrupt:
                    raise
                # The index is derived: keep the broken file for inspection and start a new one.
                aside = self.ws.index_path.with_name(f"index.sqlite.corrupt-{int(time.time())}")
                self.ws.index_path.rename(aside)
                for suffix in ("-wal", "-shm"):
                    Path(str(self.ws.index_path) + suffix).unlink(missing_ok=True)
                self.notices.append(f"{exc.message}; moved it to {aside.name} and rebuilt the index from the Markdown")
                self._store = Store.open(self.ws.index_path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # --- index -----------------------------------------------------------------------------

    def index(self, rebuild: bool = False, progress: indexer.Progress | None = None) -> indexer.IndexReport:
        """Bring the index up to date (only changed files are read); `rebuild` starts from nothing."""
        with self.ws.lock("index"):
            notices = []
            if not rebuild and self._analyzer_changed():
                rebuild = True
                notices.append("the text analyzer changed since this index was built; rebuilt it")
            if rebuild:
                self.close()
                for suffix in ("", "-wal", "-shm"):
                    p = Path(str(self.ws.index_path) + suffix)
                    if p.exists():
                        p.unlink()
            scanned = self.ws.scan()
            p = indexer.plan(scanned, self.store.file_states())
            report = indexer.apply(self.ws, self.store, p, self.config.max_file_bytes, progress)
            if rebuild or not p.empty:
                self.store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            self._states = None
        report.rebuilt = rebuild
        report.notices = notices
        self.last_refresh = report
        return report

    def refresh(self, progress: indexer.Progress | None = None) -> indexer.IndexReport:
        """What every read does first: a stat check, and re-indexing only if something changed."""
        if not self._analyzer_changed():
            p = indexer.plan(self.ws.scan(), self._file_states())
            if p.empty and self.store.meta("fts_pending") is None:
                self.last_refresh = indexer.IndexReport(files_seen=p.unchanged)
                return self.last_refresh
        self._states = None
        return self.index(progress=progress)

    def _file_states(self) -> dict:
        """The index's file table, re-read only when some connection has written to it since."""
        version = self.store.data_version()
        if self._states is None or self._states[0] != version:
            self._states = (version, self.store.file_states())
        return self._states[1]

    def _analyzer_changed(self) -> bool:
        from memtool.analyzer import ANALYZER_VERSION

        return self.store.meta("analyzer_version") != ANALYZER_VERSION

    # --- recall ----------------------------------------------------------------------------

    def recall(self, query: str, *, k: int = 10, since: str | None = None, until: str | None = None,
               kinds: list[str] | tuple = (), entities: list[str] | tuple = (), budget: int | None = None,
               today: date | None = None, progress: indexer.Progress | None = None) -> RecallResult:
        """Ranked, cited facts for `query` (lexical BM25), filtered by time, kind and entity."""
        q = build_query(query, k=k, since=since, until=until, kinds=kinds, entities=entities, budget=budget,
                        today=today or date.today())
        self.refresh(progress)
        filters = Filters(kinds=q.kinds, since=q.since, until=q.until,
                          entity_keys=[self.store.entity_keys(e) for e in q.entities])
        if q.terms:
            from memtool.analyzer import fts_match

            rows = self.store.search(fts_match(q.terms), filters, q.k)
        else:
            rows = self.store.latest(filters, q.k)
        names = {m for r in rows for m in _mentions(r)}
        canonical = self.store.canonical_names(names)
        results = [to_result(r, canonical) for r in rows]
        if q.budget:
            results = pack(results, q.budget)
        warnings = self.notices + list(q.notices) + self._health_warnings()
        return RecallResult(query=query, mode="lexical" if q.terms else "filter", results=results,
                            terms=q.terms, warnings=warnings)

    def _health_warnings(self) -> list[str]:
        bad = self.store.conn.execute("SELECT COUNT(*) FROM files WHERE status = 'unreadable'").fetchone()[0]
        if bad:
            return [f"{bad} file(s) could not be indexed and are not searched; run 'mem check' for details"]
        return []

    # --- retain ----------------------------------------------------------------------------

    def retain(self, bullet: str, day: date | None = None) -> dict:
        """Append a Retain bullet to a day's log (today by default); returns where it landed."""
        from memtool.retain import BulletError, insert_bullet, parse_bullet

        text = bullet.strip()
        if text.startswith(("- ", "* ")):
            text = text[2:].strip()
        if not text:
            raise UsageError("the bullet is empty", 'e.g. mem retain "W @Peter: Moved to Lisbon in May."')
        if "\n" in text or "\r" in text:
            raise UsageError("a Retain bullet is one line", "join the lines, or write longer notes into the daily log")
        try:
            parsed = parse_bullet(text)
        except BulletError as exc:
            raise UsageError(f"not a valid Retain bullet: {exc}",
                             'format: "W|B|O|S[(c=0..1)] [@Entity…]: text", e.g. "O(c=0.8) @Peter: Prefers short replies."') from None
        day = day or date.today()
        rel = self.ws.daily_path(day)
        with self.ws.lock(rel):
            current = self.ws.read_text(rel)
            new_text, line = insert_bullet(current, text, day.isoformat())
            self.ws.write_atomic(rel, new_text)
        return {"path": rel, "line": line, "source": f"{rel}#L{line}", "kind": parsed.kind,
                "entities": parsed.entities, "confidence": parsed.confidence, "content": parsed.text}

    # --- status and check --------------------------------------------------------------------

    def status(self) -> dict:
        """Counts, index health and what is in effect."""
        report = self.refresh()
        stats = self.store.stats()
        size = sum(p.stat().st_size for p in self.ws.state_dir.glob("index.sqlite*") if p.exists())
        stats.update({
            "workspace": str(self.ws.root),
            "index": {"path": str(self.ws.index_path), "bytes": size, "schema": SCHEMA_VERSION, "driver": DRIVER,
                      "fresh": True, "indexed_at": self.store.meta("indexed_at"),
                      "refreshed_files": report.parsed + report.removed + report.unreadable},
            "search": {"lexical": True, "semantic": False, "reason": "semantic recall is not built yet"},
        })
        return stats

    def check(self) -> list[Diagnostic]:
        """Every diagnostic of every indexed file (refreshing first)."""
        self.refresh()
        return [Diagnostic(*row) for row in self.store.diagnostics()]

    def entity_key(self, name: str) -> str:
        return entity_key(name)


def _mentions(row: dict) -> list[str]:
    import json

    return json.loads(row["entities"] or "[]")
