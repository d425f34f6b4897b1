"""Machine-local memory state, `.memory/local.sqlite`: what cannot be rebuilt from the Markdown.

- `access`: one row per fact a recall returned (the access log behind stability), appended by
  recalls to `access.log` beside this file and folded in where it is read (`fold_access_log`);
- `usage`: per fact, its stability in days, last use and use count (updated by `mem reflect`);
- `folds`: facts folded into another (duplicates), `supersede`: older facts a newer one replaced,
  `review`: near-duplicates and possible contradictions waiting for a person or a model,
  with the model's decision once made;
- `seen`: facts a reflect run has already examined (so a run costs what is new);
- `posted_files`, `fact_words`, `word_postings`: the word sets of every file's facts and the
  postings consolidation searches for candidates, kept per file (a cache: emptied, it is rebuilt);
- `query_vectors`: the vectors of the latest queries one-shot recalls embedded, by model (a cache:
  a repeated query skips the model; emptied, it is refilled). Made by the first recall that keeps
  one, outside the migrations: a memtool from before it reads the file as before.
- `reflect_windows`: per entity, the newest facts its page was made from (a cache of reflect's, see
  memtool.reflect.windows), tied to the run that saved them by the meta key `reflect_windows`. Made
  by the first reflect run that keeps one, outside the migrations, like `query_vectors`.
- `reflect_evidence`: per entity with opinion threads, the newest facts its evidence is weighed
  among (a cache of reflect's, see memtool.reflect.evidence); made like `reflect_windows`.
- `reflect_ledger`: per file, what consolidation reads of each fact but its text, under the stamp
  it was made from (a cache of reflect's, see memtool.reflect.ledger); made like `reflect_windows`.

Facts are named by `fact_key(path, content)`: stable when lines move, new when the text changes.
`mem index --rebuild` never touches this file; deleting it forgets usage and decisions only.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from memtool import TYPE_CHECKING
from memtool.digests import blake2b
from memtool.errors import StorageError, WorkspaceError
from memtool.store.driver import Meta, Transaction, as_mem_error, connect, migrate, select_in, sqlite, vacuum

if TYPE_CHECKING:  # no `typing` on the read path
    from typing import AbstractSet

try:
    import fcntl
except ImportError:  # Windows: no `flock`, so no access log file; a recall writes its rows itself
    fcntl = None

_SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS access (key TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS usage (key TEXT PRIMARY KEY, stability REAL NOT NULL, last_used REAL NOT NULL,
                                  uses INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS folds (key TEXT PRIMARY KEY, kept TEXT NOT NULL, cos REAL, lex REAL, how TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS supersede (old TEXT PRIMARY KEY, new TEXT NOT NULL, until TEXT, how TEXT NOT NULL,
                                      why TEXT, old_source TEXT, old_content TEXT, new_source TEXT);
CREATE INDEX IF NOT EXISTS supersede_new ON supersede(new);
CREATE TABLE IF NOT EXISTS review (a TEXT NOT NULL, b TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
                                   reason TEXT, detail TEXT, PRIMARY KEY (a, b, kind));
CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY, words TEXT);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
"""


def _migration_1(conn) -> None:
    """The first schema (files made before migrations were counted hold it already: IF NOT EXISTS)."""
    for statement in filter(str.strip, _SCHEMA_1.split(";")):
        conn.execute(statement)


_POSTINGS = """
CREATE TABLE IF NOT EXISTS posted_files (path TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fact_words (path TEXT NOT NULL, key TEXT NOT NULL, words TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS fact_words_path ON fact_words(path);
CREATE TABLE IF NOT EXISTS word_postings (word TEXT PRIMARY KEY, n INTEGER NOT NULL, keys TEXT) WITHOUT ROWID;
"""


def _migration_2(conn) -> None:
    """Reflect's word postings (a cache, see memtool.reflect.postings): per file, the word sets of its
    facts; per word, how many facts hold it and, while few do, which."""
    for statement in filter(str.strip, _POSTINGS.split(";")):
        conn.execute(statement)


