"""Generated blocks inside hand-editable Markdown. Pure.

    <!-- memtool:begin entity sha=3f2a9c1b -->
    ...text memtool wrote...
    <!-- memtool:end entity -->

Everything outside the markers belongs to people and is never changed. The `sha` is the hash of
the text memtool last wrote between the markers, so an edit made by a person inside the block is
noticed (and left alone unless forced).
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


def find(text: str, name: str) -> Block | None:
    """The first complete block called `name`, or None."""
    begin, end = _patterns(name)
    b = begin.search(text)
    if not b:
        return None
    e = end.search(text, b.end())
    if not e:
        return None
    return Block(b.start(), e.end(), text[b.end():e.start()], b.group(1))


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
