"""Sections of a Markdown file by its outline: ATX (`## Title`) and setext headings, not those in
fenced or indented code, list items or quotes (a heading indented into a list item belongs to it). Pure.

Used where memtool edits or quotes text by lines (Retain insertion, episodes) and needs the same
notion of "the section this line is in" as a person reading the file.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_MAY_OPEN = frozenset(" \t#`~-*+=_>0123456789")  # the first characters of a heading, underline, rule, fence or list item
QUOTED = "quoted"  # text in a blockquote: lines may continue it, but it underlines no setext heading
_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*$")
_ITEM = re.compile(r"( *)([-*+]|\d{1,9}[.)])(?=[ \t]|$)( *)(\S?)")  # a list item's marker line: its content column
_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"`{3,}(?!.*`)|~{3,}")  # a code fence's opening run (a backtick fence's info string holds no backtick)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines without their endings, as editors, markdown-it and `mem get` count them: split at LF, CRLF
    or CR only (`str.splitlines` also splits at U+2028, form feeds and more, which a line may hold); a
    last line end opens no line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def lines_keepends(text: str) -> list[str]:
    """Lines with their endings, split only at LF, CRLF or CR (as editors and markdown-it count them)."""
    return _LINE.findall(text)


def line_end(text: str) -> str:
    """The line end a file uses most (CRLF, CR or LF; LF on a tie or none), for lines added to it: a
    stray CR pasted into an LF file does not turn the lines added after it into CR lines."""
    crlf = text.count("\r\n")
    cr, lf = text.count("\r") - crlf, text.count("\n") - crlf
    return "\r\n" if crlf > max(cr, lf) else "\r" if cr > max(crlf, lf) else "\n"


class Heading(NamedTuple):
    index: int  # 0-based line index
    level: int
    title: str


def headings(lines: list[str]) -> list[Heading]:
    """The headings of the page's outline, as `document.parse` (markdown-it) reads them: ATX headings
    indented less than four spaces and setext headings (`Title` over `---`), outside fenced or indented
    code, quotes and list items (a heading indented into a list item belongs to that item)."""
    out: list[Heading] = []
    fence: str | None = None
    fenced_in = 0  # how many list items were open where the fence opened (it ends with them)
    items: list[int] = []  # the content columns of the list items open here, outermost first
    text_before = False  # the line before is paragraph text (a less indented line may continue it; QUOTED: in a quote)
    para = 0  # where that paragraph began
    empty_item = False  # the line before opened a list item with nothing after its marker
    for i, line in enumerate(lines):
        if not i and line[:1] == "\ufeff":  # a byte-order mark is no text (as document.parse reads it)
            line = line[1:]
        if not items and fence is None and line[:1] not in _MAY_OPEN:  # plain text or a blank line, quickly
            para = i if not text_before else para
            text_before = (QUOTED if text_before is QUOTED else True) if line[:1] not in ("\r", "\n") else False
            continue
        body = line.rstrip("\r\n").expandtabs(4)
        stripped = body.lstrip(" ")
        indent = len(body) - len(stripped)
        if not stripped:
            if empty_item:  # an item whose first line is blank after its marker holds nothing more
                items.pop()
            text_before = empty_item = False
            continue
        empty_item = False
        depth = len(items)  # the list items this line is inside, by its indentation
        while depth and indent < items[depth - 1]:
            depth -= 1
        block = indent - (items[depth - 1] if depth else 0) < 4  # else indented code, or text
        if not block and fence is None:  # text going on, else indented code (no paragraph of its own)
            if not text_before:
                del items[depth:]
            continue
        opening = _FENCE.match(stripped) if block else None
        marker = opening.group() if opening else None
        if fence is not None:
            if not fenced_in or depth >= fenced_in:  # closed by a run as long at least, with nothing after it
                closes = marker and marker[0] == fence[0] and len(marker) >= len(fence) and not stripped[len(marker):].strip()
                fence = None if closes else fence
                continue
            fence = None  # its list item ended here, and the fence with it: this line is read as any other
        if text_before is True and block and depth == len(items) and _UNDERLINE.match(stripped):  # `Title` over `---`: setext
            del items[depth:]
            if not items:
                title = " ".join(x.strip() for x in lines[para:i])
                out.append(Heading(para, 1 if stripped[0] == "=" else 2, title))
            text_before = False
            continue
        if block and stripped[0] == ">":  # a quote: it ends the items it is not indented into; its text is its own
            del items[depth:]
            inner = stripped[1:].strip()
            text_before = QUOTED if inner and not _ATX.match(inner) and inner[0] not in "`~>" else False
            continue
        heading = _ATX.match(stripped) if block else None
        rule = _RULE.match(stripped) if block else None
        item = _ITEM.match(body) if block and not rule else None
        if item and text_before and depth == len(items) and not item.group(4) or \
                item and text_before and depth == len(items) and item.group(2)[0].isdigit() and int(item.group(2)[:-1]) != 1:
            item = None  # an empty item, or one numbered other than 1, does not interrupt the text before
        if not (text_before and not (heading or marker or item or rule)):  # else a lazy continuation of the text before
            del items[depth:]
        if item:
            gap = len(item.group(3))
            items.append(len(item.group(1)) + len(item.group(2)) + (gap if 0 < gap <= 4 and item.group(4) else 1))
            empty_item = not item.group(4)
        elif marker:
            fence, fenced_in = marker, len(items)
        elif heading and not items:
            out.append(Heading(i, len(heading.group(1)), (heading.group(2) or "").strip()))
        was_text = text_before
        text_before = (QUOTED if text_before is QUOTED and not (item or heading or marker or rule) else
                       not (item and not item.group(4)) and not (heading or marker or rule))
        para = i if not was_text or item else para
    return out


def section_of(heads: list[Heading], index: int, n_lines: int) -> tuple[int, int, Heading | None]:
    """[start, end) line indexes of the innermost section holding line `index`, and its heading."""
    owner = None
    for h in heads:
        if h.index <= index:
            owner = h
        else:
            break
    if owner is None:
        end = next((h.index for h in heads if h.index > index), n_lines)
        return 0, end, None
    return owner.index, section_end(heads, owner, n_lines), owner


def section_end(heads: list[Heading], owner: Heading, n_lines: int) -> int:
    """The index of the first line after `owner`'s section (next heading of the same or a higher level)."""
    for h in heads:
        if h.index > owner.index and h.level <= owner.level:
            return h.index
    return n_lines
