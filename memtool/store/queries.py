"""Pure SQL construction for reading facts: how entity names compare, recall's filters as a WHERE
clause, the columns of a fact row and the FTS5 top-k query. No connection here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from functools import lru_cache

from memtool.analyzer import fold
from memtool.value import FrozenValue, Value


@lru_cache(maxsize=65_536)  # pure: a full build and every reflect run ask for the same few names again and again
def entity_key(name: str) -> str:
    """How entity names compare: folded, with spaces, `-` and `_` alike (`Anna Müller` = `@anna-mueller`? no: = `@Anna-Muller`)."""
    return re.sub(r"[\s_\-]+", "-", fold(name)).strip("-")


class EntityMatch(FrozenValue):
    """The facts about one entity: those mentioning it (`@slug`, `[[link]]`, its page) by any of
    its `keys`, and, once it has a page, those naming it or an alias in plain words (`plain`, an
    FTS5 expression over whole folded words); `name`: the page's name, when it has one."""

    __slots__ = ("keys", "plain", "name")

    def __init__(self, keys: list[str], plain: str | None = None, name: str | None = None):
        self._set(keys, plain, name)

    def by_mention(self) -> "EntityMatch":
        """The facts mentioning the entity, without those naming it in plain words."""
        return EntityMatch(self.keys)

    def sql(self) -> tuple[str, list]:
        marks = ",".join("?" * len(self.keys))
        clause = f"f.id IN (SELECT fact_id FROM fact_entities WHERE key IN ({marks}))"
        if not self.plain:
            return clause, list(self.keys)
        return (f"({clause} OR f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?))",
                [*self.keys, self.plain])


def plain_name_match(keys: Iterable[str]) -> str | None:
    """An FTS5 expression matching a name (any of `keys`) written as plain words: `Jonas`,
    `Anna Müller`. Pure; names are folded keys, so no user syntax reaches FTS5."""
    parts = []
    for key in sorted(set(keys)):
        words = [w for w in key.split("-") if w.isalnum()]
        if not words or len(words) != len(key.split("-")):
            continue
        quoted = " ".join('"' + w + '"' for w in words)
        parts.append(quoted if len(words) == 1 else f"NEAR({quoted}, 4)")
    return f"terms : ({' OR '.join(parts)})" if parts else None


class Filters(Value):
    """Restrictions on which facts recall may return (all optional)."""

    __slots__ = ("kinds", "since", "until", "entities", "fields", "tags")

    def __init__(self, kinds: list[str] | None = None, since: date | None = None, until: date | None = None,
                 entities: list[EntityMatch] | None = None, fields: list[tuple[str, str | None]] | None = None,
                 tags: list[str] | None = None):
        self.kinds = kinds if kinds is not None else []
        self.since = since
        self.until = until
        self.entities = entities if entities is not None else []  # one per --entity (AND)
        self.fields = fields if fields is not None else []  # [key:: value] (AND); None: present
        self.tags = tags if tags is not None else []  # normalised tags (AND); `project` also matches `project/alpha`

    def sql(self) -> tuple[str, list]:
        clauses: list[str] = []
        params: list = []
        if self.kinds:
            clauses.append(f"f.kind IN ({','.join('?' * len(self.kinds))})")
            params += self.kinds
        if self.since and self.until:
            clauses.append("((f.date BETWEEN ? AND ?) OR (f.valid_from <= ? AND f.valid_to >= ?))")
            params += [self.since.isoformat(), self.until.isoformat(), self.until.isoformat(), self.since.isoformat()]
        elif self.since:
            clauses.append("(f.date >= ? OR f.valid_to >= ?)")
            params += [self.since.isoformat()] * 2
        elif self.until:
            clauses.append("(f.date <= ? OR f.valid_from <= ?)")
            params += [self.until.isoformat()] * 2
        for entity in self.entities:
            clause, values = entity.sql()
            clauses.append(clause)
            params += values
        for tag in self.tags:
            clauses.append("f.id IN (SELECT fact_id FROM fact_tags WHERE tag = ? OR tag LIKE ? ESCAPE '\\')")
            params += [tag, tag.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"]
        for key, value in self.fields:  # keys are [A-Za-z][\w-]*, quoted into the JSON path
            if value is None:
                clauses.append("json_extract(f.fields, ?) IS NOT NULL")
                params.append(f'$."{key}"')
            else:
                clauses.append("lower(json_extract(f.fields, ?)) = lower(?)")
                params += [f'$."{key}"', value]
        return (" AND ".join(clauses) or "1"), params

    @property
    def active(self) -> bool:
        return bool(self.kinds or self.since or self.until or self.entities or self.fields or self.tags)


FACT_COLUMNS = ("id", "path", "ord", "kind", "date", "valid_from", "valid_to", "line_start", "line_end",
                "content", "context", "entities", "fields", "confidence", "ehash", "tags")


RANK = "bm25(facts_fts, 1.0, 0.3)"  # a fact's BM25 (lower is better): its text weighs more than its context


def top_sql(filters: Filters, from_id: int | None = None) -> tuple[str, list]:
    """The query for (id, bm25) of the best matches (parameters: the match, `params`, the limit);
    with `from_id`, among the facts from that id on (FTS5 walks only that end of its lists)."""
    newer, after = ("", []) if from_id is None else (" AND facts_fts.rowid >= ?", [from_id])
    if not filters.active:
        return (f"SELECT rowid AS id, {RANK} AS r FROM facts_fts WHERE facts_fts MATCH ?{newer} ORDER BY r LIMIT ?",
                after)
    where, params = filters.sql()
    return (f"SELECT facts_fts.rowid AS id, {RANK} AS r FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"
            f" WHERE facts_fts MATCH ?{newer} AND {where} ORDER BY r LIMIT ?", after + params)


def recent_top_sql() -> str:
    """The query for (id, bm25) of the best matches among the newest ones, unfiltered (parameters:
    the match, how many of the newest, the limit): FTS5 walks its lists from the newest end and
    stops there. Ties come out by id, as `top_sql`'s do."""
    newest = f"SELECT rowid AS id, {RANK} AS r FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
    return f"SELECT id, r FROM ({newest}) ORDER BY r, id LIMIT ?"


def rare_split(groups: list[list[str]], docs: dict[str, int], most: int) -> tuple[list[str], list[str]] | None:
    """(rare, common) terms of a query's word groups (see `analyzer.word_groups`): the groups whose
    words `docs` (term → facts holding it) puts in at most `most` facts, or the rarest group when
    none is, and the others. None when there is nothing to set apart (one group, or all rare). Pure."""
    if len(groups) < 2:
        return None
    held = [max((docs.get(t, 0) for t in g if not t.endswith("*")), default=most + 1) for g in groups]
    rare = {i for i, n in enumerate(held) if n <= most} or {held.index(min(held))}
    if len(rare) == len(groups):
        return None
    return ([t for i in sorted(rare) for t in groups[i]],
            [t for i, g in enumerate(groups) if i not in rare for t in g])
