"""The only package that talks to SQLite. The index (`.memory/index.sqlite`) is derived from the
Markdown and can be deleted at any time.

- `driver`: which DB-API module is used (one place), connection set-up
- `schema`: numbered migrations
- `facts`: files, facts, full-text search, entities, diagnostics
"""

from memtool.store.driver import DRIVER, sqlite
from memtool.store.facts import FACT_COLUMNS, Filters, Store, entity_key
from memtool.store.schema import SCHEMA_VERSION

__all__ = ["DRIVER", "FACT_COLUMNS", "SCHEMA_VERSION", "Filters", "Store", "entity_key", "sqlite"]
