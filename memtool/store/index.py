"""The index (`Store`): opening it, writing files and facts, and reading facts back. The SQL it
builds from filters is in `queries.py`; entity lookups in `entities.py`; counts and the dump in
`summary.py`."""

from __future__ import annotations

import os
import re
import time
from collections import namedtuple
from collections.abc import Iterable
from contextlib import contextmanager, suppress
from pathlib import Path

from memtool import TYPE_CHECKING
from memtool.analyzer import fts_match, word_groups
from memtool.errors import IndexUnavailable
from memtool.store import entities, overview, summary
from memtool.store.driver import Meta, Transaction, as_mem_error, connect, migrate, select_in, sqlite, vacuum
from memtool.store.queries import FACT_COLUMNS, EntityMatch, Filters, entity_key, rare_split, recent_top_sql, top_sql
from memtool.store.schema import DELETE_TRIGGER, MIGRATIONS, SCHEMA_VERSION, VOCABULARY, count_term_docs, day_counts
from memtool.store.vectors import ANN_FILE, Vectors

if TYPE_CHECKING:  # the parser's classes: a read never builds one (see memtool.kinds)
    from memtool.records import ParsedFile, Record

_WEIGHED = "({f}.kind != 'opinion' AND {f}.path NOT LIKE 'bank/%')"  # whether a fact is opinion evidence


PRUNE_MIN_FACTS = 50_000  # below this, every query term is ranked (the quality sets are far smaller)
PRUNE_SHARE = 0.10  # a term in more than this share of the facts is left out when a rarer one remains
RARE_FACTS = 10_000  # in a large index only facts holding a word in at most this many (or the query's rarest) are ranked
RECENT_FACTS = 40_000  # in a large index a query of one word in more facts ranks only its newest this many
# A reader's own page cache (a second connection, see `Store.reader`): the lexical side's pages.
# Kept small: the process's RSS at 10^6 facts is near its 200 MB target (8 MB gave 199 MB, 2 MB 193 MB
# with no measurable loss), and the OS caches the file anyway.
READER_CACHE_KIB = 2_000


Links = tuple[list[tuple[int, str]], list[tuple[int, str]]]


class FactOrder(namedtuple("FactOrder", "ids place")):
    """Every fact's id in `latest`'s order (newest first), `ids`, and id → its place there, `place`.
    Not a `typing.NamedTuple`: no `typing` on the read path (memtool.TYPE_CHECKING)."""

    __slots__ = ()


def fact_links(records: list[Record]) -> Links:
    """(record number, entity key) and (record number, tag) pairs of a file's records: its
    `fact_entities` and `fact_tags` rows, before the fact ids are known. Pure."""
    return ([(n, entity_key(e)) for n, r in enumerate(records) for e in r.entities],
            [(n, t) for n, r in enumerate(records) for t in r.tags])


# Fact heads remembered for the index as it is (`fact_heads`), at most about this many (~1 MB): a hybrid
# recall reads ~200-300 and asks for a third of them again within itself; across recalls they rarely repeat.
HEADS_KEPT = 1_000
MAPPED_BYTES = 0x7FFF0000  # SQLite's default ceiling for `mmap_size` (SQLITE_MAX_MMAP_SIZE)


