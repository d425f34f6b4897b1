"""Reading the workspace as it stands now: numbered lines of a file (and what its `[because:: …]`
fields point to), an entity's page, and a file's trust tier."""

from __future__ import annotations

import re
from typing import Callable

from memtool import frontmatter, trust
from memtool.config import Config
from memtool.errors import MemError, UsageError, WorkspaceError
from memtool.retain import inline_field_values
from memtool.store import Store
from memtool.workspace import Workspace

BECAUSE_MAX, BECAUSE_LINES = 5, 20  # causal links followed per answer, lines quoted per link
GET_MAX_CHARS = 100_000  # characters one `get` returns at most (a 20 MB line would flood a terminal or a context)
_REF = re.compile(r"(.+?)(?:#L(\d+)(?:-L?(\d+))?)?")


def split_lines(text: str) -> list[str]:
    """Lines as the parser counts them (memtool.document, ~10 ms to import: only when a file is read)."""
    from memtool import document

    return document.split_lines(text)


def lines(ws: Workspace, path: str) -> list[str]:
    """The lines of a workspace file, as the parser counts them."""
    return split_lines(ws.read_text(path))


def get(ws: Workspace, ref: str, max_lines: int = 200, follow: bool = True) -> dict:
    """Numbered lines of a workspace file: `path`, `path#L3` or `path#L3-L9` (confined to the workspace).

    With `follow`, `because` holds what the lines' `[because:: path#L…]` fields point to."""
    m = _REF.fullmatch(ref.strip())
    if not m:
        raise UsageError(f"cannot read {ref!r}", "use path, path#L12 or path#L12-L20")
    rel = m.group(1)
    path = ws.resolve(rel)
    if not path.is_file():
        raise UsageError(f"{rel} is not a file in the workspace", "paths are relative to the workspace, e.g. memory.md")
    if max_lines < 1:
        raise UsageError("max_lines must be at least 1")
    text = lines(ws, ws.relative(path))
    start = int(m.group(2) or 1)
    end = int(m.group(3) or (m.group(2) or len(text)))
    if start < 1 or end < start or start > max(1, len(text)):
        raise UsageError(f"lines {start}-{end} are outside {rel} (1-{len(text)})")
    end = min(end, len(text))
    out, shown, cut = _numbered(text, start, min(end, start + max_lines - 1))
    data = {"path": ws.relative(path), "start": start, "end": shown, "total_lines": len(text),
            "truncated": shown < end or cut is not None, "lines": out, "text": "\n".join(line["text"] for line in out)}
    if cut:
        data["cut"] = cut
    if follow:
        data["because"] = because(ws, data["text"])
    return data


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


def tier_lookup(ws: Workspace, store: Store, config: Config) -> Callable[[str], str]:
    """A function path → that file's trust tier as it stands now (remembered per call site).

    The strictest of the front matter in the file today, the index's record of it, and the
    `[trust]` globs; a file that cannot be read counts as legal (see memtool.trust)."""
    known: dict[str, str] = {}

    def tier_of(path: str) -> str:
        if path not in known:
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
