"""Recall: turn a query and options into a search, and rows into cited results. Pure."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date

from memtool.analyzer import query_terms
from memtool.dates import parse_since, parse_until
from memtool.errors import UsageError
from memtool.records import KINDS
from memtool.retain import normalise_tag

MAX_QUERY_TERMS = 64
MAX_K = 1000


@dataclass
class Query:
    """A validated recall request."""

    text: str
    terms: list[str]
    k: int = 10
    since: date | None = None
    until: date | None = None
    kinds: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    fields: list[tuple[str, str | None]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    budget: int | None = None
    notices: list[str] = field(default_factory=list)


_FIELD_FILTER = re.compile(r"([A-Za-z][\w\-]*)(?:=(.*))?", re.S)


def _tag_filter(spec: str) -> str:
    tag = normalise_tag(spec)
    if tag is None:
        raise UsageError(f"--tag {spec!r} is not a tag", "e.g. --tag project or --tag project/alpha (letters, digits, _ - /)")
    return tag


def parse_field_filter(spec: str) -> tuple[str, str | None]:
    """`outcome=fixed` → ("outcome", "fixed"); `outcome` → ("outcome", None): the field is present."""
    m = _FIELD_FILTER.fullmatch(spec.strip())
    if not m:
        raise UsageError(f"--field {spec!r} is not KEY=VALUE or KEY", "e.g. --field outcome=fixed, or --field cost")
    value = m.group(2).strip() if m.group(2) is not None else None
    return m.group(1).lower(), value


def build_query(text: str, *, k: int = 10, since: str | None = None, until: str | None = None,
                kinds: list[str] | tuple = (), entities: list[str] | tuple = (), budget: int | None = None,
                fields: list[str] | tuple = (), tags: list[str] | tuple = (), today: date) -> Query:
    """Validate recall options; raise UsageError with a hint for anything malformed."""
    if not 1 <= k <= MAX_K:
        raise UsageError(f"--k must be between 1 and {MAX_K}, not {k}")
    if budget is not None and budget < 1:
        raise UsageError(f"--budget must be a positive number of tokens, not {budget}")
    bad = [x for x in kinds if x not in KINDS]
    if bad:
        raise UsageError(f"unknown kind {bad[0]!r}", f"use one of: {', '.join(KINDS)}")
    if any(not e.strip().lstrip("@").strip() for e in entities):
        raise UsageError("--entity needs a name", "e.g. --entity Peter, or leave the option out")
    q = Query(text=text, terms=[], k=k, kinds=list(dict.fromkeys(kinds)), budget=budget,
              entities=[e.lstrip("@").strip() for e in entities],
              fields=[parse_field_filter(f) for f in fields], tags=[_tag_filter(t) for t in tags])
    q.since = parse_since(since, today) if since else None
    q.until = parse_until(until, today) if until else None
    if q.since and q.until and q.since > q.until:
        raise UsageError(f"--since {since} is after --until {until}", "swap them, or drop one")
    terms = query_terms(text)
    if len(terms) > MAX_QUERY_TERMS:
        q.notices.append(f"query has {len(terms)} distinct terms; searched the first {MAX_QUERY_TERMS}")
        terms = terms[:MAX_QUERY_TERMS]
    q.terms = terms
    filtered = bool(q.kinds or q.entities or q.fields or q.tags or q.since or q.until)
    if not terms and not filtered:
        what = "is empty" if not text.strip() else f"{text[:40]!r} has no searchable words"
        raise UsageError(f"the query {what}",
                         "give words to search for, or a filter such as --entity, --kind, --field or --since to list facts")
    return q


def source(path: str, start: int, end: int) -> str:
    """`path#L12` or `path#L12-L14`."""
    return f"{path}#L{start}" if start == end else f"{path}#L{start}-L{end}"


def timestamp(row: dict) -> str | None:
    """The fact's time: its validity range named in the text, else the day of its log."""
    a, b = row.get("valid_from"), row.get("valid_to")
    if a and b and a != b:
        return f"{a}/{b}"
    return a or row.get("date")


