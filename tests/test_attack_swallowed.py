"""A block that never closes swallows the rest of a file: `mem check` names it, and no command makes one."""

from conftest import run_json, run_mem, write

from memtool.document import parse

OPEN_COMMENT = "# 2026-11-02\n\nBooked the Lisbon flat.\n<!-- draft\n\nThe door code is 4711.\n"


def codes(text: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in parse("memory/2026-11-02.md", text).diagnostics]


def test_a_comment_or_fence_left_open_to_the_end_is_a_diagnostic():
    assert codes(OPEN_COMMENT) == [(4, "unclosed-comment")]
    assert codes(OPEN_COMMENT.replace("\n", "\r")) == [(4, "unclosed-comment")]
    assert codes("# 2026-11-02\n\n```\nls -la\n\nThe door code is 4711.\n\n") == [(3, "unclosed-fence")]
    # closed, or ended by its container (a list item, a quote) before the file ends: nothing to say
    assert codes("# d\n<!-- a\nb -->\nx\n\n```\ny\n```\n") == []
    assert codes("# d\n- item\n  ```\n  code\n- next\n\nafter\n") == []
    assert codes("# d\n> <!-- x\n> y\n\nafter\n") == []


def test_a_shorter_fence_inside_a_longer_one_is_code_not_its_close():
    """`~~~` inside a `~~~~` fence is a line of code (CommonMark): it was taken as the fence's close,
    dropped from the code's lines, and the fence left open to the end said nothing."""
    from memtool.document import parse

    text = "# d\n\n~~~~\ncode line\n~~~\n"
    assert codes(text) == [(3, "unclosed-fence")]
    lines = {n for r in parse("memory/2026-11-02.md", text).records for n in range(r.line_start, r.line_end + 1)}
    assert {4, 5} <= lines  # both lines of code are recallable
    assert codes("# d\n\n~~~~\ncode\n~~~~~\n\nafter\n") == []  # a longer close closes it
    assert codes("# d\n\n```\ncode\n```py\n") == [(3, "unclosed-fence")]  # an info string never closes


