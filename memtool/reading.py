"""Reading the workspace as it stands now: numbered lines of a file (and what its `[because:: …]`
fields point to), an entity's page, and a file's trust tier."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Callable

from memtool import frontmatter, trust
from memtool.config import Config
from memtool.errors import MemError, UsageError, WorkspaceError
from memtool.retain import inline_field_values
from memtool.sections import split_lines
from memtool.store import Store
from memtool.workspace import Workspace

BECAUSE_MAX, BECAUSE_LINES = 5, 20  # causal links followed per answer, lines quoted per link
GET_MAX_CHARS = 100_000  # characters one `get` returns at most (a 20 MB line would flood a terminal or a context)
_DAILY = re.compile(r"^memory/(?:[^/]+/)*(\d{4}-\d{2}-\d{2})\.md$")  # as document.classify reads them
_REF = re.compile(r"(.+?)(?:#L(\d+)(?:-L?(\d+))?)?")
_LOCATION = re.compile(r"(.+\.md):(\d+)")  # how mem check names a line (path:12)
# A page name that is a path (a `.` or `..` part, from the root or a home folder), not an entity's name
# (`AC/DC` and `.NET` are names).
_PATH_LIKE = re.compile(r"(?:^|[/\\])\.{1,2}(?:[/\\]|$)|^(?:[/\\]|~[^/\\]*[/\\])")


def lines(ws: Workspace, path: str) -> list[str]:
    """The lines of a workspace file, as the parser counts them."""
    return split_lines(ws.read_text(path))


def get(ws: Workspace, ref: str, max_lines: int = 200, follow: bool = True) -> dict:
    """Numbered lines of a workspace file: `path`, `path#L3` or `path#L3-L9` (confined to the workspace;
    `path:3`, as `mem check` names a line, is `path#L3`).

    With `follow`, `because` holds what the lines' `[because:: path#L…]` fields point to."""
    located = _LOCATION.fullmatch(ref.strip())
    if located and not (ws.root / located[0]).exists():  # copied from mem check: path:12 is path#L12
        ref = f"{located[1]}#L{located[2]}"
    m = _REF.fullmatch(ref.strip())
    if not m:
        raise UsageError(f"cannot read {ref!r}", "use path, path#L12 or path#L12-L20")
    rel = m.group(1)
    path = ws.resolve(rel)
    if not path.is_file():
        head, mark, anchor = ref.strip().partition("#")
        if mark and head and ws.resolve(head).is_file():  # `memory.md#Lx`: the file is there, the lines are not named
            raise UsageError(f"'#{anchor}' names no lines of {head}", f"use {head}#L12 or {head}#L12-L20")
        raise UsageError(f"{rel} is not a file in the workspace", "paths are relative to the workspace, e.g. memory.md")
    if any(part.startswith(".") for part in ws.relative(path).split("/")):
        # .memory/ holds the sync key, backups of legal files, logs; .git/config may hold a token
        raise UsageError(f"{rel} is hidden or machine-local state (.memory/, .git/, …), not a note",
                         "mem get reads the workspace's notes, e.g. memory.md or memory/2026-10-27.md#L10")
    if max_lines < 1:
        raise UsageError("--max-lines must be at least 1", "leave --max-lines out for up to 200 lines")
    text = lines(ws, ws.relative(path))
    start = _line_number(m.group(2) or "1")
    end = _line_number(m.group(3) or (m.group(2) or str(len(text))))
    if end < start:
        raise UsageError(f"lines {start}-{end} run backwards", f"write the first line first: {rel}#L{end}-L{start}")
    if start < 1 or start > max(1, len(text)):
        raise UsageError(f"lines {start}-{end} are outside {rel} (1-{len(text)})", lines_hint(rel, len(text)))
    end = min(end, len(text))
    out, shown, cut = _numbered(text, start, min(end, start + max_lines - 1))
    data = {"path": ws.relative(path), "start": start, "end": shown, "total_lines": len(text),
            "truncated": shown < end or cut is not None, "lines": out, "text": "\n".join(line["text"] for line in out)}
    if cut:
        data["cut"] = cut
    if follow:
        data["because"] = because(ws, data["text"])
    return data