def to_result(row: dict, canonical: dict[str, str], about: list[str] | tuple = ()) -> dict:
    """One recall result in the documented JSON shape; `about` names entities the row is known to be
    about (it passed an entity filter, perhaps by naming the entity in plain words)."""
    mentions = json.loads(row["entities"] or "[]")
    entities = list(dict.fromkeys([*(canonical.get(m, m) for m in mentions), *about]))
    out = {
        "kind": row["kind"],
        "timestamp": timestamp(row),
        "entities": entities,
        "content": row["content"],
        "source": source(row["path"], row["line_start"], row["line_end"]),
        "score": round(row["score"], 4) if row.get("score") is not None else None,
        "context": row["context"] or "",
    }
    if row["kind"] == "opinion":
        out["confidence"] = row["confidence"]
    if row.get("_superseded"):
        sup = row["_superseded"]
        out["superseded_by"] = {"source": sup["source"], "since": sup["until"]}
    if row.get("_previously"):
        out["previously"] = row["_previously"]
    if row.get("_key"):
        out["_key"] = row["_key"]
    if row.get("fields"):
        out["fields"] = json.loads(row["fields"])
    if row.get("tags"):
        out["tags"] = json.loads(row["tags"])
    return out


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters a token), enough to pack a budget."""
    return max(1, (len(text) + 3) // 4)


def pack(results: list[dict], budget: int) -> list[dict]:
    """The best results, in rank order, whose content and source fit in `budget` tokens."""
    out, used = [], 0
    for r in results:
        cost = estimate_tokens(r["content"]) + estimate_tokens(r["source"]) + 4
        if used + cost > budget:
            continue
        out.append(r)
        used += cost
    return out


LEXICAL_WEIGHT = 0.5  # share of the normalised BM25 score in the fused score (the rest: cosine)
SPEAKER_BOOST = 0.1  # a dialogue turn whose speaker the query names
NEIGHBOUR_SHARE = 0.25  # a dialogue turn inherits this share of the score of the turn before or after it
ENTITY_BOOST = 0.1  # a fact mentioning an entity (or alias) the query names
OPINION_BOOST = 0.15  # an opinion, when the query asks what someone prefers or thinks
_PREFERENCE = re.compile(r"\b(prefers?|preferences?|likes?|dislikes?|favou?rite|thinks?|opinions?|feels? about|"
                         r"bevorzugt|mag|mögen|findet|meinung|lieber|hält .* von)\b", re.I)


def fuse(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]],
         lexical_weight: float = LEXICAL_WEIGHT) -> dict[int, float]:
    """Combine candidate lists into one score per fact id.

    BM25 scores are divided by the best one; cosines are min-max scaled over the semantic
    candidates (e5 cosines crowd into a narrow band, so their raw values carry little). A fact
    found by only one side keeps that side's share. Measured on real conversations and the
    bilingual example set, this beat reciprocal-rank fusion (see docs/recall.md).
    """
    scores: dict[int, float] = {}
    if lexical:
        best = lexical[0][1] or 1.0
        for fid, s in lexical:
            scores[fid] = scores.get(fid, 0.0) + lexical_weight * (s / best)
    if semantic:
        hi, lo = semantic[0][1], semantic[-1][1]
        span = (hi - lo) or 1.0
        weight = 1.0 - lexical_weight if lexical else 1.0
        for fid, c in semantic:
            scores[fid] = scores.get(fid, 0.0) + weight * max(0.0, (c - lo) / span)
    return scores


def rerank(scores: dict[int, float], rows: dict[int, dict], neighbours: dict[int, list[int]],
           query: str, naming: set[int] = frozenset()) -> list[tuple[int, float]]:
    """Priors, then the final order: (fact id, score), best first.

    A fact that mentions an entity the query names (`naming`) gets a small boost, and so does an
    opinion when the query asks what someone prefers, likes or thinks. In a transcript
    (list items like `- **Caroline**: …`) the answer to a question is often the next turn, and the
    question names who said it: a turn gets a share of its neighbours' scores and a boost when its
    speaker is named in the query.
    """
    from memtool.document import speaker_of

    folded_query = query.casefold()
    speakers = {fid: speaker_of(row["content"]) for fid, row in rows.items()}
    asks_opinion = bool(_PREFERENCE.search(query))
    boosted = dict(scores)
    for fid in scores:
        if asks_opinion and fid in rows and rows[fid]["kind"] == "opinion":
            boosted[fid] += OPINION_BOOST
        if speakers.get(fid) and speakers[fid].casefold() in folded_query:
            boosted[fid] += SPEAKER_BOOST
        if fid in naming:
            boosted[fid] += ENTITY_BOOST
    out = dict(boosted)
    for fid, score in boosted.items():
        if not speakers.get(fid):
            continue
        for nb in neighbours.get(fid, ()):
            if speakers.get(nb):
                out[nb] = max(out.get(nb, 0.0), boosted.get(nb, 0.0) + NEIGHBOUR_SHARE * score)
    return sorted(out.items(), key=lambda x: (-x[1], x[0]))


def fold_duplicates(results: list[dict]) -> list[dict]:
    """Fold results that share a fold key (same embedded text, or folded by `mem reflect`) into the
    best-ranked one, which lists every source."""
    out: list[dict] = []
    seen: dict = {}
    for r in results:
        keys = [k for k in r.pop("_fold", ()) if k]
        first = next((seen[k] for k in keys if k in seen), None)
        if first is None:
            out.append(r)
            first = r
        else:
            first.setdefault("sources", [first["source"]]).append(r["source"])
        for k in keys:
            seen.setdefault(k, first)
    return out
