"""A small, strict reader for the YAML front matter subset memtool uses. Pure.

    ---
    aliases: [Pete, "Peter S."]
    trust: private
    tags:
      - friend
    ---

Scalars, flow lists `[a, b]` and block lists `- a` are understood; anything else is kept as a
string and reported as a warning rather than guessed at.
"""

from __future__ import annotations

import re

from memtool.records import Diagnostic

_KEY = re.compile(r"^([A-Za-z_][\w\-]*)\s*:\s*(.*)$")


def split(lines: list[str], path: str) -> tuple[dict, int, list[Diagnostic]]:
    """(metadata, number of front-matter lines, diagnostics); (.., 0, ..) when there is none. A
    byte-order mark before the opening `---` (a Windows editor's save) is no text."""
    if not lines or lines[0].removeprefix("\ufeff").strip() != "---":
        return {}, 0, []
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return {}, 0, [Diagnostic(path, 1, "warning", "frontmatter-unclosed",
                                  "front matter starts with '---' but is never closed; read as text")]
    meta: dict = {}
    diags: list[Diagnostic] = []
    key = None
    for n in range(1, end):
        raw = lines[n]
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s+-\s*(.*)$", raw) or re.match(r"^-\s+(.*)$", raw)
        if item and key is not None:
            if not isinstance(meta.get(key), list):
                meta[key] = []
            meta[key].append(_scalar(item.group(1)))
            continue
        m = _KEY.match(raw)
        if not m:
            diags.append(Diagnostic(path, n + 1, "warning", "frontmatter-line",
                                    f"cannot read front matter line {raw.strip()[:60]!r}; expected 'key: value'"))
            key = None
            continue
        key, value = m.group(1).lower(), m.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key] = [_scalar(v) for v in _split_flow(value[1:-1]) if v.strip()]
        elif value:
            meta[key] = _scalar(value)
        else:
            meta[key] = []
    return meta, end + 1, diags


def _split_flow(inner: str) -> list[str]:
    parts, buf, quote = [], [], None
    for ch in inner:
        if quote:
            if ch == quote:
                quote = None
            buf.append(ch)
        elif ch in "\"'":
            quote = ch
            buf.append(ch)
        elif ch == ",":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    return parts


def _scalar(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v
