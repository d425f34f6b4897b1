"""The recall output contract under hostile options (qc39): an answer emptied by an option says so;
it never looks like "nothing found"."""

from __future__ import annotations

from conftest import run_json, run_mem, write


def test_cli_a_budget_too_small_for_any_result_says_so(empty_ws):
    write(empty_ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- @Peter moved to Lisbon for good.\n")
    proc, data = run_json("recall", "Peter Lisbon", "--budget", "1", "--min-score", "0", cwd=empty_ws)
    assert proc.returncode == 0 and data["results"] == []
    assert any("budget of 1 token" in w for w in data["warnings"]), data
    assert "budget of 1 token" in proc.stderr
    text = run_mem("recall", "Peter Lisbon", "--budget", "1", "--min-score", "0", cwd=empty_ws, check=0)
    assert "budget of 1 token" in text.stderr, text.stderr
    _, fits = run_json("recall", "Peter Lisbon", "--budget", "200", "--min-score", "0", cwd=empty_ws)
    assert len(fits["results"]) == 1 and not [w for w in fits["warnings"] if "budget" in w]


def test_cli_an_entity_the_memory_never_names_says_so(empty_ws):
    write(empty_ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- @Peter moved to Lisbon for good.\n")
    for args in (("Lisbon", "--entity", "Petr"), ("--entity", "../x"), ("Lisbon", "--entity", "Peter", "--entity", "Kim")):
        proc, data = run_json("recall", *args, "--min-score", "0", cwd=empty_ws)
        assert proc.returncode == 0 and data["results"] == [], data
        name = args[-1]
        assert any(f"no fact mentions {name!r}" in w for w in data["warnings"]), (args, data["warnings"])
    _, known = run_json("recall", "Berlin", "--entity", "Peter", "--min-score", "0", cwd=empty_ws)
    assert not [w for w in known["warnings"] if "no fact mentions" in w], known


def test_cli_a_tag_or_field_no_fact_has_says_so(empty_ws):
    write(empty_ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- Fixed the crash #work [outcome:: fixed]\n")
    for args, said in ((("crash", "--tag", "wrok"), "no fact has the tag #wrok"),
                       (("crash", "--field", "outcome=broken"), "no fact has the field [outcome:: broken]"),
                       (("--field", "cots"), "no fact has the field [cots:: …]")):
        proc, data = run_json("recall", *args, "--min-score", "0", cwd=empty_ws)
        assert data["results"] == [] and said in data["warnings"], (args, data["warnings"])
    _, fine = run_json("recall", "crash", "--tag", "work", "--field", "outcome=fixed", "--min-score", "0", cwd=empty_ws)
    assert len(fine["results"]) == 1 and fine["warnings"] == [], fine

