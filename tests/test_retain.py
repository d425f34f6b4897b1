import json
import os

import pytest
from conftest import run_json, run_mem, write
from hypothesis import given, settings
from hypothesis import strategies as st

from memtool.retain import BulletError, append_item, mentions, parse_bullet


def test_full_grammar():
    b = parse_bullet("O(c=0.95) @Peter: Prefers concise replies. [because:: memory/2025-11-20.md#L4] [cost:: 2h]")
    assert b.kind == "opinion" and b.confidence == 0.95
    assert b.entities == ["Peter"]
    assert b.fields == {"because": "memory/2025-11-20.md#L4", "cost": "2h"}
    assert b.text.startswith("@Peter: Prefers")
    assert parse_bullet("S: Three sessions.").text == "Three sessions."
    assert parse_bullet("B @warelay, @memtool: did it").entities == ["warelay", "memtool"]
    assert parse_bullet("W @Peter: met [[Anna Müller]] and @Andy.").entities == ["Peter", "Anna Müller", "Andy"]


@pytest.mark.parametrize("bad,needle", [
    ("X @Tom: y", "unknown type"),
    ("O(c=1.5): x", "outside 0..1"),
    ("O(c=abc): x", "not a number"),
    ("W(c=0.3): x", "only opinions"),
    ("W @Peter:", "no text"),
    ("W no colon", "expected ':'"),
    ("just text", "type letter"),
])
def test_bad_bullets_say_what_is_wrong(bad, needle):
    with pytest.raises(BulletError, match=needle):
        parse_bullet(bad)


def test_mentions_ignore_emails():
    assert mentions("mail lena@example.org and @Peter.") == ["Peter"]


def test_append_goes_to_a_trailing_retain_section_or_under_a_new_heading():
    text = "# d\n\n## Retain\n- W: a\n"
    assert append_item(text, "S: new", True, "d") == ("- S: new\n", 5)
    text = "# d\n\n## Retain\n- W: a\n\n## Later\ntext"
    suffix, line = append_item(text, "S: new", True, "d")
    assert suffix == "\n\n## Retain\n- S: new\n" and (text + suffix).splitlines()[line - 1] == "- S: new"


def test_append_creates_file_and_section():
    assert append_item("", "S: x", True, "2026-11-30") == ("# 2026-11-30\n\n## Retain\n- S: x\n", 4)
    assert append_item("# d\nnotes\n", "S: x", True, "d") == ("\n## Retain\n- S: x\n", 5)


def test_append_ignores_retain_inside_code_and_keeps_crlf():
    text = "# d\r\n```\r\n## Retain\r\n```\r\n"
    suffix, line = append_item(text, "S: x", True, "d")
    assert suffix == "\r\n## Retain\r\n- S: x\r\n" and line == 7


def test_append_counts_lines_like_editors():
    text = "# d\nodd\u2028line\x0cstill one\n## Retain\n- W: a\n"
    suffix, line = append_item(text, "S: new", True, "d")
    assert (text + suffix).split("\n")[line - 1] == "- S: new"


def test_untyped_lines_stay_out_of_retain_sections():
    assert append_item("", "Peter likes tea", False, "d") == ("# d\n\n- Peter likes tea\n", 3)
    assert append_item("# d\n## Retain\n- W: a\n", "Peter likes tea", False, "d") == \
        ("\n## Notes\n- Peter likes tea\n", 6)
    assert append_item("# d\n# Retain\n- W: a\n", "tea", False, "d")[0] == "\n# Notes\n- tea\n"
    assert append_item("# d\n## Call\n- talked\n", "tea", False, "d") == ("- tea\n", 4)


def _numbered(path):
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))


DAY_WITH_RETAIN_MID_FILE = (
    "# 2026-11-30\n\nMorning notes.\n\n## Retain\n- W @Peter: Lives in Lisbon.\n\n"
    "## Call with Anna\nShe moved to Munich.\n- follow up\n\n## Evening\nQuiet.")


