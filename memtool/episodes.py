"""Episodes: recall hits grouped by the day they belong to, with their sections quoted. Pure
(the files are read by the caller's `read_lines`).

The stream is the sequence of daily logs; hits elsewhere (core memory, bank pages) form one
undated group. Each group counts its hits by kind and quotes the section(s) around them with line
numbers, so an agent sees what happened that day, not just the matching line.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from memtool.sections import headings, section_of

MAX_SECTION_LINES = 40  # quoted lines per section; longer sections are cut around the hits
_DAILY = re.compile(r"^memory/(?:[^/]+/)*(\d{4}-\d{2}-\d{2})\.md$")  # as document.classify reads them


def parse_source(source: str) -> tuple[str, int, int]:
    path, _, lines = source.partition("#L")
    a, _, b = lines.partition("-L")
    return path, int(a), int(b or a)


def group(results: list[dict]) -> list[dict]:
    """Hits grouped by file, days newest first, then undated pages; each with its kind counts."""
    groups: dict[str, dict] = {}
    for r in results:
        path, start, end = parse_source(r["source"])
        m = _DAILY.match(path)
        g = groups.setdefault(path, {"date": m.group(1) if m else None, "path": path, "buckets": Counter(), "hits": []})
        g["buckets"][r["kind"]] += 1
        g["hits"].append(r | {"_lines": (start, end)})
    dated = sorted((g for g in groups.values() if g["date"]), key=lambda g: g["date"], reverse=True)
    undated = sorted((g for g in groups.values() if not g["date"]), key=lambda g: g["path"])
    return dated + undated


def sections(lines: list[str], hit_lines: list[tuple[int, int]]) -> list[dict]:
    """The sections (by heading) that hold the hits, merged, each as numbered lines."""
    heads = headings(lines)
    spans: dict[int, dict] = {}
    for start, end in hit_lines:
        s, e, head = section_of(heads, start - 1, len(lines))
        span = spans.setdefault(s, {"heading": head.title if head else "", "start": s, "end": e, "hits": []})
        span["hits"].append((start, end))
    out = []
    for span in sorted(spans.values(), key=lambda x: x["start"]):
        s, e = span["start"], span["end"]
        while e > s and not lines[e - 1].strip():
            e -= 1
        if e - s > MAX_SECTION_LINES:  # keep the heading and a window around the hits
            first = min(a for a, _ in span["hits"]) - 1
            last = max(b for _, b in span["hits"])
            lo = max(s + 1, min(first - 3, last - MAX_SECTION_LINES + 1))
            keep = [s] + list(range(lo, min(e, lo + MAX_SECTION_LINES - 1)))
        else:
            keep = list(range(s, e))
        out.append({"heading": span["heading"], "start": s + 1, "end": e,
                    "lines": [{"n": i + 1, "text": lines[i], "hit": any(a <= i + 1 <= b for a, b in span["hits"])}
                              for i in keep]})
    return out


def timeline(groups: list[dict]) -> str:
    """One line an agent can read: `2025-11-27: 3 experience, 1 log · 2025-12-02: 1 world`."""
    parts = []
    for g in groups:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(g["buckets"].items(), key=lambda x: (-x[1], x[0])))
        parts.append(f"{g['date'] or g['path']}: {counts}")
    return " · ".join(parts) if parts else "no hits"


def report(result, read_lines: Callable[[str], list[str]], because: Callable[[str], list[dict]]) -> dict:
    """The `episodes` answer for a recall `result`: its hits grouped by day, each day's sections
    quoted from `read_lines(path)`, and what a hit's `[because:: …]` fields point to."""
    groups = group(result.results)
    for g in groups:
        g["sections"] = sections(read_lines(g["path"]), [h.pop("_lines") for h in g["hits"]])
        g["buckets"] = dict(g["buckets"])
        for hit in g["hits"]:
            if "because" in (hit.get("fields") or {}):
                hit["because"] = because(hit["content"])
    return {"query": result.query, "mode": result.mode, "timeline": timeline(groups), "days": groups,
            "warnings": result.warnings, **({"degraded": result.degraded} if result.degraded else {})}
