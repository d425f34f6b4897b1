"""Issue 13 C/E as a hostile user tries them: nothing dropped silently, no tracebacks, clear errors."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_json, run_mem, write
from memtool.document import parse

DEEP_LIST = "".join("  " * i + "- l%d\n" % i for i in range(10)) + "\nAfter: SENT here.\n"


# --- 13.8 deep nesting -------------------------------------------------------------------------

def test_13_8_a_deep_list_and_the_paragraph_after_it_are_indexed(empty_ws):
    write(empty_ws, "memory/2026-02-10.md", DEEP_LIST)
    write(empty_ws, "memory/2026-02-11.md", "> " * 25 + "QUOTEDEEP words\n\nAfter the quote PLAINAFTER.\n")
    proc, data = run_json("recall", "SENT", cwd=empty_ws)
    assert proc.returncode == 0, proc.stderr
    assert [r["source"] for r in data["results"]] == ["memory/2026-02-10.md#L12"]
    for word in ("l9", "QUOTEDEEP", "PLAINAFTER"):
        proc, data = run_json("recall", word, cwd=empty_ws)
        assert data["results"], (word, proc.stderr)


def test_13_8_nesting_past_what_the_parser_follows_is_indexed_and_reported_by_check(empty_ws):
    deep = "".join("  " * i + "- d%d\n" % i for i in range(45)) + "\nAfter: TAILWORD here.\n"
    write(empty_ws, "memory/2026-02-10.md", deep)
    write(empty_ws, "memory/2026-02-11.md", "> " * 200 + "QUOTEDEEP words\n")
    for word in ("d44", "TAILWORD", "QUOTEDEEP"):
        proc, data = run_json("recall", word, cwd=empty_ws)
        assert data["results"], (word, proc.stderr)
    proc, data = run_json("check", cwd=empty_ws)
    deep = {d["location"] for d in data["diagnostics"] if d["code"] == "too-deep"}
    assert {"memory/2026-02-10.md:47", "memory/2026-02-11.md:1"} <= deep, data
    assert any(loc.startswith("memory/2026-02-10.md:3") for loc in deep), data


_CONTAINERS = st.sampled_from(["> ", "- ", "* ", "1. ", "  ", "    ", ">", "+ "])


@st.composite  # headings (setext underlines) are context, not records: no "-" lines
def _nested_lines(draw):
    lines = []
    for n in range(draw(st.integers(1, 25))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(["", ">", "```", "***", "# H", "| a | b |", "|---|---|", "<div>"])))
            continue
        prefix = "".join(draw(st.lists(_CONTAINERS, max_size=draw(st.sampled_from([3, 12, 40, 90])))))
        lines.append(f"{prefix}word{n}x")
    return lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_nested_lines())
def test_13_8_every_line_of_random_nested_input_is_indexed_or_reported(lines):
    parsed = parse("memory/2026-02-10.md", "\n".join(lines) + "\n")
    reported = {d.line for d in parsed.diagnostics}
    for n, line in enumerate(lines, start=1):
        word = re.search(r"word\d+x", line)
        if not word:
            continue
        held = any(r.line_start <= n <= r.line_end and word[0] in r.content for r in parsed.records)
        assert held or n in reported, (n, line, parsed.records, parsed.diagnostics)