MIGRATIONS = [_migration_1, _migration_2]  # MIGRATIONS[n] takes the file from version n to n + 1
LOCAL_VERSION = len(MIGRATIONS)


# Query vectors kept for one-shot recalls (`keep_query_vectors`): the newest this many (~1.6 KB
# each at 384 dimensions); a repeated query then skips loading the model (docs/benchmarks-history.md,
# "hyshot4 session").
QUERY_VECTORS_KEPT = 1_000
_QUERY_VECTORS = ("CREATE TABLE IF NOT EXISTS query_vectors (model TEXT NOT NULL, text TEXT NOT NULL,"
                  " vec BLOB NOT NULL, made REAL NOT NULL, PRIMARY KEY (model, text)) WITHOUT ROWID")
REFLECT_CACHE = "reflect_cache"  # meta key of what the last reflect run may leave the next (memtool.reflect.cache)
REFLECT_WEIGHED = "reflect_weighed"  # meta key of the last reflect run's opinion evidence verdicts (reflect.cache)
REFLECT_WINDOWS = "reflect_windows"  # meta key naming the run whose entity windows `reflect_windows` holds
_WINDOWS = "CREATE TABLE IF NOT EXISTS reflect_windows (entity TEXT PRIMARY KEY, facts TEXT NOT NULL)"
REFLECT_EVIDENCE = "reflect_evidence"  # meta key naming the run whose evidence windows `reflect_evidence` holds
_EVIDENCE = ("CREATE TABLE IF NOT EXISTS reflect_evidence (entity TEXT PRIMARY KEY, keys TEXT NOT NULL,"
             " facts TEXT NOT NULL)")
REFLECT_LEDGER = "reflect_ledger"  # meta key of reflect's fact ledger: format and versions (memtool.reflect.ledger)
REFLECT_POSTINGS = "reflect_postings"  # meta key of reflect's word postings: format and totals (memtool.reflect.postings)
ACCESS_LOG = "access.log"  # beside local.sqlite: each recall's "time key key …" line, until folded into `access`
ACCESS_FOLDED = "access_folded"  # meta key: the names of the renamed logs already in `access` (`fold_access_log`)
_COUNTED = ("access", "usage", "folds", "supersede", "review", "seen")  # the tables `counts` gives rows of
_LEDGER = ("CREATE TABLE IF NOT EXISTS reflect_ledger (path TEXT PRIMARY KEY, stamp TEXT NOT NULL, rows TEXT NOT NULL)"
           " WITHOUT ROWID")  # made when first written (memtool.reflect.ledger)
FOLDING = ".folding"  # the end of a renamed log's name: access.log.<random>.folding


def fact_key(path: str, content: str) -> str:
    return blake2b(f"{path}\x1f{content}".encode(), digest_size=8).hexdigest()


