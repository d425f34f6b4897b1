"""The only package that talks to SQLite. The index (`.memory/index.sqlite`) is derived from the
Markdown and can be deleted at any time; `.memory/local.sqlite` holds what cannot be rebuilt.

- `driver`: which DB-API module is used (one place), connection set-up, transactions, migrations,
  chunked `IN (…)`, meta tables
- `schema`: the index's numbered migrations
- `index`: the index (`Store`): files, facts, full-text search, entities, diagnostics
- `vectors`: embedding vectors and nearest-neighbour search
- `local`: machine-local state (access log, stability, reflect's decisions)
"""

from memtool.store.driver import DRIVER, sqlite
from memtool.store.index import FACT_COLUMNS, Filters, Store, entity_key
from memtool.store.schema import SCHEMA_VERSION

__all__ = ["DRIVER", "FACT_COLUMNS", "SCHEMA_VERSION", "Filters", "Store", "entity_key", "sqlite"]
