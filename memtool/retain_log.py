"""Writing retained lines, and the retain log that notices when one of them vanishes.

`mem retain` and `mem note` only ever append to a daily log or a bank page (see `retain.append_item`),
so they can never overwrite an editor's save; `mem core …` edits of `memory.md` start again when an
editor saved meanwhile. An editor that still holds an older copy of the file can overwrite such a
line afterwards, though; so every line they write is also recorded in `.memory/retained.jsonl`
(machine-local, one JSON object per line):

    {"op": "retain",  "id": "…", "at": "…Z", "path": "memory/2026-11-30.md", "line": 17, "text": "W: …",
     "kind": "world", "by": "retain"}                        a daily log's line; by: retain, note, review decide
                                                             (+ "via": "mcp" when an agent wrote it through MCP)
    {"op": "write", …, "path": "memory.md", "kind": "core", "by": "core append"}
                                                             a line of a bank page (kind "page") or of core
                                                             memory: restored otherwise, so an older memtool,
                                                             which knows only "retain", ignores it
    {"op": "restore", "id": "…", "at": "…Z", "line": 42}     put back by `mem check --restore`
    {"op": "ack",     "id": "…", "at": "…Z"}                 deleted on purpose (or replaced by `mem core
                                                             replace`, then with "by"): never reported again
    {"op": "ack",     "id": "…", "at": "…Z", "by": "sync"}   removed on another machine: `mem sync` wrote a
                                                             file here without it and said so; not reported
                                                             (an older memtool reads a plain ack), but
                                                             `mem check --restore PATH#Lline` naming it still
                                                             puts it back (its "restore" revives the entry)

A line is present while its file holds a list item with the same text (`memory.md`: a line with the
same text), wherever it has moved. One that is not is reported by `mem check`, `mem status` and
recall's warnings. Checking is cheap: `.memory/retained-checked.json` keeps, per file, its size,
mtime and ctime when it was last checked and what was missing then, so only files changed since are read again.

The log also tells a retried write from a new one: `write_once` (the MCP tools) answers with the
line already there when the same text was written through MCP (`"via": "mcp"` in its entry) to the
same file a moment ago (`recent`) and is still there, instead of writing it twice.
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
CHECKED_FORMAT = 3  # of CHECKED: 2 matches core memory's lines whole and records who wrote each line; 3 through what
CODE = "retained-line-missing"
MCP = "mcp"  # `via` of a write an agent made through `mem mcp`
CORE = "core"  # the kind of a line written to core memory: matched as a whole line, restored through its edit
_MARKER = r"^[ \t]*[-*+][ \t]+"  # compiled by `re` on first use: a recall reads no log line


class Retained(Value):
    """One `retain` entry of the log: where the line was written, what it said (`text`: the item as
    written, without the `- ` marker; in core memory the whole line) and which command wrote it (`by`)."""

    __slots__ = ("id", "at", "path", "line", "text", "kind", "by", "via", "indent")

    def __init__(self, id: str, at: str, path: str, line: int, text: str, kind: str, by: str = "retain",
                 via: str = "", indent: str = ""):
        self.id = id
        self.at = at
        self.path = path
        self.line = line
        self.text = text
        self.kind = kind
        self.by = by
        self.via = via  # "mcp" for a write an agent made through `mem mcp`; "" for a person's (the CLI)
        self.indent = indent  # a core-memory line's leading white space as written (a nested list item)

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.line}"

    def to_dict(self) -> dict:
        return {"id": self.id, "at": self.at, "path": self.path, "line": self.line, "source": self.source,
                "text": self.text, "kind": self.kind, "by": self.by}

    @property
    def shown(self) -> str:
        """The line as it was written."""
        return self.indent + self.text if self.kind == CORE else f"- {self.text}"

    def diagnostic(self) -> Diagnostic:
        from memtool.records import Diagnostic

        return Diagnostic(self.path, self.line, "error", CODE,
                          f"a line mem {self.by} wrote on {self.at[:10]} is gone: '{self.shown}'; "
                          "'mem check --restore' puts it back, 'mem check --ack' accepts the deletion")


# --- writing ----------------------------------------------------------------------------------


def write(ws: Workspace, rel: str, item: str, kind: str, day_title: str, by: str = "retain",
          max_bytes: int | None = None) -> int:
    """Append `- item` (a record of `kind`; `page` for a bank page) to the daily log or page `rel`
    (see `retain.append_item`) and record it in the retain log as written `by` a command; returns its
    line. Never replaces the file: no one's save is lost. `max_bytes`: see `write_once`."""
    return write_once(ws, rel, item, kind, day_title, by, None, max_bytes)[0]


