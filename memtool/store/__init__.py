"""The only package that talks to SQLite. The index (`.memory/index.sqlite`) is derived from the
Markdown and can be deleted at any time; `.memory/local.sqlite` holds what cannot be rebuilt.

- `driver`: which DB-API module is used (one place), connection set-up, transactions, migrations,
  chunked `IN (…)`, meta tables
- `schema`: the index's numbered migrations
- `index`: the index (`Store`): opening, writing files and facts, reading facts and full-text search
- `queries`: pure SQL construction: `Filters`, `EntityMatch`, `entity_key`, `FACT_COLUMNS`, the top-k query
- `entities`: entity lookups (keys, pages, canonical names, counts) over a connection
- `summary`: diagnostics, status counts and the full dump over a connection
- `vectors`: embedding vectors and nearest-neighbour search
- `local`: machine-local state (access log, stability, reflect's decisions)
"""

from memtool.store.driver import DRIVER, sqlite

__all__ = ["DRIVER", "FACT_COLUMNS", "EntityMatch", "SCHEMA_VERSION", "Filters", "Store", "entity_key", "sqlite"]

_LATER = {"Store": "index", "FACT_COLUMNS": "queries", "EntityMatch": "queries", "Filters": "queries",
          "entity_key": "queries", "SCHEMA_VERSION": "schema"}


def __getattr__(name: str):
    """The index's names, imported on first use: a process that only searches the vectors (the
    child of memtool.search_aside) imports `driver` and `vectors` without the index's modules."""
    if name in _LATER:
        import importlib

        value = getattr(importlib.import_module(f"memtool.store.{_LATER[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memtool.store' has no attribute {name!r}")
