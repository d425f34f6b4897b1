"""Query building: recall's options validated into a `Query` (errors with a hint). Pure."""

from __future__ import annotations

import re
from datetime import date

from memtool.analyzer import query_terms
from memtool.config import MODES
from memtool.dates import parse_since, parse_until, refuse_non_day
from memtool.errors import UsageError
from memtool.kinds import KINDS
from memtool.recall.timeframe import Timeframe, read as read_dates
from memtool.value import Value

MAX_QUERY_TERMS = 64
# A query's text searched, at most: about one window of the bundled model (512 tokens), which embeds
# every window of a longer text (a 117 KB query took 70 s); the rest is dropped with a notice.
MAX_QUERY_CHARS = 2_000
MAX_K = 1000


class Query(Value):
    """A validated recall request."""

    __slots__ = ("text", "terms", "k", "since", "until", "kinds", "entities", "fields", "tags", "budget", "notices",
                 "mode", "as_of", "min_score", "timeframe")

    def __init__(self, text: str, terms: list[str], k: int = 10, kinds: list[str] | None = None,
                 entities: list[str] | None = None, fields: list[tuple[str, str | None]] | None = None,
                 tags: list[str] | None = None, budget: int | None = None, mode: str = "hybrid",
                 as_of: date | None = None, min_score: float | None = None):
        self.text = text
        self.terms = terms
        self.k = k
        self.since: date | None = None
        self.until: date | None = None
        self.kinds = kinds if kinds is not None else []
        self.entities = entities if entities is not None else []
        self.fields = fields if fields is not None else []
        self.tags = tags if tags is not None else []
        self.budget = budget
        self.notices: list[str] = []
        self.mode = mode  # hybrid, lexical or semantic: what was asked for
        self.as_of = as_of  # answer as of this day (supersessions then, not now)
        self.min_score = min_score  # the relevance the best result must reach (None: the configured floor)
        self.timeframe: Timeframe | None = None  # the dates the text names (see memtool.recall.timeframe)

    @property
    def search_text(self) -> str:
        """What meaning is matched against (and priors read): the text without its date words."""
        return self.timeframe.text if self.timeframe and self.timeframe.spans else self.text

    @property
    def wants_vectors(self) -> bool:
        """Whether answering may use vectors (so a refresh before it should embed new records)."""
        return bool(self.terms) and self.mode != "lexical"


def resolve_mode(mode: str | None, embedder_name: str, default: str) -> str:
    """The mode asked for, else the configured one; `lexical` when the embedder is off on purpose."""
    if mode is None and embedder_name == "none":
        mode = "lexical"  # the embedder was switched off on purpose: nothing is degraded
    mode = (mode or default).lower()
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", f"use one of: {', '.join(MODES)}")
    return mode


_FIELD_FILTER = r"(?s)([A-Za-z][\w\-]*)(?:=(.*))?"  # compiled by `re` on first use: only --field reads it


def _tag_filter(spec: str) -> str:
    from memtool.retain import normalise_tag  # only for --tag: retain's patterns are not a query's

    tag = normalise_tag(spec)
    if tag is None:
        raise UsageError(f"--tag {spec!r} is not a tag", "e.g. --tag project or --tag project/alpha (letters, digits, _ - /)")
    return tag


def parse_field_filter(spec: str) -> tuple[str, str | None]:
    """`outcome=fixed` → ("outcome", "fixed"); `outcome` → ("outcome", None): the field is present."""
    m = re.fullmatch(_FIELD_FILTER, spec.strip())
    if not m:
        raise UsageError(f"--field {spec!r} is not KEY=VALUE or KEY", "e.g. --field outcome=fixed, or --field cost")
    value = m.group(2).strip() if m.group(2) is not None else None
    return m.group(1).lower(), value


