from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtool.document import decode, parse, split_lines

DAY = """# 2025-11-27

## Call with Peter
- Peter moved to Lisbon. He says hi to @Andy.
  second line
  - nested [[Anna Müller]]

A paragraph
over two lines.

| who | what |
|-----|------|
| Tom | pays late |

```
code line
```

## Retain
- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.
- O(c=0.95) @Peter: Prefers concise replies. [outcome:: ok]
- X @Tom: bad type
"""


def by_line(parsed):
    return {r.line_start: r for r in parsed.records}


def test_daily_log_units_and_retain_bullets():
    p = parse("memory/2025-11-27.md", DAY)
    assert p.file_kind == "daily" and p.date == date(2025, 11, 27)
    r = by_line(p)
    assert r[4].kind == "log" and r[4].line_end == 5 and r[4].context == "2025-11-27 > Call with Peter"
    assert r[6].content == "nested [[Anna Müller]]" and r[6].entities == ["Anna Müller"]
    assert r[8].content == "A paragraph\nover two lines." and r[8].line_end == 9
    assert r[13].content == "| Tom | pays late |"
    assert r[16].content == "code line"
    w = r[20]
    assert w.kind == "world" and w.entities == ["Peter"]
    assert (w.valid_from, w.valid_to) == (date(2025, 11, 27), date(2025, 12, 1))
    o = r[21]
    assert o.kind == "opinion" and o.confidence == 0.95 and o.fields == {"outcome": "ok"}
    assert r[22].kind == "log"  # malformed: indexed as plain text
    assert [(d.line, d.code, d.severity) for d in p.diagnostics] == [(22, "bad-bullet", "error")]


def test_bank_page_front_matter_and_entity():
    text = "---\naliases: [Pete, \"Peter S.\"]\ntrust: private\n---\n# Peter\n\nCollaborator on warelay.\n"
    p = parse("bank/entities/Peter.md", text)
    assert p.aliases == ["Pete", "Peter S."] and p.trust == "private" and p.entity == "Peter"
    assert [(r.kind, r.line_start, r.entities) for r in p.records] == [("page", 7, ["Peter"])]


def test_bad_front_matter_and_trust_are_diagnostics():
    p = parse("bank/x.md", "---\naliases: [a\ntrust: secret\n???\n---\nbody\n")
    codes = {d.code for d in p.diagnostics}
    assert {"bad-trust", "frontmatter-line"} <= codes
    p = parse("bank/y.md", "---\nnever closed\n")
    assert p.diagnostics[0].code == "frontmatter-unclosed"


def test_misnamed_daily_log_is_a_diagnostic():
    p = parse("memory/2025-13-45.md", "- something\n")
    assert p.date is None and p.diagnostics[0].code == "bad-daily-name"
    assert p.records[0].content == "something"


def test_decode_rejects_binary_bad_utf8_and_huge():
    assert decode(b"a\x00b", "f.md", 100)[1][0].code == "binary"
    text, diags = decode(b"ok\n\xff\xfe", "f.md", 100)
    assert text is None and diags[0].code == "not-utf8" and diags[0].line == 2
    assert decode(b"x" * 101, "f.md", 100)[1][0].code == "too-large"
    assert decode("\ufeffhällo".encode(), "f.md", 100) == ("hällo", [])


def test_long_paragraph_is_cut_at_line_boundaries():
    text = "\n".join(f"line {i} " + "word " * 40 for i in range(30)) + "\n"
    p = parse("memory/2025-01-01.md", text)
    assert len(p.records) > 1
    lines = text.splitlines()
    for r in p.records:
        assert [x.strip() for x in r.content.split("\n")] == [x.strip() for x in lines[r.line_start - 1:r.line_end]]


