"""Time in the question (issue 16 item 3): dates a recall query names, in English and German,
read relative to a fixed today, used as ranking priors or (stated bounds) as filters."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings, strategies as st

from conftest import run_json, run_mem, write
from memtool.recall.timeframe import Span, read

TODAY = date(2026, 12, 1)  # a Tuesday


@pytest.mark.parametrize("query, phrase, first, last, use, rest", [
    ("what did I do last week", "last week", "2026-11-23", "2026-11-29", "prior", "what did I do"),
    ("Peter yesterday", "yesterday", "2026-11-30", "2026-11-30", "prior", "Peter"),
    ("Was war im Oktober mit Tom?", "im Oktober", "2026-10-01", "2026-10-31", "prior", "Was war mit Tom?"),
    ("Arzt vor zwei Wochen", "vor zwei Wochen", "2026-11-14", "2026-11-20", "prior", "Arzt"),
    ("meeting around Nov 27", "around Nov 27", "2026-11-27", "2026-11-27", "prior", "meeting"),
    ("Termin am 3. März", "am 3. März", "2027-03-03", "2027-03-03", "prior", "Termin"),
    ("taxes in 2025", "in 2025", "2025-01-01", "2025-12-31", "prior", "taxes"),
    ("letzten Montag Peter", "letzten Montag", "2026-11-30", "2026-11-30", "prior", "Peter"),
    ("dentist two days ago", "two days ago", "2026-11-29", "2026-11-29", "prior", "dentist"),
    ("dentist since Monday", "since Monday", "2026-11-30", "2026-12-01", "filter", "dentist"),
    ("Lisbon in March 2026", "in March 2026", "2026-03-01", "2026-03-31", "prior", "Lisbon"),
    ("Lisbon between May 1 and May 10", "between May 1 and May 10", "2026-05-01", "2026-05-10", "filter", "Lisbon"),
    ("Urlaub vom 1. Mai bis 3. Mai 2026", "vom 1. Mai bis 3. Mai 2026", "2026-05-01", "2026-05-03", "filter", "Urlaub"),
    ("Steuer seit dem 3. März", "seit dem 3. März", "2026-03-03", "2026-12-01", "filter", "Steuer"),
    ("leave the flat before March", "before March", "2026-12-01", "2027-03-01", "filter", "leave the flat"),
    ("kids the week before August 3, 2023", "the week before August 3, 2023", "2023-07-27", "2023-08-02", "prior", "kids"),
    ("Welpe zwei Wochen vor dem 11. August 2023", "zwei Wochen vor dem 11. August 2023", "2023-07-28", "2023-08-10",
     "prior", "Welpe"),
    ("store on 1 February, 2023", "on 1 February, 2023", "2023-02-01", "2023-02-01", "prior", "store"),
    ("job in January, 2023", "in January, 2023", "2023-01-01", "2023-01-31", "prior", "job"),
    ("Heizung letzte Woche", "letzte Woche", "2026-11-23", "2026-11-29", "prior", "Heizung"),
    ("Marrakech last weekend", "last weekend", "2026-11-28", "2026-11-29", "prior", "Marrakech"),
])
def test_3_dates_in_english_and_german_questions(query, phrase, first, last, use, rest):
    tf = read(query, TODAY)
    assert [(s.phrase, s.first.isoformat(), s.last.isoformat(), s.use) for s in tf.spans] == [(phrase, first, last, use)]
    assert tf.text == rest


def test_3_words_that_only_look_like_dates_stay_words():
    for query in ("May I call Peter?", "version 4 may break", "Monday morning meetings", "the 2025 invoices",
                  "What happened on 31 April", "Feb 30", "in 99999", "seit wann", "between and", "vor", ""):
        tf = read(query, TODAY)
        assert [s.phrase for s in tf.spans] == [] or query == "the 2025 invoices", query
        assert tf.text == query or not tf.spans


def test_3_bounds_and_only_dates():
    tf = read("what did I do since Monday", TODAY)
    assert tf.since == date(2026, 11, 30) and tf.until is None and tf.only_dates
    assert not read("dentist last week", TODAY).only_dates


def test_3_a_prior_fades_near_its_span_and_more_slowly_after_it():
    span = Span(date(2026, 11, 27), date(2026, 11, 27), "Nov 27", fuzz=1)
    assert span.nearness(date(2026, 11, 27), date(2026, 11, 27)) == 1.0
    after, before = span.nearness(date(2026, 11, 28), date(2026, 11, 28)), span.nearness(date(2026, 11, 26), date(2026, 11, 26))
    assert 0 < before < after < 1.0  # told a day later counts more than a day before
    assert span.nearness(date(2026, 10, 1), date(2026, 10, 1)) == 0.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("0123456789.-– ,adeghilmnorstuvwyäMJFANSODvbz") +
                                ["März ", "vor ", "seit ", "between ", "and ", "last ", "ago ", "Nov ", "9999", "31."]),
                max_size=30).map("".join))
def test_3_bad_or_ambiguous_dates_never_crash(text):
    tf = read(text, TODAY)
    for s in tf.spans:
        assert s.first <= s.last or s.use == "filter"


# --- through the CLI: a real process, a real index ---------------------------------------------

def _log(ws, day: date, *lines: str) -> None:
    write(ws, f"memory/{day.isoformat()}.md", f"# {day.isoformat()}\n\n" + "".join(f"- {l}\n" for l in lines))


def test_3_cli_what_did_i_do_last_week_lists_last_weeks_facts(empty_ws):
    today = date.today()
    last_week = today - timedelta(days=today.weekday() + 3)  # last week's Friday
    _log(empty_ws, last_week, "Fixed the reconnect loop in the relay.")
    _log(empty_ws, today - timedelta(days=40), "Painted the kitchen blue.")
    _, data = run_json("recall", "what did I do last week", cwd=empty_ws)
    assert [r["content"] for r in data["results"]] == ["Fixed the reconnect loop in the relay."]
    assert data["mode"] == "filter"
    assert data["dates"] == [{"phrase": "last week", "from": (last_week - timedelta(days=4)).isoformat(),
                              "to": (last_week + timedelta(days=2)).isoformat(), "use": "filter"}]


def test_3_cli_a_date_in_the_question_ranks_that_days_fact_first_and_drops_none(empty_ws):
    _log(empty_ws, date(2026, 11, 3), "Dentist appointment: filling replaced, upper left.")
    _log(empty_ws, date(2026, 11, 17), "Dentist appointment: cleaning, all fine.")
    _log(empty_ws, date(2026, 11, 26), "Dentist appointment: X-ray of the new filling.")
    for query, first in [("dentist appointment vor zwei Wochen", "2026-11-17"),
                         ("dentist appointment around Nov 3", "2026-11-03"),
                         ("dentist appointment last week", "2026-11-26")]:
        _, data = run_json("recall", query, "--as-of", "2026-12-01", cwd=empty_ws)
        assert [r["timestamp"] for r in data["results"]][0] == first, query
        assert len(data["results"]) == 3, query  # a prior: nothing is dropped
        assert "vor" not in data["results"][0]["content"]
    # without the date, the order is the words' (all three alike): the date made the difference
    _, plain = run_json("recall", "dentist appointment", "--as-of", "2026-12-01", cwd=empty_ws)
    assert len(plain["results"]) == 3 and "dates" not in plain


def test_3_cli_since_in_the_text_filters_and_explicit_since_wins(empty_ws):
    _log(empty_ws, date(2026, 11, 10), "Heizung kaputt, Vermieter angerufen.")
    _log(empty_ws, date(2026, 11, 30), "Heizung wieder kaputt, Techniker kommt.")
    _, data = run_json("recall", "Heizung kaputt seit Montag", "--as-of", "2026-12-01", cwd=empty_ws)
    assert [r["timestamp"] for r in data["results"]] == ["2026-11-30"]
    assert data["dates"][0]["use"] == "filter"
    _, data = run_json("recall", "Heizung kaputt seit Montag", "--as-of", "2026-12-01", "--since", "2026-11-01",
                       cwd=empty_ws)
    assert sorted(r["timestamp"] for r in data["results"]) == ["2026-11-10", "2026-11-30"]
    assert data["dates"][0]["use"] == "prior" and data["results"][0]["timestamp"] == "2026-11-30"


def test_3_cli_when_question_shows_the_dated_line_and_its_day(empty_ws):
    _log(empty_ws, date(2026, 11, 20), "Booked the flight to Marrakech for 2026-11-27, 06:40 from BER.",
         "Bought sunscreen.")
    _, data = run_json("recall", "When is the flight to Marrakech?", "--as-of", "2026-12-01", cwd=empty_ws)
    top = data["results"][0]
    assert top["timestamp"] == "2026-11-27" and top["day"] == "2026-11-20"
    text = run_mem("recall", "When is the flight to Marrakech?", cwd=empty_ws, check=0).stdout
    assert "2026-11-27 (written 2026-11-20)" in text


def test_3_cli_a_date_outside_the_calendar_is_just_words(empty_ws):
    _log(empty_ws, date(2026, 11, 20), "Invoice 31 April sent to Tom.")
    proc, data = run_json("recall", "invoice 31 April vor 99999 Jahren", "--as-of", "2026-12-01", cwd=empty_ws)
    assert proc.returncode == 0 and data["results"], proc.stderr
    assert "Traceback" not in proc.stderr
