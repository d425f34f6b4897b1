"""Time in the question: the dates a recall query names, in English and German, read relative to
`today`, and the query without those words. Pure (no clock: `today` is passed in).

"last week", "yesterday", "im Oktober", "vor zwei Wochen", "around Nov 27", "am 3. März", "in 2025",
"letzten Montag", "two days ago", "since Monday", "in March 2026", "between May 1 and May 10".

Each date found is a `Span`. Most are *priors*: facts dated in or near the span rank higher, none
is dropped (notes about a day are often written days later, and an event is often told under the
day it was told, see docs/recall.md). Bounds the question states as bounds are *filters*: "since X"
/ "seit X" / "after X", "before X" / "until X" / "bis X", and "between X and Y" / "zwischen X und Y"
/ "from X to Y" / "vom X bis Y". A year or a month without a year is read as the occurrence nearest
to `today`; a weekday as the nearest one ("last Monday": the one before today). Anything it cannot
read stays in the query as words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from functools import lru_cache

from memtool.analyzer import STOPWORDS, fold, words
from memtool.dates import _MONTHS, find_dates, month_end
from memtool.value import FrozenValue

WRITTEN_AFTER = 7  # days after a span in which a note still counts as "near" it (told later)
MAX_CHARS = 1000  # dates are read in a query's first thousand characters (a question is short)
AROUND = 3  # "around Nov 27", "um den 27.": days either side that count in full
PRIOR, SINCE, UNTIL, RANGE = "prior", "since", "until", "range"


class Span(FrozenValue):
    """A stretch of days a query names, `phrase` as written in the query: `use` is "prior" (a ranking
    boost) or "filter"; `fuzz` days outside the span still count, fading."""

    __slots__ = ("first", "last", "phrase", "use", "fuzz", "around", "yearless")

    def __init__(self, first: date, last: date, phrase: str, use: str = PRIOR, fuzz: int = 1, around: bool = False,
                 yearless: bool = False):
        self._set(first, last, phrase, use, fuzz, around, yearless)

    def to_dict(self) -> dict:
        return {"phrase": self.phrase, "from": self.first.isoformat(), "to": self.last.isoformat(), "use": self.use}

    def nearness(self, first: date, last: date) -> float:
        """1.0 when [first, last] overlaps the span, fading to 0 outside it (slower after it)."""
        if last >= self.first and first <= self.last:
            return 1.0
        if last < self.first:
            gap, allowed = (self.first - last).days, self.fuzz
        else:
            gap, allowed = (first - self.last).days, self.fuzz + WRITTEN_AFTER
        return max(0.0, 1.0 - gap / (allowed + 1))

    def as_filter(self, today: date) -> Span:
        """This span as a filter (a question of nothing but dates): "around" keeps the days either side
        it counts in full, and a year-less date wholly after `today` is the one a year before — a filter
        on a coming January would hide every January a memory holds."""
        first, last = self.first, self.last
        if self.yearless and first > today:
            first, last = _year_before(first), _year_before(last)
        if self.around:
            first, last = first - timedelta(days=AROUND), last + timedelta(days=AROUND)
        return self.replace(first=first, last=last, use="filter")


class Timeframe(FrozenValue):
    """What `read` found: the query without its date words, the spans, and the bounds they set
    (`since`, `until`: from "since X", "between X and Y", …); `only_dates`: nothing but dates and
    generic words were asked ("what did I do last week"); `unread`: what looks like a date but is no
    day ("2026-02-30", "Feb 29" in 2026), kept whole as words."""

    __slots__ = ("text", "spans", "since", "until", "only_dates", "unread")

    def __init__(self, text: str, spans: tuple[Span, ...] = (), since: date | None = None, until: date | None = None,
                 only_dates: bool = False, unread: tuple[str, ...] = ()):
        self._set(text, spans, since, until, only_dates, unread)

    @property
    def priors(self) -> list[Span]:
        return [s for s in self.spans if s.use == PRIOR]


# --- the words --------------------------------------------------------------------------------

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
            "ein": 1, "eine": 1, "einem": 1, "einer": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4,
            "fünf": 5, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11,
            "zwölf": 12, "zwoelf": 12, "ein paar": 3, "einigen": 3, "wenigen": 3}
_NUM = r"(\d{1,3}|" + "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True)) + ")"
_UNITS = {"day": 1, "days": 1, "tag": 1, "tage": 1, "tagen": 1, "week": 7, "weeks": 7, "woche": 7, "wochen": 7,
          "month": 30, "months": 30, "monat": 30, "monate": 30, "monaten": 30,
          "year": 365, "years": 365, "jahr": 365, "jahre": 365, "jahren": 365}
_UNIT = "(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + ")"
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
             "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5,
             "sonnabend": 5, "sonntag": 6}
_WEEKDAY = "(" + "|".join(_WEEKDAYS) + ")"
_MON = "(" + "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|\.)?"
_PAST = r"(last|past|previous|letzte[nrs]?|vergangene[nrs]?|vorige[nrs]?)"
_THIS = r"(this|diese[nrs]?)"
_NEXT = r"(next|coming|nächste[nrs]?|naechste[nrs]?|kommende[nrs]?)"
_DAYTIME = r"(?:\s+(?:morning|afternoon|evening|night|früh|frueh|morgen|vormittag|mittag|nachmittag|abend|nacht))?"
# The patterns below are compiled by `_rx` (case-insensitive) when first used.
# a word before a date that says how to use it (the longest first)
_PRE = (r"\b(between|zwischen|from|vom|von|since|seit dem|seit der|seit|ab dem|ab|after|nach dem|"
        r"before|vor dem|vor der|vor|until|till|bis zum|bis zur|bis|in the year|im jahr|in|im|on|am|"
        r"during|around|about|circa|ca\.|um den|gegen|roughly|ungefähr|etwa)\s+$")
_ROLE = {"since": SINCE, "seit": SINCE, "seit dem": SINCE, "seit der": SINCE, "ab": SINCE, "ab dem": SINCE,
         "after": SINCE, "nach dem": SINCE, "before": UNTIL, "vor": UNTIL, "vor dem": UNTIL, "vor der": UNTIL,
         "until": UNTIL, "till": UNTIL, "bis": UNTIL, "bis zum": UNTIL, "bis zur": UNTIL,
         "between": RANGE, "zwischen": RANGE, "from": RANGE, "vom": RANGE, "von": RANGE}
_AROUND = {"around", "about", "circa", "ca.", "um den", "gegen", "roughly", "ungefähr", "etwa"}
_SPELLED_RANGE = r"\b(?:bis|to|and|und)\b|[–—]|\d\s*-\s*\d|\.\."
_RANGE_JOIN = r"\s*(?:and|und|to|-|–|—)?\s*$"
_WHEN = (r"\b(when|what day|which day|what date|how long ago|wann|an welchem tag|welches datum|"
         r"wie lange ist es her)\b")
# words that ask nothing by themselves: with only these and dates left, the dates are the question
_GENERIC = {"do", "did", "done", "doing", "happen", "happened", "happening", "going", "on", "work", "worked", "write",
            "wrote", "note", "notes", "noted", "log", "logged", "anything", "something", "everything",
            "machen", "gemacht", "getan", "passiert", "los", "war", "waren", "gab", "erledigt", "notiert",
            "geschrieben", "alles", "etwas", "was", "ich", "wir"}


def _n(word: str) -> int:
    w = word.lower()
    return int(w) if w.isdigit() else _NUMBERS[w]


def _week_of(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _month_span(y: int, m: int) -> tuple[date, date]:
    return date(y, m, 1), date(y, m, month_end(y, m))


def _year_before(day: date) -> date:
    try:
        return day.replace(year=day.year - 1)
    except ValueError:  # Feb 29
        return day.replace(year=day.year - 1, day=28)


def _nearest(candidates: list[tuple[date, date]], today: date) -> tuple[date, date]:
    """The candidate span nearest to `today` (the past one on a tie)."""
    def distance(span):
        a, b = span
        return (0 if a <= today <= b else min(abs((a - today).days), abs((b - today).days)), a > today)
    return min(candidates, key=distance)


def _safe(make):
    """A span maker that answers None for a day that does not exist (Feb 30, year 0, …)."""
    def wrapped(m: re.Match, today: date):
        try:
            return make(m, today)
        except (ValueError, OverflowError, KeyError):
            return None
    return wrapped


@_safe
def _ago(m, today):
    n, unit = _n(m.group(1)), _UNITS[m.group(2).lower()]
    center = today - timedelta(days=n * unit)
    half = {1: 0, 7: 3, 30: 10, 365: 120}[unit]
    return center - timedelta(days=half), center + timedelta(days=half), max(1, half)


@_safe
def _rolling(m, today):
    n, unit = _n(m.group(1)), _UNITS[m.group(2).lower()]
    return today - timedelta(days=n * unit), today, 1


@_safe
def _relative_day(m, today):
    w = m.group(1).lower()
    offset = {"today": 0, "heute": 0, "tonight": 0, "yesterday": -1, "gestern": -1, "last night": -1,
              "the day before yesterday": -2, "day before yesterday": -2, "vorgestern": -2,
              "tomorrow": 1, "übermorgen": 2, "uebermorgen": 2, "the day after tomorrow": 2}[w]
    day = today + timedelta(days=offset)
    return day, day, 0


@_safe
def _period(m, today):
    which, unit = m.group(1).lower(), m.group(2).lower()
    step = -1 if re.fullmatch(_PAST, which) else 1 if re.fullmatch(_NEXT, which) else 0
    if unit in ("week", "woche"):
        a, _ = _week_of(today + timedelta(days=7 * step))
        return a, a + timedelta(days=6), 2
    if unit in ("weekend", "wochenende"):
        saturday = _week_of(today)[0] + timedelta(days=5)
        if step == -1:
            saturday -= timedelta(days=7)
        elif step == 1 and saturday <= today:
            saturday += timedelta(days=7)
        return saturday, saturday + timedelta(days=1), 1
    if unit in ("month", "monat"):
        y, mo = today.year, today.month + step
        y, mo = (y - 1, 12) if mo == 0 else (y + 1, 1) if mo == 13 else (y, mo)
        a, b = _month_span(y, mo)
        return a, b, 7
    y = today.year + step
    return date(y, 1, 1), date(y, 12, 31), 30


@_safe
def _weekday(m, today):
    which, wd = (m.group(1) or "").lower(), _WEEKDAYS[m.group(2).lower()]
    back = (today.weekday() - wd) % 7
    if re.fullmatch(_PAST, which):
        back = back or 7
        day = today - timedelta(days=back)
    elif re.fullmatch(_NEXT, which):
        day = today + timedelta(days=(wd - today.weekday()) % 7 or 7)
    else:  # "on Monday", "this Monday", "am Montag": the nearest one, the past one on a tie
        ahead = (wd - today.weekday()) % 7
        day = today - timedelta(days=back) if back <= ahead else today + timedelta(days=ahead)
    return day, day, 1


def _day_of_month(month_word: str, day_word: str, today: date):
    mo, d = _MONTHS[month_word.rstrip(".").lower()], int(day_word)
    options = []
    for y in (today.year - 1, today.year, today.year + 1):
        try:
            options.append((date(y, mo, d),) * 2)
        except ValueError:
            continue
    if not options:
        return None
    a, b = _nearest(options, today)
    return a, b, 1


@_safe
def _month_day(m, today):
    return _day_of_month(m.group(1), m.group(2), today)


@_safe
def _day_month(m, today):
    if m.group(3):
        day = date(int(m.group(3)), _MONTHS[m.group(2).rstrip(".").lower()], int(m.group(1)))
        return day, day, 1
    return _day_of_month(m.group(2), m.group(1), today)


@_safe
def _month_only(m, today):
    which, mo = (m.group(1) or "").lower(), _MONTHS[m.group(2).rstrip(".").lower()]
    if m.group(3):
        return (*_month_span(int(m.group(3)), mo), 7)
    spans = [_month_span(y, mo) for y in (today.year - 1, today.year, today.year + 1)]
    if re.fullmatch(_PAST, which):
        a, b = max(s for s in spans if s[0] < _month_span(today.year, today.month)[0])
    elif re.fullmatch(_NEXT, which):
        a, b = min(s for s in spans if s[0] > today)
    else:
        a, b = _nearest(spans, today)
    return a, b, 7


@_safe
def _year_month(m, today):
    return (*_month_span(int(m.group(1)), int(m.group(2))), 7)


@_safe
def _year(m, today):
    y = int(m.group(1))
    return date(y, 1, 1), date(y, 12, 31), 30


_NOT_IN_DATE = r"(?<!\d[-./])"  # a year or a month inside "2026-02-30" or "30.02.2026" is no date of its own
# what is shaped like a date: when no rule reads it as a day, it stays words whole
_SHAPED = (r"\b(?:19|20)\d\d(?:-\d{1,2}(?:-\d{1,2})?|/\d{1,2}/\d{1,2})\b(?![-./]\d)"
           r"|\b\d{1,2}[./]\d{1,2}[./](?:19|20)\d\d\b(?![-./]\d)")
_YEAR = r"(?:,?\s*\b((?:19|20)\d\d)\b)?"  # "1 February, 2023", "January, 2023"
_MONTH_WORDS = tuple(_MONTHS)
# (pattern, span maker, needs a word before it: "in", "im", "since", …, words it cannot match without)
_RULES = [
    (rf"\b{_NUM}\s+{_UNIT}\s+ago\b", _ago, False, ("ago",)),
    (rf"\bvor\s+{_NUM}\s+{_UNIT}\b", _ago, False, ("vor",)),
    (rf"\b(?:the\s+|in\s+den\s+|in\s+the\s+)?(?:last|past|letzten|vergangenen)\s+{_NUM}\s+{_UNIT}\b", _rolling, False,
     ("last", "past", "letzten", "vergangenen")),
    (r"\b(the day before yesterday|day before yesterday|the day after tomorrow|last night|yesterday|today|tonight|"
     rf"tomorrow|vorgestern|gestern|heute|übermorgen|uebermorgen){_DAYTIME}\b", _relative_day, False,
     ("yesterday", "tomorrow", "last night", "today", "tonight", "gestern", "heute", "morgen")),
    (rf"\b(?:the\s+|in\s+der\s+|im\s+|am\s+)?({_PAST[1:-1]}|{_THIS[1:-1]}|{_NEXT[1:-1]})\s+"
     r"(weekend|wochenende|week|woche|month|monat|year|jahr)\b", _period, False,
     ("week", "woche", "month", "monat", "year", "jahr")),
    (rf"\b(?:({_PAST[1:-1]}|{_THIS[1:-1]}|{_NEXT[1:-1]})\s+)?{_WEEKDAY}\b", _weekday, True, tuple(_WEEKDAYS)),
    (rf"\b{_MON}\s+{_DAY}(?!\d|\.\d)\b", _month_day, False, _MONTH_WORDS),
    (rf"\b{_DAY}\s*(?:of\s+)?{_MON}(?![a-zäöü]){_YEAR}", _day_month, False, _MONTH_WORDS),
    (rf"\b(?:({_PAST[1:-1]}|{_NEXT[1:-1]})\s+)?{_MON}(?![a-zäöü]){_YEAR}", _month_only, True, _MONTH_WORDS),
    (rf"{_NOT_IN_DATE}\b((?:19|20)\d\d)-(\d{{1,2}})\b(?![-./]\d{{1,2}}\b)", _year_month, True, ("19", "20")),
    (rf"{_NOT_IN_DATE}\b((?:19|20)\d\d)\b(?![-./]\d{{1,2}}\b)", _year, True, ("19", "20")),
]


@lru_cache(maxsize=None)
def _rx(pattern: str) -> re.Pattern:
    """`pattern` compiled (case-insensitive) on first use: compiling the rules costs ~5 ms, a good
    part of a one-shot `mem recall`, and most queries name no date."""
    return re.compile(pattern, re.I)


def caseless(text: str) -> str:
    """`text` lower-cased so that every ASCII letter a case-insensitive pattern matches in `text` is
    that letter here too (`ı` and `ſ` match `i` and `s`; `İ` lower-cases with a combining dot)."""
    return text.lower().replace("ı", "i").replace("ſ", "s").replace("\u0307", "")


def _rules(text: str) -> list[tuple[re.Pattern, Callable, bool]]:
    """The rules that may match `text` (those holding one of their words), compiled."""
    folded = caseless(text)
    return [(_rx(p), make, pre) for p, make, pre, needed in _RULES if any(w in folded for w in needed)]


class _Atom:
    """One date expression found in the query: where, which days, and how it is used. `yearless`:
    "3. März", "in June", the year was chosen as the nearest. A plain class: the methods a
    dataclass generates are compiled on every import (~0.5 ms of each `mem recall`)."""

    __slots__ = ("start", "end", "first", "last", "fuzz", "role", "around", "yearless")

    def __init__(self, start: int, end: int, first: date, last: date, fuzz: int, role: str = PRIOR,
                 around: bool = False, yearless: bool = False):
        self.start, self.end, self.first, self.last, self.fuzz = start, end, first, last, fuzz
        self.role, self.around, self.yearless = role, around, yearless


def _atoms(text: str, today: date, unread: list[tuple[int, int]]) -> list[_Atom]:
    """Every date expression in `text`, with the word before it that says how to use it; what looks
    like a date but names no day goes to `unread` (start, end), and no part of it is read."""
    found = [_Atom(s, e, a, b, 0) for s, e, a, b in find_dates(text)]
    for pattern, make, needs_pre in _rules(text):
        for m in pattern.finditer(text):
            if any(m.start() < x.end and x.start < m.end() for x in found) or \
                    any(m.start() < e and s < m.end() for s, e in unread):
                continue
            pre = _rx(_PRE).search(text[max(0, m.start() - 16):m.start()]) or _joined(text, m.start(), found)
            modified = bool(m.groups() and m.group(1) and not m.group(1).isdigit()) and make in (_weekday, _month_only)
            if needs_pre and not pre and not modified:
                continue  # "May I …", "2025 invoices", "Monday morning meetings" stay words
            if not pre and any(g in ("may", "mar", "mai") for g in m.groups()):
                continue  # "version 4 may break": a lower-case modal verb, not a month
            span = make(m, today)
            if span is None:  # "Feb 29" in 2026, "31 April": not "Feb" alone either
                unread.append((m.start(), m.end()))
            else:
                yearless = make in (_month_day, _day_month, _month_only) and not (m.lastindex == 3 and m.group(3)) \
                    and not modified  # "next March" says which one
                found.append(_Atom(m.start(), m.end(), *span, yearless=yearless))
    if "19" in text or "20" in text:  # the guard's pattern compiled only when a year may be there (one-shot cost)
        unread += [m.span() for m in _rx(_SHAPED).finditer(text)
                   if not any(m.start() < x.end and x.start < m.end() for x in found)]
    for x in found:
        offset = _rx(_OFFSET).search(text[max(0, x.start - 40):x.start])
        if offset and any(y is not x and y.start < x.start and y.end > x.start - len(offset.group(0)) for y in found):
            offset = None  # "last weekend before April 10": "weekend" is the other date's word
        if offset:  # "the week before August 3": that week, a prior
            x.start -= len(offset.group(0))
            x.first, x.last = _offset(offset, x.first, x.last)
            x.fuzz, x.yearless = 2, False
            continue
        pre = _rx(_PRE).search(text[max(0, x.start - 16):x.start])
        if pre:
            word = " ".join(pre.group(1).lower().split())
            x.start -= len(pre.group(0))
            x.role = _ROLE.get(word, PRIOR)
            x.around = word in _AROUND
    return sorted(found, key=lambda x: x.start)


_OFFSET = (rf"(?:\bthe\s+)?(?:\b{_NUM}\s+)?\b(days?|weeks?|weekend|months?|tage?n?|wochen?|wochenende|"
           r"monate?n?)\s+(before|after|vor|nach)(?:\s+(?:dem|der))?\s+$")


def _offset(m: re.Match, first: date, last: date) -> tuple[date, date]:
    """The days "N units before/after" a span: "the week before X" is the seven days up to X."""
    n, unit = _n(m.group(1)) if m.group(1) else 1, m.group(2).lower()
    if unit in ("weekend", "wochenende"):
        sat = first - timedelta(days=(first.weekday() - 5) % 7 or 7)
        if m.group(3).lower() in ("after", "nach"):
            sat = last + timedelta(days=(5 - last.weekday()) % 7 or 7)
        return sat, sat + timedelta(days=1)
    days = n * (7 if unit.startswith(("week", "woch")) else 30 if unit.startswith(("month", "monat")) else 1)
    if m.group(3).lower() in ("after", "nach"):
        return last + timedelta(days=1), last + timedelta(days=days)
    return first - timedelta(days=days), first - timedelta(days=1)


_JOIN = r"\b(?:and|und|to|bis)\s+$"


def _joined(text: str, start: int, found: list[_Atom]) -> re.Match | None:
    """"… and May 10", "… to Wednesday": the second end of a range needs no word of its own."""
    join = _rx(_JOIN).search(text[max(0, start - 8):start])
    if not join:
        return None
    before = text[:start - len(join.group(0))].rstrip()
    return join if any(x.end == len(before) for x in found) else None


def _in_year(x: _Atom, year: int) -> _Atom:
    """A year-less atom moved to `year` (the other end of its range names it)."""
    try:
        x.first, x.last = x.first.replace(year=year), x.last.replace(year=year)
    except ValueError:  # Feb 29
        pass
    return x


def read(text: str, today: date) -> Timeframe:
    """The dates `text` names, relative to `today`, and `text` without them. Never raises."""
    if len(text) > MAX_CHARS:  # the rest stays words: reading is quadratic in the dates found
        cut = text.rfind(" ", 0, MAX_CHARS)
        cut = cut if cut > 0 else MAX_CHARS
        head = read(text[:cut], today)
        return head.replace(text=f"{head.text} {text[cut:].lstrip()}", only_dates=False)
    unread: list[tuple[int, int]] = []
    try:
        atoms = _atoms(text, today, unread)
    except (ValueError, OverflowError):  # a date past year 9999 and the like: keep the words
        return Timeframe(text=text)
    not_days = tuple(dict.fromkeys(_phrase(text, s, e) for s, e in sorted(unread)))
    if not atoms:
        return Timeframe(text=text, only_dates=False, unread=not_days)
    spans, since, until, joins = [], None, None, []
    i = 0
    while i < len(atoms):
        a = atoms[i]
        b = atoms[i + 1] if i + 1 < len(atoms) else None
        if a.role == RANGE and b is not None and b.role in (PRIOR, UNTIL) and _rx(_RANGE_JOIN).fullmatch(text[a.end:b.start]):
            if a.yearless and a.first > b.last:
                a = _in_year(a, b.last.year)
            if a.first > b.last:  # "from Friday to Monday" and the like: each end a prior
                atoms[i + 1].role = PRIOR
                a.role = PRIOR
                continue
            if a.yearless and b.yearless and a.first > today:  # "from Dec 30 to Jan 2" asked Dec 2: the past one
                a.first, b.last = _year_before(a.first), _year_before(b.last)
            spans.append(Span(a.first, b.last, _phrase(text, a.start, b.end), "filter", 0))
            joins.append((a.end, b.start))
            since, until = _earliest(since, a.first), _latest(until, b.last)
            i += 2
            continue
        phrase = _phrase(text, a.start, a.end)
        if a.role == SINCE:
            if a.yearless and a.first > today:  # "seit dem 3. März": the one before today
                a = _in_year(a, a.first.year - 1)
            first = a.last + timedelta(days=1) if phrase.lower().startswith(("after", "nach")) else a.first
            spans.append(Span(first, max(first, today), phrase, "filter", 0))
            since = _earliest(since, first)
        elif a.role == UNTIL:
            last = a.first if phrase.lower().startswith(("before", "vor")) else a.last  # X's notes tell what came before
            spans.append(Span(min(last, today), last, phrase, "filter", 0))
            until = _latest(until, last)
        elif a.role == RANGE and a.first < a.last and _rx(_SPELLED_RANGE).search(phrase):  # "vom 1. bis 3. Mai 2026"
            spans.append(Span(a.first, a.last, phrase, "filter", 0))
            since, until = _earliest(since, a.first), _latest(until, a.last)
        else:
            fuzz = max(a.fuzz, AROUND) if a.around else a.fuzz
            spans.append(Span(a.first, a.last, phrase, PRIOR, fuzz, a.around, a.yearless))
        i += 1
    rest = _without(text, [(x.start, x.end) for x in atoms] + joins)
    return Timeframe(text=rest, spans=tuple(spans), since=since, until=until, only_dates=not _asks_more(rest),
                     unread=not_days)


def asks_when(text: str) -> bool:
    """Whether the query asks for a time ("when did …", "wann …")."""
    return bool(_rx(_WHEN).search(text))


# A day in the past named relative to when the text was written: what someone tells of something that
# happened ("yesterday", "last week", "two weekends ago", "vor ein paar Tagen", "letzten Freitag"). Each
# pattern with the words it cannot match without (most text holds none, and is not searched).
_TOLD = (
    (rf"\b{_NUM}\s+(?:{_UNIT[1:-1]}|weekends?)\s+ago\b", ("ago",)),
    (rf"\bvor\s+{_NUM}\s+(?:{_UNIT[1:-1]}|wochenenden?)\b", ("vor",)),
    (r"\b(?:yesterday|vorgestern|gestern)\b", ("yesterday", "gestern")),
    (rf"\b{_PAST}\s+(?:weekend|wochenende|week|woche|month|monat|year|jahr|night|nacht|summer|sommer|winter|"
     rf"spring|frühling|frühjahr|fall|autumn|herbst|{_WEEKDAY[1:-1]})\b", ("last", "past", "previous", "letzt", "vergangen", "vorig")),
)


def tells_past(text: str) -> bool:
    """Whether `text` names a past day relative to when it was written ("yesterday", "last week",
    "two days ago", "gestern", "vor zwei Wochen", "letzten Freitag"): it tells of something that
    happened. Pure."""
    folded = caseless(text)
    return any(any(w in folded for w in needed) and _rx(p).search(folded) for p, needed in _TOLD)


def _phrase(text: str, start: int, end: int) -> str:
    return " ".join(text[start:end].split())


def _without(text: str, cuts: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for s, e in sorted(cuts):
        out.append(text[pos:s])
        pos = e
    out.append(text[pos:])
    return re.sub(r"\s+([?!.,;:])", r"\1", " ".join("".join(out).split()))


def _asks_more(rest: str) -> bool:
    """Whether `rest` holds a word beyond stop words and generic verbs ("what did I do")."""
    return any(fold(w) not in STOPWORDS and fold(w) not in _GENERIC for _, _, w in words(rest))


def _earliest(a: date | None, b: date) -> date:
    return b if a is None else min(a, b)


def _latest(a: date | None, b: date) -> date:
    return b if a is None else max(a, b)