def build_query(text: str, *, k: int = 10, since: str | None = None, until: str | None = None,
                kinds: list[str] | tuple = (), entities: list[str] | tuple = (), budget: int | None = None,
                fields: list[str] | tuple = (), tags: list[str] | tuple = (), today: date,
                mode: str = "hybrid", as_of: str | None = None, min_score: float | None = None) -> Query:
    """Validate recall options; raise UsageError with a hint for anything malformed.

    `as_of` answers as of a date: only facts written by then (it bounds `until`); dates in the
    text ("last week") and relative `since`/`until` ("30d", "yesterday") are read relative to it,
    else to `today`."""
    as_of_day = None
    flags = bool(since or until)
    refuse_non_day(text, "the query")
    length = len(text)
    if length > MAX_QUERY_CHARS:
        text = shortened(text, MAX_QUERY_CHARS)
    bound = "--until"
    if as_of:
        as_of_day = parse_until(as_of, today, option="--as-of")
        if until is None or parse_until(until, as_of_day) > as_of_day:
            until, bound = as_of_day.isoformat(), "--as-of"
    if not 1 <= k <= MAX_K:
        raise UsageError(f"--k must be between 1 and {MAX_K}, not {k}", "leave --k out for the default, 10")
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        raise UsageError(f"--min-score must be between 0 and 1, not {min_score}",
                         "0.3 is the default floor; 0 shows anything (docs/recall.md, Relevance)")
    if budget is not None and budget < 1:
        raise UsageError(f"--budget must be a positive number of tokens, not {budget}",
                         "e.g. --budget 2000 (about that many tokens), or leave --budget out for every result")
    bad = [x for x in kinds if x not in KINDS]
    if bad:
        raise UsageError(f"unknown kind {bad[0]!r}", f"use one of: {', '.join(KINDS)}")
    if any(not e.strip().lstrip("@").strip() for e in entities):
        raise UsageError("--entity needs a name", "e.g. --entity Peter, or leave the option out")
    q = Query(text=text, terms=[], k=k, kinds=list(dict.fromkeys(kinds)), budget=budget, mode=mode, as_of=as_of_day,
              min_score=min_score,
              entities=[e.lstrip("@").strip() for e in entities],
              fields=[parse_field_filter(f) for f in fields], tags=[_tag_filter(t) for t in tags])
    q.since = parse_since(since, as_of_day or today) if since else None
    q.until = parse_until(until, as_of_day or today) if until else None
    if q.since and q.until and q.since > q.until:
        raise UsageError(f"--since {since} is after {bound} {as_of if bound == '--as-of' else until}",
                         "swap them, or drop one")
    if length > len(text):
        q.notices.append(f"the query is {length:,} characters long; searched its first {len(text):,}")
    q.timeframe = _dates_in(q, text, today=as_of_day or today, flags=flags)
    # words still match dates (a heading 'on 7 July, 2023'); meaning is matched without them (search_text)
    terms = query_terms(text) if not (q.timeframe and q.timeframe.only_dates) else []
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


def shortened(text: str, most: int) -> str:
    """`text` cut to at most `most` characters, at the last space before the cut when there is one
    in its second half (a word is not split)."""
    head = text[:most]
    space = head.rfind(" ", most // 2)
    return head[:space] if space > 0 else head


def _dates_in(q: Query, text: str, today: date, flags: bool) -> Timeframe | None:
    """The dates `text` names; the bounds it states ("since Monday") become filters unless
    --since/--until were given, and so do all its dates when nothing else is asked ("last week")."""
    tf = read_dates(text, today)
    if tf.unread:
        named = ", ".join(f"'{x}'" for x in tf.unread[:3]) + (f" and {len(tf.unread) - 3} more" if len(tf.unread) > 3 else "")
        q.notices.append(f"{named} {'was' if len(tf.unread) == 1 else 'were'} not read as a day; searched as words")
    if not tf.spans:
        return None
    if tf.only_dates:
        spans = tuple(s.as_filter(today) for s in tf.spans)
        tf = tf.replace(spans=spans, since=min(s.first for s in spans), until=max(s.last for s in spans))
    if flags:  # the options win: the text's dates only rank
        return tf.replace(spans=tuple(s.replace(use="prior", fuzz=0) if s.use == "filter" else s for s in tf.spans),
                          since=None, until=None)
    if tf.since:
        q.since = tf.since
    if tf.until:
        q.until = min(tf.until, q.until) if q.until else tf.until
    if q.since and q.until and q.since > q.until:  # "since Monday" asked --as-of last Friday: not an error
        q.notices.append(f"the question's dates end ({q.until}) before they begin ({q.since}); searched {q.since} alone")
        q.until = q.since
    return tf
