"""`mem note`: free, untyped text appended to today's log or to a bank page (only ever appended)."""

from conftest import run_json, run_mem, write


def test_b1_note_appends_untyped_text_to_the_log_or_a_page(example_ws):
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n\n## Retain\n- W @Peter: Likes tea.\n")
    proc, noted = run_json("-w", example_ws, "note", "W: reads like a type letter, stays a note", "--date", "2026-11-30")
    assert proc.returncode == 0, proc.stderr
    text = (example_ws / "memory/2026-11-30.md").read_text(encoding="utf-8")
    assert text.endswith("- W @Peter: Likes tea.\n\n## Notes\n- W: reads like a type letter, stays a note\n")
    assert noted["source"] == "memory/2026-11-30.md#L7"
    proc, found = run_json("-w", example_ws, "recall", "reads like a type letter")
    assert found["results"][0]["kind"] == "log"
    proc, page = run_json("-w", example_ws, "note", "Sails on Sundays.", "--page", "Jonas")
    assert page["source"] == "bank/entities/Jonas.md#L3"
    assert (example_ws / "bank/entities/Jonas.md").read_text(encoding="utf-8") == "# Jonas\n\n- Sails on Sundays.\n"
    proc, pete = run_json("-w", example_ws, "note", "Moved to Porto.", "--page", "Pete")  # an alias: Peter's page
    assert pete["path"] == "bank/entities/Peter.md"
    for bad in (["two\nlines"], ["bell\x07"], ["x", "--page", "memory/2026-11-30.md"], ["   "]):
        proc = run_mem("-w", example_ws, "note", *bad)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, bad
