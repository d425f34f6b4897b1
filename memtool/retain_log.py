"""Writing retained lines, and the retain log that notices when one of them vanishes.

`mem retain` only ever appends to a daily log (see `retain.append_item`), so it can never overwrite
an editor's save. An editor that still holds an older copy of the file can overwrite a retain,
though; so every retained line is also recorded in `.memory/retained.jsonl` (machine-local, one JSON
object per line):

    {"op": "retain",  "id": "…", "at": "…Z", "path": "memory/2026-11-30.md", "line": 17, "text": "W: …", "kind": "world"}
    {"op": "restore", "id": "…", "at": "…Z", "line": 42}     put back by `mem check --restore`
    {"op": "ack",     "id": "…", "at": "…Z"}                 deleted on purpose: never reported again

A retained line is present while its file holds a list item with the same text, wherever it has
moved. One that is not is reported by `mem check`, `mem status` and recall's warnings. Checking is
cheap: `.memory/retained-checked.json` keeps, per file, its size and mtime when it was last checked
and what was missing then, so only files changed since are read again.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter

from memtool import TYPE_CHECKING
from memtool.digests import blake2b
from memtool.errors import MemError, UsageError, WorkspaceError
from memtool.value import Value
from memtool.workspace import Workspace

if TYPE_CHECKING:  # the parser's types and retain's writer where used: a recall only checks the log
    from memtool.records import Diagnostic

LOG = ".memory/retained.jsonl"
CHECKED = ".memory/retained-checked.json"
CODE = "retained-line-missing"
_MARKER = r"^[ \t]*[-*+][ \t]+"  # compiled by `re` on first use: a recall reads no log line


class Retained(Value):
    """One `retain` entry of the log: where the line was written and what it said (`text`: the item
    as written, without the `- ` marker)."""

    __slots__ = ("id", "at", "path", "line", "text", "kind")

    def __init__(self, id: str, at: str, path: str, line: int, text: str, kind: str):
        self.id = id
        self.at = at
        self.path = path
        self.line = line
        self.text = text
        self.kind = kind

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.line}"

    def to_dict(self) -> dict:
        return {"id": self.id, "at": self.at, "path": self.path, "line": self.line, "source": self.source,
                "text": self.text, "kind": self.kind}

    def diagnostic(self) -> Diagnostic:
        from memtool.records import Diagnostic

        return Diagnostic(self.path, self.line, "error", CODE,
                          f"a line mem retain wrote on {self.at[:10]} is gone: '- {self.text}'; "
                          "'mem check --restore' puts it back, 'mem check --ack' accepts the deletion")


# --- writing ----------------------------------------------------------------------------------


def write(ws: Workspace, rel: str, item: str, kind: str, day_title: str) -> int:
    """Append `- item` (a record of `kind`) to the daily log `rel` (see `retain.append_item`) and
    record it in the retain log; returns its line. Never replaces the file: no one's save is lost."""
    line = _append(ws, rel, item, kind, day_title)
    entry_id = blake2b(f"{rel}\x1f{line}\x1f{item}\x1f{time.time_ns()}\x1f{os.getpid()}".encode(),
                               digest_size=8).hexdigest()
    _log(ws, {"op": "retain", "id": entry_id, "at": _now(), "path": rel, "line": line, "text": item, "kind": kind})
    return line


def _append(ws: Workspace, rel: str, item: str, kind: str, day_title: str) -> int:
    from memtool import retain

    landed: list[int] = []

    def plan(current: bytes) -> bytes:
        text = decoded(current, rel)
        suffix, line = retain.append_item(text, item, kind != "log", day_title)
        check_lands(rel, text + suffix, line, kind)
        landed[:] = [line]
        return suffix.encode("utf-8")

    with ws.lock(rel):
        ws.append(rel, plan)
    return landed[0]


