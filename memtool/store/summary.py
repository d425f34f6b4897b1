"""What the index holds, as a whole: diagnostics, counts for `mem status`, and a full dump for
comparing two indexes. Read-only functions over an open index connection."""

from __future__ import annotations

from memtool.store.queries import FACT_COLUMNS


def diagnostics(conn) -> list[tuple]:
    return conn.execute(
        "SELECT path, line, severity, code, message FROM diagnostics ORDER BY path, line").fetchall()


def stats(conn) -> dict:
    q = conn.execute
    kinds = dict(q("SELECT kind, SUM(n) FROM fact_days GROUP BY kind ORDER BY kind").fetchall())
    files = dict(q("SELECT COALESCE(file_kind, 'unreadable'), COUNT(*) FROM files GROUP BY 1").fetchall())
    days = q("SELECT COUNT(*), MIN(date), MAX(date) FROM files WHERE date IS NOT NULL").fetchone()
    entities = q("SELECT COUNT(DISTINCT key) FROM fact_entities").fetchone()[0]
    pages = q("SELECT COUNT(*) FROM files WHERE entity IS NOT NULL").fetchone()[0]
    diag = dict(q("SELECT severity, COUNT(*) FROM diagnostics GROUP BY severity").fetchall())
    return {
        "files": sum(files.values()), "files_by_kind": files, "facts": sum(kinds.values()), "facts_by_kind": kinds,
        "entities": entities, "entity_pages": pages,
        "days": {"count": days[0], "first": days[1], "last": days[2]},
        "diagnostics": {"errors": diag.get("error", 0), "warnings": diag.get("warning", 0)},
    }


def dump(conn) -> dict[str, list[tuple]]:
    """Every row of every table except row ids, sorted: two indexes of the same Markdown compare equal."""
    cols = ", ".join(c for c in FACT_COLUMNS if c != "id")
    q = conn.execute
    return {
        "files": sorted(q("SELECT * FROM files").fetchall()),
        "facts": sorted(q(f"SELECT {cols}, terms, ctx_terms FROM facts").fetchall(), key=repr),
        "fact_entities": sorted(q("SELECT f.path, f.ord, e.key FROM fact_entities e JOIN facts f ON f.id = e.fact_id").fetchall()),
        "fact_days": sorted(q("SELECT * FROM fact_days").fetchall()),
        "fact_tags": sorted(q("SELECT f.path, f.ord, t.tag FROM fact_tags t JOIN facts f ON f.id = t.fact_id").fetchall()),
        "aliases": sorted(q("SELECT * FROM aliases").fetchall()),
        "diagnostics": sorted(q("SELECT * FROM diagnostics").fetchall(), key=repr),
        "fts": sorted(q("SELECT f.path, f.ord, t.terms FROM facts_fts t JOIN facts f ON f.id = t.rowid").fetchall()),
        "term_docs": q("SELECT term, n FROM term_docs ORDER BY term").fetchall(),
    }
