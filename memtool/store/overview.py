"""Aggregates over the whole index for the web view (`mem serve`): facts per day and kind, entity
co-mentions, aliases. Each is one GROUP BY, so a page stays fast at 10⁵ facts."""

from __future__ import annotations


def day_kind_counts(conn) -> list[tuple[str, str, int]]:
    """(day, kind, facts) for every day a fact is dated (its log's day, else its own date)."""
    return conn.execute(
        "SELECT substr(COALESCE(fi.date, f.date, f.valid_from), 1, 10) AS day, f.kind, COUNT(*) FROM facts f"
        " JOIN files fi ON fi.path = f.path WHERE day IS NOT NULL AND length(day) = 10"
        " GROUP BY day, f.kind ORDER BY day").fetchall()


def co_mentions(conn, limit: int) -> list[tuple[str, str, int]]:
    """(entity key, entity key, facts mentioning both), the most frequent pairs first."""
    return conn.execute(
        "SELECT a.key, b.key, COUNT(*) AS n FROM fact_entities a JOIN fact_entities b"
        " ON a.fact_id = b.fact_id AND a.key < b.key GROUP BY a.key, b.key ORDER BY n DESC, a.key, b.key LIMIT ?",
        (limit,)).fetchall()


def aliases(conn) -> dict[str, list[str]]:
    """Entity page slug → the other names (keys) it answers to."""
    out: dict[str, list[str]] = {}
    for key, entity in conn.execute("SELECT DISTINCT key, entity FROM aliases ORDER BY entity, key"):
        if key != entity.casefold():
            out.setdefault(entity, []).append(key)
    return out
