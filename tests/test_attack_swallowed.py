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