class LocalState:
    """An open `.memory/local.sqlite` (no vectors here: sqlite-vec is not loaded)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        hint = (f"move {path} aside: it only holds usage and reflect's decisions, "
                "which the next runs rebuild (recall keeps working meanwhile)")
        try:
            self.conn, _ = connect(str(path), vec=False)
            migrate(self.conn, MIGRATIONS, lambda version: WorkspaceError(
                f"{path.name} was written by a newer memtool (version {version} > {LOCAL_VERSION})", hint))
        except sqlite.DatabaseError as exc:
            storage = as_mem_error(exc, str(path))  # a full disk is not damage: nothing to move aside
            if isinstance(storage, StorageError):
                raise storage from None
            raise WorkspaceError(f"{path.name} is damaged ({exc})", hint) from None  # not the index's hint
        self._meta = Meta(self.conn, key="k", value="v")
        self.access_log = path.with_name(ACCESS_LOG)

    def close(self) -> None:
        self.conn.close()

    def _many(self, sql: str, keys: list[str]) -> list[tuple]:
        return list(select_in(self.conn, sql, keys))

    # --- recall side ---------------------------------------------------------------------------

    def fold_access_log(self) -> None:
        """Move the recalls appended to `access.log` (`LocalStateFile.record_access`) into `access`:
        what reads `access` to change it calls this first. The log is renamed to a name never used
        before (later recalls start a new log) and read once the appends begun before are done (each
        holds a shared lock while it writes); its rows and its name are committed together, so a file
        whose removal was interrupted is not counted twice, and one renamed by a fold that stopped
        before its commit is folded by the next. Another process folding at the same moment waits
        for this one's transaction, then finds nothing left to fold."""
        with self.transaction():  # one process folds at a time
            folded = self._folded()
            pending = self._renamed()
            fresh = self.access_log.with_name(f"{ACCESS_LOG}.{os.urandom(8).hex()}{FOLDING}")
            try:
                os.rename(self.access_log, fresh)
                pending.append(fresh)
            except FileNotFoundError:
                pass
            if not pending:
                return
            for path in pending:
                if path.name not in folded:
                    self.add_access(_logged_rows(path, lock=True))
            self.set_meta(ACCESS_FOLDED, " ".join(p.name for p in pending))
        for path in pending:
            path.unlink(missing_ok=True)

    def pending_accesses(self) -> list[tuple[str, float]]:
        """(key, time) of the recalls logged and not folded into `access` yet, read without changing
        anything (`mem status`, a dry run): what `fold_access_log` would add now."""
        folded = self._folded()
        paths = [p for p in self._renamed() if p.name not in folded] + [self.access_log]
        return [row for path in paths for row in _logged_rows(path, lock=False)]

    def _folded(self) -> set[str]:
        return set((self.meta(ACCESS_FOLDED) or "").split())

    def _renamed(self) -> list[Path]:
        return _renamed_logs(self.access_log)

    def add_access(self, rows: list[tuple[str, float]]) -> None:
        """(key, time) rows into `access`, in the caller's transaction."""
        self.conn.executemany("INSERT INTO access(key, at) VALUES (?, ?)", rows)

    def query_vectors(self, model: str, texts: list[str]) -> dict[str, bytes]:
        """The kept vectors (float32 bytes) of those query `texts` that `model` embedded before."""
        return _query_vectors(self.conn, model, texts)

    def keep_query_vectors(self, model: str, vectors: dict[str, bytes]) -> None:
        """Keep query vectors (text → float32 bytes) that `model` made, the QUERY_VECTORS_KEPT newest."""
        at = time.time()
        with self.transaction():
            self.conn.execute(_QUERY_VECTORS)
            self.conn.executemany("INSERT OR REPLACE INTO query_vectors(model, text, vec, made) VALUES (?, ?, ?, ?)",
                                  [(model, text, vec, at) for text, vec in vectors.items()])
            self.conn.execute("DELETE FROM query_vectors WHERE (model, text) IN (SELECT model, text FROM query_vectors"
                              " ORDER BY made DESC LIMIT -1 OFFSET ?)", (QUERY_VECTORS_KEPT,))

    # --- reflect's entity windows (memtool.reflect.windows) ----------------------------------------

    def windows(self, entities: list[str]) -> dict[str, str]:
        """entity → its kept window (JSON text), for those of `entities` that have one."""
        try:
            return dict(self._many("SELECT entity, facts FROM reflect_windows WHERE entity IN ({marks})", entities))
        except sqlite.OperationalError:  # not made yet, or dropped
            return {}

    def put_windows(self, run: str, fresh: dict[str, str], kept: set[str]) -> None:
        """Keep the `fresh` windows (entity → JSON text) and those of `kept` entities, drop the rest,
        and name the `run` they belong to, in one transaction."""
        with self.transaction():
            self.conn.execute(_WINDOWS)
            self._keep_only("reflect_windows", kept | fresh.keys())
            self.conn.executemany("INSERT OR REPLACE INTO reflect_windows(entity, facts) VALUES (?, ?)", fresh.items())
            self.set_meta(REFLECT_WINDOWS, run)

    def _keep_only(self, table: str, entities: AbstractSet[str]) -> None:
        """Drop the rows of reflect's per-entity `table` whose entity is not one of `entities` (inside
        the caller's transaction; a temporary table, not one bound parameter per entity)."""
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS kept_entities (entity TEXT PRIMARY KEY)")
        self.conn.execute("DELETE FROM kept_entities")
        self.conn.executemany("INSERT OR IGNORE INTO kept_entities VALUES (?)", [(e,) for e in entities])
        self.conn.execute(f"DELETE FROM {table} WHERE entity NOT IN (SELECT entity FROM kept_entities)")
        self.conn.execute("DROP TABLE kept_entities")

    # --- reflect's evidence windows (memtool.reflect.evidence) --------------------------------------

    def evidence_windows(self, entities: list[str]) -> dict[str, tuple[str, str]]:
        """entity → its kept evidence window (keys and facts, JSON texts), for those of `entities` that have one."""
        try:
            return {e: (k, f) for e, k, f in self._many(
                "SELECT entity, keys, facts FROM reflect_evidence WHERE entity IN ({marks})", entities)}
        except sqlite.OperationalError:  # not made yet, or dropped
            return {}

    def evidence_keys(self) -> dict[str, str]:
        """entity → the keys (JSON text) of its kept evidence window, for every kept one."""
        try:
            return dict(self.conn.execute("SELECT entity, keys FROM reflect_evidence"))
        except sqlite.OperationalError:
            return {}

    def put_evidence_windows(self, run: str, fresh: dict[str, tuple[str, str]], kept: set[str]) -> None:
        """Keep the `fresh` evidence windows (entity → keys and facts, JSON texts) and those of `kept`
        entities, drop the rest, and name the `run` they belong to, in one transaction."""
        with self.transaction():
            self.conn.execute(_EVIDENCE)
            self._keep_only("reflect_evidence", kept | fresh.keys())
            self.conn.executemany("INSERT OR REPLACE INTO reflect_evidence(entity, keys, facts) VALUES (?, ?, ?)",
                                  [(e, k, f) for e, (k, f) in fresh.items()])
            self.set_meta(REFLECT_EVIDENCE, run)

    def lookup(self, keys: list[str]) -> dict[str, dict]:
        """For each key that has any: its fold target, its successor, its usage, what it superseded."""
        out: dict[str, dict] = {}
        for key, kept in self._many("SELECT key, kept FROM folds WHERE key IN ({marks})", keys):
            out.setdefault(key, {})["folded_into"] = kept
        for row in self._many("SELECT old, new, until, new_source FROM supersede WHERE old IN ({marks})", keys):
            out.setdefault(row[0], {})["superseded"] = {"by": row[1], "until": row[2], "source": row[3]}
        for row in self._many("SELECT new, old_content, old_source, until FROM supersede WHERE new IN ({marks})", keys):
            out.setdefault(row[0], {}).setdefault("previously", []).append(
                {"content": row[1], "source": row[2], "until": row[3]})
        for key, s, last, uses in self._many("SELECT key, stability, last_used, uses FROM usage WHERE key IN ({marks})", keys):
            out.setdefault(key, {})["usage"] = {"stability": s, "last_used": last, "uses": uses}
        return out

    # --- reflect side ---------------------------------------------------------------------------

    def meta(self, key: str, default: str | None = None) -> str | None:
        return self._meta.get(key, default)

    def set_meta(self, key: str, value: str) -> None:
        self._meta.set(key, value)

    def unseen(self, keys: list[str]) -> list[str]:
        seen = {k for (k,) in self.conn.execute("SELECT key FROM seen")}
        return [k for k in keys if k not in seen]

    def seen_words(self) -> dict[str, str]:
        """key → the word set (space-separated) of every fact examined before: no need to re-tokenize."""
        return dict(self.conn.execute("SELECT key, words FROM seen"))

    def mark_seen(self, items: list[tuple[str, str]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO seen(key, words) VALUES (?, ?)", items)

    # --- reflect's word postings (memtool.reflect.postings) ---------------------------------------

    def posted_files(self) -> dict[str, str]:
        """path → digest of the fact keys its postings were made from."""
        return dict(self.conn.execute("SELECT path, digest FROM posted_files"))

    def posted_totals(self) -> tuple[int, int]:
        """(fact rows, word occurrences) the postings hold: what a consistent cache must add up to."""
        rows = self.conn.execute("SELECT COUNT(*) FROM fact_words").fetchone()[0]
        return rows, self.conn.execute("SELECT COALESCE(SUM(n), 0) FROM word_postings").fetchone()[0]

    def file_words(self, paths: list[str]) -> dict[str, list[tuple[str, str]]]:
        """path → (key, words) of each of its facts, in order, as the postings hold them."""
        out: dict[str, list[tuple[str, str]]] = {}
        for path, key, words in self._many("SELECT path, key, words FROM fact_words WHERE path IN ({marks})"
                                           " ORDER BY rowid", paths):
            out.setdefault(path, []).append((key, words))
        return out

    def postings(self, words: set[str]) -> dict[str, tuple[int, str | None]]:
        """word → (facts holding it, their keys space-separated; None once too many to keep)."""
        return {w: (n, keys) for w, n, keys in self._many("SELECT word, n, keys FROM word_postings WHERE word IN ({marks})",
                                                           sorted(words))}

    def put_postings(self, files: dict[str, tuple[str, list[tuple[str, str]]] | None],
                     words: dict[str, tuple[int, str | None] | None]) -> None:
        """Replace the postings of `files` (path → (digest, rows), None: gone) and of `words` (None: gone)."""
        for path, value in files.items():
            self.conn.execute("DELETE FROM fact_words WHERE path = ?", (path,))
            if value is None:
                self.conn.execute("DELETE FROM posted_files WHERE path = ?", (path,))
                continue
            digest, rows = value
            self.conn.execute("INSERT OR REPLACE INTO posted_files(path, digest) VALUES (?, ?)", (path, digest))
            self.conn.executemany("INSERT INTO fact_words(path, key, words) VALUES (?, ?, ?)",
                                  [(path, k, w) for k, w in rows])
        self.conn.executemany("DELETE FROM word_postings WHERE word = ?", [(w,) for w, v in words.items() if v is None])
        self.conn.executemany("INSERT OR REPLACE INTO word_postings(word, n, keys) VALUES (?, ?, ?)",
                              [(w, *v) for w, v in words.items() if v is not None])

    def reset_postings(self) -> None:
        """Empty the postings, making their tables again if something dropped them (the next run rebuilds them)."""
        _migration_2(self.conn)
        for table in ("posted_files", "fact_words", "word_postings"):
            self.conn.execute(f"DELETE FROM {table}")

    # --- reflect's fact ledger (memtool.reflect.ledger) ---------------------------------------------

    def ledger(self) -> dict[str, tuple[str, str]]:
        """path → (stamp, rows as JSON) of every file in the ledger (none before one was written)."""
        try:
            rows = self.conn.execute("SELECT path, stamp, rows FROM reflect_ledger")
            return {p: (stamp, text) for p, stamp, text in rows}
        except sqlite.OperationalError:  # no such table
            return {}

    def put_ledger(self, files: dict[str, tuple[str, str] | None]) -> None:
        """Replace the ledger entries of `files` (path → (stamp, rows as JSON); None: gone)."""
        self.conn.execute(_LEDGER)
        self.conn.executemany("DELETE FROM reflect_ledger WHERE path = ?",
                              [(p,) for p, v in files.items() if v is None])
        self.conn.executemany("INSERT OR REPLACE INTO reflect_ledger(path, stamp, rows) VALUES (?, ?, ?)",
                              [(p, *v) for p, v in files.items() if v is not None])

    def reset_ledger(self) -> None:
        """Empty the ledger (the next run makes it again from every fact)."""
        self.conn.execute(_LEDGER)
        self.conn.execute("DELETE FROM reflect_ledger")
        self.conn.execute("DELETE FROM meta WHERE k = ?", (REFLECT_LEDGER,))

    def decisions_signature(self) -> str:
        """A hash of what reflect decided (folds, supersessions, review items) and of how many facts it
        has examined: it changes whenever a run, a person or a model changes any of them."""
        h = blake2b(digest_size=16)
        for sql in ("SELECT key, kept, how FROM folds ORDER BY key",
                    "SELECT old, new, until, how, why, old_source, old_content, new_source FROM supersede ORDER BY old",
                    "SELECT a, b, kind, status, reason FROM review ORDER BY a, b, kind",
                    "SELECT COUNT(*) FROM seen"):
            for row in self.conn.execute(sql):
                h.update("\x1f".join(map(str, row)).encode() + b"\x1e")
            h.update(b"\x1d")
        return h.hexdigest()

    def supersessions(self) -> dict[str, tuple]:
        """old key → (new key, until, old source, new source) of every supersession."""
        return {r[0]: r[1:] for r in self.conn.execute("SELECT old, new, until, old_source, new_source FROM supersede")}

    def accesses_since(self, rowid: int, fold: bool = True) -> tuple[dict[str, list[float]], int]:
        """key → access times after access row `rowid`, and the last rowid read; the access log
        folded in first, or (`fold` False: a dry run) read beside the table, changing nothing."""
        if fold:
            self.fold_access_log()
        out: dict[str, list[float]] = {}
        last = rowid
        for rid, key, at in self.conn.execute("SELECT rowid, key, at FROM access WHERE rowid > ? ORDER BY rowid", (rowid,)):
            out.setdefault(key, []).append(at)
            last = rid
        for key, at in ([] if fold else self.pending_accesses()):
            out.setdefault(key, []).append(at)
        return out, last

    def usage_all(self) -> dict[str, tuple[float, float, int]]:
        return {k: (s, last, uses) for k, s, last, uses in self.conn.execute("SELECT key, stability, last_used, uses FROM usage")}

    def put_usage(self, rows: list[tuple[str, float, float, int]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO usage(key, stability, last_used, uses) VALUES (?, ?, ?, ?)", rows)

    def put_folds(self, rows: list[tuple[str, str, float | None, float, str]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO folds(key, kept, cos, lex, how) VALUES (?, ?, ?, ?, ?)", rows)

    def put_supersede(self, rows: list[tuple]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO supersede(old, new, until, how, why, old_source, old_content,"
                              " new_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def put_review(self, rows: list[tuple[str, str, str, str, str | None, str | None]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO review(a, b, kind, status, reason, detail) VALUES (?, ?, ?, ?, ?, ?)", rows)

    def decide_review(self, a: str, b: str, kind: str, status: str, reason: str) -> None:
        self.conn.execute("UPDATE review SET status = ?, reason = ? WHERE a = ? AND b = ? AND kind = ?",
                          (status, reason, a, b, kind))

    def decide_pair(self, a: str, b: str, kind: str, status: str, reason: str) -> None:
        """Mark a review item decided, whichever order its sides were stored in."""
        self.conn.execute("UPDATE review SET status = ?, reason = ? WHERE kind = ? AND ((a = ? AND b = ?) OR (a = ? AND b = ?))",
                          (status, reason, kind, a, b, b, a))

    def clear_pair(self, a: str, b: str) -> None:
        """Undo any fold or supersession between two facts (a person's decision replaces it)."""
        self.conn.execute("DELETE FROM folds WHERE (key = ? AND kept = ?) OR (key = ? AND kept = ?)", (a, b, b, a))
        self.conn.execute("DELETE FROM supersede WHERE (old = ? AND new = ?) OR (old = ? AND new = ?)", (a, b, b, a))

    def reviews(self) -> list[tuple[str, str, str, str, str | None, str | None]]:
        """(kind, a, b, status, reason, detail) of every review item, open or decided."""
        return self.conn.execute("SELECT kind, a, b, status, reason, detail FROM review ORDER BY kind, a, b").fetchall()

    def open_reviews(self) -> list[tuple[str, str, str]]:
        """(kind, a, b) of every review item still open, as `put_review` stored them."""
        return self.conn.execute("SELECT kind, a, b FROM review WHERE status = 'open' ORDER BY kind, a, b").fetchall()

    def counts(self) -> dict[str, int]:
        """Rows per table, the recalls logged and not folded yet counted with `access` (changes nothing)."""
        out = {t: self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
               for t in _COUNTED}
        out["access"] += len(self.pending_accesses())
        return out

    def forget(self, live: AbstractSet[str]) -> None:
        """Drop decisions about facts that no longer exist (their text changed or was deleted)."""
        for table, cols in (("folds", ("key", "kept")), ("supersede", ("old", "new")), ("review", ("a", "b"))):
            rows = self.conn.execute(f"SELECT {cols[0]}, {cols[1]} FROM {table}").fetchall()
            gone = [r for r in rows if r[0] not in live or r[1] not in live]
            self.conn.executemany(f"DELETE FROM {table} WHERE {cols[0]} = ? AND {cols[1]} = ?", gone)

    def purge(self, live: set[str], needles: list[str]) -> bool:
        """Forget every row about a fact that no longer exists (keys not in `live`) or quoting any of
        `needles`, then VACUUM and empty the WAL so no page keeps them (False: another process kept
        the WAL from being emptied)."""
        self.fold_access_log()
        with self.transaction():
            self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS live_keys (key TEXT PRIMARY KEY)")
            self.conn.execute("DELETE FROM live_keys")
            self.conn.executemany("INSERT OR IGNORE INTO live_keys VALUES (?)", [(k,) for k in live])
            for table in ("access", "usage", "seen"):
                self.conn.execute(f"DELETE FROM {table} WHERE key NOT IN (SELECT key FROM live_keys)")
            self.forget(live)
            self.conn.execute("DELETE FROM meta WHERE k = ?", (REFLECT_CACHE,))  # a cache quoting facts as JSON
            self.conn.execute("DELETE FROM meta WHERE k = ?", (REFLECT_WEIGHED,))  # its evidence verdicts
            self.conn.execute("DELETE FROM meta WHERE k = ?", (REFLECT_WINDOWS,))
            self.conn.execute("DROP TABLE IF EXISTS reflect_windows")  # the facts of each entity page, by source
            self.conn.execute("DELETE FROM meta WHERE k = ?", (REFLECT_EVIDENCE,))
            self.conn.execute("DROP TABLE IF EXISTS reflect_evidence")  # the facts each opinion entity is weighed among
            self.reset_postings()  # a cache of every fact's words: rebuilt by the next reflect run, quietly
            self.set_meta(REFLECT_POSTINGS, '{"format": 0}')
            self.reset_ledger()  # entity names of every fact: made again by the next reflect run
            self.conn.execute("DROP TABLE IF EXISTS query_vectors")  # queries may quote what was forgotten: refilled
            for needle in needles:
                n = needle.casefold()
                for table, cols in (("supersede", ("why", "old_content")), ("review", ("reason", "detail")),
                                    ("seen", ("words",)), ("meta", ("v",))):
                    where = " OR ".join(f"instr(lower({c}), ?) > 0" for c in cols)
                    self.conn.execute(f"DELETE FROM {table} WHERE {where}", [n] * len(cols))
            self.conn.execute("DROP TABLE live_keys")
        return vacuum(self.conn)

    def transaction(self) -> Transaction:
        return Transaction(self.conn)


def _renamed_logs(access_log: Path) -> list[Path]:
    """The logs a fold renamed and has not removed yet (its own, an interrupted one's, another's)."""
    return sorted(access_log.parent.glob(f"{ACCESS_LOG}.*{FOLDING}"))


def _logged_rows(path: Path, lock: bool) -> list[tuple[str, float]]:
    """(key, time) of each line "time key key …" of the access log `path` ([] when it is gone); with
    `lock`, read once the appends in progress are done. Lines that do not read so (a write torn by a
    crash: each append starts on a line of its own) and a last line without its end are skipped."""
    try:
        with open(path, "rb") as f:
            if lock and fcntl is not None:
                fcntl.flock(f, fcntl.LOCK_EX)
            data = f.read()
    except FileNotFoundError:  # folded and removed by another process meanwhile
        return []
    rows = []
    for line in data.decode("utf-8", "replace").split("\n")[:-1]:
        at, *keys = line.split(" ")
        try:
            when = float(at)
        except ValueError:
            continue
        rows.extend((k, when) for k in keys if k)
    return rows


def kept_query_vectors(path: Path, model: str, texts: list[str]) -> dict[str, bytes]:
    """`LocalState.query_vectors` through a read-only connection of its own, for a process that
    writes nothing (memtool.search_aside); {} where the file or its table is not there or cannot be read."""
    try:
        conn = sqlite.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite.Error:
        return {}
    try:
        return _query_vectors(conn, model, texts)
    except sqlite.Error:
        return {}
    finally:
        conn.close()


def _query_vectors(conn, model: str, texts: list[str]) -> dict[str, bytes]:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'query_vectors'").fetchone() is None:
        return {}  # none kept yet
    return dict(select_in(conn, "SELECT text, vec FROM query_vectors WHERE model = ? AND text IN ({marks})",
                          texts, before=(model,)))


class LocalStateFile:
    """`.memory/local.sqlite`, opened on first use, and the access log beside it; asking whether
    they exist creates nothing."""

    def __init__(self, path: Path):
        self.path = path
        self.access_log = path.with_name(ACCESS_LOG)
        self._state: LocalState | None = None

    def exists(self) -> bool:
        """Whether the database is there (recalls may have logged accesses without it: `logged`)."""
        return self.path.exists()

    def logged(self) -> bool:
        """Whether recalls logged accesses not folded into the database yet (or a fold left a file)."""
        return self.access_log.exists() or bool(_renamed_logs(self.access_log))

    def counts(self) -> dict[str, int]:
        """`LocalState.counts`, without creating the database where recalls only logged accesses."""
        if self.exists():
            return self.open().counts()
        logged = sum(len(_logged_rows(p, lock=False)) for p in _renamed_logs(self.access_log) + [self.access_log])
        return dict.fromkeys(_COUNTED, 0) | {"access": logged}

    def record_access(self, keys: list[str], at: float | None = None) -> None:
        """Log that a recall returned the facts `keys`: one line appended to the access log, without
        opening the database: its transaction's `fsync`s (four, with the checkpoint at close) took
        4–80 ms of a one-shot recall's wall time. Readers of `access` fold the log in
        (`LocalState.fold_access_log`). Like the database's commits in its WAL mode, an append may
        be lost to a power cut, never half-read. Without `flock` (Windows) the rows go into the
        database at once."""
        if not keys:
            return
        at = at or time.time()
        if fcntl is None:
            state = self.open()
            with state.transaction():
                state.add_access([(k, at) for k in keys])
            return
        line = f"\n{at!r} {' '.join(keys)}\n".encode()  # on a line of its own after a torn write
        while True:
            fd = os.open(self.access_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)  # a fold reads the file only after this write
                try:
                    current = os.path.samestat(os.fstat(fd), os.stat(self.access_log))
                except FileNotFoundError:
                    current = False
                if current:  # not renamed for a fold since it was opened (else: append to the new log)
                    os.write(fd, line)
                    return
            finally:
                os.close(fd)

    def open(self) -> LocalState:
        if self._state is None:
            self._state = LocalState(self.path)
        return self._state

    def close(self) -> None:
        if self._state is not None:
            self._state.close()
            self._state = None
