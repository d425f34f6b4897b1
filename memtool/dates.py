"""Dates: explicit dates and ranges named in text, and `--since/--until` specs. Pure: `today` is passed in."""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache

from memtool.errors import UsageError

_MONTHS = {
    "jan": 1, "januar": 1, "january": 1, "jän": 1, "jaen": 1,
    "feb": 2, "februar": 2, "february": 2,
    "mar": 3, "march": 3, "märz": 3, "maerz": 3, "marz": 3, "mär": 3,
    "apr": 4, "april": 4,
    "may": 5, "mai": 5,
    "jun": 6, "june": 6, "juni": 6,
    "jul": 7, "july": 7, "juli": 7,
    "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "okt": 10, "october": 10, "oktober": 10,
    "nov": 11, "november": 11,
    "dec": 12, "dez": 12, "december": 12, "dezember": 12,
}
_MON = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DASH = r"\s*(?:–|—|-|\.\.|\bto\b|\bbis\b)\s*"
_ORD = r"(?:st|nd|rd|th)?"
_ISO = r"\d{4}-\d{2}-\d{2}"

@lru_cache(maxsize=1)
def _patterns() -> list[tuple[str, re.Pattern]]:
    """The date forms, compiled on first use. Order matters: ranges first; a match consumes its text."""
    return [
        ("iso_range", re.compile(rf"\b({_ISO}){_DASH}({_ISO})\b")),
        ("iso", re.compile(rf"\b({_ISO})\b")),
        # Nov 27–Dec 1, 2025 / Nov 27–30, 2025 / November 27, 2025
        ("en", re.compile(rf"\b({_MON})\s+(\d{{1,2}}){_ORD}(?:{_DASH}(?:({_MON})\s+)?(\d{{1,2}}){_ORD})?,?\s+(\d{{4}})\b", re.I)),
        # 27.11.–1.12.2025 / 27.11.2025
        ("de_num_range", re.compile(r"\b(\d{1,2})\.(\d{1,2})\.?" + _DASH + r"(\d{1,2})\.(\d{1,2})\.(\d{4})\b")),
        ("de_num", re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")),
        # 15.–17. Januar 2027 / 27. Nov – 1. Dez 2025 / 27 Nov 2025
        ("dm_range", re.compile(rf"\b(\d{{1,2}})\.?\s*(?:({_MON})\s*)?{_DASH}(\d{{1,2}})\.?\s*({_MON})\s+(\d{{4}})\b", re.I)),
        ("dm", re.compile(rf"\b(\d{{1,2}})\.?\s+({_MON})\s+(\d{{4}})\b", re.I)),
        # März 2027 / March 2027: the whole month
        ("month", re.compile(rf"\b({_MON})\s+(\d{{4}})\b", re.I)),
    ]


def month_end(y: int, m: int) -> int:
    """The last day of month `m` (1-12) of year `y`: `calendar.monthrange(y, m)[1]`, without
    importing `calendar` into every `mem` call."""
    return 31 if m == 12 else (date(y, m + 1, 1) - timedelta(days=1)).day


def _month(name: str | None) -> int | None:
    if not name:
        return None
    return _MONTHS.get(name.rstrip(".").lower())


def _mk(y: int, m: int | None, d: int) -> date | None:
    if m is None:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _iso(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _interpret(kind: str, g: tuple) -> tuple[date, date] | None:
    if kind == "iso_range":
        a, b = _iso(g[0]), _iso(g[1])
        return (a, b) if a and b and a <= b else None
    if kind == "iso":
        d = _iso(g[0])
        return (d, d) if d else None
    if kind == "en":
        m1, d1, m2, d2, y = g
        y = int(y)
        start = _mk(y, _month(m1), int(d1))
        if d2 is None:
            return (start, start) if start else None
        end = _mk(y, _month(m2) or _month(m1), int(d2))
        if start and end and end < start:  # Dec 28–Jan 3, 2026: the start is in the year before
            start = _mk(y - 1, _month(m1), int(d1))
        return (start, end) if start and end and start <= end else None
    if kind == "de_num_range":
        d1, m1, d2, m2, y = (int(x) for x in g)
        start, end = _mk(y, m1, d1), _mk(y, m2, d2)
        if start and end and end < start:
            start = _mk(y - 1, m1, d1)
        return (start, end) if start and end and start <= end else None
    if kind == "de_num":
        d, m, y = (int(x) for x in g)
        x = _mk(y, m, d)
        return (x, x) if x else None
    if kind == "dm_range":
        d1, m1, d2, m2, y = g
        y = int(y)
        end = _mk(y, _month(m2), int(d2))
        start = _mk(y, _month(m1) or _month(m2), int(d1))
        if start and end and end < start:
            start = _mk(y - 1, _month(m1) or _month(m2), int(d1))
        return (start, end) if start and end and start <= end else None
    if kind == "dm":
        d, m, y = g
        x = _mk(int(y), _month(m), int(d))
        return (x, x) if x else None
    if kind == "month":
        m, y = _month(g[0]), int(g[1])
        if m is None or not 1 <= y <= 9999:
            return None
        return (date(y, m, 1), date(y, m, month_end(y, m)))
    return None


_HAS_DIGIT = re.compile(r"\d{4}").search
_NAMED = frozenset(("en", "dm_range", "dm", "month"))  # the forms that name a month (`_MON`)
# The first three letters of every name in _MONTHS: a text without them (lower-cased) names no month.
_MONTH_HEADS = re.compile("j(?:an|än|ae|un|ul)|feb|ma[reiy]|mär|apr|aug|sep|o(?:ct|kt)|nov|de[cz]").search


def _may_name_month(text: str) -> bool:
    """Whether `text` may hold a month's name: the named forms' case-blind search is the slowest part
    of `find_dates` (a full build asks for ~10^4 texts), and most texts name none. `re.I` also takes
    `ı`, `ſ` and `İ` for i and s, which `str.lower` does not: with those, the patterns look themselves."""
    return "ı" in text or "ſ" in text or "İ" in text or _MONTH_HEADS(text.lower()) is not None


def find_dates(text: str) -> list[tuple[int, int, date, date]]:
    """(start, end, first day, last day) of every explicit date or range named in `text`, in order."""
    if not _HAS_DIGIT(text):  # every form names a day or year in digits
        return []
    found: list[tuple[int, int, date, date]] = []
    named = _may_name_month(text)
    for kind, pattern in _patterns():
        if not named and kind in _NAMED:
            continue
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e, _, _ in found):
                continue
            if kind == "month" and m.group(1)[0].islower():
                continue  # "I may 2025 …" is not a month
            span = _interpret(kind, m.groups())
            if span:
                found.append((m.start(), m.end(), *span))
    return sorted(found)


def extract_range(text: str) -> tuple[date, date] | None:
    """The span of all explicit dates and ranges named in `text`, or None."""
    found = find_dates(text)
    if not found:
        return None
    return min(a for _, _, a, _ in found), max(b for _, _, _, b in found)


# Every date an option takes (--date, --since, --until, --as-of; the MCP tools' too) lies in
# FIRST_YEAR..9999: an earlier one is a typo (`0025-11-30`), never a day of someone's notes.
FIRST_YEAR = 1900
_REL = r"^(\d{1,5})\s*([dwmy])$"  # compiled by `re` on first use: only --since/--until read it


def parse_since(spec: str, today: date) -> date:
    """First day included by `--since`: `30d`, `2w`, `6m`, `1y`, `2025-11-01`, `2025-11`, `2025`, `today`."""
    return _parse_bound(spec, today, end=False, option="--since")


def parse_until(spec: str, today: date, option: str = "--until") -> date:
    """Last day included by `--until` (a month or year means its last day); `option` names the
    option in an error (`--as-of` takes the same forms)."""
    return _parse_bound(spec, today, end=True, option=option)


def _parse_bound(spec: str, today: date, *, end: bool, option: str) -> date:
    return _in_range(_bound(spec, today, end=end, option=option), spec, option)


def _bound(spec: str, today: date, *, end: bool, option: str) -> date:
    s = spec.strip().lower()
    if s in ("today", "heute"):
        return today
    if s in ("yesterday", "gestern"):
        return today - timedelta(days=1)
    m = re.match(_REL, s)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        days = {"d": 1, "w": 7, "m": 30, "y": 365}[unit] * n
        try:
            return today - timedelta(days=days)
        except OverflowError:
            pass
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        d = _iso(s)
        if d:
            return d
        _refuse_shaped(spec, option, int(s[:4]), int(s[5:7]), int(s[8:]))
    elif re.fullmatch(r"\d{4}-\d{2}", s):
        y, mo = int(s[:4]), int(s[5:])
        if 1 <= mo <= 12 and y >= 1:
            return date(y, mo, month_end(y, mo) if end else 1)
        _refuse_shaped(spec, option, y, mo)
    elif re.fullmatch(r"\d{4}", s) and int(s) >= 1:
        return date(int(s), 12, 31) if end else date(int(s), 1, 1)
    raise UsageError(
        f"{option} {spec!r} is not a date or duration",
        "use e.g. 30d, 2w, 6m, 1y, 2025-11-01, 2025-11 or 2025",
    )


_DAY_SHAPED = r"(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})\.(\d{1,2})\.(\d{4})"  # 2026-02-30, 30.02.2026


def refuse_non_day(text: str, what: str) -> None:
    """A UsageError when `text` as a whole is shaped like a day (`2026-02-30`, `30.02.2026`) but
    names none (or one before FIRST_YEAR, `0025-11-30`, which no date option takes either): asked for
    a day, never searched for as words (a day in longer text is left alone)."""
    text = text.strip()
    m = re.fullmatch(_DAY_SHAPED, text) if text[:1].isdigit() and text[-1:].isdigit() else None  # (no compile per query)
    if not m:
        return
    y, mo, d = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(6), m.group(5), m.group(4))
    y, mo, d = int(y), int(mo), int(d)
    if 1 <= mo <= 12 and 1 <= d <= month_end(max(y, 1), mo) and y >= FIRST_YEAR:
        return
    why = (_no_day(y, mo) if not (1 <= mo <= 12 and 1 <= d <= month_end(max(y, 1), mo)) else
           f"the year {y:04d} is before {FIRST_YEAR}, as it is for --date and --since")
    raise UsageError(f"{what} {text!r} is shaped like a date but is not a day ({why})",
                     "give a real day, e.g. 2025-11-27 (YYYY-MM-DD), or words to search for")


