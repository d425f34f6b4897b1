"""Schema migrations: numbered functions, the version kept in `PRAGMA user_version`."""

from __future__ import annotations

from memtool.store.driver import WRITER_FUNCTION
from memtool.store.vectors import quantize

SCHEMA_VERSION = 8

FTS_TOKENIZE = "unicode61 remove_diacritics 0"  # how `facts_fts` splits its text (and `term_docs`' scratch tables)

# Rows enter the FTS index explicitly (per file, or in bulk after a full build); deletes follow facts.
_DELETE_TRIGGER_1 = (
    "CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN"
    " INSERT INTO facts_fts(facts_fts, rowid, terms, ctx_terms) VALUES ('delete', old.id, old.terms, old.ctx_terms);"
    " DELETE FROM fact_entities WHERE fact_id = old.id; END"
)
DELETE_TRIGGER = (  # since schema 5
    "CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN"
    " INSERT INTO facts_fts(facts_fts, rowid, terms, ctx_terms) VALUES ('delete', old.id, old.terms, old.ctx_terms);"
    " DELETE FROM fact_entities WHERE fact_id = old.id; DELETE FROM fact_tags WHERE fact_id = old.id; END"
)

# Facts per file, day and kind (`day`: the log's day, else the fact's own date; '' for none), kept
# with the file's facts (`Store.put_file`): what the timeline's heat map and `mem status` count,
# without a scan of 10⁵ facts. `day_counts(where)` fills it from `facts` (for the files `where` picks).
FACT_DAYS = ("CREATE TABLE IF NOT EXISTS fact_days (path TEXT NOT NULL, day TEXT NOT NULL, kind TEXT NOT NULL,"
             " n INTEGER NOT NULL, PRIMARY KEY (path, day, kind))")


def day_counts(where: str = "1") -> str:
    return ("INSERT INTO fact_days(path, day, kind, n) SELECT path, CASE WHEN length(d) = 10 THEN d ELSE '' END, kind,"
            " COUNT(*) FROM (SELECT f.path, f.kind, substr(COALESCE(fi.date, f.date, f.valid_from), 1, 10) AS d"
            f" FROM facts f LEFT JOIN files fi ON fi.path = f.path WHERE {where}) GROUP BY 1, 2, 3")


# Facts holding each term of `facts_fts` (in its text or context): what its `fts5vocab` 'row' table
# says, kept by the writer (memtool/store/term_docs.py) so that a lookup need not walk a posting list.
TERM_DOCS = "CREATE TABLE IF NOT EXISTS term_docs (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID"
VOCABULARY = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, facts_fts, row)"


def count_term_docs(conn) -> None:
    """Fill `term_docs` from the full-text index's own vocabulary (one walk of every posting list:
    ~0.12 s of CPU at 10^5 facts, ~1.2 s at 10^6)."""
    conn.execute(TERM_DOCS)
    conn.execute(VOCABULARY)
    conn.execute("DELETE FROM term_docs")
    conn.execute("INSERT INTO term_docs(term, n) SELECT term, doc FROM temp.fts_terms")


def _migration_1(conn) -> None:
    """The first schema, declared through sqlite-utils (FTS5 kept in step with `facts` by triggers)."""
    import sqlite_utils  # slow to import (~0.4 s with numpy present): only when the schema changes

    db = sqlite_utils.Database(conn)
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["files"].create({"path": str, "file_kind": str, "date": str, "size": int, "mtime_ns": int, "hash": str,
                        "status": str, "title": str, "trust": str, "entity": str, "n_records": int}, pk="path")
    db["facts"].create({"id": int, "path": str, "ord": int, "kind": str, "date": str, "valid_from": str,
                        "valid_to": str, "line_start": int, "line_end": int, "content": str, "context": str,
                        "entities": str, "fields": str, "confidence": float, "terms": str, "ctx_terms": str},
                       pk="id", not_null={"path", "ord", "kind"})
    db["facts"].create_index(["path", "ord"], index_name="facts_path")
    db["facts"].create_index(["date"], index_name="facts_date")
    db["fact_entities"].create({"fact_id": int, "key": str}, pk=("fact_id", "key"))
    db["fact_entities"].create_index(["key"], index_name="fact_entities_key")
    db["aliases"].create({"key": str, "entity": str, "path": str}, pk=("key", "path"))
    db["diagnostics"].create({"path": str, "line": int, "severity": str, "code": str, "message": str})
    db["diagnostics"].create_index(["path"], index_name="diagnostics_path")
    db["facts"].enable_fts(["terms", "ctx_terms"], fts_version="FTS5", tokenize=FTS_TOKENIZE)
    conn.execute(_DELETE_TRIGGER_1)