def decoded(raw: bytes, rel: str) -> str:
    """The text of a file a line is about to be appended to; refused (nothing written) when memtool
    could not read it back: not UTF-8, or holding a NUL byte (such a file is not indexed, so the
    line could never be recalled)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{rel} is not valid UTF-8 (byte {exc.start}); refusing to modify it",
                             "save it as UTF-8 in an editor, then try again") from None
    refuse_nul(text, rel)
    return text


def refuse_nul(text: str, rel: str) -> None:
    """Refuse to add to a file holding a NUL byte: it is not indexed, so what is added could never be recalled."""
    if "\x00" in text:
        raise WorkspaceError(f"{rel} contains a NUL byte (binary?), so it is not indexed and a line added there "
                             "could never be recalled; nothing was written",
                             "remove the NUL in an editor (mem check names the file), then try again")


def check_lands(rel: str, text: str, line: int, kind: str) -> None:
    """Refuse (writing nothing) when Markdown would not read the new last line as a `kind` record."""
    from memtool.document import parse

    if not any(r.line_start == line and r.kind == kind for r in parse(rel, text).records):
        raise WorkspaceError(f"{rel} ends inside a block (an unclosed code fence, HTML block or comment?) that "
                             "would swallow a line added at its end; nothing was written",
                             "close that block in an editor (mem check shows the file), then try again")


def check_item(item: str, kind: str) -> None:
    """Refuse an untyped line that Markdown would not read as text (a heading, a code fence, a rule)."""
    from memtool.document import parse

    if kind == "log" and not any(r.line_start == 1 for r in parse("memory/x.md", f"- {item}\n").records):
        raise UsageError("Markdown would read this line as structure (a heading, code fence, rule or comment), "
                         "not as text", 'start it with a word, e.g. mem retain "Note: # is the channel name"')


def _log(ws: Workspace, event: dict) -> None:
    data = (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")
    with ws.lock("retained"):
        ws.append(LOG, lambda before: data if not before or before.endswith(b"\n") else b"\n" + data)


def rewrite(ws: Workspace, change) -> None:
    """Replace the retain log with `change(its text)` under its lock (how `mem forget` removes text)."""
    with ws.lock("retained"):
        try:
            current = ws.resolve(LOG).read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        ws.write_atomic(LOG, change(current))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# --- noticing what vanished ---------------------------------------------------------------------


def read_log(ws: Workspace) -> dict[str, Retained]:
    """The retained lines still looked after (not acknowledged as deleted), by id."""
    try:
        raw = ws.resolve(LOG).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    return fold(raw.splitlines())


def fold(lines: list[str]) -> dict[str, Retained]:
    """Replay the log's events (pure); a line that is not a whole JSON event (torn by a crash) is skipped."""
    lines = [line for line in lines if line.strip()]
    try:
        events = json.loads("[" + ",".join(lines) + "]")  # one parse: ~10x faster than one per line
    except ValueError:
        events = []
        for raw in lines:
            try:
                events.append(json.loads(raw))
            except ValueError:
                continue
    out: dict[str, Retained] = {}
    for e in events:
        try:
            op, entry_id = e["op"], e["id"]
            if op == "retain":
                out[entry_id] = Retained(entry_id, e["at"], e["path"], int(e["line"]), e["text"], e.get("kind", "log"))
            elif op == "restore" and entry_id in out:
                out[entry_id].line = int(e["line"])
            elif op == "ack":
                out.pop(entry_id, None)
        except (ValueError, KeyError, TypeError):
            continue
    return out


def missing(entries: list[Retained], text: str) -> list[Retained]:
    """Which retained lines a file's text no longer holds (pure). Each needs a list item of its own:
    a line retained twice must occur twice; when one copy is gone, the newest entry is reported."""
    have = Counter(re.sub(_MARKER, "", line).strip() for line in text.splitlines() if re.match(_MARKER, line))
    out = []
    for e in sorted(entries, key=lambda e: (e.at, e.line)):
        if have[e.text] > 0:
            have[e.text] -= 1
        else:
            out.append(e)
    return out