markdownish = st.lists(
    st.one_of(
        st.sampled_from(["# T", "## Retain", "## Notes", "- W @P: x", "- O(c=2): y", "- X: z", "- [[a]]", "  - nested",
                         "> quote", "```", "~~~", "---", "aliases: [a", "| a | b |", "|---|---|", "", "    code",
                         "1. one", "<!-- c -->", "<div>", "- ", "* b", "\t- t", "[x:: y]", "Nov 27–Dec 1, 2025"]),
        st.text(max_size=40),
        st.text(alphabet="\x00\r\n\u2028\x0b\x85 -#>*`|[]@:", max_size=20),
    ),
    max_size=40,
).map("\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdownish, path=st.sampled_from(["memory/2025-11-27.md", "bank/entities/P.md", "memory.md", "memory/bad.md"]))
def test_parser_never_raises_and_line_ranges_hold_their_text(text, path):
    p = parse(path, text)
    lines = split_lines(text.replace("\x00", "\ufffd"))
    for r in p.records:
        assert 1 <= r.line_start <= r.line_end <= len(lines)
        span = "\n".join(lines[r.line_start - 1:r.line_end])
        for piece in r.content.split("\n"):
            assert piece.strip() in span, (piece, span)
    for d in p.diagnostics:
        assert 0 <= d.line <= max(1, len(lines))


NESTED_HEADINGS = """# 2026-11-27

## Retain
- W @Peter: first fact
  ## Notes
  a note about the first fact
- W @Peter: second fact
- O(c=0.8) @x: third
   ### x
- B @Peter: fourth
> ## Quoted
> quoted text
- S: fifth
"""


def test_a_heading_inside_a_retain_item_belongs_to_that_item_and_the_bullets_after_it_stay_typed():
    """`  ## Notes` indented into a Retain list (a heading inside a list item) ended the Retain section
    without a word: every typed bullet after it was indexed as plain log text."""
    out = parse("memory/2026-11-27.md", NESTED_HEADINGS)
    kinds = {r.line_start: (r.kind, r.context) for r in out.records}
    assert kinds[4] == ("world", "2026-11-27 > Retain")
    assert kinds[6] == ("log", "2026-11-27 > Notes")  # the item's own text after its heading
    assert kinds[7] == ("world", "2026-11-27 > Retain")
    assert kinds[8][0] == "opinion" and kinds[10] == ("experience", "2026-11-27 > Retain")
    assert kinds[12] == ("log", "2026-11-27 > Quoted") and kinds[13] == ("observation", "2026-11-27 > Retain")
    assert not [d for d in out.diagnostics if d.severity == "error"], out.diagnostics


def test_a_heading_at_the_top_level_still_ends_the_retain_section():
    out = parse("memory/2026-11-27.md", "# d\n\n## Retain\n- W: typed\n\n## Notes\n- W: not under Retain\n")
    assert [r.kind for r in out.records] == ["world", "log"]


def test_a_byte_order_mark_before_the_first_heading_keeps_it_a_heading():
    """A log saved with a BOM (Windows editors) and starting `## Retain` read that heading as text: its
    typed bullets were plain log text, and the heading a record of its own."""
    out = parse("memory/2026-11-27.md", "\ufeff## Retain\n- W @Peter: Lives in Porto.\n")
    assert [(r.line_start, r.kind) for r in out.records] == [(2, "world")]
    out = parse("memory/2026-11-27.md", "\ufeff# 2026-11-27\n\nText.\n")
    assert out.title == "2026-11-27" and [r.content for r in out.records] == ["Text."]


def test_a_byte_order_mark_before_front_matter_keeps_it_front_matter(tmp_path):
    """An entity page saved with a BOM (Windows editors) before its `---` front matter: the index read
    its aliases (the indexer's decode drops the mark) but `parse`, `mem about` and `mem entities` did not
    ('aliases': [], no diagnostic), and the front matter's lines were read as a setext heading."""
    from conftest import run_json, run_mem

    text = "\ufeff---\naliases: [Pete]\ntags: [friend]\n---\n# Peter\n\nPeter plays the cello.\n"
    out = parse("bank/entities/Peter.md", text)
    assert out.aliases == ["Pete"] and not out.diagnostics, (out.aliases, out.diagnostics)
    assert [(r.line_start, r.context) for r in out.records] == [(7, "Peter")]
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    (ws / "bank" / "entities" / "Peter.md").write_text(text, encoding="utf-8")
    proc, about = run_json("-w", ws, "about", "Pete")
    assert proc.returncode == 0 and about["aliases"] == ["Pete"], proc.stdout[:400]
    proc, listed = run_json("-w", ws, "entities")
    assert [e["aliases"] for e in listed["entities"] if e["name"] == "Peter"] == [["Pete"]], proc.stdout[:400]


def test_a_long_typed_bullet_of_unclosed_fields_is_read_in_linear_time():
    """A Retain bullet of many `[key:: value` openings and no `]` (pasted junk, or a hostile agent's
    `mem retain`: a bullet is never cut like a paragraph) took minutes to parse: each opening scanned to
    the end of the line. 120 KB (one command-line argument) took ~5 min; now well under a second."""
    import time

    started = time.perf_counter()
    out = parse("memory/2026-11-27.md", "# d\n\n## Retain\n- W: " + "[a:: x" * 20000 + "\n")
    assert [r.kind for r in out.records] == ["world"] and time.perf_counter() - started < 3


def test_an_unclosed_field_followed_by_a_run_of_spaces_is_read_in_linear_time():
    """One `[key:: x` and a long run of white space with no `]`: the value's lazy repeat tried the
    trailing-space trim at each character, each try scanning the rest of the run (40,000 spaces took
    ~6 s in every parse of the file, 120 KB about a minute)."""
    import time

    from memtool.retain import inline_fields

    started = time.perf_counter()
    out = parse("memory/2026-11-27.md", "# d\n\n## Retain\n- W: [a:: x" + " " * 40_000 + "y\n")
    assert [r.kind for r in out.records] == ["world"] and time.perf_counter() - started < 2
    assert inline_fields("[a::  spaced value  ] [b::] [c:: [[Peter Pan]] ]") == {"a": "spaced value", "b": "", "c": "[[Peter Pan]]"}


def test_a_long_word_in_a_line_with_a_year_and_a_cited_file_is_read_in_linear_time():
    """The date scrub (a cited `memory/2026-11-27.md` is no date of the text) tried a path from every
    character of a word, each try scanning to the word's end: a 40,000-character word in a bullet that
    also names a year and a `.md` file took ~1.4 s in every parse, 120 KB ~12 s."""
    import time

    started = time.perf_counter()
    out = parse("memory/2026-11-27.md", "# d\n\n## Retain\n- W: 2026 notes.md " + "a" * 40_000 + "\n")
    assert [r.kind for r in out.records] == ["world"] and time.perf_counter() - started < 0.5
    cited = parse("memory/2026-11-27.md", "Met Peter (see memory/2026-11-20.md) on 2026-12-01.\n").records[0]
    assert (cited.valid_from, cited.valid_to) == (date(2026, 12, 1), date(2026, 12, 1))


def test_a_field_value_may_hold_a_wiki_link():
    from memtool.retain import inline_fields

    assert inline_fields("Met him. [because:: [[Peter Pan]]] [cost:: 2h]") == {"because": "[[Peter Pan]]", "cost": "2h"}
