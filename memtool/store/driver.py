"""The SQLite driver, chosen in this one place: sqlean (can load extensions) > pysqlite3 > sqlite3."""

from __future__ import annotations

import importlib.util
import os


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


def connect(path: str):
    """A connection with memtool's pragmas, and whether sqlite-vec loaded (or why not)."""
    conn = sqlite.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")
    return conn, load_vec(conn)


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


def as_mem_error(exc: BaseException, path: str | None = None):
    """A typed error for a driver exception caused by the file system (read-only, full disk), else None."""
    if not isinstance(exc, sqlite.DatabaseError):
        return None
    from memtool.errors import StorageError

    text = str(exc).lower()
    where = f" ({path})" if path else ""
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return StorageError(f"cannot write the index{where}: {exc}",
                            "memtool keeps its index and locks under .memory/: make that folder and its files writable "
                            "for this user (chmod -R u+w .memory), or run as the workspace's owner")
    if "disk is full" in text or ("disk i/o error" in text and path and _disk_full(path)):
        return StorageError(f"the disk holding the index is full{where}",
                            "free some space, then run the command again; the Markdown was not changed")
    return None


def _disk_full(path: str) -> bool:
    """Whether the file system holding `path` has (almost) no space left for this user."""
    try:
        st = os.statvfs(os.path.dirname(path) or ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 256 * 1024