def test_14_6_retain_never_moves_an_existing_line(tmp_path):
    ws = tmp_path / "ws"
    day = write(ws, "memory/2026-11-30.md", DAY_WITH_RETAIN_MID_FILE)
    for bullet in ("W @Anna: Moved to Munich in November.", "Anna sends her regards", "O(c=0.7): Munich suits her.",
                   "S: A quiet day."):
        before = _numbered(day)
        proc, data = run_json("-w", ws, "retain", bullet, "--date", "2026-11-30")
        assert proc.returncode == 0, proc.stderr
        after = _numbered(day)
        assert after[:len(before)] == before, "an existing line moved"
        assert after[data["line"] - 1][1] == f"- {bullet}" and data["line"] > len(before)
    proc, found = run_json("-w", ws, "recall", "Munich November")
    assert found["results"][0]["source"] == "memory/2026-11-30.md#L16" and found["results"][0]["kind"] == "world"
    _, check = run_json("-w", ws, "check")
    assert check["diagnostics"] == [], "typed bullets land in a Retain section, plain lines outside one"


def test_14_5_an_untyped_line_is_kept_as_a_plain_log_line(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    proc, data = run_json("-w", ws, "retain", "Peter likes tea", "--date", "2026-11-30")
    assert proc.returncode == 0, proc.stderr
    assert data["kind"] == "log" and data["source"] == "memory/2026-11-30.md#L3" and data["content"] == "Peter likes tea"
    run_mem("-w", ws, "retain", "W @Peter: Drinks it without sugar.", "--date", "2026-11-30", check=0)
    proc, data = run_json("-w", ws, "retain", "Anna called about @Peter", "--date", "2026-11-30")
    assert data["kind"] == "log" and data["entities"] == ["Peter"]
    assert (ws / "memory" / "2026-11-30.md").read_text(encoding="utf-8") == (
        "# 2026-11-30\n\n- Peter likes tea\n\n## Retain\n- W @Peter: Drinks it without sugar.\n\n"
        "## Notes\n- Anna called about @Peter\n")
    _, found = run_json("-w", ws, "recall", "tea")
    assert [(r["source"], r["kind"]) for r in found["results"]] == [("memory/2026-11-30.md#L3", "log")]
    _, check = run_json("-w", ws, "check")
    assert check["diagnostics"] == []


def test_14_5_lines_that_try_to_be_typed_or_are_not_text_are_refused(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for bad, needle in [("X @Tom: nope", "unknown type"), ("O(c=7): too sure", "outside 0..1"),
                        ("# heading", "structure"), ("```", "structure"), ("---", "structure"),
                        ("<!-- hidden -->", "structure")]:
        proc = run_mem("-w", ws, "retain", bad, "--date", "2026-11-30")
        assert proc.returncode == 2 and needle in proc.stderr, (bad, proc.stderr)
    assert not (ws / "memory" / "2026-11-30.md").exists()


def test_14_5_mcp_retain_takes_an_untyped_line(example_ws):
    from test_mcp import call, session

    async def script(s):
        return await call(s, "retain", bullet="Peter likes tea", date="2026-11-30")
    result = session(example_ws, script)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text)["kind"] == "log"
    lines = (example_ws / "memory" / "2026-11-30.md").read_text(encoding="utf-8").splitlines()
    assert lines[json.loads(result.content[0].text)["line"] - 1] == "- Peter likes tea"


def test_retain_log_counts_copies_and_survives_a_torn_line():
    from memtool.retain_log import fold, missing

    log = ['{"op": "retain", "id": "a", "at": "2026-11-30T10:00:00Z", "path": "p.md", "line": 3, "text": "W: tea"}',
           '{"op": "retain", "id": "b", "at": "2026-11-30T11:00:00Z", "path": "p.md", "line": 4, "text": "W: tea"}',
           '{"op": "retain", "id": "c", "at": "2026-11-30T12:00:00Z", "path": "p.md", "line": 5, "text": "W: gone"}',
           '{"op": "restore", "id": "c", "at": "2026-11-30T13:00:00Z", "line": 9}',
           '{"op": "ack", "id": "zz", "at": "2026-11-30T13:00:00Z"}',
           '{"op": "retain", "id": "d", "at": "2026-11-3']  # torn by a crash
    entries = fold(log)
    assert sorted(entries) == ["a", "b", "c"] and entries["c"].line == 9
    text = "# d\n\n*   W: tea\nnot a list item: W: gone\n"
    assert [e.id for e in missing(list(entries.values()), text)] == ["b", "c"]  # one copy of two, newest reported
    assert missing(list(entries.values()), text + "- W: tea\n  - W: gone\n") == []


def test_text_starting_with_a_dash_is_written_not_taken_for_options(tmp_path):
    """Click read the `h` of "- Works on the hill" as -h: help printed, exit 0, nothing written."""
    from conftest import run_json, run_mem, write

    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    proc, data = run_json("-w", ws, "retain", "- Works on the hill", "--date", "2026-11-29")
    assert proc.returncode == 0 and "Usage:" not in proc.stdout, proc.stdout
    assert "Works on the hill" in (ws / data["path"]).read_text(encoding="utf-8")
    run_mem("-w", ws, "core", "append", "- Another line, with h.", check=0)
    assert (ws / "memory.md").read_text(encoding="utf-8").endswith("- Another line, with h.\n")
    assert "Usage: mem retain" in run_mem("-w", ws, "retain", "-h", check=0).stdout  # -h still asks for help


@given(st.lists(st.sampled_from(["@Anna", "@Anna.", "[[Wiki Link]]", "[[Anna]]", "[[x|label]]", "@Peter_M", " ", ", ",
                                 "mail@host", "[[", "]]", "@", "text", "@Zoë-B.", "\n"]), max_size=10))
@settings(max_examples=300, deadline=None)
def test_mentions_of_one_kind_keep_the_order_of_both_kinds_merged(parts):
    """`mentions` reads a text with only `@` or only `[[` in one pass: the same names, in the same
    order, as merging both kinds by place."""
    from memtool.retain import _ENTITY_RE, _WIKI_RE

    text = "".join(parts)
    found = [(m.start(), m.group(1).rstrip(".")) for m in _ENTITY_RE.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _WIKI_RE.finditer(text)]
    assert mentions(text) == [name for name in dict.fromkeys(n for _, n in sorted(found)) if name]


def test_core_lines_are_whole_lines_and_an_edit_adds_only_its_own():
    from memtool.retain_log import CORE, Retained, added_lines, missing

    before = "# Core\n\n- Prefers tea.\n"
    after = before + "- Prefers tea.\nCall him Pete.\n\n"
    assert added_lines(before, after) == [(4, "- Prefers tea."), (5, "Call him Pete.")]
    entries = [Retained(str(n), f"2026-12-0{n}T00:00:00Z", "memory.md", n, text, CORE, "core append")
               for n, text in ((1, "- Prefers tea."), (2, "- Prefers tea."), (3, "Call him Pete."))]
    assert [e.id for e in missing(entries, after)] == []
    assert [e.id for e in missing(entries, before)] == ["2", "3"]  # one copy left: the newer entry is gone


NESTED = ["# d\n\n## Retain\n- W @Peter: a\n  ## Notes\n- W @Peter: b\n",
          "# d\n\n## Retain\n- W: a\n   ### x\n",
          "# d\n\n## Retain\n- W: a\nlazy line of a\n  ## Notes\n- W: b\n",
          "# d\n\n## Retain\n1. W: a\n   ## Notes\n   - nested\n     ## Deeper\n2. W: b\n"]


@pytest.mark.parametrize("text", NESTED)
@pytest.mark.parametrize("typed", [True, False])
def test_a_heading_inside_a_list_item_does_not_end_the_retain_section_for_appends(text, typed):
    """The append planner read `  ## Notes` inside a Retain item as the end of the Retain section (so
    `mem note` appended a plain line into the Retain list, a malformed bullet) while the parser did not."""
    from memtool.document import parse

    item = "S: new" if typed else "plain note"
    suffix, line = append_item(text, item, typed, "d")
    assert suffix.lstrip("\n") == ("- S: new\n" if typed else "## Notes\n- plain note\n"), suffix
    out = parse("memory/2026-11-27.md", text + suffix)
    assert [r.kind for r in out.records if r.line_start == line] == ["observation" if typed else "log"]
    assert not out.diagnostics, out.diagnostics


def test_a_heading_after_the_list_has_ended_still_ends_the_retain_section():
    for text in ("# d\n\n## Retain\n- W: a\n\nplain paragraph\n  ## Notes\n", "# d\n\n## Retain\n10. W: a\n  ## Notes\n"):
        assert append_item(text, "S: new", True, "d")[0] == "\n## Retain\n- S: new\n", text


_PIECES = ["- W: a", "  - nested", "1. W: one", "10. W: ten", "  ## Notes", "   ### x", "## Retain", "# Top",
           " ## one space", "text", "lazy text", "    ## code?", "", "  text in item", "> ## quoted", "```", "  ```",
           "* star", "-", "===", "---", "\t## tabbed", "  ~~~", "2) W: paren", "## Closed ##", "```md", "````", "~~~~"]


@settings(max_examples=int(os.environ.get("MEM_OUTLINE_EXAMPLES", 300)), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_the_append_planner_reads_the_outline_as_the_parser_does(pieces):
    """sections.headings (how `mem retain` finds the section a file ends in) and markdown-it agree on
    which headings make the page's outline: those outside list items, quotes and code."""
    from memtool.document import _markdown
    from memtool.sections import headings

    text = "\n".join(pieces) + "\n"
    tokens = _markdown().parse(text)
    outline = [t.map[0] for t in tokens if t.type == "heading_open" and t.level == 0]
    assert [h.index for h in headings(text.splitlines(keepends=True))] == outline, text


@pytest.mark.parametrize("inside", ["```python", "````", "``` x ```"])
def test_a_fence_line_that_cannot_close_the_fence_does_not_end_it_for_appends(inside):
    """Inside a ``` block, a line such as ```python (an info string: it cannot close the block) or a
    closing run too short ended the block for the append planner, which then read the rest of the file
    as code: `mem note` put its plain line into the Retain list after the block (a bullet without a
    type letter, a warning), and `mem retain` wrote a second `## Retain` heading."""
    opener = "`````" if inside == "````" else "```"
    text = f"# d\n\n{opener}\ncode\n{inside}\nmore\n{opener}\n\n## Retain\n- W: a\n"
    assert append_item(text, "S: new", True, "d") == ("- S: new\n", 11)
    assert append_item(text, "plain", False, "d") == ("\n## Notes\n- plain\n", 13)


def test_the_append_planner_reads_a_heading_after_a_byte_order_mark():
    text = "\ufeff## Retain\n- W @Peter: a\n"
    assert append_item(text, "S: new", True, "d") == ("- S: new\n", 3)
    assert append_item(text, "plain", False, "d") == ("\n## Notes\n- plain\n", 5)


@pytest.mark.parametrize("mark", ["\u200b", "\ufeff", "\u200e", "\u2060"])
def test_an_invisible_character_before_the_type_letter_keeps_a_bullet_typed(tmp_path, mark):
    """`mem retain "<ZWSP>W @Peter: …"` (pasted from a web page or chat) was kept as a plain log line under
    a new `## Notes` heading, and the same bullet typed into a Retain section by hand was reported as
    lacking a type letter it visibly has."""
    assert parse_bullet(f"{mark}W @Peter: Lives in Porto.").kind == "world"
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    proc, data = run_json("-w", ws, "retain", f"{mark}O(c=0.7) @Peter: Likes tea.")
    assert proc.returncode == 0 and data["kind"] == "opinion" and data["confidence"] == 0.7, proc.stderr