def write_once(ws: Workspace, rel: str, item: str, kind: str, day_title: str, by: str,
               within: float | None, max_bytes: int | None = None) -> tuple[int, str | None]:
    """As `write`; `within` not None marks a write through MCP, which is not made when the same item
    was written through MCP to `rel` in the last `within` seconds and is still there (a client
    retrying a call it gave up on). Returns the line and, for such a repeat, when it was written.
    With `max_bytes` ([index] max_file_bytes), an append that would leave the file larger (so no
    longer indexed) is refused, nothing written."""
    with ws.lock(rel):
        if within:
            earlier = repeated(ws, rel, [item], kind, within, _read(ws, rel))
            if earlier:
                return earlier
        line = _append(ws, rel, item, kind, day_title, max_bytes)
        _log(ws, _entry(rel, line, item, kind, by, MCP if within is not None else ""))
    return line, None


def _entry(rel: str, line: int, text: str, kind: str, by: str, via: str = "", indent: str = "",
           at: str | None = None) -> dict:
    entry_id = blake2b(f"{rel}\x1f{line}\x1f{text}\x1f{time.time_ns()}\x1f{os.getpid()}".encode(),
                       digest_size=8).hexdigest()
    op = "retain" if kind not in ("page", CORE) else "write"
    return {"op": op, "id": entry_id, "at": at or _now(), "path": rel, "line": line, "text": text, "kind": kind, "by": by,
            **({"via": via} if via else {}), **({"indent": indent} if indent else {})}


def _append(ws: Workspace, rel: str, item: str, kind: str, day_title: str, max_bytes: int | None = None) -> int:
    """Append `- item` to `rel` (its lock held by the caller); returns its line. `max_bytes`: see `write_once`."""
    from memtool import retain  # where written: a recall reads the log, and imports neither
    from memtool.sections import lines_keepends

    landed: list[int] = []

    def plan(current: bytes) -> bytes:
        text = decoded(current, rel)
        suffix, line = retain.append_item(text, item, kind not in ("log", "page"), day_title)
        data = suffix.encode("utf-8")
        if max_bytes is not None:  # first: what is refused is not read as Markdown
            check_file_size(rel, len(current), len(data), max_bytes)
        check_lands(rel, text + suffix, line, kind)
        landed[:] = [line, len(current)]
        return data

    before, data = ws.append(rel, plan)
    # (an append another program made just before ours moves ours down: counted from where it landed)
    return landed[0] if len(before) == landed[1] else len(lines_keepends((before + data).decode("utf-8", "replace")))


def check_file_size(rel: str, size: int, adding: int, max_bytes: int) -> None:
    """Refuse (writing nothing) an append of `adding` bytes to a file of `size` that would leave it past
    [index] max_file_bytes: a file that large is not indexed, so what is added could never be recalled."""
    if size + adding <= max_bytes:
        return
    now = f"already has {size:,} bytes" if size > max_bytes else f"would have {size + adding:,} bytes"
    raise WorkspaceError(f"{rel} {now}, over [index] max_file_bytes ({max_bytes:,}): it would not be indexed, "
                         "so nothing could recall what was written; nothing was written",
                         "write less at a time (or into another file), split the file, or raise "
                         "[index] max_file_bytes in memtool.toml")


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


