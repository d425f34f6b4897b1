from hypothesis import given, settings
from hypothesis import strategies as st

from memtool import blocks

human = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda t: "memtool:" not in t)


@given(before=human, after=human, first=human, second=human)
def test_text_outside_the_block_survives_every_rewrite(before, after, first, second):
    text = blocks.put(before, "entity", first)
    text = text + after
    for body in (second, first, second):
        text = blocks.put(text, "entity", body)
        block = blocks.find(text, "entity")
        assert block is not None and not block.edited
        assert text[: block.start].startswith(before) or before == ""
        assert text[block.end:] == after


def test_edits_inside_are_detected():
    text = "# Peter\nmy notes\n\n" + blocks.render("entity", "- fact one\n")
    assert not blocks.find(text, "entity").edited
    edited = text.replace("- fact one", "- fact one (corrected by me)")
    assert blocks.find(edited, "entity").edited
    assert blocks.find("<!-- memtool:begin entity sha=abc -->\nno end\n", "entity") is None


_PIECES = ["text\n", "```\n", "~~~\n", "````md\n", "  ```\n", "- item\n", "\n",
           "<!-- memtool:begin entity -->\n", "<!-- memtool:end entity -->\n", "<!-- memtool:begin other -->\n",
           "<!-- memtool:end other -->\n"]
_body = st.lists(st.sampled_from(["- fact\n", "```\n", "~~~\n", "text\n"]), max_size=6).map("".join)


@settings(max_examples=400)
@given(before=st.lists(st.sampled_from(_PIECES), max_size=10).map("".join), first=_body, second=_body,
       after=st.lists(st.sampled_from(["text\n", "```\n", "~~~\n", "\n"]), max_size=5).map("".join))
def test_a_page_whose_markers_are_sound_keeps_every_outside_line_and_code_fences_hide_examples(before, first, second, after):
    """Fences and markers in any order: where `problem` sees none, a block is put, found again, and
    every character outside it kept; markers shown in a closed code fence are never the block."""
    if blocks.problem(before, "entity") or blocks.open_at_end(before):
        return  # (a fence left open above the block makes the rest code, as Markdown reads it)
    old = blocks.find(before, "entity")
    text = blocks.put(before, "entity", first)
    block = blocks.find(text, "entity")
    assert block is not None and not block.edited
    if old is None:
        assert text.startswith(before) and text[block.end:] == ""
    else:
        assert text[:block.start] == before[:old.start] and text[block.end:] == before[old.end:]
    text += after
    again = blocks.put(text, "entity", second)
    moved = blocks.find(again, "entity")
    assert moved is not None and again[:moved.start] == text[:block.start] and again[moved.end:] == text[block.end:]