def vanished(ws: Workspace, fresh: bool = False) -> list[Retained]:
    """Retained lines that are gone from their files. Reads only files whose size or mtime changed
    since the last check (all of them with `fresh`)."""
    log_stat = _stat(ws, LOG)
    if log_stat is None:
        return []
    cache = {} if fresh else _load_cache(ws)
    files = cache.get("files", {})
    now = {rel: _stat(ws, rel) for rel in files}
    if cache.get("log") == log_stat and all(now[rel] == files[rel]["stat"] for rel in files):
        return [Retained(**e) for f in files.values() for e in f["missing"]]
    by_path: dict[str, list[Retained]] = {}
    for e in read_log(ws).values():
        by_path.setdefault(e.path, []).append(e)
    fresh_files = {}
    for rel, entries in by_path.items():
        ids = blake2b("\n".join(sorted(e.id for e in entries)).encode(), digest_size=8).hexdigest()
        stat = now[rel] if rel in now else _stat(ws, rel)
        old = files.get(rel)
        if old and old["stat"] == stat and old["ids"] == ids:
            fresh_files[rel] = old
            continue
        fresh_files[rel] = {"stat": stat, "ids": ids,
                            "missing": [e.as_dict() for e in missing(entries, _read(ws, rel))]}
    new_cache = {"log": log_stat, "files": fresh_files}
    if new_cache != cache:
        _save_cache(ws, new_cache)
    return [Retained(**e) for f in fresh_files.values() for e in f["missing"]]


def _stat(ws: Workspace, rel: str) -> list[int] | None:
    """Size and mtime (only compared, never shown: a plain stat, no path resolution on the hot path)."""
    try:
        st = os.stat(ws.root / rel)
    except (OSError, ValueError):  # gone or unreadable: compared as None
        return None
    return [st.st_size, st.st_mtime_ns]


def _read(ws: Workspace, rel: str) -> str:
    try:
        return ws.read_bytes(rel).decode("utf-8", errors="replace")
    except (OSError, MemError):
        return ""  # gone or unreadable: every line retained there is reported


def _load_cache(ws: Workspace) -> dict:
    """The last check's results, or {} when missing or not in the shape written (never trusted blindly)."""
    try:
        data = json.loads(ws.resolve(CHECKED).read_text(encoding="utf-8"))
        for f in data["files"].values():
            f["stat"], f["ids"] = f["stat"], str(f["ids"])
            f["missing"] = [Retained(**e).as_dict() for e in f["missing"]]
        return data
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _save_cache(ws: Workspace, data: dict) -> None:
    try:
        ws.write_atomic(CHECKED, json.dumps(data, ensure_ascii=False))
    except OSError:
        pass  # only a cache: the next check reads the files again


# --- restoring or accepting ----------------------------------------------------------------------


def select(gone: list[Retained], refs: list[str]) -> list[Retained]:
    """The vanished lines named by `refs` (`path#Lline` as `mem check` lists them, or a path); all without refs."""
    if not refs:
        return gone
    wanted = {re.sub(r"^(.+):(\d+)$", r"\1#L\2", r.strip()) for r in refs}
    chosen = [e for e in gone if e.source in wanted or e.path in wanted or e.id in wanted]
    unknown = wanted - {e.source for e in chosen} - {e.path for e in chosen} - {e.id for e in chosen}
    if unknown:
        raise UsageError(f"no vanished retained line at {', '.join(sorted(unknown))}",
                         "list them with: mem check (code retained-line-missing)")
    return chosen


def restore(ws: Workspace, refs: list[str] = ()) -> list[dict]:
    """Put vanished retained lines back at the end of their files (nothing else moves)."""
    done = []
    for e in select(vanished(ws, fresh=True), list(refs)):
        day_title = e.path.rsplit("/", 1)[-1].removesuffix(".md")
        line = _append(ws, e.path, e.text, e.kind, day_title)
        _log(ws, {"op": "restore", "id": e.id, "at": _now(), "line": line})
        done.append(dict(e.to_dict(), restored=f"{e.path}#L{line}"))
    return done


def acknowledge(ws: Workspace, refs: list[str] = ()) -> list[dict]:
    """Accept vanished retained lines as deleted on purpose: they are never reported again."""
    chosen = select(vanished(ws, fresh=True), list(refs))
    for e in chosen:
        _log(ws, {"op": "ack", "id": e.id, "at": _now()})
    return [e.to_dict() for e in chosen]
