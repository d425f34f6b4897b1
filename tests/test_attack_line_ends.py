"""Appends keep a file's own line ends: CR-only files (classic Mac) too."""

from conftest import run_json, run_mem, write

from memtool.retain import append_item


def test_append_item_uses_cr_in_a_cr_only_file():
    text = "# 2026-11-07\r\rMac line.\r"
    suffix, line = append_item(text, "W: cr test", True, "2026-11-07")
    assert suffix == "\r## Retain\r- W: cr test\r" and line == 6
    assert "\n" not in append_item("# d\r", "a note", False, "d")[0]


def test_retain_and_note_on_a_cr_only_log_add_cr_lines_and_keep_every_byte(tmp_path):
    """A CR-only log got LF lines: the first '\\n' joined the last '\\r' into one CRLF, so the blank
    line before '## Retain' was lost and the file had mixed line ends."""
    ws = tmp_path / "ws"
    write(ws, "memory.md", "# Core memory\n")
    day = write(ws, "memory/2026-11-07.md", b"# 2026-11-07\r\rMac line.\r")
    before = day.read_bytes()
    proc, out = run_json("retain", "W: The boiler was serviced.", "--date", "2026-11-07", cwd=ws)
    assert proc.returncode == 0 and out["source"] == "memory/2026-11-07.md#L6", proc.stderr
    proc, note = run_json("note", "Paid the invoice.", "--date", "2026-11-07", cwd=ws)
    after = day.read_bytes()
    assert after.startswith(before) and b"\n" not in after
    assert after == before + b"\r## Retain\r- W: The boiler was serviced.\r\r## Notes\r- Paid the invoice.\r"
    proc, found = run_json("recall", "boiler serviced", cwd=ws)
    assert found["results"][0]["source"] == "memory/2026-11-07.md#L6"


def test_core_edits_keep_the_files_line_ends_and_count_lines_as_mem_get_does(tmp_path):
    """A CR-only memory.md got LF lines; and `core insert N` counted U+2028 and form feeds as line
    breaks, so the text landed lines away from the line `mem get` numbers N."""
    ws = tmp_path / "ws"
    core = write(ws, "memory.md", b"# Core\r\r- Tea.\r")
    proc, _ = run_json("core", "append", "- Coffee too.\n- And cake.", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert core.read_bytes() == b"# Core\r\r- Tea.\r- Coffee too.\r- And cake.\r"
    core.write_bytes("# Core\n\n- Walks\u2028daily.\n- Reads\x0cbooks.\n- Swims.\n".encode("utf-8"))
    assert run_json("get", "memory.md#L5", cwd=ws)[1]["lines"][0]["text"] == "- Swims."
    run_json("core", "insert", "5", "- Cycles.", cwd=ws)
    assert core.read_text(encoding="utf-8").split("\n")[4] == "- Cycles."


def test_a_stray_cr_in_an_lf_file_does_not_change_the_lines_added():
    from memtool import core_memory
    from memtool.sections import line_end

    assert line_end("# d\n\nA pasted\rline.\n- x\n") == "\n"
    assert line_end("a\r\nb\r\nc\n") == "\r\n" and line_end("a\rb\rc\n") == "\r" and line_end("") == "\n"
    assert core_memory.append("# Core\n\n- Tea.\rPasted.\n", "- Coffee").endswith("\n- Coffee\n")


def test_core_insert_at_line_1_keeps_a_byte_order_mark_first(tmp_path):
    """`mem core insert 1` on a memory.md saved with a BOM put the line before it: the BOM then stood at
    the start of line 2, where it is text, so `# Core memory` was no longer a heading."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    (ws / "memory.md").write_bytes(b"\xef\xbb\xbf# Core\n\n- Likes tea.\n")
    run_mem("-w", ws, "core", "insert", "1", "- First line.", check=0)
    assert (ws / "memory.md").read_bytes() == b"\xef\xbb\xbf- First line.\n# Core\n\n- Likes tea.\n"