def _no_day(year: int, month: int) -> str:
    """Why a date-shaped text whose day or month does not exist names no day."""
    return f"month {month} does not exist" if not 1 <= month <= 12 else f"{year:04d}-{month:02d} has {month_end(max(year, 1), month)} days"


def _refuse_shaped(spec: str, option: str, year: int, month: int, day: int | None = None) -> None:
    """A UsageError for an option's date-shaped `spec` that names no day (`2026-02-30`, `2025-13`),
    saying why; nothing for one whose only fault is its year (0000: the range check names it)."""
    if year >= 1 and (not 1 <= month <= 12 or (day is not None and not 1 <= day <= month_end(year, month))):
        raise UsageError(f"{option} {spec!r} is shaped like a date but is not a day ({_no_day(year, month)})",
                         "use e.g. 30d, 2w, 6m, 1y, 2025-11-01, 2025-11 or 2025")


def parse_day(spec: str, today: date) -> date:
    """One day: `2025-11-27`, `today`, `yesterday`."""
    s = spec.strip().lower()
    if s in ("today", "heute"):
        return today
    if s in ("yesterday", "gestern"):
        return today - timedelta(days=1)
    d = _iso(s) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s) else None
    if d is None:
        raise UsageError(f"--date {spec!r} is not a day", "use YYYY-MM-DD, today or yesterday")
    return _in_range(d, spec, "--date")


def _in_range(day: date, spec: str, option: str) -> date:
    """`day`, unless it lies before FIRST_YEAR (`0025-11-30` for `2025-11-30`): a UsageError, as for any
    other bad date, so nothing is written or filtered by it."""
    if day.year < FIRST_YEAR:
        raise UsageError(f"{option} {spec!r} is before {FIRST_YEAR}: not a day memtool writes to or filters by",
                         f"give a date from {FIRST_YEAR}-01-01 to 9999-12-31")
    return day
