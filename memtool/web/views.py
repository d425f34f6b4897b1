"""What the web pages show, shaped from facade results. Pure: no files, no index, no clock.

The heat map of days × kinds, the co-mention graph's layout (a circle, most connected first), a
Markdown file rendered with cited lines highlighted, and links that open a file in an editor.
"""

from __future__ import annotations

import math
import posixpath
from datetime import date, timedelta
from urllib.parse import quote

from markdown_it import MarkdownIt

KINDS = ("world", "experience", "opinion", "observation", "log", "page")
HEAT_DAYS = 182  # the heat map shows 26 weeks ending at `until`
GRAPH_NODES = 30
WINDOW_BEFORE = 100  # lines shown before a citation in a file too long to show whole
CHART_SERIES = 8  # opinions drawn in one confidence chart (more lines cannot be told apart)
_LEAVES = {"paragraph_open", "heading_open", "fence", "code_block", "hr", "tr_open", "html_block"}


def heat_map(counts: list[tuple[str, str, int]], until: str | None = None, days: int = HEAT_DAYS,
             today: str | None = None) -> dict:
    """Rows per kind (plus `all`), one cell per day of the window ending at `until` (default: the
    last day with facts, but not after `today`: facts about the future do not hide the present); each
    cell has its count and a level 0–4 (log scale against the busiest)."""
    per: dict[tuple[str, str], int] = {}
    for day, kind, n in counts:
        per[(day, kind)] = per.get((day, kind), 0) + n
        per[(day, "all")] = per.get((day, "all"), 0) + n
    known = sorted({d for d, _ in per})
    if not known:
        return {"days": [], "rows": [], "first": None, "last": None, "until": None, "earlier": None, "later": None}
    end = date.fromisoformat(until or min(known[-1], max(today or known[-1], known[0])))
    end = max(end, date.min + timedelta(days=days - 1))  # the window ends no earlier than its first day allows
    window = [(end - timedelta(days=i)).isoformat() for i in range(days - 1, -1, -1)]
    top = max((per.get((d, "all"), 0) for d in window), default=0) or 1
    rows = []
    for kind in ("all", *KINDS):
        cells = [{"day": d, "n": per.get((d, kind), 0), "level": _level(per.get((d, kind), 0), top)} for d in window]
        if kind == "all" or any(c["n"] for c in cells):
            rows.append({"kind": kind, "cells": cells, "total": sum(c["n"] for c in cells)})
    earlier = (end - timedelta(days=days)).isoformat() if known[0] < window[0] else None
    later = (end + min(timedelta(days=days), date.fromisoformat(known[-1]) - end)).isoformat() if known[-1] > window[-1] else None
    return {"days": window, "rows": rows, "first": known[0], "last": known[-1], "until": end.isoformat(),
            "earlier": earlier, "later": later}


def _level(n: int, top: int) -> int:
    return 0 if n <= 0 else min(4, 1 + int(3 * math.log1p(n) / math.log1p(top)))


def graph(pairs: list[tuple[str, str, int]], names: dict[str, str], linked: set[frozenset] = frozenset(),
          size: int = 560) -> dict:
    """Nodes on a circle (most connected first, clockwise from the top) and edges between them:
    co-mentions (weight = facts together) and links a person decided in review (dashed)."""
    degree: dict[str, int] = {}
    for a, b, n in pairs:
        degree[a] = degree.get(a, 0) + n
        degree[b] = degree.get(b, 0) + n
    keys = sorted(degree, key=lambda k: (-degree[k], k))[:GRAPH_NODES]
    centre, radius = size / 2, size / 2 - 70
    nodes = {}
    for i, k in enumerate(keys):
        angle = 2 * math.pi * i / max(1, len(keys)) - math.pi / 2
        nodes[k] = {"key": k, "name": names.get(k, k), "x": round(centre + radius * math.cos(angle), 1),
                    "y": round(centre + radius * math.sin(angle), 1), "degree": degree[k],
                    "anchor": "start" if math.cos(angle) > 0.1 else "end" if math.cos(angle) < -0.1 else "middle"}
    top = max((n for *_, n in pairs), default=1)
    edges = [{"a": nodes[a], "b": nodes[b], "n": n, "width": round(0.8 + 4 * n / top, 1),
              "linked": frozenset((a, b)) in linked} for a, b, n in pairs if a in nodes and b in nodes]
    edges += [{"a": nodes[a], "b": nodes[b], "n": 0, "width": 1.5, "linked": True}
              for a, b in (tuple(sorted(p)) for p in linked if len(p) == 2)
              if a in nodes and b in nodes and not any({a, b} == {e["a"]["key"], e["b"]["key"]} for e in edges)]
    return {"nodes": list(nodes.values()), "edges": edges, "size": size}


