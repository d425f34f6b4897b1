"""The line scanner (memtool.linescan) reads a file to exactly the records markdown-it does, or declines."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import generate
from memtool import frontmatter
from memtool.document import parse, split_lines
from memtool.linescan import scan

ROOT = Path(__file__).resolve().parents[1]


def same_records(path: str, text: str) -> bool:
    """Whether the scanner read `text` (else it declined); asserts both readings are equal."""
    slow, fast = parse(path, text, line_scan=False), parse(path, text)
    assert fast == slow, f"{path}: {text!r}"
    lines = split_lines(text)
    end = frontmatter.split(lines, path)[1] or 0  # the parser blanks the front matter first
    return scan("\n".join([""] * end + lines[end:])) is not None


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if ".memory" not in p.parts)


def test_build_2_every_example_and_docset_page_reads_the_same(tmp_path):
    roots = [ROOT / "examples" / "workspace", ROOT / "bench" / "data" / "docset"]
    files = [(root, p) for root in roots for p in files_of(root)]
    assert len(files) > 50
    for root, p in files:
        same_records(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))


def test_build_2_a_generated_workspace_reads_the_same_and_mostly_by_the_scanner(tmp_path):
    generate(tmp_path / "ws", 3000)
    files = files_of(tmp_path / "ws")
    read = [same_records(p.relative_to(tmp_path / "ws").as_posix(), p.read_text(encoding="utf-8")) for p in files]
    assert sum(read) >= 0.9 * len(read)  # the fast path is taken, not silently declined


# Plain files the scanner reads itself (and must read exactly).
PLAIN = [
    "# 2025-01-01\n\n## Standup\n\n- one\n- two @Anna and [[Bob]]\n  - nested #tag\n    - deeper\n- three\n",
    "para one\nstill para\n- item interrupts\n\nnew para\n",
    "## Retain\n- W @Peter: moved to Lisbon\n- O(c=0.7) @Anna: likes tea\n- X: broken bullet\n",
    "#tag at start of a paragraph\n#another\n",
    "```\ncode\n```python\n````\n\ntext after\n",
    "~~~ info `with` ticks\n# not a heading\n~~~\n- item\n",
    "```\nunclosed fence\n```python\n",
    "1. first\n2. second\n   - child of second\n3. third\n",
    "- a\n\n- b loose\n\n  - child after blank\n\ntext closes the list\n",
    "* star\n+ plus\n- dash\n",
    "text with trailing spaces  \nnext\n",
    "# Title\nparagraph right under\n## Sub\n- item\n# Next\n",
    "\u00a0\nnbsp line above is text\n",
    "- item with    inner   spaces  \n- x\n",
    "-    four spaces after the marker\n",
    "1) paren ordered\n10) ten\n",
    "*emphasis* at start\n_under_ and +1\n",
    "---\ntitle: front matter\n---\n# T\n- fact\n",
    "- [ ] task\n- [x] done\n",
    "Hello \u3000 wide space\n\u3000leading ideographic space\n",
    "a\n" * 3 + "\n" * 3,
    "",
    "\n\n\n",
    "x" * 3000 + "\n- " + "y " * 900 + "\n",
]

# Constructs the scanner must decline (markdown-it reads them).
HOSTILE = [
    "<div>\n- not a list\n</div>\n",
    "> quote\n- item\n",
    "Title\n=====\n",
    "Title\n---\n",
    "Title\n--\n",
    "text\n-\n",
    "    indented code\n",
    "para\n    lazy indented continuation\n",
    "- item\nlazy continuation\n",
    "- item\n  continued in the item\n",
    "[ref]: https://example.org\n",
    "- [ref]: https://example.org\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "a | b\n:-- | --:\nrow\n",
    "text\na | b\n-|-\n",
    "***\n",
    "- - -\n",
    "_ _ _\n",
    "- # heading in item\n",
    "- > quote in item\n",
    "- ```\n  code\n  ```\n",
    "- - nested on one line\n",
    "-\n",
    "-     five spaces: code in an item\n",
    "-\ttab after marker\n",
    "\t- tab indent\n",
    "   # indented heading\n",
    "## closed ##\n",
    "#\n",
    "para\n2. not a list start\n",
    "- a\n - odd indent\n",
    "- a\n   - over-indented child\n",
    "  - indented first item\n",
    "```info`tick\n```\n",
    "```\n  ```\ncode\n```\n",
    "<!-- a comment -->\n",
    "- " * 40 + "deep\n",
    "\n".join("  " * i + "- level" for i in range(12)) + "\n",
]


@pytest.mark.parametrize("text", PLAIN)
def test_build_2_plain_snippets_are_read_by_the_scanner_exactly(text):
    assert same_records("memory/2025-01-01.md", text)
    same_records("bank/entities/Anna.md", text)


def test_build_2_generated_blocks_and_front_matter_are_blanked_first():
    text = "---\ntags: [a]\n---\n<!-- memtool:begin summary -->\n- derived\n<!-- memtool:end summary -->\n- own\n"
    same_records("bank/world.md", text)
    assert [r.content for r in parse("bank/world.md", text).records] == ["own"]


@pytest.mark.parametrize("text", HOSTILE)
def test_build_2_hostile_snippets_are_declined(text):
    assert not same_records("memory/2025-01-01.md", text)
    for plain in PLAIN[:3]:  # inside a plain file, too (where some are read right by the scanner)
        same_records("bank/world.md", plain + "\n" + text)
        same_records("bank/world.md", plain + text)


PIECES = st.sampled_from([
    "# H1", "## Retain", "### h3 #", "#tag line", "", " ", "\t", "plain text", "more text @Peter", "- item", "* item",
    "+ item", "1. one", "2) two", "  - child", "    - grandchild", "   - three", "     - five", "- ", "-", "```", "```py",
    "~~~", "````", "  ```", "> q", "<b>x</b>", "| a | b |", "|---|---|", "a | b", "-|-", "---", "***", "===", "--",
    "[r]: /u", "    code", "\u00a0", "- [[Link]] #t [k:: v]", "- W @A: fact", "- O(c=0.5) @B: view", "10. ten",
    "<!-- memtool:begin x -->", "<!-- memtool:end x -->", "- **bold**: text", "text  ", "\\# escaped",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=14), st.sampled_from(["memory/2025-01-01.md", "bank/world.md", "memory.md"]))
def test_build_2_random_files_read_the_same(lines, path):
    same_records(path, "\n".join(lines) + "\n")
