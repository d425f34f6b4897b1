"""The SQLite driver, chosen in this one place: sqlean (can load extensions) > pysqlite3 > sqlite3;
and what every database file shares: connection set-up, transactions, migrations, chunked `IN`."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Iterator, Sequence

from memtool.errors import IndexUnavailable, StorageError

CHUNK = 500  # values bound per `IN (…)`: well below SQLite's limit on host parameters


def _load_driver():
    """The DB-API module: sqlean (can load extensions) > pysqlite3 > the standard library."""
    try:
        import sqlean as driver  # type: ignore[import-not-found]

        return driver, "sqlean"
    except ImportError:
        pass
    try:
        from pysqlite3 import dbapi2 as driver  # type: ignore[import-not-found]

        return driver, "pysqlite3"
    except ImportError:
        pass
    import sqlite3 as driver

    return driver, "sqlite3"


sqlite, DRIVER = _load_driver()


# Every write of a file's row in a schema-7 index calls this function (triggers `files_guard_*`):
# this memtool's connections define it, an older memtool's do not, so a process started before an
# upgrade cannot go on writing facts whose terms it does not count (`term_docs`); its write fails.
WRITER_FUNCTION = "memtool_counts_terms"


def connect(path: str, vec: bool = True, cache_kib: int = 32_000):
    """A connection with memtool's pragmas, and whether sqlite-vec loaded (or why not); with
    `vec=False` (a file without vectors) the extension is not loaded and the reason is None.
    `cache_kib`: its page cache."""
    conn = sqlite.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.create_function(WRITER_FUNCTION, 0, lambda: None, deterministic=True)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
    return conn, load_vec(conn) if vec else None


class Transaction:
    """`with Transaction(conn):` a write transaction (BEGIN IMMEDIATE), committed unless the block raises.
    `before_commit` runs last inside it (what it raises rolls it back); `after_rollback` after a rollback."""

    def __init__(self, conn, before_commit: Callable[[], None] | None = None,
                 after_rollback: Callable[[], None] | None = None):
        self.conn = conn
        self.before_commit = before_commit
        self.after_rollback = after_rollback

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None and self.before_commit is not None:
                self.before_commit()
        except BaseException:
            self._rollback()
            raise
        if exc_type:
            self._rollback()
        else:
            self.conn.execute("COMMIT")
        return False

    def _rollback(self) -> None:
        try:
            if self.conn.in_transaction:  # SQLite may have rolled back already (an interrupt, a full disk)
                self.conn.execute("ROLLBACK")
        finally:
            if self.after_rollback is not None:
                self.after_rollback()


def vacuum(conn) -> bool:
    """Rewrite the file without free pages (which keep deleted rows) and truncate its WAL, zeroing
    what is freed on the way; False when another connection kept the WAL from being emptied."""
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("VACUUM")
    return conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0


def select_in(conn, sql: str, values: Iterable, before: Sequence = (), after: Sequence = ()) -> Iterator[tuple]:
    """The rows of `sql` run once per chunk of `values`, its `{marks}` replaced by that chunk's
    placeholders; `before` and `after` are bound around the chunk."""
    values = list(values)
    for i in range(0, len(values), CHUNK):
        chunk = values[i:i + CHUNK]
        yield from conn.execute(sql.replace("{marks}", ",".join("?" * len(chunk))), [*before, *chunk, *after])


def user_version(conn) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn, migrations: list[Callable], newer: Callable[[int], Exception]) -> int | None:
    """Run the numbered `migrations` (migrations[n] takes the file from version n to n + 1) that this
    file has not had, recorded in `PRAGMA user_version`; a file of a newer memtool raises `newer(version)`.
    Returns the version this call took the file from, None when it ran none."""
    latest = len(migrations)
    version = user_version(conn)
    if version > latest:
        raise newer(version)
    if version == latest:
        return None
    with Transaction(conn):
        version = user_version(conn)  # again under the write lock: another process may have migrated meanwhile
        for step in migrations[version:]:
            step(conn)
        if version < latest:
            conn.execute(f"PRAGMA user_version = {latest}")
    return version if version < latest else None


class Meta:
    """A key → value table (`meta` in each file)."""

    def __init__(self, conn, table: str = "meta", key: str = "key", value: str = "value"):
        self.conn = conn
        self._get = f"SELECT {value} FROM {table} WHERE {key} = ?"
        self._set = f"INSERT OR REPLACE INTO {table}({key}, {value}) VALUES (?, ?)"
        self._del = f"DELETE FROM {table} WHERE {key} = ?"

    def get(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute(self._get, (key,)).fetchone()
        return row[0] if row else default

    def set(self, key: str, value: str) -> None:
        self.conn.execute(self._set, (key, value))

    def delete(self, key: str) -> None:
        self.conn.execute(self._del, (key,))


def load_vec(conn) -> str | None:
    """Load sqlite-vec into `conn`; None on success, else a one-line reason."""
    if not hasattr(conn, "enable_load_extension"):
        return f"this Python's SQLite driver ({DRIVER}) cannot load extensions"
    # Locate the bundled loadable extension without importing `sqlite_vec`, whose import pulls in
    # numpy (~100 ms) even for lexical-only commands.
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return "the sqlite-vec package is not installed"
    entry = os.path.join(list(spec.submodule_search_locations)[0], "vec0")
    try:
        conn.enable_load_extension(True)
        try:
            conn.load_extension(entry)
        finally:
            conn.enable_load_extension(False)
    except Exception as exc:  # the extension failed to load: say why, fall back
        return f"sqlite-vec did not load ({exc})"
    return None


def damaged(exc: BaseException) -> bool:
    """Whether a driver error says the database file itself is damaged (not busy, not refused)."""
    return any(m in str(exc).lower() for m in ("not a database", "malformed", "corrupt"))


def as_mem_error(exc: BaseException, path: str | None = None):
    """A typed error for a driver exception caused by the file system (read-only, full disk, a
    folder where the index belongs) or by a damaged index file, else None."""
    if not isinstance(exc, sqlite.DatabaseError):
        return None
    text = str(exc).lower()
    where = f" ({path})" if path else ""
    if damaged(exc):  # found on opening, or later, at a page only a query reads
        return IndexUnavailable(f"the index{where} is damaged ({exc})",
                                "run 'mem index --rebuild': it sets the damaged index aside and builds a new one "
                                "from the Markdown (the Markdown is not changed)", corrupt=True)
    if path and os.path.isdir(path):
        return StorageError(f"cannot open the index{where}: a folder has its name",
                            f"move the folder {path} away (memtool makes a new index from the Markdown)")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return StorageError(f"cannot write the index{where}: {exc}",
                            "memtool keeps its index and locks under .memory/: make that folder and its files writable "
                            "for this user (chmod -R u+w .memory), or run as the workspace's owner")
    if "disk is full" in text or ("disk i/o error" in text and path and _disk_full(path)):
        return StorageError(f"the disk holding the index is full{where}",
                            "free some space, then run the command again; Markdown files are replaced whole, so "
                            "none was left half-written")
    if "disk i/o error" in text:  # EFBIG past `ulimit -f`, EIO, or a full disk SQLite saw as I/O
        return StorageError(f"the disk refused a write{where}: {exc}",
                            "free some space, raise the file size limit (ulimit -f) or check the disk, then run "
                            "the command again; files are replaced whole, so none was left half-written")
    return None


def _disk_full(path: str) -> bool:
    """Whether the file system holding `path` has (almost) no space left for this user."""
    try:
        st = os.statvfs(os.path.dirname(path) or ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 256 * 1024