# --- core memory: lines its edits add, and lines its edits remove ----------------------------------


def added_lines(current: str, new: str) -> list[tuple[int, str]]:
    """The lines of `new` that `current` does not hold (a copy more counts), as (1-based line, text
    stripped); blank lines are no lines to keep. Pure."""
    from memtool.sections import split_lines  # (here: a recall whose files are unchanged loads no typing)
    have = Counter(line.strip() for line in split_lines(current))
    out = []
    for n, line in enumerate(split_lines(new), start=1):
        key = line.strip()
        if have[key] > 0:
            have[key] -= 1
        elif key:
            out.append((n, key))
    return out


def record_edit(ws: Workspace, rel: str, current: str, new: str, by: str, via: str = "") -> None:
    """After `by` (a `mem core …` edit) replaced `current` by `new` in `rel`: record the lines it added,
    and accept as deleted the recorded lines it removed (memtool removed them: nothing vanished)."""
    from memtool.sections import split_lines  # (here: a recall whose files are unchanged loads no typing)
    gone = Counter(line.strip() for line in split_lines(current))
    gone.subtract(line.strip() for line in split_lines(new))
    if any(n > 0 for n in gone.values()):
        for e in sorted(read_log(ws).values(), key=lambda e: e.at, reverse=True):
            if e.path == rel and gone[e.text] > 0 and e not in missing([e], current):
                gone[e.text] -= 1
                _log(ws, {"op": "ack", "id": e.id, "at": _now(), "by": by})
    lines, at = split_lines(new), _now()  # one time for the edit's lines: `restore` puts them back together
    for line, text in added_lines(current, new):
        written = lines[line - 1]
        _log(ws, _entry(rel, line, text, CORE, by, via, written[:len(written) - len(written.lstrip())], at))


# --- telling a retry from a new write -------------------------------------------------------------

TAIL_BYTES = 64 * 1024  # the end of the retain log read first for `recent`: ~300 entries


