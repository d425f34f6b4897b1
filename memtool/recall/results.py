"""What recall returns: a typed `Hit` per fact while the pipeline works on it, rendered at the end
into the documented JSON shape (`Hit.to_result`), and the `RecallResult` around them. Pure."""

from __future__ import annotations

import json
from memtool.recall.relevance import Verdict
from memtool.value import Value


def source(path: str, start: int, end: int) -> str:
    """`path#L12` or `path#L12-L14`."""
    return f"{path}#L{start}" if start == end else f"{path}#L{start}-L{end}"


def timestamp(row) -> str | None:
    """The fact's time: its validity range named in the text, else the day of its log (`row`: a
    fact row of the index, or a `Hit`)."""
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
    return time_of(get("valid_from"), get("valid_to"), get("date"))


def time_of(valid_from: str | None, valid_to: str | None, date: str | None) -> str | None:
    """`timestamp` from the three columns: the range `from/to`, a single day, or the log's day. Pure."""
    if valid_from and valid_to and valid_from != valid_to:
        return f"{valid_from}/{valid_to}"
    return valid_from or date


class Hit(Value):
    """One fact on its way through recall, and what ranking and `mem reflect` said about it."""

    __slots__ = ("id", "path", "kind", "date", "valid_from", "valid_to", "line_start", "line_end", "content",
                 "context", "mentions", "fields", "confidence", "ehash", "tags", "score", "key", "folded_into",
                 "superseded", "previously", "entities", "sources", "stale", "opinion")

    def __init__(self, id: int, path: str, kind: str, date: str | None, valid_from: str | None,
                 valid_to: str | None, line_start: int, line_end: int, content: str, context: str | None,
                 mentions: list[str], fields: dict | None, confidence: float | None, ehash: str | None,
                 tags: list[str] | None, score: float | None = None):
        self.id = id
        self.path = path
        self.kind = kind
        self.date = date
        self.valid_from = valid_from
        self.valid_to = valid_to
        self.line_start = line_start
        self.line_end = line_end
        self.content = content
        self.context = context
        self.mentions = mentions  # entity mentions as written
        self.fields = fields
        self.confidence = confidence
        self.ehash = ehash
        self.tags = tags
        self.score = score  # None when listed by filters only
        self.key = ""  # the fact's name in machine-local state (`fact_key`)
        self.folded_into = ""  # the key of the fact `mem reflect` folded it into (else its own key)
        self.superseded: dict | None = None  # {"by", "until", "source"}: a newer fact replaced it
        self.previously: list[dict] | None = None  # what it superseded
        self.entities: list[str] = []  # canonical names, as results show them
        self.sources: list[str] | None = None  # every source, once duplicates were folded into it
        self.stale = False  # its file cannot be read now: this is from the last read
        self.opinion: dict | None = None  # an opinion's thread as `mem opinions` weighs it (see recall.opinions)

    @classmethod
    def from_row(cls, row: dict, score: float | None = None) -> "Hit":
        """A hit from a row of the index's `facts` (see `FACT_COLUMNS`)."""
        return cls(id=row["id"], path=row["path"], kind=row["kind"], date=row["date"], valid_from=row["valid_from"],
                   valid_to=row["valid_to"], line_start=row["line_start"], line_end=row["line_end"],
                   content=row["content"], context=row["context"], mentions=json.loads(row["entities"] or "[]"),
                   fields=json.loads(row["fields"]) if row["fields"] else None, confidence=row["confidence"],
                   ehash=row["ehash"], tags=json.loads(row["tags"]) if row["tags"] else None, score=score)

    @property
    def source(self) -> str:
        return source(self.path, self.line_start, self.line_end)

    @property
    def fold_keys(self) -> list[str]:
        """Hits sharing any of these are one fact: the same embedded text, or folded by `mem reflect`."""
        return [k for k in (self.ehash, self.folded_into) if k]

    def to_result(self) -> dict:
        """The documented JSON shape of one result (docs/recall.md)."""
        out = {"kind": self.kind, "timestamp": timestamp(self), "entities": self.entities, "content": self.content,
               "source": self.source, "score": round(self.score, 4) if self.score is not None else None,
               "context": self.context or ""}
        if self.date and self.path.startswith("memory/") and self.date != out["timestamp"]:
            out["day"] = self.date  # the daily log's day, when the text names other dates
        if self.kind == "opinion":
            out["confidence"] = self.confidence
            if self.opinion and self.opinion["latest"] != self.source:
                out["restated"] = self.opinion["latest"]  # a newer bullet of the same opinion carries it on
            elif self.opinion:  # moved by later evidence: the numbers of `mem opinions`
                out.update(confidence=self.opinion["confidence"], written_confidence=self.confidence,
                           trend=self.opinion["trend"],
                           evidence={"supporting": self.opinion["supporting"],
                                     "contradicting": self.opinion["contradicting"]})
        if self.superseded:
            out["superseded_by"] = {"source": self.superseded["source"], "since": self.superseded["until"]}
        if self.previously:
            out["previously"] = self.previously
        if self.fields is not None:
            out["fields"] = self.fields
        if self.tags is not None:
            out["tags"] = self.tags
        if self.sources:
            out["sources"] = self.sources
        if self.stale:
            out["stale"] = True
        return out


class RecallResult(Value):
    """A recall's answer: the hits, the query's terms, warnings and how relevant it is."""

    __slots__ = ("query", "mode", "hits", "terms", "warnings", "degraded", "verdict", "dates", "results")

    def __init__(self, query: str, mode: str, hits: list[Hit], terms: list[str] | None = None,
                 warnings: list[str] | None = None, degraded: str | None = None, verdict: Verdict | None = None,
                 dates: list[dict] | None = None):
        self.query = query
        self.mode = mode
        self.hits = hits
        self.terms = terms if terms is not None else []
        self.warnings = warnings if warnings is not None else []
        self.degraded = degraded  # why the requested mode could not run in full
        self.verdict = verdict  # how relevant the answer is (None when listing by filters)
        self.dates = dates if dates is not None else []  # the dates the query named and how they were used
        self.results = [h.to_result() for h in hits]  # the hits in the documented JSON shape

    def to_dict(self) -> dict:
        out = {"query": self.query, "mode": self.mode, "count": len(self.results), "results": self.results,
               "warnings": self.warnings}
        if self.degraded:
            out["degraded"] = self.degraded
        # a listing by filters has no verdict: the same fields, nothing scored, nothing held back
        out.update((self.verdict or Verdict(best=None, floor=None)).to_dict())
        if self.dates:
            out["dates"] = self.dates
        return out
