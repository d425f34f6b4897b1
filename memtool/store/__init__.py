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
from memtool.store.index import Store
from memtool.store.queries import FACT_COLUMNS, EntityMatch, Filters, entity_key
from memtool.store.schema import SCHEMA_VERSION

__all__ = ["DRIVER", "FACT_COLUMNS", "EntityMatch", "SCHEMA_VERSION", "Filters", "Store", "entity_key", "sqlite"]
