"""The pure parts of sync: the three-way line merge and the per-path decision table."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memtool.sync.merge import merge3
from memtool.sync.plan import Remote, Step, decide

BASE = "# 2026-11-30\n\n## Retain\n- W @Peter: Peter likes tea.\n"


def test_two_appends_to_one_log_merge_without_conflict():
    local = BASE + "- W @Anna: Anna likes coffee.\n"
    remote = BASE + "- B: Walked to the Elbe.\n- W @Jonas: Jonas lives in Köln.\n"
    m = merge3(BASE, local, remote)
    assert m.clean
    assert m.text == BASE + "- W @Anna: Anna likes coffee.\n- B: Walked to the Elbe.\n- W @Jonas: Jonas lives in Köln.\n"


def test_appends_to_a_file_without_final_newline():
    base = "line one"
    m = merge3(base, base + "\nlocal\n", base + "\nremote\n")
    assert m.clean and m.text == "line one\nlocal\nremote\n"


def test_shared_appended_lines_are_kept_once():
    m = merge3(BASE, BASE + "- same\n- mine\n", BASE + "- same\n- theirs\n")
    assert m.clean and m.text == BASE + "- same\n- mine\n- theirs\n"


def test_edits_to_different_lines_both_apply():
    base = "a\nb\nc\nd\ne\n"
    m = merge3(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nD\ne\n")
    assert m.clean and m.text == "A\nb\nc\nD\ne\n"
    m = merge3(base, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n")  # adjacent lines
    assert m.clean and m.text == "a\nB\nC\nd\ne\n"


def test_edit_and_append_merge():
    m = merge3(BASE, BASE.replace("likes tea", "loves tea"), BASE + "- new line\n")
    assert m.clean and m.text == BASE.replace("likes tea", "loves tea") + "- new line\n"


def test_overlapping_edits_conflict_and_keep_local_text():
    local, remote = BASE.replace("likes", "loves"), BASE.replace("likes", "hates")
    m = merge3(BASE, local, remote)
    assert not m.clean and m.text == local
    assert m.conflicts[0].line == 4
    assert m.conflicts[0].local == ("- W @Peter: Peter loves tea.",)
    assert m.conflicts[0].remote == ("- W @Peter: Peter hates tea.",)


def test_union_keeps_both_sides_of_a_conflict():
    m = merge3(BASE, BASE.replace("likes", "loves"), BASE.replace("likes", "hates"), union=True)
    assert m.clean
    assert "Peter loves tea." in m.text and "Peter hates tea." in m.text and "likes" not in m.text


def test_same_change_on_both_sides_is_not_a_conflict():
    changed = BASE.replace("likes", "loves")
    assert merge3(BASE, changed, changed).text == changed
    m = merge3(BASE + "x\n", changed + "x\ny\n", changed + "x\n")
    assert m.clean and m.text == changed + "x\ny\n"


def test_two_new_files_are_unioned():
    m = merge3("", "# 2026-11-30\n- from laptop\n", "# 2026-11-30\n- from desktop\n")
    assert m.clean and m.text == "# 2026-11-30\n- from laptop\n- from desktop\n"


def test_deleting_a_line_next_to_an_edit():
    base = "a\nb\nc\n"
    m = merge3(base, "a\nc\n", "a\nb\nC\n")
    assert m.clean and m.text == "a\nC\n"


def test_crlf_lines_merge():
    base = "a\r\nb\r\n"
    m = merge3(base, base + "l\r\n", base + "r\r\n")
    assert m.clean and m.text == "a\r\nb\r\nl\r\nr\r\n"


lines = st.lists(st.sampled_from(["a", "b", "c", "d", "", "- x", "- y"]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(lines, lines, lines)
def test_appends_never_conflict_and_keep_every_line(base, extra_local, extra_remote):
    b = "\n".join(base + [""])
    m = merge3(b, "\n".join(base + extra_local + [""]), "\n".join(base + extra_remote + [""]))
    assert m.clean
    out = m.text.split("\n")
    assert out[:len(base)] == base
    tail = out[len(base):-1]
    for extra in (extra_local, extra_remote):  # each side's appended lines survive, in order
        it = iter(tail)
        assert all(line in it for line in extra)


@settings(max_examples=300, deadline=None)
@given(lines, lines, lines)
def test_merge_is_total_and_one_sided_changes_win(base, local, remote):
    b, l, r = ("\n".join(x) for x in (base, local, remote))
    assert merge3(b, l, b).text == l
    assert merge3(b, b, r).text == r
    assert merge3(b, l, r, union=True).clean


def test_decisions():
    R = Remote
    assert decide("x", "x", R("x")).step is Step.SKIP
    assert decide(None, None, None).step is Step.SKIP
    assert decide("y", "x", R("y")).step is Step.ADOPT
    assert decide("x", "x", R("y")).step is Step.PULL
    assert decide(None, None, R("y")).step is Step.PULL
    assert decide("x", "x", R(None, deleted=True)).step is Step.DELETE
    assert decide("x", "x", None).step is Step.PUSH  # absence on the remote is never a deletion
    assert decide("y", "x", R("x")).step is Step.PUSH
    assert decide("y", None, None).step is Step.PUSH
    assert decide(None, "x", R("x")).step is Step.TOMBSTONE
    assert decide(None, "x", R("y")).step is Step.PULL  # a change beats a deletion
    assert decide("y", "x", R(None, deleted=True)).step is Step.PUSH
    assert decide("y", "x", R("z")).step is Step.MERGE
    assert decide("y", None, R("z")).step is Step.MERGE
    assert decide(None, "x", R(None, deleted=True)).step is Step.ADOPT
