"""Control characters: refused in text memtool writes, made visible in text it shows to people. Pure.

A NUL byte turns a whole daily log into a `binary` file that drops out of recall; an ESC sequence
in a note would drive the reader's terminal. So written text may hold tab (and, where more than one
line is allowed, line breaks) but no other control character, and human output shows any that a
file already holds as `\\x1b`-style escapes. JSON output stays faithful (JSON escapes them).
"""

from __future__ import annotations

import re

from memtool.errors import UsageError

# Patterns as text, compiled by `re` on first use (its cache): a `mem recall --json` uses none of them.
_CONTROL = r"[\x00-\x08\x0a-\x1f\x7f-\x9f]"  # C0 but tab, DEL, C1
_CONTROL_BUT_NEWLINE = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
_SHOWN = r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # a CRLF line end is fine


def first(text: str, lines: bool = False) -> re.Match | None:
    """The first control character in `text` that written text may not hold (tab is fine; with
    `lines`, line breaks too: LF, and CRLF where `text` has them normalised to LF)."""
    return re.search(_CONTROL_BUT_NEWLINE if lines else _CONTROL, text)


def refuse(text: str, what: str = "the text", lines: bool = False) -> None:
    """Raise a UsageError naming the first control character in `text` (tab is fine; with `lines`,
    line breaks too: LF or CRLF)."""
    m = first(text.replace("\r\n", "\n") if lines else text, lines)
    if m:
        raise UsageError(f"{what} contains the control character {escape(m.group())} at position {m.start() + 1}; "
                         "nothing was written",
                         "remove it (only tab" + (" and line breaks are" if lines else " is") + " allowed in notes)")


def visible(text: str) -> str:
    """`text` with every control character but tab and line ends shown as an escape (`\\x1b`)."""
    return re.sub(_SHOWN, lambda m: escape(m.group()), text)


def escape(ch: str) -> str:
    """`ch` as a `\\x1b`-style escape."""
    return f"\\x{ord(ch):02x}"
