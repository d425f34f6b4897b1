import pytest

from memtool.retain import BulletError, insert_bullet, mentions, parse_bullet


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


def test_insert_into_existing_section_keeps_every_line():
    text = "# d\n\n## Retain\n- W: a\n\n## Later\ntext"
    new, line = insert_bullet(text, "S: new", "d")
    assert new == "# d\n\n## Retain\n- W: a\n- S: new\n\n## Later\ntext\n"
    assert new.splitlines()[line - 1] == "- S: new"


def test_insert_creates_file_and_section():
    assert insert_bullet("", "S: x", "2026-11-30") == ("# 2026-11-30\n\n## Retain\n- S: x\n", 4)
    new, line = insert_bullet("# d\nnotes\n", "S: x", "d")
    assert new == "# d\nnotes\n\n## Retain\n- S: x\n" and line == 5


def test_insert_ignores_retain_inside_code_and_keeps_crlf():
    text = "# d\r\n```\r\n## Retain\r\n```\r\n"
    new, line = insert_bullet(text, "S: x", "d")
    assert new.startswith(text) and new.endswith("## Retain\r\n- S: x\r\n")


def test_insert_counts_lines_like_editors():
    text = "# d\nodd\u2028line\x0cstill one\n## Retain\n- W: a\n"
    new, line = insert_bullet(text, "S: new", "d")
    assert new.split("\n")[line - 1] == "- S: new" and new.startswith(text)
