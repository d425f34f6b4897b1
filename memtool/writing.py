"""Writing through the facade: a Retain line appended to a day's log, and edits of `memory.md`
(both by the workspace's atomic, locked writes; neither ever moves a line someone wrote)."""

from __future__ import annotations

from datetime import date
from typing import Callable

from memtool import control_chars, core_memory, retain_log
from memtool.errors import UsageError
from memtool.retain import BulletError, parse_line
from memtool.safe_writes import FileChanged
from memtool.workspace import Workspace

CORE_EDIT_ATTEMPTS = 20  # an edit of memory.md re-read and re-applied when an editor saved it meanwhile


def retain(ws: Workspace, bullet: str, day: date | None = None, repeat: float | None = None,
           max_bytes: int | None = None) -> dict:
    """Append a line to a day's log (today by default): a typed Retain bullet, or a plain `log`
    line when it has no type letter. Only appends, so no line moves; returns where it landed.
    `repeat`, for a write through MCP (None: a person's): seconds within which the same line, written
    through MCP before and still there, is not written again (a retried call; 0: always written; see
    `retain_log.write_once`). `max_bytes`: [index] max_file_bytes, which the log may not pass
    (refused, nothing written)."""
    text = bullet.strip()
    if text.startswith(("- ", "* ")):
        text = text[2:].strip()
    if not text:
        raise UsageError("the bullet is empty", 'e.g. mem retain "W @Peter: Moved to Lisbon in May."')
    if "\n" in text or "\r" in text:
        raise UsageError("a Retain bullet is one line", "join the lines, or write longer notes into the daily log")
    control_chars.refuse(text, "the bullet")
    day = day or date.today()
    rel = ws.daily_path(day)
    _refuse_past_limit(rel, text, max_bytes)
    try:
        parsed = parse_line(text)
    except BulletError as exc:
        raise UsageError(f"not a valid Retain bullet: {exc}",
                         'format: "W|B|O|S[(c=0..1)] [@Entity…]: text", e.g. "O(c=0.8) @Peter: Prefers short replies."'
                         ' (a line without a type letter is kept as a plain log line)') from None
    retain_log.check_item(text, parsed.kind)
    line, earlier = retain_log.write_once(ws, rel, text, parsed.kind, day.isoformat(), "retain", repeat, max_bytes)
    return _repeat({"path": rel, "line": line, "source": f"{rel}#L{line}", "kind": parsed.kind,
                    "entities": parsed.entities, "confidence": parsed.confidence, "content": parsed.text}, earlier)


def _repeat(answer: dict, earlier: str | None) -> dict:
    """A write's answer, saying when it was a repeat: the line was already there, written at `earlier`."""
    return answer if earlier is None else answer | {"repeated": True, "written_at": earlier}


def note(ws: Workspace, text: str, day: date | None = None, repeat: float | None = None,
         max_bytes: int | None = None) -> dict:
    """Append free text as one untyped line to a day's log (today by default); returns where it landed."""
    item = _note_text(text)
    day = day or date.today()
    rel = ws.daily_path(day)
    _refuse_past_limit(rel, item, max_bytes)
    retain_log.check_item(item, "log")
    line, earlier = retain_log.write_once(ws, rel, item, "log", day.isoformat(), "note", repeat, max_bytes)
    return _repeat({"path": rel, "line": line, "source": f"{rel}#L{line}"}, earlier)


def note_page(ws: Workspace, text: str, rel: str, repeat: float | None = None, max_bytes: int | None = None) -> dict:
    """Append free text as one line at the end of the bank page `rel` (created when missing)."""
    item = _note_text(text)
    _refuse_past_limit(rel, item, max_bytes)
    retain_log.check_item(item, "log")
    ws.read_text(rel)  # refuses a file that is not UTF-8 before anything is written
    line, earlier = retain_log.write_once(ws, rel, item, "page", rel.rsplit("/", 1)[-1][:-3], "note", repeat,
                                          max_bytes)
    return _repeat({"path": rel, "line": line, "source": f"{rel}#L{line}"}, earlier)


def _refuse_past_limit(rel: str, item: str, max_bytes: int | None) -> None:
    """Refuse at once a line that alone would take `rel` past [index] max_file_bytes, before it is read
    as Markdown (a line of megabytes takes the parser seconds; the append would be refused after)."""
    if max_bytes is not None and len(item) > max_bytes // 4:  # (a character is at most 4 bytes)
        retain_log.check_file_size(rel, 0, len(item.encode("utf-8")), max_bytes)


def _note_text(text: str) -> str:
    item = text.strip()
    if item.startswith(("- ", "* ")):
        item = item[2:].strip()
    if not item:
        raise UsageError("the note is empty", 'e.g. mem note "Jonas moved the meeting to Friday."')
    if "\n" in item or "\r" in item:
        raise UsageError("a note is one line", "join the lines, or note each one")
    control_chars.refuse(item, "the note")
    return item


def core_read(ws: Workspace, limit: int) -> dict:
    core = ws.core_path
    text = ws.read_text(core)
    return {"path": core, "text": text, "chars": len(text), "limit": limit}


def core_edit(ws: Workspace, change: Callable[[str, str], str], limit: int, by: str | None = None,
              repeat: float | None = None, adding: str = "", max_bytes: int | None = None) -> dict:
    """Apply `change(text, file name)` to core memory (memory.md, or an OpenClaw workspace's MEMORY.md;
    size-limited, the previous file backed up); an editor's save in between makes it start again on that save.

    `by` (the command, e.g. "core append") records the lines the edit adds in the retain log, so one an
    editor's stale save drops later is reported (`retain_log.record_edit`). `repeat`, for an edit through
    MCP (None: a person's): seconds within which lines to add that were added through MCP before and are
    still there are not added again (a retried call; 0: always added). `adding`, the text an append or
    insert adds: refused at once when it alone is over the limit (before it is read as Markdown).
    `max_bytes` ([index] max_file_bytes): an edit that would grow the file past it is refused, nothing
    written (one that shrinks it never is)."""
    core = ws.core_path
    if len(adding) > limit:
        core_memory.check_size(ws.read_text(core) + adding, limit, core)
    with ws.lock("memory.md"):
        for attempt in range(CORE_EDIT_ATTEMPTS):
            current = ws.read_text(core)  # valid UTF-8: encoding it gives back the bytes read
            retain_log.refuse_nul(current, core)
            new = change(current, core)
            core_memory.check_size(new, limit, core)
            if max_bytes is not None:
                now, then = len(current.encode("utf-8")), len(new.encode("utf-8"))
                if then > now:
                    retain_log.check_file_size(core, now, then - now, max_bytes)
            if repeat:
                texts = [text for _, text in retain_log.added_lines(current, new)]
                earlier = retain_log.repeated(ws, core, texts, retain_log.CORE, repeat, current)
                if earlier:
                    return _repeat({"path": core, "chars": len(current), "limit": limit, "backup": None,
                                    "text": current, "line": earlier[0]}, earlier[1])
            backup = ws.backup(core) if current else None
            try:
                ws.write_atomic(core, new, expect=current.encode("utf-8"))
                break
            except FileChanged:
                if attempt == CORE_EDIT_ATTEMPTS - 1:
                    raise
        if by:
            retain_log.record_edit(ws, core, current, new, by, retain_log.MCP if repeat is not None else "")
    return {"path": core, "chars": len(new), "limit": limit, "backup": backup, "text": new}