MAX_LINE_DIGITS = 18  # a line number longer than this is past any file (and past what int() reads: 4,300 digits)


def _line_number(digits: str) -> int:
    """A cited line number; one longer than any file reads as 10^18 (it is past the end all the same)."""
    return int(digits) if len(digits) <= MAX_LINE_DIGITS else 10 ** MAX_LINE_DIGITS


def lines_hint(rel: str, count: int) -> str:
    """What to cite instead of lines past the end of `rel` (of `count` lines)."""
    if not count:
        return f"{rel} is empty"
    return f"{rel} has {count} line{'s' if count != 1 else ''}: cite one of them, e.g. {rel}#L{count}"


def _numbered(lines: list[str], start: int, shown: int) -> tuple[list[dict], int, dict | None]:
    """Lines `start`..`shown` as {n, text}, bounded to GET_MAX_CHARS characters: the lines, the last
    line shown, and where a line was cut (if one was)."""
    out, budget = [], GET_MAX_CHARS
    for n in range(start, shown + 1):
        text = lines[n - 1]
        if len(text) > budget:  # bound the characters too: one huge line must not flood the reader
            out.append({"n": n, "text": text[:budget] + f" … [cut: {len(text) - budget:,} more characters]"})
            return out, n, {"line": n, "shown_chars": budget, "total_chars": len(text)}
        budget -= len(text)
        out.append({"n": n, "text": text})
    return out, shown, None


def because(ws: Workspace, text: str) -> list[dict]:
    """The sources that `[because:: path#L…]` fields in `text` point to, read (a few, briefly),
    or why one cannot be read."""
    out = []
    for ref in inline_field_values(text, "because")[:BECAUSE_MAX]:
        try:
            span = get(ws, ref, max_lines=BECAUSE_LINES, follow=False)
        except (UsageError, WorkspaceError) as exc:
            out.append({"ref": ref, "error": exc.message})
        else:
            out.append({"ref": ref, "path": span["path"], "start": span["start"], "end": span["end"],
                        "text": span["text"]})
    return out


def entity_page(ws: Workspace, store: Store, name: str) -> dict:
    """The entity `name` resolves to, its aliases and its page (path and text), if it has one."""
    page = store.entity_page(name)
    out = {"entity": page["entity"] if page else name, "aliases": [], "page": None}
    if page:
        text = ws.read_text(page["path"])
        meta, _, _ = frontmatter.split(split_lines(text), page["path"])
        aliases = meta.get("aliases", [])
        out["aliases"] = [aliases] if isinstance(aliases, str) else list(aliases)
        out["page"] = {"path": page["path"], "text": text}
    return out


def page_for(ws: Workspace, store: Store, page: str) -> str:
    """The bank page `page` names: a path under bank/ (`bank/world.md`), or an entity's name, alias or
    @slug (its page; `bank/entities/<Name>.md` when it has none yet)."""
    from memtool.reflect.pages import slug_for

    name = page.strip().lstrip("@").strip()
    if not name:
        raise UsageError("the page name is empty", "give a bank page (bank/world.md) or an entity's name (Peter)")
    if name.startswith("bank/") and not name.endswith(".md"):
        raise UsageError(f"{name} is not a Markdown page", "give a page ending in .md (bank/world.md), or an entity's name")
    if name.endswith(".md"):
        rel = ws.relative(ws.resolve(name))
        if not rel.startswith("bank/"):
            raise UsageError(f"{name} is not a bank page", "notes go to a page under bank/, or to today's log (no page)")
        from memtool.document import DECISIONS, JOURNAL
        from memtool.workspace import indexable

        if not indexable(rel) or rel in (JOURNAL, DECISIONS):
            raise UsageError(f"{rel} is not indexed (a name starting with '.' is skipped; {JOURNAL} and {DECISIONS} "
                             "are memtool's own records), so a note there could never be recalled",
                             "give another bank page (bank/world.md), or an entity's name")
        return rel
    found = store.entity_page(name)
    if found:
        return found["path"]
    if not any(c.isalnum() for c in name):  # `..` would become bank/entities/entity.md
        raise UsageError(f"{name!r} names no entity (no letter or digit)",
                         "give an entity's name (Peter) or a bank page (bank/world.md)")
    if _PATH_LIKE.search(name):  # '../../etc/passwd' would become bank/entities/etc-passwd.md
        raise UsageError(f"{name!r} is a path, not an entity's name, and not a page under bank/",
                         "give a bank page (bank/world.md) or an entity's name (Peter)")
    return f"bank/entities/{slug_for(name)}.md"


