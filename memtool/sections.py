"""Sections of a Markdown file by its ATX headings (`## Title`), fenced code skipped. Pure.

Used where memtool edits or quotes text by lines (Retain insertion, episodes) and needs the same
notion of "the section this line is in" as a person reading the file.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_ITEM = re.compile(r"( *)([-*+]|\d{1,9}[.)])( *)(\S?)")  # a list item's marker line: its content column


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


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
    """Every ATX heading outside fenced code (indented less than four spaces) and outside list items:
    a heading indented into a list item belongs to that item, as `document.parse` reads it."""
    out: list[Heading] = []
    fence: str | None = None
    items: list[int] = []  # the content columns of the list items open here, outermost first
    text_before = False  # the line before is paragraph text (a less indented line may continue it)
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n").expandtabs(4)
        stripped = body.lstrip(" ")
        indent = len(body) - len(stripped)
        if not stripped:
            text_before = False
            continue
        marker = next((m for m in ("```", "~~~") if stripped.startswith(m)), None)
        if fence is not None:
            fence = None if marker == fence else fence
            continue
        heading = _ATX.match(stripped) if indent < (items[-1] if items else 0) + 4 else None
        if not (text_before and not (heading or marker) and not _ITEM.match(body)):  # else a lazy continuation
            while items and indent < items[-1]:
                items.pop()
        item = _ITEM.match(body)
        if item:
            gap = len(item.group(3))
            items.append(len(item.group(1)) + len(item.group(2)) + (gap if 0 < gap <= 4 else 1))
        elif marker:
            fence = marker
        elif heading and not items:
            out.append(Heading(i, len(heading.group(1)), (heading.group(2) or "").strip()))
        text_before = not (item and not item.group(4)) and not heading and not marker
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