class Store:
    """An open index file."""

    def __init__(self, path: Path, conn, notices: list[str] | None = None):
        self.path = path
        self.conn = conn
        self._meta = Meta(conn)
        self._dropped: set[str] = set()
        self.prune_min_facts = PRUNE_MIN_FACTS  # see `prune_common`
        self.rare_facts = RARE_FACTS  # see `search_terms`
        self.recent_facts = RECENT_FACTS  # see `search_terms`
        self._facts: tuple | None = None  # ((data version, own changes), fact count)
        self._docs: tuple = (None, {})  # ((data version, own changes), {term: facts holding it})
        self._holds: tuple = (None, {})  # ((data version, own changes), {(term, others): bool}) (see `holds_with`)
        self._statuses: tuple = (None, {})  # ((data version, own changes), {file status: paths})
        self._heads: tuple = (None, {})  # ((data version, own changes), {fact id: head}) (see `fact_heads`)
        self._sole: tuple = (None, {})  # ((data version, own changes), {word: only it begins with it}) (see `_match`)
        self.identity = _identity(path)  # of the file this connection opened (see `reader`)
        self.notices = [] if notices is None else notices  # what the user should hear (said once; see `_say`)
        self._terms = None  # a `term_docs.TermDocs` once this connection changes `facts_fts` (see `_term_docs`)
        self._bulk = False  # facts put since `begin_bulk` have no full-text rows (nor term counts) yet
        self._mapped = 0  # the `mmap_size` this connection was last asked for outside `pages_mapped`

    # --- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, notices: list[str] | None = None, verify: bool = False) -> "Store":
        """Open (creating or migrating) the index; raise IndexUnavailable when it cannot be used.
        `notices`: where to add what the user should hear (an upgrade, term counts counted again).
        `verify` reads every page first (SQLite's quick_check, for a rebuild): damage only a later
        query would meet is found now."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = None
        try:
            conn, vec_problem = connect(str(path))
            if verify:
                _verify(conn, path)
            store = cls(path, conn, notices)
            store._migrate()
            store._ensure_term_docs()
            store.vectors = Vectors(conn, vec_problem, path.parent / ANN_FILE)
        except sqlite.DatabaseError as exc:
            if conn is not None:
                conn.close()  # before the file may be set aside: nothing of this connection touches its successor
            # Only damage (IndexUnavailable, corrupt) means "set it aside and rebuild"; a busy or
            # otherwise failing database is reported.
            raise as_mem_error(exc, str(path)) or IndexUnavailable(
                f"the index {path} cannot be read ({exc})", "try again; if it persists, run 'mem index --rebuild'") from None
        return store

    @classmethod
    def open_or_set_aside(cls, path: Path, newer_too: bool = False,
                          notices: list[str] | None = None) -> tuple["Store", str | None]:
        """Open the index; one that is damaged (or, with `newer_too`, of a newer memtool) is moved
        aside (kept for inspection, or for the newer memtool) and a new one started: it is derived
        from the Markdown. `newer_too` (a rebuild) also reads every page for damage first. Returns
        the store and, when it set one aside, what it did."""
        try:
            return cls.open(path, notices, verify=newer_too), None
        except IndexUnavailable as exc:
            if not (exc.corrupt or (exc.newer and newer_too)):
                raise
            aside = _aside_name(path, "corrupt" if exc.corrupt else "newer")
            path.rename(aside)
            for suffix in ("-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            notice = f"{exc.message}; moved it to {aside.name} and rebuilt the index from the Markdown"
            return cls.open(path, notices), notice

    def _migrate(self) -> None:
        before = migrate(self.conn, MIGRATIONS, lambda version: IndexUnavailable(
            f"the index was written by a newer memtool (schema {version} > {SCHEMA_VERSION})",
            "upgrade memtool, or run 'mem index --rebuild' to set it aside and recreate it", newer=True))
        if before:  # 0: a new file
            self._say(f"upgraded the index from schema {before} to {SCHEMA_VERSION}")

    def _ensure_term_docs(self) -> None:
        """A missing `term_docs` (schema 7 and later have it) is counted again from the full-text
        index, and said: a lookup in a missing table must not read as "no fact holds it"."""
        held = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'term_docs'"
        if self.conn.execute(held).fetchone() is None:
            with self.transaction():
                count_term_docs(self.conn)
            self._say("the index's table of term counts (term_docs) was missing;"
                      " counted them again from its full-text index")

    def _say(self, message: str) -> None:
        if message not in self.notices:  # a long-running process says each thing once
            self.notices.append(message)

    def reader(self) -> "Store | None":
        """Another connection to this index, read-only, for a thread that reads beside this one
        (recall's lexical side); its lexical gates are this store's (see `gates_from`). None when
        this connection holds writes it has not committed (the other would not see them), or when
        the file at the path is no longer the one this store opened (set aside and made anew)."""
        if not self.reads_alike():
            return None
        try:
            conn, _ = connect(str(self.path), vec=False, cache_kib=READER_CACHE_KIB)
        except sqlite.Error:
            return None  # this connection still answers, in its own thread
        reader = Store(self.path, conn, self.notices)  # one list: what the reader finds is said as this store's
        try:
            reader._vocabulary_table()  # a temp table (see `_uncounted`): made before the connection turns read-only
            conn.execute("PRAGMA query_only = ON")
        except sqlite.Error:
            conn.close()
            return None
        if reader.identity != self.identity:  # replaced meanwhile
            conn.close()
            return None
        reader.vectors = None  # the vectors are read by this store's connection only
        return reader.gates_from(self)

    def reads_alike(self) -> bool:
        """Whether another connection to the path reads what this one does now: this one holds no
        uncommitted writes, and the file there is still the one it opened."""
        return not self.conn.in_transaction and _identity(self.path) == self.identity

    def gates_from(self, other: "Store") -> "Store":
        """This store with `other`'s lexical gates (`prune_min_facts`, `rare_facts`,
        `recent_facts`): both answer a query alike."""
        self.prune_min_facts, self.rare_facts, self.recent_facts = (
            other.prune_min_facts, other.rare_facts, other.recent_facts)
        return self

    def close(self) -> None:
        self.conn.close()

    def map_pages(self) -> None:
        """Read the file through a memory map instead of copying each page it reads into this
        connection's cache with a `pread`: a fresh process reads faster (a one-shot recall's query
        4 ms less at 10^5 facts, 17 ms at 10^6). For short-lived processes only: the mapped pages
        read count toward the process's resident memory."""
        self.conn.execute(f"PRAGMA mmap_size={MAPPED_BYTES}")
        self._mapped = MAPPED_BYTES

    @contextmanager
    def pages_mapped(self):
        """Reads through a memory map for a batch of reads, then the mapping this connection was
        asked for before: a reflect run reads the facts several times over, more than the page cache
        holds at 10^5 facts (~97,000 `pread`s of 4 KiB, 0.3 s of system time, measured). The mapped
        pages count toward resident memory meanwhile. What it restores is remembered, not read back
        from SQLite, which ignores a change of `mmap_size` while a cursor of this connection (another
        thread's read in `mem mcp`) holds mapped pages and would report the run's size as the one to
        restore next time."""
        self.conn.execute(f"PRAGMA mmap_size={MAPPED_BYTES}")
        try:
            yield self
        finally:
            with suppress(sqlite.ProgrammingError):  # closed meanwhile: nothing left to restore
                self.conn.execute(f"PRAGMA mmap_size={self._mapped}")

    def transaction(self) -> Transaction:
        return Transaction(self.conn, self._before_commit, self._rolled_back)

    def _term_docs(self):
        """This connection's `term_docs` deltas (imported on a first write: a read needs none of it)."""
        if self._terms is None:
            from memtool.store.term_docs import TermDocs

            self._terms = TermDocs(self.conn)
        return self._terms

    def _count_terms_anew(self) -> None:
        """`term_docs` counted from the whole full-text index; the changes pending in this
        transaction are dropped (the count holds them)."""
        count_term_docs(self.conn)
        self._term_docs().discard()

    def _rolled_back(self) -> None:
        if self._terms is not None:
            self._terms.rolled_back()
        # what was read inside the transaction is gone with it; the data version does not go back
        self._docs = self._holds = self._statuses = self._heads = self._sole = (None, {})
        self._bulk = False  # `begin_bulk`'s mark went with it, or was committed: `finish_bulk` then counts

    def _before_commit(self) -> None:
        """`term_docs` takes this transaction's changes of the full-text index (see term_docs.py); when
        they do not add up (a count below zero) it is counted again in full, and that is said."""
        if self._terms is None:
            return
        from memtool.store.term_docs import TermCountsOutOfStep

        try:
            self._terms.fold()
        except TermCountsOutOfStep:
            self._count_terms_anew()
            self._say("the index's term counts (term_docs) were out of step with its full-text index; counted them again")

    def sqlite_version(self) -> str:
        return self.conn.execute("SELECT sqlite_version()").fetchone()[0]

    # --- meta ------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._meta.set(key, value)

    # --- files -----------------------------------------------------------------------------

    def file_states(self) -> dict[str, tuple[int, int, int]]:
        """path → (size, mtime_ns, ctime_ns) for every indexed file, as `Workspace.scan` reports them."""
        return {r[0]: (r[1], r[2], r[3]) for r in self.conn.execute("SELECT path, size, mtime_ns, ctime_ns FROM files")}

    def file_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM files").fetchone()[0]

    def file_digests(self) -> dict[str, str]:
        """path → content hash for every indexed file."""
        return dict(self.conn.execute("SELECT path, hash FROM files"))

    def file_rows(self) -> dict[str, list]:
        """path → [content hash, status, trust tier] of every indexed file: what changes when the index
        holds something new (a touched file with the same text does not count)."""
        return {r[0]: [r[1], r[2], r[3]] for r in self.conn.execute("SELECT path, hash, status, trust FROM files")}

    def file_mentions(self, paths: Iterable[str]) -> dict[str, tuple[set[str], set[str]]]:
        """For each of `paths` with facts: the entity keys they mention, and the words of their
        analysed terms (what a plain-name entity match looks at)."""
        out: dict[str, tuple[set[str], set[str]]] = {}
        for path, terms in select_in(self.conn, "SELECT path, terms FROM facts WHERE path IN ({marks})", paths):
            out.setdefault(path, (set(), set()))[1].update(_WORDS.findall((terms or "").lower()))
        for path, key in select_in(self.conn, "SELECT f.path, e.key FROM facts f JOIN fact_entities e"
                                              " ON e.fact_id = f.id WHERE f.path IN ({marks})", paths):
            out.setdefault(path, (set(), set()))[0].add(key)
        return out

    def touch_file(self, path: str, size: int, mtime_ns: int, ctime_ns: int) -> None:
        self.conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE path = ?",
                          (size, mtime_ns, ctime_ns, path))

    def take_dropped_hashes(self) -> set[str]:
        """Embedded-text hashes of facts removed since the last call (candidates for vector gc)."""
        dropped, self._dropped = self._dropped, set()
        return dropped

    def remove_file(self, path: str) -> None:
        if not self._bulk:  # (in a bulk load the file's facts, if any, are not in the full-text index)
            self._term_docs().removed(path)
        self._dropped.update(h for (h,) in self.conn.execute(
            "SELECT ehash FROM facts WHERE path = ? AND ehash IS NOT NULL", (path,)))
        for sql in ("DELETE FROM facts WHERE path = ?", "DELETE FROM fact_days WHERE path = ?", "DELETE FROM aliases WHERE path = ?",
                    "DELETE FROM diagnostics WHERE path = ?", "DELETE FROM files WHERE path = ?"):
            self.conn.execute(sql, (path,))
        self._fold_outside_transaction()

    def _fold_outside_transaction(self) -> None:
        """Outside a transaction (each statement commits alone) `term_docs` follows at once."""
        if not self.conn.in_transaction:
            self._before_commit()

    def put_file(self, parsed: ParsedFile, size: int, mtime_ns: int, ctime_ns: int, digest: str, status: str,
                 rows: Iterable[tuple], fts: bool = True, links: "Links | None" = None) -> None:
        """Replace everything indexed for one file. `rows` come from `indexer.fact_rows`; `links` are
        `fact_links(parsed.records)`, passed when made elsewhere (a worker process sends the rows and
        links, not the records: a third of the parent's work at 10⁵ facts was unpickling them).

        With `fts=False` (a full build into an empty index) the rows are not yet searchable nor
        counted by day: the caller must finish with `finish_bulk()` (one bulk FTS build is about 3×
        faster than row-by-row inserts; one count of all days spares a query per file).
        """
        rows = list(rows)
        n_records = len(rows)
        if fts and rows and self._same_facts(parsed.path, rows):
            # The file's facts as indexed (a page `mem reflect` rewrote inside its generated block, which
            # is never indexed): they, their search terms and their ids stay; the file's own rows are put.
            for sql in ("DELETE FROM aliases WHERE path = ?", "DELETE FROM diagnostics WHERE path = ?",
                        "DELETE FROM files WHERE path = ?"):
                self.conn.execute(sql, (parsed.path,))
            rows = []
        elif not self._bulk:  # (a bulk load fills an empty index, each file once: nothing to replace)
            self.remove_file(parsed.path)
        self.conn.execute(
            "INSERT INTO files(path, file_kind, date, size, mtime_ns, ctime_ns, hash, status, title, trust, entity,"
            " n_records) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (parsed.path, parsed.file_kind, parsed.date.isoformat() if parsed.date else None, size, mtime_ns,
             ctime_ns, digest, status, parsed.title, parsed.trust, parsed.entity, n_records),
        )
        if rows:
            # Ids given, as SQLite would pick them (the largest + 1): the entity and tag rows need no
            # read-back of the facts just written.
            first = (self.conn.execute("SELECT MAX(id) FROM facts").fetchone()[0] or 0) + 1
            self.conn.executemany(
                "INSERT INTO facts(id, path, ord, kind, date, valid_from, valid_to, line_start, line_end, content,"
                " context, entities, fields, confidence, terms, ctx_terms, ehash, tags)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(first + n, *row) for n, row in enumerate(rows)],
            )  # its cursor dropped at once
            if fts:
                self.conn.execute("INSERT INTO facts_fts(rowid, terms, ctx_terms)"
                                  " SELECT id, terms, ctx_terms FROM facts WHERE path = ?", (parsed.path,))
                self._term_docs().added(parsed.path)
            keys, tags = links if links is not None else fact_links(parsed.records)
            self.conn.executemany("INSERT OR IGNORE INTO fact_entities(fact_id, key) VALUES (?, ?)",
                                  [(first + n, key) for n, key in keys])
            self.conn.executemany("INSERT OR IGNORE INTO fact_tags(fact_id, tag) VALUES (?, ?)",
                                  [(first + n, tag) for n, tag in tags])
            if fts:
                self.conn.execute(day_counts("f.path = ?"), (parsed.path,))
        if parsed.entity:
            names = {entity_key(parsed.entity)} | {entity_key(a) for a in parsed.aliases}
            if parsed.title:
                names.add(entity_key(parsed.title))
            self.conn.executemany("INSERT OR IGNORE INTO aliases(key, entity, path) VALUES (?,?,?)",
                                  [(k, parsed.entity, parsed.path) for k in names if k])
        self.conn.executemany(
            "INSERT INTO diagnostics(path, line, severity, code, message) VALUES (?,?,?,?,?)",
            [(d.path, d.line, d.severity, d.code, d.message) for d in parsed.diagnostics],
        )
        self._fold_outside_transaction()

    def _same_facts(self, path: str, rows: list[tuple]) -> bool:
        """Whether `path`'s indexed facts are `rows` (`indexer.fact_rows`' columns), in order."""
        return self.conn.execute(
            "SELECT path, ord, kind, date, valid_from, valid_to, line_start, line_end, content, context, entities,"
            " fields, confidence, terms, ctx_terms, ehash, tags FROM facts WHERE path = ? ORDER BY ord",
            (path,)).fetchall() == rows

    def put_unreadable(self, path: str, size: int, mtime_ns: int, digest: str, diagnostics, ctime_ns: int = 0) -> None:
        """Record a file that could not be decoded: no facts, its diagnostics kept for `mem check`."""
        self.remove_file(path)
        self.conn.execute(
            "INSERT INTO files(path, size, mtime_ns, ctime_ns, hash, status, n_records) VALUES (?,?,?,?,?, 'unreadable', 0)",
            (path, size, mtime_ns, ctime_ns, digest),
        )
        self.conn.executemany(
            "INSERT INTO diagnostics(path, line, severity, code, message) VALUES (?,?,?,?,?)",
            [(d.path, d.line, d.severity, d.code, d.message) for d in diagnostics],
        )

    def file_status(self, path: str) -> tuple[str, int] | None:
        """(status, stored mtime_ns) of an indexed file, or None."""
        row = self.conn.execute("SELECT status, mtime_ns FROM files WHERE path = ?", (path,)).fetchone()
        return (row[0], row[1]) if row else None

    def judge_sizes_again(self, max_bytes: int) -> int:
        """Make the next plan read again every file the size limit `max_bytes` judges otherwise than
        the limit it was read with: refused as too large yet within it, or indexed yet over it (a size
        of -1 and no hash: the plan sees a change, the read parses it in full). Returns how many."""
        return self.conn.execute(
            "UPDATE files SET size = -1, hash = '' WHERE size > ? AND status != 'unreadable'"
            " OR size BETWEEN 0 AND ? AND path IN (SELECT path FROM diagnostics WHERE code = 'too-large')",
            (max_bytes, max_bytes)).rowcount

    def mark_stale(self, path: str, mtime_ns: int, diagnostic) -> None:
        """Keep a file's facts but flag them stale (the file cannot be read now); its diagnostics
        become `diagnostic`, and an empty hash makes the next successful read parse it in full."""
        self.conn.execute("UPDATE files SET status = 'stale', mtime_ns = ?, hash = '' WHERE path = ?", (mtime_ns, path))
        self.conn.execute("DELETE FROM diagnostics WHERE path = ?", (path,))
        d = diagnostic
        self.conn.execute("INSERT INTO diagnostics(path, line, severity, code, message) VALUES (?,?,?,?,?)",
                          (d.path, d.line, d.severity, d.code, d.message))

    def paths_with_status(self, status: str) -> list[str]:
        """Paths of the files with this status, remembered until the index changes: every read asks
        for `unreadable` and `stale` (a scan of `files`, ~2.5 ms at 25,000 files), so one scan reads
        every status but `ok`."""
        version = self.state_version()
        if self._statuses[0] != version:
            self._statuses = (version, {})
        found = self._statuses[1]
        if status == "ok" and status not in found:
            found[status] = [p for (p,) in self.conn.execute("SELECT path FROM files WHERE status = 'ok' ORDER BY path")]
        elif status != "ok" and None not in found:
            found[None] = True  # every status but `ok` read
            for path, other in self.conn.execute("SELECT path, status FROM files WHERE status != 'ok' ORDER BY path"):
                found.setdefault(other, []).append(path)
        return list(found.get(status, ()))

    def clear(self) -> None:
        """Forget everything read from the Markdown (vectors stay: they are keyed by content)."""
        self.conn.execute("DROP TRIGGER facts_ad")
        for table in ("facts", "fact_entities", "fact_tags", "fact_days", "files", "aliases", "diagnostics"):
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('delete-all')")
        self.conn.execute("DELETE FROM term_docs")
        self._term_docs().discard()
        self.conn.execute(DELETE_TRIGGER)
        self._meta.delete("fts_pending")
        self._bulk = False

    def is_empty(self) -> bool:
        return self.conn.execute("SELECT NOT EXISTS (SELECT 1 FROM files)").fetchone()[0] == 1

    def begin_bulk(self) -> None:
        """Mark that facts are being added without FTS entries (survives a crash: see `finish_bulk`)."""
        self.set_meta("fts_pending", "1")
        self._bulk = True

    def compact(self) -> bool:
        """Leave no trace of deleted text in the file: merge the FTS segments (FTS5 keeps deleted
        terms in them until merged), drop orphaned vectors, VACUUM (free pages keep old rows), and
        empty the WAL. False when another connection kept the WAL from being emptied."""
        with self.transaction():
            self.vectors.gc(None)
            self.conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
        return vacuum(self.conn)

    def finish_bulk(self) -> None:
        """Build the FTS index and the day counts from all facts if a bulk load left them pending."""
        if self.meta("fts_pending") == "1":
            self.conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
            self._count_terms_anew()  # one walk of the new vocabulary: ~1 % of a full build
            self.conn.execute("DELETE FROM fact_days")
            self.conn.execute(day_counts())
            self._meta.delete("fts_pending")
        self._bulk = False

    # --- queries ---------------------------------------------------------------------------

    def search_ids(self, match: str, filters: Filters, k: int, from_id: int | None = None) -> list[tuple[int, float]]:
        """(fact id, BM25 score: higher is better) of the best `k` facts matching an FTS5 expression
        (with `from_id`, of those with an id from it on).

        Ranking touches only the FTS index (and `facts` when filtering)."""
        top, params = top_sql(filters, from_id)
        return [(i, -r) for i, r in self.conn.execute(top, [match, *params, k])]

    def search_recent(self, match: str, filters: Filters, k: int) -> list[tuple[int, float]]:
        """`search_ids` among the newest `recent_facts` facts the expression matches (newest by id:
        ids grow as files are indexed, so a file indexed again counts as new), the whole of them
        when fewer than `k` of those pass `filters`. Unfiltered, one statement walks the lists from
        their newest end and ranks what it read (at 10^6, `server`: one walk instead of two)."""
        if filters.active:  # the edge first, then only the facts passing the filters are ranked
            edge = self.conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC"
                                     " LIMIT 1 OFFSET ?", (match, self.recent_facts - 1)).fetchone()
            found = self.search_ids(match, filters, k, edge[0]) if edge else []
        else:
            found = [(i, -r) for i, r in self.conn.execute(recent_top_sql(), (match, self.recent_facts, k))]
        return found if len(found) >= k else self.search_ids(match, filters, k)

    def search_terms(self, terms: list[str], filters: Filters, k: int) -> list[tuple[int, float]]:
        """`search_ids` over the OR of `terms` (as `query_terms` gives them, `prune_common` applied).

        BM25 scores every fact an OR matches (~0.6 µs each): at 10^6 facts a query's common words
        match ~10^5. In an index of at least PRUNE_MIN_FACTS facts, when a query has a word in at most
        RARE_FACTS facts (else its rarest word) and other, commoner ones, only the facts holding
        a rare word are ranked, by the whole query's BM25; facts holding only common words are left
        out, unless fewer than `k` facts pass (the recall cost is measured in docs/benchmarks-history.md).
        A query with nothing to set apart (one word) held by more than RECENT_FACTS facts is ranked
        among the newest RECENT_FACTS of them (`search_recent`: `issue` in 174,396 of 10^6 facts,
        176 -> 70 ms; the top 10 changes, measured in docs/benchmarks-history.md). Smaller indexes are untouched.
        The expressions search a prefix that only its own word begins as that word (`_match`)."""
        with self._one_snapshot():  # the prefixes `_match` looks up and the searches see one state of the index
            return self._search_terms(terms, filters, k)

    def _search_terms(self, terms: list[str], filters: Filters, k: int) -> list[tuple[int, float]]:
        terms = self.prune_common(terms)
        whole = self._match(terms)
        split = self.large() and rare_split(word_groups(terms), self.term_counts(terms), self.rare_facts)
        if not split:
            if self.large() and max(self.term_counts(terms).values(), default=0) > self.recent_facts:
                return self.search_recent(whole, filters, k)
            return self.search_ids(whole, filters, k)
        rare = self._match(split[0])
        # The best k with a common word too (the whole query's BM25) and the best k by the rare words
        # alone: a fact of the second list that also holds a common word takes its first-list score,
        # or, missing from the first list, ranks below its k facts anyway. Exact for these facts.
        scores = dict(self.search_ids(rare, filters, k))
        scores.update(self.search_ids(f"({rare}) AND ({self._match(split[1])})", filters, k))
        found = sorted(scores.items(), key=lambda hit: -hit[1])[:k]
        return found if len(found) >= k else self.search_ids(whole, filters, k)

    def _match(self, terms: list[str]) -> str:
        """`fts_match(terms)`, with each prefix term (`word*`) that no other term of the index begins
        (`term_docs`) searched as its word: the same facts, the same instances, so the same BM25, but
        FTS5 no longer merges the prefix's posting lists in memory, once to walk them and once for the
        phrase's IDF (at 10^6, ~7 % of the lexical side's CPU; docs/benchmarks-history.md). The phrase stays
        (`"issue" OR "issue"`): each phrase adds its own share to the score."""
        sole = self._sole_prefixes([t[:-1] for t in terms if t.endswith("*")])
        return fts_match([t[:-1] if t.endswith("*") and t[:-1] in sole else t for t in terms])

    def _sole_prefixes(self, words: list[str]) -> set[str]:
        """The `words` that facts hold and that begin no other term of the index (`term_docs`: two
        look-ups each); remembered until the index changes. A held word is a term FTS5 made, so its
        quoted form is that one token."""
        version = self.state_version()
        if self._sole[0] != version:
            self._sole = (version, {})
        known = self._sole[1]
        wanted = [w for w in dict.fromkeys(words) if w not in known]
        if wanted:
            if self._terms is not None and self._terms.pending:  # own changes not yet committed (an index run)
                self._before_commit()
            with self._one_snapshot():
                for word in wanted:
                    held = self.conn.execute("SELECT n FROM term_docs WHERE term = ?", (word,)).fetchone()
                    after = self.conn.execute("SELECT term FROM term_docs WHERE term > ? ORDER BY term LIMIT 1",
                                              (word,)).fetchone()
                    known[word] = bool(held and held[0] > 0) and not (after and after[0].startswith(word))
        return {w for w in words if known[w]}

    def prune_common(self, terms: list[str]) -> list[str]:
        """`terms` without those too common to be worth their cost in a large index.

        An OR query costs the sum of its terms' posting lists: at 10^5 facts a term in half of them
        takes ~0.2 s to rank, and weighs little in BM25 (its IDF is near zero). In an index of at
        least PRUNE_MIN_FACTS facts, terms found in more than PRUNE_SHARE of them are left out when a
        rarer term remains, with the prefix form of each (the recall cost is measured in
        docs/benchmarks.md); smaller indexes and queries of only common terms are untouched."""
        exact = [t for t in terms if not t.endswith("*")]
        if len(exact) < 2 or len(terms) < 2 or not self.large():
            return terms
        facts, docs = self._fact_count(), self.term_counts(exact)
        common = {t for t in exact if docs[t] > PRUNE_SHARE * facts}
        kept = [t for t in terms if t not in common and t.removesuffix("*") not in common]  # `w*` goes with `w`
        return kept if kept else terms

    def holds_with(self, term: str, others: set[str]) -> bool:
        """Whether a fact holds the exact `term` and one of the terms `others` (one FTS5 look-up,
        unranked: it stops at the first such fact); remembered until the index changes (a query's
        candidates and its wording ask the same)."""
        version = self.state_version()
        if self._holds[0] != version:
            self._holds = (version, {})
        key = (term, frozenset(others))
        if key not in self._holds[1]:
            match = f"({fts_match([term])}) AND ({fts_match(sorted(others))})"
            self._holds[1][key] = self.conn.execute("SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? LIMIT 1",
                                                    [match]).fetchone() is not None
        return self._holds[1][key]

    def known_terms(self, terms: set[str]) -> set[str]:
        """The exact `terms` that at least one fact (its text or context) holds."""
        return {t for t, n in self.term_counts(sorted(terms)).items() if n > 0}

    def held_prefixes(self, prefixes: set[str]) -> set[str]:
        """The `prefixes` that begin a term some fact holds (`term_docs`, one range look-up each; the
        full-text index asked where `term_docs` has none: never a silent "not held")."""
        if self._terms is not None and self._terms.pending:  # own changes not yet committed (an index run)
            self._before_commit()
        sql = "SELECT 1 FROM term_docs WHERE term >= ? AND term < ? AND n > 0 LIMIT 1"
        with self._one_snapshot():
            return {p for p in prefixes
                    if p and (self.conn.execute(sql, (p, p + "\U0010ffff")).fetchone() or self._prefix_uncounted(p))}

    def _prefix_uncounted(self, prefix: str) -> bool:
        """Whether a fact holds a term beginning with `prefix` that `term_docs` lacks (said once)."""
        if not prefix.isalnum():  # one token to FTS5 (several would match as a phrase)
            return False
        held = self.conn.execute("SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? LIMIT 1",
                                 (fts_match([prefix + "*"]),)).fetchone() is not None
        if held:
            self._say("the index's term counts (term_docs) are out of step with its full-text index;"
                      " counted from the full-text index instead; run 'mem index --rebuild'")
        return held

    def large(self) -> bool:
        """Whether the index holds at least `prune_min_facts` facts (MAX(id) first: O(1), and never
        below the count, so small indexes stop there)."""
        if (self.conn.execute("SELECT MAX(id) FROM facts").fetchone()[0] or 0) < self.prune_min_facts:
            return False
        return self._fact_count() >= self.prune_min_facts

    def term_counts(self, terms: list[str]) -> dict[str, int]:
        """term → facts holding it, for the exact `terms` (`term_docs`: one lookup each); remembered
        until the index changes."""
        version = self.state_version()
        if self._docs[0] != version:
            self._docs = (version, {})
        known = self._docs[1]
        wanted = [t for t in dict.fromkeys(terms) if not t.endswith("*") and t not in known]
        if wanted:
            if self._terms is not None and self._terms.pending:  # own changes not yet committed (an index run)
                self._before_commit()
            with self._one_snapshot():  # a writer committing between the two reads is not "out of step"
                known.update(select_in(self.conn, "SELECT term, n FROM term_docs WHERE term IN ({marks})", wanted))
                known.update((t, self._uncounted(t)) for t in wanted if t not in known)
        return {t: known[t] for t in terms if not t.endswith("*")}

    @contextmanager
    def _one_snapshot(self):
        """Reads in the block see the index at one moment (a read transaction, unless one is open)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def _uncounted(self, term: str) -> int:
        """0 for a term `term_docs` does not hold, once the full-text index agrees that no fact holds
        it (the first entry of its posting list: cheap); never a silent 0 for a term facts hold."""
        if term.isalnum():  # one token to FTS5 (a `"quoted"` string of several would match as a phrase)
            held = self.conn.execute("SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? LIMIT 1",
                                     (fts_match([term]),)).fetchone() is not None
            if not held:
                return 0
        n = self._vocabulary(term)
        if n:
            self._say("the index's term counts (term_docs) are out of step with its full-text index;"
                      " counted from the full-text index instead; run 'mem index --rebuild'")
        return n

    def _vocabulary(self, term: str) -> int:
        """Facts holding `term`, from the FTS5 vocabulary (walks the term's posting list)."""
        self._vocabulary_table()
        return (self.conn.execute("SELECT doc FROM temp.fts_terms WHERE term = ?", (term,)).fetchone() or (0,))[0]

    def _vocabulary_table(self) -> None:
        self.conn.execute(VOCABULARY)

    def doc_counts(self, terms: set[str]) -> tuple[dict[str, int], int]:
        """(term → how many facts hold it in their text or context, for the exact `terms`; the
        number of facts): what recall needs to weigh a query's words by their rarity."""
        return self.term_counts(sorted(terms)), self._fact_count()

    def fact_terms(self, ids: list[int]) -> dict[int, set[str]]:
        """id → the index terms of the fact's text and context, in the order of `ids`."""
        sql = "SELECT id, coalesce(terms, '') || ' ' || coalesce(ctx_terms, '') FROM facts WHERE id IN ({marks})"
        rows = dict(select_in(self.conn, sql, ids))
        return {i: set((rows[i] or "").split()) for i in ids if i in rows}

    def _fact_count(self) -> int:
        """How many facts the index holds, counted again only after this or another connection wrote
        to it: the sum of the files' `n_records` (each file's facts are written and removed with its
        row), ~2 ms at 10^6 facts where COUNT(*) of facts walked an index of 10^6 entries (~19 ms of
        CPU, ~100 ms wall on a busy machine, in every one-shot recall)."""
        version = (self.data_version(), self.conn.total_changes)
        if self._facts is None or self._facts[0] != version:
            self._facts = (version, self.conn.execute("SELECT COALESCE(SUM(n_records), 0) FROM files").fetchone()[0])
        return self._facts[1]

    def search(self, match: str, filters: Filters, k: int) -> list[dict]:
        """Full rows of the best `k` facts matching an FTS5 expression, with their `score`."""
        top, params = top_sql(filters)
        cols = ", ".join(f"f.{c}" for c in FACT_COLUMNS)
        sql = f"SELECT {cols}, -t.r AS score FROM ({top}) t JOIN facts f ON f.id = t.id ORDER BY t.r"
        return self._rows(sql, [match, *params, k])

    def facts_by_id(self, ids: list[int]) -> list[dict]:
        """Full rows for fact ids, in the order given."""
        if not ids:
            return []
        cols = ", ".join(f"f.{c}" for c in FACT_COLUMNS)
        rows = self._rows(f"SELECT {cols} FROM facts f WHERE f.id IN ({','.join('?' * len(ids))})", list(ids))
        by_id = {r["id"]: r for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def fact_heads(self, ids: list[int]) -> dict[int, dict]:
        """id → {kind, content, date, valid_from, valid_to} for the given fact ids, in id order: what
        ranking needs, without the full rows. Remembered until the index changes (up to HEADS_KEPT):
        a hybrid recall asks for its semantic candidates' heads three times (the speakers named, their
        language, ranking)."""
        version = self.state_version()
        if self._heads[0] != version:
            self._heads = (version, {})
        kept = self._heads[1]
        wanted = [i for i in dict.fromkeys(ids) if i not in kept]
        for r in select_in(self.conn, "SELECT id, kind, content, date, valid_from, valid_to FROM facts WHERE id IN ({marks})",
                           wanted):
            kept[r[0]] = {"kind": r[1], "content": r[2], "date": r[3], "valid_from": r[4], "valid_to": r[5]}
        heads = {i: kept[i] for i in sorted(set(ids)) if i in kept}
        if len(kept) > HEADS_KEPT:  # this call's heads stay, unless they alone are too many
            self._heads = (version, dict(heads) if len(heads) <= HEADS_KEPT else {})
        return heads

    def filter_ids(self, ids: list[int], filters: Filters) -> set[int]:
        """The subset of `ids` that passes `filters`."""
        where, params = filters.sql()
        sql = f"SELECT f.id FROM facts f WHERE f.id IN ({{marks}}) AND {where}"
        return {r[0] for r in select_in(self.conn, sql, ids, after=params)}

    def facts_naming(self, query: str, ids: list[int]) -> set[int]:
        """The facts among `ids` that mention an entity named in `query` (a word or two, or an alias)."""
        return entities.facts_naming(self.conn, query, ids)

    def neighbours(self, ids: list[int]) -> dict[int, list[int]]:
        """The records just before and after each given fact in its file."""
        out: dict[int, list[int]] = {}
        sql = ("SELECT a.id, b.id FROM facts a JOIN facts b ON b.path = a.path AND b.ord IN (a.ord - 1, a.ord + 1)"
               " WHERE a.id IN ({marks})")
        for a, b in select_in(self.conn, sql, ids):
            out.setdefault(a, []).append(b)
        return out

    def following(self, ids: list[int]) -> dict[int, int]:
        """The record just after each given fact in its file and section."""
        sql = ("SELECT a.id, b.id FROM facts a JOIN facts b ON b.path = a.path AND b.ord = a.ord + 1"
               " AND b.context IS a.context WHERE a.id IN ({marks})")
        return dict(select_in(self.conn, sql, ids))

    def nearby(self, ids: list[int], window: int) -> dict[int, list[tuple[int, int]]]:
        """(record, distance) within `window` records of each given fact, in its file and section."""
        out: dict[int, list[tuple[int, int]]] = {}
        sql = ("SELECT a.id, b.id, ABS(b.ord - a.ord) FROM facts a JOIN facts b ON b.path = a.path"
               " AND b.context IS a.context AND b.ord BETWEEN a.ord - ? AND a.ord + ? AND b.id != a.id"
               " WHERE a.id IN ({marks})")
        for a, b, dist in select_in(self.conn, sql, ids, before=[window, window]):
            out.setdefault(a, []).append((b, dist))
        return out

    def facts_sharing_entities(self, fact_id: int, filters: Filters, k: int) -> list[int]:
        """Up to `k` other facts that mention an entity `fact_id` mentions (an @mention or a link)."""
        return entities.facts_sharing(self.conn, fact_id, filters, k)

    def ids_for_hashes(self, hits: list[tuple[str, float]], filters: Filters) -> list[tuple[int, float]]:
        """(fact id, similarity) for vector hits (hash, similarity), filters applied, best first."""
        if not hits:
            return []
        sims = dict(hits)
        where, params = filters.sql()
        sql = f"SELECT f.id, f.ehash FROM facts f WHERE f.ehash IN ({{marks}}) AND {where}"
        out = [(fid, sims[h]) for fid, h in select_in(self.conn, sql, list(sims), after=params)]
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    def sample_texts(self, limit: int) -> list[tuple[str, str]]:
        """(content, ehash) of up to `limit` embedded facts spread evenly over the ids (a look-up by
        id, not a scan: ~`limit` rows read at any size)."""
        low, high = self.conn.execute("SELECT min(id), max(id) FROM facts").fetchone()
        if low is None:
            return []
        ids = list(range(low, high + 1, max(1, (high - low + 1) // limit)))[:limit]
        return list(select_in(self.conn, "SELECT content, ehash FROM facts WHERE id IN ({marks}) AND ehash IS NOT NULL", ids))

    def texts_for_hashes(self, hashes: list[str]) -> dict[str, str]:
        """embedded-text hash → the content of a fact embedding it."""
        return dict(select_in(self.conn, "SELECT ehash, content FROM facts WHERE ehash IN ({marks})", hashes))

    def data_version(self) -> int:
        """Changes whenever another connection commits to the index."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def state_version(self) -> tuple[int, int]:
        """Changes whenever the index changes, by another connection or by this one."""
        return self.data_version(), self.conn.total_changes

    def latest(self, filters: Filters, k: int) -> list[dict]:
        """Facts matching only the filters, newest first."""
        where, params = filters.sql()
        cols = ", ".join(f"f.{c}" for c in FACT_COLUMNS)
        sql = (f"SELECT {cols}, NULL AS score FROM facts f WHERE {where}"
               " ORDER BY f.date DESC NULLS LAST, f.path, f.ord LIMIT ?")
        return self._rows(sql, [*params, k])

    def latest_ids(self, filters: Filters, k: int) -> list[int]:
        """The ids of `latest(filters, k)`, in its order."""
        where, params = filters.sql()
        sql = f"SELECT f.id FROM facts f WHERE {where} ORDER BY f.date DESC NULLS LAST, f.path, f.ord LIMIT ?"
        return [r[0] for r in self.conn.execute(sql, [*params, k])]

    def fact_order(self) -> FactOrder:
        """Every fact's id in `latest`'s order (newest first), and its place: for `latest_ids_each`."""
        ids = [i for (i,) in self.conn.execute("SELECT id FROM facts ORDER BY date DESC NULLS LAST, path, ord")]
        return FactOrder(ids, dict(zip(ids, range(len(ids)))))

    def latest_ids_each(self, matches: dict[str, EntityMatch], k: int, order: FactOrder) -> dict[str, list[int]]:
        """name → `latest_ids(Filters(entities=[match]), k)` for many entities in one pass, given
        `fact_order()` (read once, however many passes): their facts found by key (one query) and by
        plain name (one full-text match each), then put in that order (a query per entity sorted its
        ~1,000 facts afresh)."""
        keys = sorted({key for m in matches.values() for key in m.keys})
        by_key: dict[str, list[int]] = {}
        for key, fact_id in select_in(self.conn, "SELECT key, fact_id FROM fact_entities WHERE key IN ({marks})", keys):
            by_key.setdefault(key, []).append(fact_id)
        out = {}
        at, place = order  # places sort as plain ints
        for name, m in matches.items():
            found = {i for key in m.keys for i in by_key.get(key, ())}
            if m.plain:
                found.update(r[0] for r in self.conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?",
                                                             (m.plain,)))
            places = sorted(p for p in map(place.get, found) if p is not None)
            out[name] = [at[n] for n in places[:k]]
        return out

    def listing_rows(self, ids: Iterable[int]) -> list[tuple]:
        """(id, path, kind, date, valid_from, valid_to, line_start, line_end, entities, confidence, ord)
        of each of `ids` still indexed: what a listing shows of a fact but its text (`fact_contents`),
        and its place in its file. Tuples, not dicts: a reflect run reads ~50,000 of them at 10^5 facts."""
        sql = ("SELECT id, path, kind, date, valid_from, valid_to, line_start, line_end, entities, confidence, ord"
               " FROM facts WHERE id IN ({marks})")
        return list(select_in(self.conn, sql, ids))

    def ids_at(self, paths: Iterable[str]) -> dict[tuple[str, int], int]:
        """(path, ord) → id of every fact of `paths` (from the index on both: no fact row is read)."""
        return {(p, o): i for p, o, i in select_in(self.conn, "SELECT path, ord, id FROM facts WHERE path IN ({marks})",
                                                   paths)}

    def place_offsets(self, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
        """path → (offset, n) of each of `paths` whose n facts sit at the ids offset + their place in
        the file (places 0 … n-1, as `put_file` gives them), from the index on path and place alone:
        a fact's id from its place without a row per fact. A file whose facts do not sit so is left out."""
        return {p: (low, n) for p, low, high, first, last, n in select_in(
            self.conn, "SELECT path, MIN(id - ord), MAX(id - ord), MIN(ord), MAX(ord), COUNT(*) FROM facts"
                       " WHERE path IN ({marks}) GROUP BY path", paths) if low == high and first == 0 and last == n - 1}

    def lines_at(self, paths: Iterable[str]) -> dict[tuple[str, int], tuple[int, int | None]]:
        """(path, ord) → (first line, last line) of every fact of `paths`."""
        return {(p, o): (a, b) for p, o, a, b in select_in(
            self.conn, "SELECT path, ord, line_start, line_end FROM facts WHERE path IN ({marks})", paths)}

    def ids_naming(self, matches: dict[str, EntityMatch], ids: list[int]) -> dict[str, set[int]]:
        """name → those of `ids` that `latest_ids_each` would find for its match (by key, or by plain
        name): the facts of a few files, without matching every fact."""
        if not ids:
            return {}
        among = set(ids)
        by_key: dict[str, set[int]] = {}
        for key, fact_id in select_in(self.conn, "SELECT key, fact_id FROM fact_entities WHERE fact_id IN ({marks})", ids):
            by_key.setdefault(key, set()).add(fact_id)
        low, high = min(among), max(among)  # a full-text match within these rowids only
        out = {}
        for name, m in matches.items():
            found = {i for key in m.keys for i in by_key.get(key, ())}
            if m.plain:
                found.update(r[0] for r in self.conn.execute(
                    "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? AND rowid BETWEEN ? AND ?", (m.plain, low, high))
                    if r[0] in among)
            out[name] = found
        return out

    def fact_contents(self, ids: Iterable[int]) -> dict[int, str]:
        """id → text of each of `ids` still indexed."""
        return dict(select_in(self.conn, "SELECT id, content FROM facts WHERE id IN ({marks})", ids))

    def opinion_rows(self, filters: Filters) -> list[dict]:
        """Every opinion fact passing `filters`, newest first, with its analysed `terms`."""
        where, params = filters.sql()
        cols = ", ".join(f"f.{c}" for c in FACT_COLUMNS)
        sql = (f"SELECT {cols}, f.terms FROM facts f WHERE f.kind = 'opinion' AND {where}"
               " ORDER BY f.date DESC NULLS LAST, f.path, f.ord")
        return self._rows(sql, params)

    def evidence_rows(self, keys_by_name: dict[str, list[str]], k: int) -> list[tuple]:
        """For each name, the newest `k` facts mentioning it (by any of its keys): one query for every
        entity. Only what evidence is weighed by, as tuples (name, path, line_start, line_end, date,
        valid_from, valid_to, content, terms, ord, weighed); `weighed` is 0 for opinions and facts on
        bank pages (not evidence, but in the `k`): ~27,000 rows at 10^5 facts."""
        if not keys_by_name:
            return []
        pairs = [(name, key) for name, keys in keys_by_name.items() for key in keys]
        values = ",".join("(?, ?)" for _ in pairs)
        cols = ", ".join(f"f.{c}" for c in ("path", "line_start", "line_end", "date", "valid_from", "valid_to",
                                            "content", "terms", "ord"))
        # Ranked on the columns the order needs, whole rows read for the newest k alone (an entity
        # mentioned in 4·10^4 of 10^6 facts: 160 -> 124 ms).
        sql = (f"WITH names(name, key) AS (VALUES {values}),"
               " hits AS (SELECT DISTINCT n.name, e.fact_id FROM names n JOIN fact_entities e ON e.key = n.key),"
               " ranked AS (SELECT h.name, f.id, f.kind, f.path, ROW_NUMBER() OVER (PARTITION BY h.name"
               " ORDER BY f.date DESC NULLS LAST, f.path, f.ord) AS rn FROM hits h JOIN facts f ON f.id = h.fact_id)"
               f" SELECT r.name, {cols}, {_WEIGHED.format(f='r')} FROM ranked r JOIN facts f ON f.id = r.id"
               " WHERE r.rn <= ? ORDER BY r.name, r.rn")
        return self.conn.execute(sql, [x for pair in pairs for x in pair] + [k]).fetchall()

    def evidence_of(self, paths: Iterable[str]) -> list[tuple]:
        """(id, key, path, ord, date, line_start, line_end, valid_from, valid_to, content, terms, weighed)
        of each fact of `paths` and each entity key it mentions (`weighed` as in `evidence_rows`)."""
        sql = ("SELECT f.id, e.key, f.path, f.ord, f.date, f.line_start, f.line_end, f.valid_from, f.valid_to,"
               f" f.content, f.terms, {_WEIGHED.format(f='f')} FROM facts f JOIN fact_entities e ON e.fact_id = f.id"
               " WHERE f.path IN ({marks})")
        return list(select_in(self.conn, sql, sorted(paths)))

    def _rows(self, sql: str, params: list) -> list[dict]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    # --- entities (store/entities.py) ------------------------------------------------------

    def entity_keys(self, name: str) -> list[str]:
        """All mention keys that mean the same entity as `name` (slug, aliases, title)."""
        return entities.entity_keys(self.conn, name)

    def entity_match(self, name: str) -> EntityMatch:
        """Which facts are about the entity `name`: by mention, and by plain name once it has a page."""
        return entities.entity_match(self.conn, name)

    def canonical_names(self, names: Iterable[str]) -> dict[str, str]:
        """Mention → entity page slug, for mentions that resolve to a page."""
        return entities.canonical_names(self.conn, names)

    def spellings(self, key: str) -> set[str]:
        """Every spelling of the mentions whose key is `key`."""
        return entities.spellings(self.conn, key)

    def entity_counts(self, minimum: int) -> list[tuple[str, int]]:
        """One name per entity mentioned in at least `minimum` facts: its page slug, else its most common spelling."""
        return entities.entity_counts(self.conn, minimum)

    def facts_with_links(self) -> list[tuple[str, int, str]]:
        """(path, first line, content) of every fact that holds a `[[link]]`."""
        return self.conn.execute("SELECT path, line_start, content FROM facts WHERE instr(content, '[[') > 0"
                                 " ORDER BY path, line_start").fetchall()

    def entity_page(self, name: str) -> dict | None:
        """The entity page `name` resolves to (by slug, title or alias): its slug and path."""
        return entities.entity_page(self.conn, name)

    def consolidation_rows(self) -> list[tuple]:
        """(path, line_start, line_end, kind, day, entities, content, ehash, terms) of every fact
        consolidation looks at: everything but the journal (generated blocks are never indexed). Each
        file's trust tier is `file_trust`'s (a join per fact would cost a quarter of the read)."""
        return self.conn.execute(
            "SELECT f.path, f.line_start, f.line_end, f.kind, COALESCE(f.date, f.valid_from), f.entities, f.content,"
            " f.ehash, f.terms FROM facts f WHERE f.path != 'bank/journal.md' ORDER BY f.id").fetchall()

    def fact_spans(self, leave_out: str) -> dict[str, tuple[int, int, int]]:
        """path → (first id, last id, facts) of every file with facts but `leave_out` (the index's
        path index alone: no fact row is read)."""
        return {r[0]: (r[1], r[2], r[3]) for r in self.conn.execute(
            "SELECT path, MIN(id), MAX(id), COUNT(*) FROM facts WHERE path != ? GROUP BY path", (leave_out,))}

    def consolidation_rows_of(self, paths: list[str]) -> list[tuple]:
        """(id, then `consolidation_rows`' columns) of the facts of `paths`."""
        return list(select_in(self.conn, "SELECT f.id, f.path, f.line_start, f.line_end, f.kind,"
                                         " COALESCE(f.date, f.valid_from), f.entities, f.content, f.ehash, f.terms"
                                         " FROM facts f WHERE f.path IN ({marks})", paths))

    def fact_texts_by_id(self, ids: list[int]) -> dict[int, tuple[str, str | None]]:
        """id → (content, analysed terms) of the facts `ids`."""
        return {r[0]: (r[1], r[2]) for r in select_in(self.conn, "SELECT id, content, terms FROM facts"
                                                          " WHERE id IN ({marks})", ids)}

    def file_hashes(self) -> dict[str, str]:
        """path → content hash of every indexed file."""
        return dict(self.conn.execute("SELECT path, hash FROM files"))

    def file_trust(self) -> dict[str, str]:
        """path → trust tier declared in its front matter ('normal' without one), of every indexed file."""
        return dict(self.conn.execute("SELECT path, COALESCE(trust, 'normal') FROM files"))

    def fact_texts(self) -> list[tuple[str, str]]:
        """(path, content) of every fact consolidation looks at (what its keys are made from)."""
        return self.conn.execute("SELECT path, content FROM facts WHERE path != 'bank/journal.md'").fetchall()

    def indexed_trust(self) -> dict[str, tuple[int, int, int, str]]:
        """path → (size, mtime_ns, ctime_ns, trust tier) of every file indexed from its text (status ok), in
        one query: a reflect run asks for ~2,800 files at 10^5 facts."""
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in self.conn.execute(
            "SELECT path, size, mtime_ns, ctime_ns, COALESCE(trust, 'normal') FROM files WHERE status = 'ok'")}

    def trust_levels(self, paths: list[str]) -> dict[str, str]:
        """path → trust tier (normal, private, legal) from each file's front matter."""
        if not paths:
            return {}
        sql = f"SELECT path, COALESCE(trust, 'normal') FROM files WHERE path IN ({','.join('?' * len(paths))})"
        return dict(self.conn.execute(sql, list(paths)))

    # --- the whole index (store/summary.py) ------------------------------------------------

    def diagnostics(self) -> list[tuple]:
        return summary.diagnostics(self.conn)

    def stats(self) -> dict:
        return summary.stats(self.conn)

    def dump(self) -> dict[str, list[tuple]]:
        """Every row of every table except row ids, sorted: two indexes of the same Markdown compare equal."""
        return summary.dump(self.conn)

    def entity_pages(self) -> list[tuple[str, str]]:
        return entities.entity_pages(self.conn)

    def entity_page_mentions(self) -> list[tuple[str, str]]:
        """(page entity, JSON list of entities) of every fact on an entity page that mentions any."""
        return entities.entity_page_mentions(self.conn)

    # --- aggregates for the web view (store/overview.py) -----------------------------------

    def day_kind_counts(self) -> list[tuple[str, str, int]]:
        return overview.day_kind_counts(self.conn)

    def co_mentions(self, limit: int = 60) -> list[tuple[str, str, int]]:
        return overview.co_mentions(self.conn, limit)

    def aliases(self) -> dict[str, list[str]]:
        return overview.aliases(self.conn)


_WORDS = re.compile(r"[^\W_]+")  # FTS5 unicode61 tokens (letters and digits), as a superset


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _verify(conn, path: Path) -> None:
    """Raise IndexUnavailable (corrupt) unless SQLite's quick_check finds every page sound; a page
    too damaged to check raises the driver's error, which `Store.open` reads the same way."""
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        conn.close()
        raise IndexUnavailable(f"the index {path} is damaged ({'; '.join(problems)})",
                               "run 'mem index --rebuild' to recreate it from the Markdown", corrupt=True)


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
