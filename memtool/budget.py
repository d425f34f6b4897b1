"""Answers fitted to a token budget, for agents: `episodes`, `about` and `recent` with each line said
once, the most relevant first, and a note of what was left out. Pure.

Sizes are estimated from the compact JSON an answer is sent as (~4 characters a token, as
`recall --budget` packs)."""

from __future__ import annotations

import json

from memtool import blocks
from memtool.recall.pack import estimate_tokens

MIN, MAX = 100, 100_000  # tokens a budget may be
DEFAULT = 2000  # tokens: what `episodes`, `about` and `recent` answer within unless told otherwise
TIGHT_CONTEXT = 1  # lines kept around a hit when a whole section does not fit


def cost(value) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def quoted(lines: list[dict], keep: set[int] | None = None) -> str:
    """Numbered lines as one text, a hit marked `›`: `›9 - W @Peter: …` (gaps shown as `…`)."""
    out, last = [], None
    for line in lines:
        if keep is not None and line["n"] not in keep:
            continue
        if last is not None and line["n"] != last + 1:
            out.append("…")
        out.append(f"{'›' if line['hit'] else ' '}{line['n']} {line['text']}")
        last = line["n"]
    return "\n".join(out)


def _day(group: dict, tight: bool) -> dict:
    """A day of `episodes` said once: its sections' lines (hits marked), the hits' extras only."""
    sections = []
    for s in group["sections"]:
        keep = None
        if tight:
            hits = [line["n"] for line in s["lines"] if line["hit"]]
            keep = {n + d for n in hits for d in range(-TIGHT_CONTEXT, TIGHT_CONTEXT + 1)} | {s["start"]}
        sections.append({"heading": s["heading"], "lines": quoted(s["lines"], keep)})
    extras = [{k: h[k] for k in ("source", "superseded_by", "because") if k in h}
              for h in group["hits"] if "superseded_by" in h or "because" in h]
    day = {"date": group["date"], "path": group["path"], "buckets": group["buckets"], "sections": sections}
    if extras:
        day["notes"] = extras
    return day


def episodes(report: dict, budget: int) -> dict:
    """`report` (see `memtool.episodes.report`) within `budget` tokens: days in the report's order,
    each quoted whole if it fits, else only its hits and their neighbours; days that fit neither
    are counted in `omitted_days`."""
    head = {k: v for k, v in report.items() if k != "days"}
    used, days, omitted = cost(head), [], 0
    for group in report["days"]:
        for tight in (False, True):
            day = _day(group, tight)
            if used + cost(day) <= budget:
                days.append(day)
                used += cost(day)
                break
        else:
            omitted += 1
    out = {**head, "budget": budget, "days": days}
    if omitted:
        out["omitted_days"] = omitted
        out["hint"] = "raise budget, or narrow with since/until or more exact words"
    return out


def _fact(result: dict) -> dict:
    """A recall result without what an agent does not need to read again (empty context, score)."""
    keep = ("kind", "timestamp", "content", "source", "confidence", "superseded_by", "previously", "fields", "tags")
    return {k: result[k] for k in keep if result.get(k) not in (None, "", [], {})}


def about(answer: dict, budget: int) -> dict:
    """`about` within `budget` tokens: the page without its generated blocks (they list the facts
    that follow), then the newest facts that fit."""
    page = answer["page"]
    if page:
        text = page["text"]
        for name in _block_names(text):
            block = blocks.find(text, name)
            if block is not None:
                text = text[:block.start] + text[block.end:]
        page = {"path": page["path"], "text": text.strip("\n")}
    out = {"entity": answer["entity"], "aliases": answer["aliases"], "page": page, "facts": [],
           "warnings": answer["warnings"], "budget": budget}
    used, omitted = cost(out), 0
    for result in answer["facts"]:
        fact = _fact(result)
        if used + cost(fact) <= budget:
            out["facts"].append(fact)
            used += cost(fact)
        else:
            omitted += 1
    if omitted:
        out["omitted_facts"] = omitted
        out["hint"] = "raise budget, or ask recall with entity and a query for the part you need"
    return out


def _block_names(text: str) -> list[str]:
    marker = "<!-- memtool:begin "
    names = []
    for line in text.splitlines():
        if line.startswith(marker):
            names.append(line[len(marker):].split()[0].rstrip("-"))
    return names


def recent(answer: dict, budget: int) -> dict:
    """`recent` within `budget` tokens: newest days first, then changed pages; what does not fit is counted."""
    out = {k: v for k, v in answer.items() if k not in ("days", "pages")}
    out.update(days=[], pages=[], budget=budget)
    used, omitted = cost(out), 0
    for key in ("days", "pages"):
        for item in answer[key]:
            if used + cost(item) <= budget:
                out[key].append(item)
                used += cost(item)
            else:
                omitted += 1
    if omitted:
        out["omitted"] = omitted
        out["hint"] = "raise budget, or ask for fewer days"
    return out
