"""Letta-style edits of the core memory (`memory.md`): append, replace, insert. Pure.

Each edit returns the new text or raises CoreMemoryError with what is wrong; the facade writes
the result atomically, after backing up the old file, and only when it fits the size limit.
"""

from __future__ import annotations

from memtool.control_chars import refuse
from memtool.errors import UsageError

DEFAULT_LIMIT = 5000  # characters; `[core] max_chars` in memtool.toml


class CoreMemoryError(UsageError):
    pass


def _line(text: str) -> str:
    text = text.strip("\n")
    if not text.strip():
        raise CoreMemoryError("the text to add is empty")
    refuse(text, "the text to add", lines=True)
    return text


def append(current: str, text: str) -> str:
    """Add `text` (one or more lines) at the end."""
    text = _line(text)
    sep = "" if not current or current.endswith("\n") else "\n"
    return f"{current}{sep}{text}\n"


def replace(current: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old` by `new` (`new` may be empty to delete it)."""
    if not old:
        raise CoreMemoryError("the text to replace is empty")
    refuse(new, "the new text", lines=True)
    count = current.count(old)
    if count == 0:
        raise CoreMemoryError("the text to replace does not occur in memory.md",
                              "copy it exactly, including punctuation; read memory.md first")
    if count > 1:
        raise CoreMemoryError(f"the text to replace occurs {count} times in memory.md",
                              "include more of the surrounding text so it matches exactly once")
    return current.replace(old, new, 1)


def insert(current: str, line: int, text: str) -> str:
    """Insert `text` before 1-based `line` (`line` = number of lines + 1 appends)."""
    text = _line(text)
    lines = current.splitlines(keepends=True)
    if not 1 <= line <= len(lines) + 1:
        raise CoreMemoryError(f"line {line} is outside memory.md (1..{len(lines) + 1})")
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[: line - 1] + [text + "\n"] + lines[line - 1:])


def check_size(new: str, limit: int) -> None:
    if len(new) > limit:
        raise CoreMemoryError(
            f"memory.md would have {len(new):,} characters, over its limit of {limit:,}",
            "shorten or remove older entries (core_replace), or raise [core] max_chars in memtool.toml")