def review_counts(items: list[dict]) -> list[dict]:
    """Open and decided review items per kind (kinds by name)."""
    counts: dict[str, dict] = {}
    for item in items:
        row = counts.setdefault(item["kind"], {"kind": item["kind"], "open": 0, "decided": 0})
        row["open" if item["status"] == "open" else "decided"] += 1
    return [counts[k] for k in sorted(counts)]


def line_span(lines: str | None) -> tuple[int, int] | None:
    """`12` or `12-14` (or `L12-L14`) → (12, 14); None for nothing or nonsense."""
    if not lines:
        return None
    parts = lines.replace("L", "").split("-")
    try:
        a, b = int(parts[0]), int(parts[-1])
    except ValueError:
        return None
    return (a, b) if 0 < a <= b else None


def citation(source: str) -> dict:
    """`memory/x.md#L4-L6` → the path and the lines, for a link to the file view."""
    path, _, frag = source.partition("#")
    return {"path": path, "lines": frag.replace("L", "") if frag else ""}


def window_start(line: int) -> int:
    """The first line shown of a file too long to show whole, for a citation of `line`: a little before it."""
    return max(1, line - WINDOW_BEFORE)


def render_markdown(text: str, path: str, span: tuple[int, int] | None = None, start: int = 1) -> str:
    """HTML of a workspace file, or of its lines from `start` on (raw HTML in it is shown as text);
    the blocks holding lines of `span` (1-based, inclusive, in the file) get class `cited`, every
    block an id `L<n>` of its first line in the file, and links to other workspace files open them here."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for t in tokens:
        if t.map and (t.type in _LEAVES and not t.hidden or t.type == "list_item_open"):
            first, end = t.map[0] + start, t.map[1] + start - 1
            t.attrSet("id", f"L{first}")
            # a list item is cited when it starts in the span (its map covers its sub-items too)
            if span and (span[0] <= first <= span[1] if t.type == "list_item_open" else first <= span[1] and end >= span[0]):
                t.attrJoin("class", "cited")
        for child in t.children or ():
            if child.type == "link_open":
                child.attrSet("href", _local_href(child.attrGet("href") or "", path))
    return md.renderer.render(tokens, md.options, {})


def _local_href(href: str, path: str) -> str:
    if "://" in href or href.startswith(("#", "mailto:")) or not href.split("#")[0].endswith(".md"):
        return href
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), href.split("#")[0].strip("<>")))
    return "/file?path=" + quote(target) if not target.startswith("..") else href


def editor_links(root: str, path: str, line: int | None) -> list[dict]:
    """Links that open the file in an editor: VS Code (at the line), Obsidian (the vault is the
    workspace), and the file itself."""
    full = posixpath.join(root, path)
    return [{"name": "VS Code", "href": f"vscode://file{quote(full)}" + (f":{line}" if line else "")},
            {"name": "Obsidian", "href": f"obsidian://open?path={quote(full, safe='')}"},
            {"name": "file", "href": f"file://{quote(full)}"}]


def confidence_chart(threads: list[dict]) -> dict:
    """uPlot-ready series: one x axis (unix seconds of every day a point falls on) and one series
    per opinion (None where it has no point)."""
    days = sorted({p["day"] for t in threads for p in t["points"] if p["day"]})
    xs = [int((date.fromisoformat(d) - date(1970, 1, 1)).total_seconds()) for d in days]
    series = []
    for t in threads:
        by_day = {p["day"]: p["confidence"] for p in t["points"] if p["day"]}
        series.append({"label": t["label"], "values": [by_day.get(d) for d in days]})
    return {"x": xs, "series": series}


def quote_label(text: str, width: int = 48) -> str:
    """A chart legend's label: the statement on one line, cut at a word."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[:width].rsplit(" ", 1)[0] + " …"