def recent(ws: Workspace, within: float, now: float | None = None) -> list[Retained]:
    """The entries written in the last `within` seconds and not acknowledged since, read from the end
    of the log (more of it only while the part read is all that recent)."""
    cutoff = (time.time() if now is None else now) - within
    try:
        with open(ws.root / LOG, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            chunk = TAIL_BYTES
            while True:
                start = max(0, size - chunk)
                f.seek(start)
                lines = f.read().decode("utf-8", errors="replace").split("\n")[1 if start else 0:]
                if not start or _time_of(lines[0] if lines else "") < cutoff:
                    break
                chunk *= 4
    except FileNotFoundError:
        return []
    return [e for e in fold(lines).values() if _seconds(e.at) >= cutoff]


def _time_of(raw: str) -> float:
    try:
        return _seconds(json.loads(raw)["at"])
    except (ValueError, KeyError, TypeError):
        return float("inf")  # not an event: read further back


def _seconds(at: str) -> float:
    import calendar

    try:
        return float(calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, TypeError):
        return 0.0


def repeated(ws: Workspace, rel: str, texts: list[str], kind: str, within: float,
             current: str) -> tuple[int, str] | None:
    """When every one of `texts` (each as often as it occurs there) was written through MCP to `rel` in
    the last `within` seconds and `current` (the file's text) still holds it: the line of the last one
    and when it was written; else None. A person's writes (the CLI) never make an MCP write a repeat."""
    if not texts:
        return None
    mine = [e for e in recent(ws, within) if e.path == rel and e.via == MCP and e.text in texts]
    gone = missing(mine, current)
    held = [e for e in mine if e not in gone]
    if Counter(texts) - Counter(e.text for e in held):  # one "- x" written is no repeat of "- x\n- x"
        return None
    newest = max(held, key=lambda e: e.at)
    return line_of(current, texts[-1], kind == CORE), newest.at


def line_of(text: str, item: str, whole: bool) -> int:
    """The 1-based line of the last line of `text` reading `item` (as a list item unless `whole`); 0 if none."""
    from memtool.sections import split_lines  # (here: a recall whose files are unchanged loads no typing)
    found = 0
    for n, line in enumerate(split_lines(text), start=1):
        if _key(line, whole) == item:
            found = n
    return found


def _key(line: str, whole: bool) -> str | None:
    """What a line of a file says, as entries record it: the whole line stripped (core memory), or a
    list item's text without its marker (None for a line that is no list item)."""
    if whole:
        return line.strip()
    return re.sub(_MARKER, "", line).strip() if re.match(_MARKER, line) else None


# --- noticing what vanished ---------------------------------------------------------------------


def read_log(ws: Workspace) -> dict[str, Retained]:
    """The retained lines still looked after (not acknowledged as deleted), by id."""
    return _replay(_log_lines(ws))[0]


def by_path(ws: Workspace) -> dict[str, list[Retained]]:
    """The retained lines still looked after, by file."""
    out: dict[str, list[Retained]] = {}
    for e in read_log(ws).values():
        out.setdefault(e.path, []).append(e)
    return out


def removed_elsewhere(ws: Workspace) -> dict[str, Retained]:
    """The retained lines `mem sync` found removed on another machine and not put back since, by id."""
    return _replay(_log_lines(ws))[1]


def _log_lines(ws: Workspace) -> list[str]:
    try:
        return ws.resolve(LOG).read_text(encoding="utf-8", errors="replace").split("\n")
    except FileNotFoundError:
        return []


def fold(lines: list[str]) -> dict[str, Retained]:
    """Replay the log's events (pure): the lines still looked after, by id."""
    return _replay(lines)[0]


def _replay(lines: list[str]) -> tuple[dict[str, Retained], dict[str, Retained]]:
    """Replay the log's events (pure): the lines looked after, and those removed on another machine
    (acknowledged by sync); a line that is not a whole JSON event (torn by a crash) is skipped."""
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
    away: dict[str, Retained] = {}
    for e in events:
        try:
            op, entry_id = e["op"], e["id"]
            if op in ("retain", "write"):
                out[entry_id] = Retained(entry_id, e["at"], e["path"], int(e["line"]), e["text"], e.get("kind", "log"),
                                         str(e.get("by", "retain")), str(e.get("via", "")), str(e.get("indent", "")))
            elif op == "restore" and (entry_id in out or entry_id in away):
                line = int(e["line"])
                out[entry_id] = out.get(entry_id) or away.pop(entry_id)
                out[entry_id].line = line
            elif op == "ack":
                acked = out.pop(entry_id, None)
                away.pop(entry_id, None)
                if acked is not None and e.get("by") == "sync":
                    away[entry_id] = acked
        except (ValueError, KeyError, TypeError):
            continue
    return out, away


def synced_away(ws: Workspace, rel: str, entries: list[Retained], before: str, after: str) -> list[Retained]:
    """`mem sync` replaces `rel`'s text `before` by `after` (None: deletes it), as another machine has
    it: the lines of `entries` (the retain log's for `rel`) that `before` holds and `after` does not
    were removed there. They are acknowledged as removed by sync (no editor loss to report) and
    returned, for sync to say so."""
    if not entries:
        return []
    had = {e.id for e in missing(entries, before)}
    gone = [e for e in missing(entries, after or "") if e.id not in had]
    for e in gone:
        _log(ws, {"op": "ack", "id": e.id, "at": _now(), "by": "sync"})
    return gone


def missing(entries: list[Retained], text: str) -> list[Retained]:
    """Which retained lines a file's text no longer holds (pure). Each needs a list item of its own
    (a line of its own in core memory): a line retained twice must occur twice; when one copy is
    gone, the newest entry is reported."""
    from memtool.sections import split_lines  # (here: a recall whose files are unchanged loads no typing)
    lines = split_lines(text)
    have = {whole: Counter(_key(line, whole) for line in lines) for whole in {e.kind == CORE for e in entries}}
    out = []
    for e in sorted(entries, key=lambda e: (e.at, e.line)):
        count = have[e.kind == CORE]
        if count[e.text] > 0:
            count[e.text] -= 1
        else:
            out.append(e)
    return out


def vanished(ws: Workspace, fresh: bool = False) -> list[Retained]:
    """Retained lines that are gone from their files. Reads only files whose size, mtime or ctime changed
    since the last check (all of them with `fresh`)."""
    log_stat = _stat(ws, LOG)
    if log_stat is None:
        return []
    cache = {} if fresh else _load_cache(ws)
    files = cache.get("files", {})
    now = {rel: _stat(ws, rel) for rel in files}
    if cache.get("log") == log_stat and all(now[rel] == files[rel]["stat"] for rel in files):
        return [Retained(**e) for f in files.values() for e in f["missing"]]
    fresh_files = {}
    for rel, entries in by_path(ws).items():
        ids = blake2b("\n".join(sorted(e.id for e in entries)).encode(), digest_size=8).hexdigest()
        stat = now[rel] if rel in now else _stat(ws, rel)
        old = files.get(rel)
        if old and old["stat"] == stat and old["ids"] == ids:
            fresh_files[rel] = old
            continue
        fresh_files[rel] = {"stat": stat, "ids": ids,
                            "missing": [e.as_dict() for e in missing(entries, _read(ws, rel))]}
    new_cache = {"format": CHECKED_FORMAT, "log": log_stat, "files": fresh_files}
    if new_cache != cache:
        _save_cache(ws, new_cache)
    return [Retained(**e) for f in fresh_files.values() for e in f["missing"]]


def _stat(ws: Workspace, rel: str) -> list[int] | None:
    """Size, mtime and ctime (only compared, never shown: a plain stat, no path resolution on the hot
    path; the ctime sees an edit that restored the mtime)."""
    try:
        st = os.stat(ws.root / rel)
    except (OSError, ValueError):  # gone or unreadable: compared as None
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _read(ws: Workspace, rel: str) -> str:
    try:
        return ws.read_bytes(rel).decode("utf-8", errors="replace")
    except (OSError, MemError):
        return ""  # gone or unreadable: every line retained there is reported


def _load_cache(ws: Workspace) -> dict:
    """The last check's results, or {} when missing or not in the shape written (never trusted blindly)."""
    try:
        data = json.loads(ws.resolve(CHECKED).read_text(encoding="utf-8"))
        if data["format"] != CHECKED_FORMAT:  # written by another memtool, which may match lines otherwise
            return {}
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
    wanted = _named(refs)
    chosen = [e for e in gone if e.source in wanted or e.path in wanted or e.id in wanted]
    unknown = wanted - {e.source for e in chosen} - {e.path for e in chosen} - {e.id for e in chosen}
    if unknown:
        raise UsageError(f"no vanished retained line at {', '.join(sorted(unknown))}",
                         "list them with: mem check (code retained-line-missing)")
    return chosen


def _named(refs: list[str]) -> set[str]:
    """The refs as sources (`path:17` → `path#L17`), paths or ids. Pure."""
    return {re.sub(r"^(.+):(\d+)$", r"\1#L\2", r.strip()) for r in refs}


def restore(ws: Workspace, refs: list[str] = (), core_limit: int | None = None,
            max_bytes: int | None = None) -> list[dict]:
    """Put vanished retained lines back at the end of their files (nothing else moves); lines of core
    memory through its edit (`writing.core_edit`: the file backed up first, its size limit kept), the
    lines one edit wrote together (a fenced block's opening line alone would be refused). A line that
    would push its file past `max_bytes` ([index] max_file_bytes) is refused like a new one (`write_once`)."""
    gone = vanished(ws, fresh=True)
    if refs:  # a line removed on another machine goes back only when named (as `mem sync` listed it)
        gone += [e for e in _away_missing(ws) if {e.source, e.id} & _named(list(refs))]
    done = []
    for group in _by_edit(select(gone, list(refs))):
        if group[0].kind == CORE:
            lines = _restore_core(ws, group, core_limit, max_bytes)
        else:
            e = group[0]
            with ws.lock(e.path):  # looked at again under the lock: another restore may have put it back
                lines = [_append(ws, e.path, e.text, e.kind, e.path.rsplit("/", 1)[-1].removesuffix(".md"), max_bytes)
                         ] if _still_gone(ws, group, _read(ws, e.path)) else []
        for e, line in zip(group, lines):
            _log(ws, {"op": "restore", "id": e.id, "at": _now(), "line": line})
            done.append(dict(e.to_dict(), restored=f"{e.path}#L{line}"))
    return done


def removed_note(removed: list[dict]) -> str:
    """What `mem sync` says once about lines this machine wrote that another machine removed (`to_dict`s)."""
    import shlex

    shown = "; ".join(f"'{e['text'] if e['kind'] == CORE else '- ' + e['text']}' ({e['source']})" for e in removed)
    refs = " ".join(shlex.quote(e["source"]) for e in removed)
    return (f"{len(removed)} line(s) this machine wrote were removed on another machine: {shown}; "
            f"mem check --restore {refs} puts them back")


def _away_missing(ws: Workspace) -> list[Retained]:
    """The lines removed on another machine that are still missing from their files."""
    by_path: dict[str, list[Retained]] = {}
    for e in removed_elsewhere(ws).values():
        by_path.setdefault(e.path, []).append(e)
    return [e for rel, entries in sorted(by_path.items()) for e in missing(entries, _read(ws, rel))]


def _by_edit(gone: list[Retained]) -> list[list[Retained]]:
    """`gone` in runs to restore at once: the core-memory lines of one edit (same file, time and
    command, in their order) together, every other line alone. Pure."""
    runs: list[list[Retained]] = []
    for e in gone:
        last = runs[-1][-1] if runs else None
        if (e.kind == CORE and last is not None and last.kind == CORE
                and (last.path, last.at, last.by) == (e.path, e.at, e.by)):
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


class _Back(Exception):
    """The lines to restore are back already (another restore, meanwhile): nothing to write."""


def _still_gone(ws: Workspace, group: list[Retained], current: str) -> bool:
    """Whether every line of `group` is still looked after and missing from its file's text `current`."""
    looked_after, away = _replay(_log_lines(ws))
    entries = [e for e in (*looked_after.values(), *away.values()) if e.path == group[0].path]
    return {e.id for e in group} <= {e.id for e in missing(entries, current)}


def _restore_core(ws: Workspace, group: list[Retained], core_limit: int | None, max_bytes: int | None) -> list[int]:
    """Append the lines of `group` to core memory as one edit; the lines they landed on (the file's
    last ones), none when they are back already."""
    from memtool.sections import split_lines  # (here: a recall whose files are unchanged loads no typing)
    from memtool import core_memory, writing

    text = "\n".join(e.indent + e.text for e in group)

    def change(current: str, name: str) -> str:
        if not _still_gone(ws, group, current):  # under memory.md's lock
            raise _Back
        return core_memory.append(current, text, name)

    try:
        new = writing.core_edit(ws, change, core_limit or core_memory.DEFAULT_LIMIT, max_bytes=max_bytes)["text"]
    except _Back:
        return []
    last = len(split_lines(new))  # lines as editors count them (core_memory.append's count)
    return list(range(last - len(group) + 1, last + 1))


def acknowledge(ws: Workspace, refs: list[str] = ()) -> list[dict]:
    """Accept vanished retained lines as deleted on purpose: they are never reported again."""
    chosen = select(vanished(ws, fresh=True), list(refs))
    for e in chosen:
        _log(ws, {"op": "ack", "id": e.id, "at": _now()})
    return [e.to_dict() for e in chosen]