def _migration_2(conn) -> None:
    """Vectors: `facts.ehash` names the text a record embeds; `embeddings` holds one vector per hash.

    Existing rows lack `ehash`, so the derived tables are emptied and the next run re-reads the Markdown.
    """
    conn.execute("ALTER TABLE facts ADD COLUMN ehash TEXT")
    conn.execute("CREATE INDEX facts_ehash ON facts(ehash)")
    conn.execute("CREATE TABLE embeddings (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, vec BLOB NOT NULL)")
    for table in ("facts", "files", "aliases", "diagnostics"):
        conn.execute(f"DELETE FROM {table}")


def _migration_3(conn) -> None:
    """Vectors are stored as int8 (a quarter of the bytes): convert the float32 BLOBs in place.

    The vec0 mirror is rebuilt as int8 by the next index run (`Vectors.ensure_vec_table`)."""
    try:
        conn.execute("DROP TABLE IF EXISTS vec_embeddings")  # the float mirror; rebuilt as int8
    except Exception:  # sqlite-vec is not loadable here: the mirror is unused, and replaced once it is
        pass
    rows = conn.execute("SELECT id, vec FROM embeddings").fetchall()
    if not rows:
        return
    import numpy as np

    for start in range(0, len(rows), 5000):
        chunk = rows[start:start + 5000]
        matrix = np.stack([np.frombuffer(vec, dtype=np.float32) for _, vec in chunk])
        conn.executemany("UPDATE embeddings SET vec = ? WHERE id = ?",
                         [(q.tobytes(), i) for (i, _), q in zip(chunk, quantize(matrix))])


def _migration_4(conn) -> None:
    """`files.embedded`: 1 once every record of the file has a vector, so a run looks for missing
    vectors only in files that changed (0 for all existing files: the next run checks them once)."""
    conn.execute("ALTER TABLE files ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX files_embedded ON files(embedded)")


def _migration_5(conn) -> None:
    """Tags: `facts.tags` (JSON, as written in results) and `fact_tags` for `--tag` filters. Rows read
    before have none: the parser version changed with it, so the next run re-reads the Markdown."""
    if "tags" not in {row[1] for row in conn.execute("PRAGMA table_info(facts)")}:
        conn.execute("ALTER TABLE facts ADD COLUMN tags TEXT")
    conn.execute("CREATE TABLE IF NOT EXISTS fact_tags (fact_id INTEGER NOT NULL, tag TEXT NOT NULL,"
                 " PRIMARY KEY (fact_id, tag))")
    conn.execute("CREATE INDEX IF NOT EXISTS fact_tags_tag ON fact_tags(tag)")
    conn.execute("DROP TRIGGER IF EXISTS facts_ad")
    conn.execute(DELETE_TRIGGER)


def _migration_6(conn) -> None:
    """`fact_days`: facts per file, day and kind, filled from the facts already indexed; and
    `facts_ehash` covers the path too, so counting records without a vector reads only the index."""
    conn.execute(FACT_DAYS)
    conn.execute("DELETE FROM fact_days")
    conn.execute(day_counts())
    conn.execute("DROP INDEX IF EXISTS facts_ehash")
    conn.execute("CREATE INDEX facts_ehash ON facts(ehash, path)")


def _migration_7(conn) -> None:
    """`term_docs`: facts holding each term, counted from the full-text index already built; and the
    guards that refuse a file's row written by a memtool that does not keep those counts."""
    count_term_docs(conn)
    for event in ("INSERT", "DELETE"):
        conn.execute(f"CREATE TRIGGER IF NOT EXISTS files_guard_{event.lower()} BEFORE {event} ON files"
                     f" BEGIN SELECT {WRITER_FUNCTION}(); END")


def _migration_8(conn) -> None:
    """`files.ctime_ns`: a file's change time beside its size and mtime (an edit that keeps both is
    seen). Rows from before hold 0: each file is read once more, and its hash finds it unchanged."""
    if "ctime_ns" not in {row[1] for row in conn.execute("PRAGMA table_info(files)")}:
        conn.execute("ALTER TABLE files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0")


MIGRATIONS = [_migration_1, _migration_2, _migration_3, _migration_4, _migration_5, _migration_6, _migration_7,
              _migration_8]  # MIGRATIONS[n] takes the schema from version n to n + 1


