"""Generated blocks inside hand-editable Markdown. Pure.

    <!-- memtool:begin entity sha=3f2a9c1b -->
    ...text memtool wrote...
    <!-- memtool:end entity -->

Everything outside the markers belongs to people and is never changed. The `sha` is the hash of
the text memtool last wrote between the markers, so an edit made by a person inside the block is
noticed (and left alone unless forced). A marker inside a fenced code block (a person showing the
format) is text, not a marker; a page whose markers do not form one block (an end deleted, a second
block), or that has none and ends inside an unclosed code fence, has its `problem` named and is
never written into.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple


class Block(NamedTuple):
    start: int  # character offset of the begin marker
    end: int  # character offset just after the end marker (and its newline)
    body: str
    stored_hash: str | None

    @property
    def edited(self) -> bool:
        """Whether the text between the markers differs from what memtool last wrote."""
        return self.stored_hash is not None and digest(self.body) != self.stored_hash


def digest(body: str) -> str:
    return hashlib.blake2b(body.replace("\r\n", "\n").strip("\n").encode(), digest_size=6).hexdigest()


def _patterns(name: str) -> tuple[re.Pattern, re.Pattern]:
    n = re.escape(name)
    begin = re.compile(rf"^<!-- memtool:begin {n}(?: sha=([0-9a-f]+))? -->[ \t]*\r?\n", re.M)
    end = re.compile(rf"^<!-- memtool:end {n} -->[ \t]*(?:\r?\n|$)", re.M)
    return begin, end


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fenced(lines: list[str]) -> list[bool]:
    """Per line, whether it belongs to a fenced code block that is closed (``` or ~~~, fence lines
    included, closed as CommonMark closes them). A fence never closed hides nothing: markers after it
    stay markers (a generated block appended after such a fence is still found)."""
    return _scan(lines)[0]


_ANY_BEGIN = re.compile(r"^<!-- memtool:begin (\S+)(?: sha=[0-9a-f]+)? -->")


def _scan(lines: list[str]) -> tuple[list[bool], bool]:
    """(`fenced`, whether the last fence is never closed). The body of a generated block (a begin
    marker outside code to its end marker) is memtool's: a fence line there opens nothing."""
    out, opened, since, block = [], None, 0, None
    for n, line in enumerate(lines):
        m = _FENCE.match(line)
        out.append(False)
        if block is not None:
            if line.rstrip() == block:
                block = None
        elif opened is None:
            if (b := _ANY_BEGIN.match(line)) is not None:
                block = f"<!-- memtool:end {b.group(1)} -->"
            elif m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
                opened, since = m.group(1), n
        elif m and m.group(1)[0] == opened[0] and len(m.group(1)) >= len(opened) and not line[m.end():].strip():
            out[since:n + 1] = [True] * (n + 1 - since)
            opened = None
    return out, opened is not None


def _fenced(text: str) -> list[tuple[int, int]]:
    """[start, end) character ranges of the lines in fenced code blocks."""
    spans, pos = [], 0
    lines = text.splitlines(keepends=True)
    for line, inside in zip(lines, fenced(lines)):
        if inside:
            spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def _markers(text: str, name: str) -> tuple[list[re.Match], list[re.Match]]:
    """The begin and end markers of block `name` outside fenced code."""
    if f"memtool:begin {name}" not in text and f"memtool:end {name}" not in text:
        return [], []
    fences = _fenced(text)

    def outside(m: re.Match) -> bool:
        return not any(a <= m.start() < b for a, b in fences)

    begin, end = _patterns(name)
    return [m for m in begin.finditer(text) if outside(m)], [m for m in end.finditer(text) if outside(m)]


def find(text: str, name: str) -> Block | None:
    """The first complete block called `name` (markers in fenced code do not count), or None."""
    begins, ends = _markers(text, name)
    if not begins:
        return None
    b = begins[0]
    e = next((m for m in ends if m.start() >= b.end()), None)
    if e is None:
        return None
    return Block(b.start(), e.end(), text[b.end():e.start()], b.group(1))


def open_at_end(text: str) -> bool:
    """Whether `text` ends inside a fenced code block that is never closed."""
    return _scan(text.splitlines())[1]


def problem(text: str, name: str) -> str | None:
    """Why block `name` cannot be put into `text` safely: its markers do not form one block, or there
    is none and text added at the end would land in an unclosed code fence (None: it can)."""
    begins, ends = _markers(text, name)
    if not begins and not ends:
        return "the page ends inside a code fence that is never closed" if open_at_end(text) else None
    if len(begins) == 1 and len(ends) == 1 and begins[0].end() <= ends[0].start():
        return None
    if not ends:
        return f"its '<!-- memtool:begin {name} -->' line has no '<!-- memtool:end {name} -->' line"
    if not begins:
        return f"its '<!-- memtool:end {name} -->' line has no '<!-- memtool:begin {name} -->' line"
    if len(begins) == 1 and len(ends) == 1:
        return f"its '<!-- memtool:end {name} -->' line comes before its begin line"
    return f"it holds {len(begins)} begin and {len(ends)} end lines of the generated block (one of each expected)"


def render(name: str, body: str) -> str:
    body = body.strip("\n") + "\n"
    return f"<!-- memtool:begin {name} sha={digest(body)} -->\n{body}<!-- memtool:end {name} -->\n"


def put(text: str, name: str, body: str) -> str:
    """`text` with block `name` holding `body`: replaced in place, or appended at the end."""
    block = find(text, name)
    new = render(name, body)
    if block is None:
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}{new}"
    return text[: block.start] + new + text[block.end:]
