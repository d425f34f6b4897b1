"""The SQLite driver, chosen in this one place: sqlean (can load extensions) > pysqlite3 > sqlite3."""

from __future__ import annotations


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


sqlite, DRIVER = _load_driver()
