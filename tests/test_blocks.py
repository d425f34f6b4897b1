from hypothesis import given
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
