"""Letta-style edits of the core memory (`memory.md`, or OpenClaw's `MEMORY.md`): append, replace, insert. Pure.

Each edit returns the new text or raises CoreMemoryError with what is wrong, naming the file by `name`
(the workspace's core file); the facade writes the result atomically, after backing up the old file,
and only when it fits the size limit.
"""

from __future__ import annotations

from memtool.control_chars import refuse
from memtool.errors import UsageError
from memtool.sections import line_end, lines_keepends

CORE = "memory.md"
DEFAULT_LIMIT = 5000  # characters; `[core] max_chars` in memtool.toml


class CoreMemoryError(UsageError):
    pass


def _line(text: str) -> str:
    text = text.strip("\n")
    if not text.strip():
        raise CoreMemoryError("the text to add is empty")
    refuse(text, "the text to add", lines=True)
    return text


def _read_as_written(current: str, new: str, line: int, text: str, name: str) -> str:
    """`new` (`current` with `text` at 1-based `line`), unless a comment or code fence around that line
    would hide the text or read it otherwise than alone (a heading, a link definition, a paragraph),
    or the text would change how the lines after it read (its own '<!--' or fence left open)."""
    from memtool.document import Reading

    alone = Reading(text)
    if alone.left_open:
        raise CoreMemoryError("the text opens an HTML comment or code fence it does not close: what follows "
                              f"in {name} would be hidden or read as code", "close it in the same text")
    placed = Reading(new).kinds[line - 1:line - 1 + len(alone.kinds)]
    if any(there != own and there in ("comment", "code") for there, own in zip(placed, alone.kinds)):
        raise CoreMemoryError(f"line {line} of {name} is inside an HTML comment or code fence: the text would be "
                              "hidden or read as code", f"add it outside that block (mem get {name} numbers the lines)")
    return _others_read_as_before(current, new, line, 0, len(alone.kinds), name)


def _others_read_as_before(current: str, new: str, first: int, removed: int, added: int, name: str) -> str:
    """`new` (`current` with lines `first`… replaced: `removed` of them by `added`), unless a line not
    touched would read otherwise (hidden by a comment or fence opened or left open, freed from one,
    or turned between code and text)."""
    from memtool.document import Reading
    from memtool.sections import split_lines

    before, after = Reading(current), Reading(new)
    old = split_lines(current)
    moved = [n for n in range(1, len(old) + 1) if old[n - 1].strip() and not first <= n < first + removed
             and before.of(n - 1) != after.of((n if n < first else n - removed + added) - 1)]
    if after.left_open > before.left_open:
        moved = moved or [first]
    if moved:
        raise CoreMemoryError(f"the edit would change how line {moved[0]} of {name} reads (a comment or code fence "
                              "it opens or closes)", f"keep the '<!--', '-->' or fence, or edit {name} in an editor")
    return _as_strict(current, new, name)


def _as_strict(current: str, new: str, name: str) -> str:
    """`new`, unless its front matter declares a less strict trust tier than `current`'s (an edit by an
    agent must not let core memory's text reach models and pages its tier keeps it from)."""
    from memtool import trust
    from memtool.document import parse

    was, now = parse(name, current).trust, parse(name, new).trust
    if trust.rank(now) < trust.rank(was):
        raise CoreMemoryError(f"the edit would make {name} trust: {now}, less strict than its trust: {was}",
                              "change a file's trust tier by hand, in an editor")
    return new


def append(current: str, text: str, name: str = CORE) -> str:
    """Add `text` (one or more lines) at the end."""
    from memtool.sections import split_lines

    text, newline = _line(text), line_end(current)
    sep = "" if not current or current.endswith(("\n", "\r")) else newline
    return _read_as_written(current, f"{current}{sep}{_ends(text, newline)}{newline}", len(split_lines(current)) + 1, text, name)


def replace(current: str, old: str, new: str, name: str = CORE) -> str:
    """Replace the one occurrence of `old` by `new` (`new` may be empty to delete it)."""
    if not old:
        raise CoreMemoryError("the text to replace is empty")
    refuse(new, "the new text", lines=True)
    count = current.count(old)
    if count == 0:
        raise CoreMemoryError(f"the text to replace does not occur in {name}",
                              f"copy it exactly, including punctuation; read {name} first")
    if count > 1:
        raise CoreMemoryError(f"the text to replace occurs {count} times in {name}",
                              "include more of the surrounding text so it matches exactly once")
    from memtool.sections import split_lines

    at = current.index(old)
    first = len(split_lines(current[:at] + "x"))
    removed = len(split_lines(current[:at] + old + "x")) - first + 1
    edited = current.replace(old, new, 1)
    return _others_read_as_before(current, edited, first, removed, len(split_lines(current[:at] + new + "x")) - first + 1,
                                  name)


def insert(current: str, line: int, text: str, name: str = CORE) -> str:
    """Insert `text` before 1-based `line` (`line` = number of lines + 1 appends)."""
    text, newline = _line(text), line_end(current)
    lines = lines_keepends(current)
    if not 1 <= line <= len(lines) + 1:
        raise CoreMemoryError(f"line {line} is outside {name} (1..{len(lines) + 1})")
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    bom = "\ufeff" if line == 1 and current[:1] == "\ufeff" else ""  # a byte-order mark stays first: elsewhere it is text
    if bom:
        lines[0] = lines[0][1:]
    return _read_as_written(current, bom + "".join(lines[: line - 1] + [_ends(text, newline) + newline] + lines[line - 1:]),
                            line, text, name)


def _ends(text: str, newline: str) -> str:
    """`text` with the file's line ends between its lines."""
    from memtool.sections import split_lines

    return newline.join(split_lines(text))


def check_size(new: str, limit: int, name: str = CORE) -> None:
    if len(new) > limit:
        raise CoreMemoryError(
            f"{name} would have {len(new):,} characters, over its limit of {limit:,}",
            "shorten or remove older entries (core_replace), or raise [core] max_chars in memtool.toml")
