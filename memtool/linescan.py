"""The plain subset of Markdown read line by line: markdown-it's block tokens for a body that holds
only ATX headings, simple list items, paragraphs and fenced code, else None. Pure.

markdown-it's block parser is about half the CPU of a full build, while most memory files are
headings, one-line bullets and paragraphs. For those this scanner yields the tokens `document._walk`
reads (type, map, content, tag, markup), the same records as markdown-it's. Anything it is not sure of
(HTML, quotes, tables, indented code, setext headings, rules, reference definitions, lazy or indented
continuation lines, list items whose text opens another block, tabs in indentation) makes it decline
the whole body, and markdown-it reads it. `tests/test_linescan.py` holds both to the same records.
"""

from __future__ import annotations

import re

MAX_DEPTH = 8  # list levels read here; deeper outlines go to markdown-it

_ATX = re.compile(r"#{1,6}(?=[ \t]|$)")
_ITEM = re.compile(r"( *)([-*+]|\d{1,9}[.)])( {1,4})(?=[^ \t])")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_BLOCK_HEADS = frozenset(" \t#`~-*+_")  # the first characters (with a digit) of a blank, heading, fence, item or rule line
# Text that opens a block of its own (or may, with the next line): never read here.
_OPENS_BLOCK = re.compile(r"[>|<=]|#{1,6}(?:[ \t]|$)|```|~~~|[-*+](?:[ \t]|$)|\d+[.)]|\[[^\]]*\]:|[-:| \t]*-[-:| \t]*$")


class Token:
    """The fields of a markdown-it token that `document._walk` reads."""

    __slots__ = ("type", "map", "content", "tag", "markup")
    level = 0  # nesting in container blocks: this scanner declines any block inside a list item or quote

    def __init__(self, type_: str, map_: list[int] | None = None, content: str = "", tag: str = "", markup: str = ""):
        self.type, self.map, self.content, self.tag, self.markup = type_, map_, content, tag, markup


class _Decline(Exception):
    """The body holds something this scanner does not read exactly."""


def scan(body: str) -> list[Token] | None:
    """Block tokens for `body` (lines as `sections.split_lines` makes them), or None to decline."""
    lines = body.split("\n")
    if not lines[-1].strip(" \t"):
        lines.pop()  # markdown-it counts no line after a final newline, nor a final line of blanks without one
    try:
        return _Scanner(lines).tokens()
    except _Decline:
        return None


class _Scanner:
    def __init__(self, lines: list[str]):
        self.lines = lines
        self.out: list[Token] = []
        self.stack: list[tuple[int, int]] = []  # open list items: (marker column, content column)
        self.para: int | None = None  # first line of the open top-level paragraph
        self.after = "blank"  # what the previous line was: blank, para, item

    def tokens(self) -> list[Token]:
        i, n = 0, len(self.lines)
        while i < n:
            line = self.lines[i]
            if line and line[0] not in _BLOCK_HEADS and not line[0].isdecimal():
                i = self._text(i, line)  # opens no heading, fence, item or rule, and is not blank: text
                continue
            if not line.strip(" \t"):
                self._end_para(i)
                self.after = "blank"
                i += 1
                continue
            if "\t" in line[: len(line) - len(line.lstrip(" \t")) + 1] or _RULE.match(line):
                raise _Decline
            if _ATX.match(line):
                i = self._heading(i, line)
            elif _FENCE.match(line):
                i = self._fence(i, line)
            elif (item := _ITEM.match(line)) is not None:
                i = self._item(i, line, item)
            else:
                i = self._text(i, line)
        self._end_para(n)
        self._end_list()
        return self.out

    def _heading(self, i: int, line: str) -> int:
        if line.rstrip(" \t").endswith("#"):
            raise _Decline  # a closing sequence (`## a ##`) or an empty heading
        self._end_para(i)
        self._end_list()
        hashes = _ATX.match(line).end()
        self.out += [Token("heading_open", [i, i + 1], tag=f"h{hashes}"), Token("inline", [i, i + 1], line[hashes:].strip()),
                     Token("heading_close")]
        self.after = "blank"  # a heading ends every paragraph and list
        return i + 1

    def _fence(self, i: int, line: str) -> int:
        m = _FENCE.match(line)
        marker = m[1]
        if marker[0] == "`" and "`" in m[2]:
            raise _Decline
        self._end_para(i)
        self._end_list()
        j = i + 1
        while j < len(self.lines):
            text = self.lines[j]
            body = text.lstrip(" ")
            if body.startswith(marker[0] * 3) and len(text) - len(body) < 4:
                if text is body and body.rstrip(" \t") == marker[0] * len(body.rstrip(" \t")) \
                        and len(body.rstrip(" \t")) >= len(marker):
                    break
                if text is not body:
                    raise _Decline  # an indented closing fence
            j += 1
        end = min(j + 1, len(self.lines))
        self.out.append(Token("fence", [i, end], markup=marker))
        self.after = "blank"
        return end

    def _item(self, i: int, line: str, m: re.Match) -> int:
        indent, marker_end = len(m[1]), m.end(2)
        text = line[m.end():]
        if self.after == "para" and m[2][0] not in "-*+":
            raise _Decline  # an ordered item after a paragraph line: it may continue the paragraph
        if _OPENS_BLOCK.match(text) or _RULE.match(text):
            raise _Decline
        self._end_para(i)
        if indent == 0:
            if not self.stack:
                self.out.append(Token("bullet_list_open"))
            self.stack = []
        elif self.stack and indent == self.stack[-1][1] and self.after != "para":
            pass  # a child of the item above
        elif any(indent == col for col, _ in self.stack[1:]):
            self.stack = self.stack[: [col for col, _ in self.stack].index(indent)]
        else:
            raise _Decline
        self.stack.append((indent, marker_end + len(m[3])))
        if len(self.stack) > MAX_DEPTH:
            raise _Decline
        self.out += [Token("paragraph_open", [i, i + 1]), Token("inline", [i, i + 1], text.strip()),
                     Token("paragraph_close")]
        self.after = "item"
        return i + 1

    def _text(self, i: int, line: str) -> int:
        """A line of a top-level paragraph: it opens one after a blank line or a heading, and
        continues the one before it."""
        if line[0] == " " or _OPENS_BLOCK.match(line) or self.after == "item":
            raise _Decline  # indented text, a block of another kind, or a lazy continuation of a list item
        if self.after == "blank":
            self._end_list()
            self.para = i
        self.after = "para"
        return i + 1

    def _end_para(self, end: int) -> None:
        if self.para is not None:
            a, self.para = self.para, None
            self.out += [Token("paragraph_open", [a, end]), Token("inline", [a, end], "\n".join(self.lines[a:end]).strip()),
                         Token("paragraph_close")]

    def _end_list(self) -> None:
        if self.stack:
            self.out.append(Token("bullet_list_close"))
            self.stack = []