def test_check_names_the_file_that_retain_refuses(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    write(ws, "memory/2026-11-02.md", OPEN_COMMENT)
    proc = run_mem("retain", "W: The flat has two rooms.", "--date", "2026-11-02", cwd=ws)
    assert proc.returncode == 4 and "mem check" in proc.stderr
    proc, report = run_json("check", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert [(d["path"], d["line"], d["code"]) for d in report["diagnostics"]] == \
        [("memory/2026-11-02.md", 4, "unclosed-comment")]
    human = run_mem("check", cwd=ws)
    assert "memory/2026-11-02.md:4:" in human.stdout + human.stderr


def test_forget_leaves_the_marker_a_removed_line_carried(tmp_path):
    """Forgetting a name that the first day's template comment mentions once hid the whole log (its
    closing '-->' went with the line): recall then said "nothing found" and check said nothing."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    run_mem("retain", "W @Peter: Moved to Lisbon in November.", cwd=ws, check=0)
    run_mem("retain", "Booked the flat viewing for Friday", cwd=ws, check=0)
    day = next((ws / "memory").glob("*.md"))
    proc, out = run_json("forget", "Peter", "--yes", cwd=ws)
    assert proc.returncode == 0 and out["forgotten"], proc.stderr
    assert [m.get("keeps") for m in out["matches"]] == ["     -->", None]  # the line's own indentation stays
    text = day.read_text(encoding="utf-8")
    assert "Peter" not in text and "\n     -->\n" in text
    proc, found = run_json("recall", "flat viewing", cwd=ws)
    assert proc.returncode == 0 and found["results"], proc.stderr
    assert run_json("check", cwd=ws)[1]["diagnostics"] == []


def test_forget_refuses_what_would_change_how_other_lines_read(tmp_path):
    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    day = write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\nBooked the flat.\n<!--\nThe door code is 4711.\n-->\n")
    before = day.read_bytes()
    proc = run_mem("forget", "memory/2026-11-02.md#L4", "--yes", cwd=ws)
    assert proc.returncode == 4 and "#L5" in proc.stderr and "hint:" in proc.stderr
    assert day.read_bytes() == before
    proc = run_mem("forget", "memory/2026-11-02.md#L4-L6", "--yes", cwd=ws, check=0)
    assert day.read_text(encoding="utf-8") == "# 2026-11-02\n\nBooked the flat.\n"


def test_core_edits_never_land_inside_a_comment_or_leave_one_open(tmp_path):
    """`mem core insert 4` on a fresh workspace put the fact inside the template's comment: written,
    backed up, reported as done, and never found by recall."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    core = ws / "memory.md"
    before = core.read_bytes()
    assert b"<!--" in before.split(b"\n")[2] and b"-->" in before.split(b"\n")[3]
    proc = run_mem("core", "insert", "4", "- Prefers green tea.", cwd=ws)
    assert proc.returncode == 2 and "inside an HTML comment" in proc.stderr and "hint:" in proc.stderr
    for opened in ("<!-- draft", "```"):
        proc = run_mem("core", "append", opened, cwd=ws)
        assert proc.returncode == 2 and "does not close" in proc.stderr
    assert core.read_bytes() == before
    run_mem("core", "insert", "3", "- Prefers green tea.", cwd=ws, check=0)
    run_mem("core", "append", "<!-- a note to myself -->", cwd=ws, check=0)
    proc, found = run_json("recall", "green tea", cwd=ws)
    assert found["results"][0]["source"] == "memory.md#L3"


def test_a_note_to_a_bank_page_is_refused_where_a_comment_would_swallow_it(tmp_path):
    """`mem note --page` answered bank/world.md#L6 for a line the page's open comment hid."""
    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    page = write(ws, "bank/world.md", "# World\n\nSome fact.\n<!-- draft\n")
    before = page.read_bytes()
    proc = run_mem("note", "Zebras are striped.", "--page", "bank/world.md", cwd=ws)
    assert proc.returncode == 4 and "nothing was written" in proc.stderr and "hint:" in proc.stderr
    assert page.read_bytes() == before
    page.write_text("# World\n\nSome fact.\n<!-- draft -->\n", encoding="utf-8")
    proc, out = run_json("note", "Zebras are striped.", "--page", "bank/world.md", cwd=ws)
    assert proc.returncode == 0
    assert run_json("recall", "zebras striped", cwd=ws)[1]["results"][0]["source"] == out["source"]


def test_a_note_to_a_bank_path_that_is_not_markdown_is_refused(tmp_path):
    """`--page bank/todo.txt` made an entity page bank/entities/bank-todo.txt.md."""
    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    for page in ("bank/todo.txt", "bank/world"):
        proc = run_mem("note", "Call the plumber.", "--page", page, cwd=ws)
        assert proc.returncode == 2 and "not a Markdown page" in proc.stderr
    assert not (ws / "bank").exists()


def test_core_replace_never_opens_or_removes_a_block_around_other_lines(tmp_path):
    """`core replace` of the template comment's ' -->' left memory.md open to its end (every later
    append then hidden); removing the '<!--' turned the comment into text."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    core = ws / "memory.md"
    run_mem("core", "append", "- Likes hiking.", cwd=ws, check=0)
    before = core.read_bytes()
    for old in (" -->", "<!-- Small"):
        proc = run_mem("core", "replace", old, old.replace("-->", "").replace("<!-- ", ""), cwd=ws)
        assert proc.returncode == 2 and "would change how line" in proc.stderr, proc.stderr
    assert core.read_bytes() == before
    run_mem("core", "replace", "Likes hiking.", "Likes long hikes.", cwd=ws, check=0)
    assert run_json("recall", "long hikes", cwd=ws)[1]["results"][0]["source"] == "memory.md#L6"


def _forget(ws, needle):
    proc, out = run_json("forget", needle, "--yes", cwd=ws)
    assert proc.returncode == 0 and out["forgotten"], proc.stderr
    return out


def test_forget_keeps_the_close_of_a_comment_that_ends_the_file(tmp_path):
    """The template comment's closing line was the last text of a new log: removing it left the comment
    open to the end (nothing after it to read otherwise), and every later retain to that day failed."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    out = _forget(ws, "Peter")
    assert [m.get("keeps", "").strip() for m in out["matches"]] == ["-->"]
    assert run_mem("retain", "W @Ann: Likes tea.", cwd=ws).returncode == 0
    assert run_json("check", cwd=ws)[1]["diagnostics"] == []


def test_forget_of_a_fence_opener_keeps_the_fence_and_the_text_after_it(tmp_path):
    """Removing "```sql peterdb" turned the old closing fence into an opener: the list item after it
    became code, and nothing noticed (a code line is "read" as much as a text line)."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\n```sql peterdb\nselect 1;\n```\n\n- Met Ann at the station.\n")
    _forget(ws, "peterdb")
    assert (ws / "memory/2026-11-02.md").read_text() == "# 2026-11-02\n\n```\nselect 1;\n```\n\n- Met Ann at the station.\n"
    assert run_json("check", cwd=ws)[1]["diagnostics"] == []


def test_forget_keeps_markers_only_where_markdown_has_a_block_boundary(tmp_path):
    """An inline code span at a line's start looks like a fence: it got a "kept" fence too, which
    opened a real one to the end of the file."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\n<!-- draft\nabout Zed -->\nBooked the flat.\n\n"
                                      "```Zed``` was the password prompt.\n")
    out = _forget(ws, "Zed")
    assert [m.get("keeps") for m in out["matches"]] == ["-->", None]
    assert (ws / "memory/2026-11-02.md").read_text() == "# 2026-11-02\n\n<!-- draft\n-->\nBooked the flat.\n\n"
    assert run_json("check", cwd=ws)[1]["diagnostics"] == []


def test_forget_keeps_a_markers_indentation_and_quote_marks(tmp_path):
    """A kept '-->' at column 0 split the list item it sat in."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n\n- item\n  <!-- x\n  about Zed -->\n  more text\n- B\n\n"
                                      "> <!-- y\n> Zed again -->\n> quoted\n")
    _forget(ws, "Zed")
    assert (ws / "memory/2026-11-02.md").read_text() == \
        "# 2026-11-02\n\n- item\n  <!-- x\n  -->\n  more text\n- B\n\n> <!-- y\n> -->\n> quoted\n"


def test_core_refuses_a_heading_or_link_definition_a_comment_would_hide(tmp_path):
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    before = (ws / "memory.md").read_bytes()
    assert "<!--" in before.decode().splitlines()[3] or "<!--" in before.decode()
    line = next(i for i, l in enumerate(before.decode().splitlines(), 1) if "<!--" in l) + 1
    for text in ("## Preferences", "[ref]: http://example.org"):
        proc = run_mem("core", "insert", str(line), text, cwd=ws)
        assert proc.returncode != 0 and "inside an HTML comment" in proc.stderr, (text, proc.stderr)
    assert (ws / "memory.md").read_bytes() == before
