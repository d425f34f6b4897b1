"""Aggregates over the whole index for the web view (`mem serve`): facts per day and kind, entity
co-mentions, aliases. Each is one GROUP BY, so a page stays fast at 10⁵ facts; facts per day and kind
come from `fact_days`, counted when a file is indexed."""

from __future__ import annotations


def day_kind_counts(conn) -> list[tuple[str, str, int]]:
    """(day, kind, facts) for every day a fact is dated (its log's day, else its own date)."""
    return conn.execute("SELECT day, kind, SUM(n) FROM fact_days WHERE day != '' GROUP BY day, kind ORDER BY day, kind").fetchall()


def co_mentions(conn, limit: int) -> list[tuple[str, str, int]]:
    """(entity, entity, facts mentioning both), the most frequent pairs first; a mention by an alias
    counts for the page it names (its slug), any other by its key."""
    return conn.execute(
        "WITH m AS (SELECT e.fact_id, COALESCE((SELECT a.entity FROM aliases a WHERE a.key = e.key LIMIT 1), e.key) AS name"
        " FROM fact_entities e)"
        " SELECT x.name, y.name, COUNT(DISTINCT x.fact_id) AS n FROM m x JOIN m y ON x.fact_id = y.fact_id AND x.name < y.name"
        " GROUP BY x.name, y.name ORDER BY n DESC, x.name, y.name LIMIT ?", (limit,)).fetchall()


def aliases(conn) -> dict[str, list[str]]:
    """Entity page slug → the other names (keys) it answers to."""
    out: dict[str, list[str]] = {}
    for key, entity in conn.execute("SELECT DISTINCT key, entity FROM aliases ORDER BY entity, key"):
        if key != entity.casefold():
            out.setdefault(entity, []).append(key)
    return out
