from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtool.dates import _NAMED, _may_name_month, _patterns, extract_range, parse_day, parse_since, parse_until
from memtool.errors import UsageError

TODAY = date(2026, 11, 30)


@pytest.mark.parametrize("text,expected", [
    ("Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy", (date(2025, 11, 27), date(2025, 12, 1))),
    ("Nov 27-30, 2025", (date(2025, 11, 27), date(2025, 11, 30))),
    ("Dec 28–Jan 3, 2026", (date(2025, 12, 28), date(2026, 1, 3))),
    ("Termin am 2026-12-14", (date(2026, 12, 14), date(2026, 12, 14))),
    ("2026-01-02..2026-01-05", (date(2026, 1, 2), date(2026, 1, 5))),
    ("15.–17. Januar 2027", (date(2027, 1, 15), date(2027, 1, 17))),
    ("27.11.2025", (date(2025, 11, 27), date(2025, 11, 27))),
    ("27. Nov – 1. Dez 2025", (date(2025, 11, 27), date(2025, 12, 1))),
    ("Reisepass gültig bis März 2027", (date(2027, 3, 1), date(2027, 3, 31))),
    ("no date here", None),
    ("invalid 2025-13-45", None),
    ("I may 2025 be wrong", None),
])
def test_extract_range(text, expected):
    assert extract_range(text) == expected


def test_since_until_forms():
    assert parse_since("30d", TODAY) == date(2026, 10, 31)
    assert parse_since("2w", TODAY) == date(2026, 11, 16)
    assert parse_since("2025-11", TODAY) == date(2025, 11, 1)
    assert parse_until("2025-11", TODAY) == date(2025, 11, 30)
    assert parse_until("2025", TODAY) == date(2025, 12, 31)
    assert parse_since("2025-11-01", TODAY) == date(2025, 11, 1)
    assert parse_day("yesterday", TODAY) == date(2026, 11, 29)


@pytest.mark.parametrize("bad", ["", "foo", "2025-13-01", "2025-02-30", "30x", "99999999d", "-3d", "2025-00"])
def test_bad_specs_raise_usage_error(bad):
    with pytest.raises(UsageError):
        parse_since(bad, TODAY)


@pytest.mark.parametrize("bad, why", [("2026-02-30", "2026-02 has 28 days"), ("2025-13-01", "month 13 does not exist"),
                                      ("2025-00", "month 0 does not exist"), ("2024-02-30", "2024-02 has 29 days")])
def test_a_bound_shaped_like_a_date_says_why_it_is_none(bad, why):
    """`--since 2026-02-30` said "is not a date or duration", as for `garbage`; a query or `mem
    summarize` given the same day says why it is none (`refuse_non_day`)."""
    for option in ("--since", "--until", "--as-of"):
        with pytest.raises(UsageError) as raised:
            (parse_since(bad, TODAY) if option == "--since" else parse_until(bad, TODAY, option=option))
        assert raised.value.message == f"{option} {bad!r} is shaped like a date but is not a day ({why})", raised.value.message
        assert "2025-11-01" in raised.value.hint


@given(st.text(alphabet="JjAaNnÄäEeUuLlFfBbMmRrIiYyPpGgSsOoCcTtKkVvDdZzıſİK0123456789 .,–-", max_size=40))
@settings(max_examples=500, deadline=None)
def test_a_text_any_named_form_matches_may_name_a_month(text):
    """`find_dates` skips the forms naming a month when `_may_name_month` says no: it may say yes
    wrongly, never no (case-blind matching's odd letters included)."""
    if any(pattern.search(text) for kind, pattern in _patterns() if kind in _NAMED):
        assert _may_name_month(text)


@pytest.mark.parametrize("text", ["Sept 3, 2025", "3. MÄRZ 2026", "3. maerz 2026", "OKT 2024",
                                  "15.–17.Januar 2027", "Jän 2025"])
def test_named_months_in_any_case_are_found(text):
    assert extract_range(text) is not None


@pytest.mark.parametrize("text", ["ſep 2024", "Maı 2024", "MAİ 2024", "o\u212at 2024"])
def test_case_blind_odd_letters_still_reach_the_named_forms(text):
    """`re.I` reads ſ, ı, İ and the Kelvin sign as s, i, i and k: such a text may name a month."""
    assert any(p.search(text) for kind, p in _patterns() if kind in _NAMED)
    assert _may_name_month(text)


@pytest.mark.parametrize("parse,spec", [(parse_day, "0001-01-01"), (parse_day, "1899-12-31"), (parse_since, "0025-11-30"),
                                        (parse_since, "0001"), (parse_until, "1899-12"), (parse_since, "99999d")])
def test_dates_before_1900_are_usage_errors(parse, spec):
    with pytest.raises(UsageError, match="before 1900"):
        parse(spec, TODAY)


def test_the_date_range_ends_are_accepted():
    assert parse_day("1900-01-01", TODAY) == date(1900, 1, 1)
    assert parse_day("9999-12-31", TODAY) == date(9999, 12, 31)
    assert parse_since("1900", TODAY) == date(1900, 1, 1) and parse_until("9999", TODAY) == date(9999, 12, 31)
