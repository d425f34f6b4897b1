"""Hostile dates in a recall question (qc39): a date that does not exist stays words whole (no part of
it becomes a filter that hides facts), says so, and a date read as a filter never hides what the
question plainly asks for ("around Nov 27", "in January" asked in December)."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import run_json, run_mem, write
from memtool.recall.timeframe import read

TODAY = date(2026, 12, 2)  # a Wednesday; 2026 is not a leap year


def _log(ws, day: date, *lines: str) -> None:
    write(ws, f"memory/{day.isoformat()}.md", f"# {day.isoformat()}\n\n" + "\n".join(f"- {x}" for x in lines) + "\n")


@pytest.mark.parametrize("query", [
    "Anna after 2026-02-29", "Anna before 2026-13-01", "Anna since 2026-02-30", "Anna seit dem 2026-04-31",
    "Anna since Feb 29", "Anna seit dem 29. Februar", "Anna between Feb 29 and Feb 30", "Anna until 2026/02/30",
])
def test_a_date_that_does_not_exist_sets_no_bound_from_a_part_of_it(query):
    tf = read(query, TODAY)
    assert tf.since is None and tf.until is None, (query, tf.spans)
    assert not [s for s in tf.spans if s.use == "filter"], (query, tf.spans)
    assert any(w in tf.text for w in ("2026", "Feb", "Februar")), tf.text  # the date stays words


def test_a_date_that_does_not_exist_is_named_as_words():
    tf = read("Anna after 2026-02-29", TODAY)
    assert tf.unread == ("2026-02-29",)
    assert read("Anna since Feb 29", TODAY).unread == ("Feb 29",)
    assert read("Anna on 2024-02-29", TODAY).unread == ()  # a leap day is a day


def test_year_and_month_are_still_read_beside_the_guard():
    assert [(s.first, s.last) for s in read("Anna in 2025", TODAY).spans] == [(date(2025, 1, 1), date(2025, 12, 31))]
    tf = read("Anna since 2025-11", TODAY)
    assert (tf.since, tf.until) == (date(2025, 11, 1), None)
    assert read("Anna in 2025.", TODAY).spans  # a full stop after a year is not a date's dot


def test_cli_an_impossible_date_in_the_question_hides_nothing_and_says_so(empty_ws):
    _log(empty_ws, date(2026, 3, 5), "@Anna moved to Berlin.")
    _log(empty_ws, date(2025, 6, 1), "@Anna started the new job.")
    for query in ("Anna after 2026-02-29", "Anna before 2026-13-01", "Anna since Feb 29"):
        proc, data = run_json("recall", query, "--as-of", "2026-12-02", "--min-score", "0", cwd=empty_ws)
        assert proc.returncode == 0, proc.stderr
        assert len(data["results"]) == 2, (query, data.get("dates"), proc.stderr)
        assert "not read as a day" in proc.stderr, proc.stderr
        assert not [d for d in data.get("dates", []) if d["use"] == "filter"], data["dates"]


def test_cli_around_a_day_asked_alone_lists_the_days_around_it(empty_ws):
    _log(empty_ws, date(2026, 11, 25), "Lunch with Bob at the harbour.")
    _log(empty_ws, date(2026, 11, 10), "Dentist.")
    proc, data = run_json("recall", "what happened around Nov 27", "--as-of", "2026-12-02", cwd=empty_ws)
    assert [r["timestamp"] for r in data["results"]] == ["2026-11-25"], (data, proc.stderr)
    assert data["dates"] == [{"phrase": "around Nov 27", "from": "2026-11-24", "to": "2026-11-30", "use": "filter"}]


@pytest.mark.parametrize("query, day", [
    ("what did I do in January", date(2026, 1, 14)),
    ("was war im Januar", date(2026, 1, 14)),
    ("what happened from Dec 30 to Jan 2", date(2025, 12, 31)),
])
def test_cli_a_yearless_date_asked_alone_filters_the_past_not_the_coming_one(empty_ws, query, day):
    _log(empty_ws, day, "Skiing in Davos with the family.")
    proc, data = run_json("recall", query, "--as-of", "2026-12-02", cwd=empty_ws)
    assert [r["timestamp"] for r in data["results"]] == [day.isoformat()], (data, proc.stderr)
    assert all(d["to"] <= "2026-12-02" for d in data["dates"]), data["dates"]


def test_cli_text_output_names_the_impossible_date(empty_ws):
    _log(empty_ws, date(2026, 3, 5), "@Anna moved to Berlin.")
    proc = run_mem("recall", "Anna since 2026-02-30", "--as-of", "2026-12-02", cwd=empty_ws, check=0)
    assert "Anna moved to Berlin" in proc.stdout
    assert "2026-02-30" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_since_after_as_of_names_the_option_given(empty_ws):
    proc = run_mem("recall", "Anna", "--as-of", "2026-02", "--since", "2026-03-01", cwd=empty_ws, check=2)
    assert "--since 2026-03-01 is after --as-of 2026-02" in proc.stderr, proc.stderr
    proc = run_mem("recall", "Anna", "--until", "2026-02-01", "--since", "2026-03-01", cwd=empty_ws, check=2)
    assert "--since 2026-03-01 is after --until 2026-02-01" in proc.stderr, proc.stderr


def test_cli_a_relative_since_counts_back_from_as_of(empty_ws):
    """`--as-of` is "today" for the question: `--since 30d` is the 30 days before it, as "last month"
    in the text is, not the 30 days before the real today (which hid the month asked about)."""
    _log(empty_ws, date(2026, 10, 25), "Heating repaired by the landlord.")
    _log(empty_ws, date(2026, 11, 25), "Heating broke again.")
    proc, data = run_json("recall", "heating", "--as-of", "2026-11-20", "--since", "30d", "--min-score", "0",
                          cwd=empty_ws)
    assert proc.returncode == 0, proc.stderr
    assert [r["timestamp"] for r in data["results"]] == ["2026-10-25"], (data, proc.stderr)
    proc, data = run_json("recall", "heating", "--as-of", "2026-11-20", "--until", "yesterday", "--min-score", "0",
                          cwd=empty_ws)
    assert [r["timestamp"] for r in data["results"]] == ["2026-10-25"], (data, proc.stderr)


def test_cli_bounds_in_the_question_that_cross_say_so(empty_ws):
    _log(empty_ws, date(2026, 11, 5), "Heating repaired by the landlord.")
    _log(empty_ws, date(2026, 11, 3), "Heating broke.")
    proc, data = run_json("recall", "heating since 2026-11-05 until 2026-11-01", "--as-of", "2026-12-02",
                          "--min-score", "0", cwd=empty_ws)
    assert [r["timestamp"] for r in data["results"]] == ["2026-11-05"], data
    assert "end (2026-11-01) before they begin (2026-11-05)" in proc.stderr, proc.stderr


@pytest.mark.parametrize("query", ["upgrade to Python 3.11.10", "season 2025/26 tickets", "release 10.2.3"])
def test_numbers_that_are_no_dates_raise_no_note(query):
    assert read(query, TODAY).unread == ()


def test_a_year_range_still_reads_its_first_year():
    assert [(s.first, s.last) for s in read("Anna in 2020-2024", TODAY).spans] == [(date(2020, 1, 1), date(2020, 12, 31))]


@pytest.mark.parametrize("query, first", [("was passiert nächsten März", date(2027, 3, 1)),
                                          ("what happened last March", date(2026, 3, 1)),
                                          ("was war im März", date(2026, 3, 1))])
def test_a_month_the_question_says_which_of_keeps_it_as_a_filter(query, first):
    tf = read(query, TODAY)
    assert tf.only_dates and tf.spans[0].as_filter(TODAY).first == first, tf.spans


def test_cli_many_impossible_dates_make_one_short_note(empty_ws):
    _log(empty_ws, date(2026, 3, 5), "@Anna moved to Berlin.")
    query = "Anna " + " ".join(f"2026-02-{d}" for d in range(30, 32)) + " " + " ".join(f"2026-13-{d:02}" for d in range(1, 29))
    proc, data = run_json("recall", query, "--as-of", "2026-12-02", "--min-score", "0", cwd=empty_ws)
    notes = [w for w in data["warnings"] if "not read as a day" in w]
    assert notes == ["'2026-02-30', '2026-02-31', '2026-13-01' and 27 more were not read as a day; searched as words"], notes