def recent(facts: list[dict], file_states: dict[str, tuple[int, int, int]], since: date) -> dict:
    """What changed since `since`: the `facts` (recall results) of daily logs from then on, grouped
    by day and file, newest day first; then every other file saved since then, newest first."""
    days: dict[tuple[str, str], list[dict]] = {}
    for f in facts:
        path = f["source"].split("#")[0]
        m = _DAILY.match(path)
        if m and m.group(1) >= since.isoformat():  # the day it was written, not the dates it names
            days.setdefault((m.group(1), path), []).append({"source": f["source"], "kind": f["kind"],
                                                            "content": f["content"]})
    cutoff = datetime.combine(since, datetime.min.time()).timestamp() * 1e9
    logged = {path for _, path in days}
    pages = sorted(((mtime, path) for path, (_, mtime, _) in file_states.items()
                    if mtime >= cutoff and path not in logged), reverse=True)
    return {"since": since.isoformat(),
            "days": [{"date": d, "path": p, "facts": sorted(fs, key=lambda x: _first_line(x["source"]))}
                     for (d, p), fs in sorted(days.items(), key=lambda kv: kv[0], reverse=True)],
            "pages": [{"path": p, "changed": datetime.fromtimestamp(m / 1e9).strftime("%Y-%m-%d %H:%M")}
                      for m, p in pages]}


def _first_line(source: str) -> int:
    return int(source.partition("#L")[2].partition("-")[0] or 0)


def entities(ws: Workspace, store: Store, query: str | None, k: int) -> dict:
    """Entities (name, aliases, facts mentioning them, page), most mentioned first; with `query`,
    only those whose name or an alias contains it (any case)."""
    counts = dict(store.entity_counts(1))
    for name, _path in store.entity_pages():
        counts.setdefault(name, 0)
    rows = []
    for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0].casefold())):
        found = entity_page(ws, store, name) if store.entity_page(name) else {"aliases": [], "page": None}
        row = {"name": name, "facts": n, "aliases": [str(a) for a in found["aliases"]],
               "page": found["page"]["path"] if found["page"] else None}
        if query and not any(query.casefold() in x.casefold() for x in [name, *row["aliases"]]):
            continue
        rows.append(row)
    return {"entities": rows[:k], "total": len(rows), **({"query": query} if query else {})}


def tier_lookup(ws: Workspace, store: Store, config: Config) -> Callable[[str], str]:
    """A function path → that file's trust tier as it stands now (remembered per call site).

    The strictest of the front matter in the file today, the index's record of it, and the
    `[trust]` globs; a file that cannot be read counts as legal (see memtool.trust). A file whose
    size, mtime and ctime are still those the index read it with is not read again: its front matter is
    the one the index recorded (the index's records of all files are read at the first call)."""
    known: dict[str, str] = {}
    recorded: dict[str, tuple[int, int, int, str]] | None = None

    def tier_of(path: str) -> str:
        nonlocal recorded
        if path not in known:
            if recorded is None:
                recorded = store.indexed_trust()
            state = recorded.get(path)
            if state is not None and ws.unchanged(path, *state[:3]):
                known[path] = trust.file_tier(path, state[3], config.trust_globs)
                return known[path]
            try:
                file_lines = split_lines(ws.read_text(path))
            except (MemError, OSError):
                known[path] = trust.STRICTEST
                return known[path]
            declared, _ = trust.declared(file_lines, frontmatter.split(file_lines, path)[1])
            indexed = store.trust_levels([path]).get(path, "normal")
            known[path] = trust.file_tier(path, trust.strictest((declared, indexed)), config.trust_globs)
        return known[path]

    return tier_of
