"""Sections of a Markdown file by its ATX headings (`## Title`), fenced code skipped. Pure.

Used where memtool edits or quotes text by lines (Retain insertion, episodes) and needs the same
notion of "the section this line is in" as a person reading the file.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")


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
    """Every ATX heading outside fenced code (indented less than four spaces)."""
    out: list[Heading] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        for marker in ("```", "~~~"):
            if stripped.startswith(marker):
                fence = marker if fence is None else (None if fence == marker else fence)
                break
        else:
            if fence is None and len(line) - len(stripped) < 4:
                m = _ATX.match(stripped.rstrip("\r\n"))
                if m:
                    out.append(Heading(i, len(m.group(1)), (m.group(2) or "").strip()))
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
