"""The documentation-style set (issue 16 item 7): help pages of a fictional app, Quillbox, as bank
pages in bench/data/docset/ (bank/help English, bank/hilfe German), full of navigation lists,
image embeds, table scaffolding and short imperative lines that only make sense with their page.

    python -m bench.quality --report docset            # hit@1, hitL@3, hitL@10 per type and direction
    python -m bench.quality --report docset --quick    # hybrid only, half the questions

Questions (bench/data/docset_questions.jsonl) are typed mono, cross (German question about an
English page or the other way round), context (the answering line needs its page title or heading)
and table (the answer is a table body row); their direction is the question's language → the
language of the pages holding the evidence. "Scaffolding on top" is the share of questions whose
first result cites only content-less lines: link-only lines, image embeds, table header or
separator rows, bare headings (the rules of `scaffolding_kind`, read on the line as written).
Off-topic questions for this workspace (bench/data/docset_offtopic.jsonl) give the top score's AUC.
All pages and questions are original text written for this benchmark (no real product's help).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from bench import heldout as H

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "bench" / "data" / "docset"
QUESTIONS = ROOT / "bench" / "data" / "docset_questions.jsonl"
OFFTOPIC = ROOT / "bench" / "data" / "docset_offtopic.jsonl"
TYPES = ("mono", "cross", "context", "table")
DIRECTIONS = ("en→en", "de→de", "de→en", "en→de", "en→de+en", "de→de+en")

_LINK = r"(?:\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\))"
_LINK_ONLY = re.compile(rf"^\s*(?:[-*+]|\d+[.)])?\s*(?:{_LINK}[\s,;·|]*)+$")
_EMBED_ONLY = re.compile(r"^\s*(?:[-*+]\s*)?(?:(?:!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\))\s*)+$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^\s*#{1,6}\s+\S")


def scaffolding_kind(lines: list[str], n: int) -> str | None:
    """What content-less record line `n` (1-based) of a page is, or None for content: "link-only",
    "image", "table-header" (a row followed by a separator row, or the separator itself), "heading"."""
    text = lines[n - 1]
    if not text.strip():
        return "blank"
    if _EMBED_ONLY.match(text):
        return "image"
    if _LINK_ONLY.match(text):
        return "link-only"
    if _TABLE_SEP.match(text) and "|" in text:
        return "table-header"
    if text.lstrip().startswith("|") and n < len(lines) and _TABLE_SEP.match(lines[n]):
        return "table-header"
    if _HEADING.match(text):
        return "heading"
    return None


def result_kind(ws: Path, cites: list[tuple[str, int, int]], pages: dict) -> str | None:
    """The scaffolding kind of a result: its kind when every cited non-blank line is content-less
    (the first such line's kind), None when any cited line carries content."""
    kinds = []
    for path, a, b in cites:
        if path not in pages:
            file = ws / path
            pages[path] = file.read_text(encoding="utf-8").splitlines() if file.exists() else []
        lines = pages[path]
        for n in range(a, min(b, len(lines)) + 1):
            kind = scaffolding_kind(lines, n)
            if kind is None:
                return None
            if kind != "blank":
                kinds.append(kind)
    return kinds[0] if kinds else None


def hit_within_lines(evidence: list[str], ranked: list, budget: int) -> float | None:
    """hitL@budget as eval_recall.py reads it: results in rank order, the first `budget` distinct lines."""
    ev = {(p, int(n)) for p, _, n in (loc.partition("#L") for loc in evidence)}
    if not ev:
        return None
    seen = set()
    for cites in ranked:
        for p, a, b in cites:
            for x in range(a, b + 1):
                if len(seen) >= budget:
                    return 0.0
                seen.add((p, x))
                if (p, x) in ev:
                    return 1.0
    return 0.0


def direction(q: dict) -> str:
    langs = sorted({"de" if "/hilfe/" in loc else "en" for loc in q["evidence_locations"]})
    return f"{q['lang']}→{'+'.join(langs)}"


def check_questions(questions: list[dict]) -> None:
    """Every cited line exists and carries content (a typo in the data must not pass as a miss)."""
    pages: dict = {}
    for q in questions:
        for loc in q["evidence_locations"]:
            path, _, n = loc.partition("#L")
            lines = pages.setdefault(path, (WORKSPACE / path).read_text(encoding="utf-8").splitlines())
            if not (1 <= int(n) <= len(lines)) or scaffolding_kind(lines, int(n)):
                raise SystemExit(f"{q['qid']}: evidence {loc} is not a content line of the page")


def run(mem, questions: list[dict], mode: str, scorer) -> list[dict]:
    from bench.quality import cites

    rows, pages = [], {}
    for q in questions:
        t = time.perf_counter()
        result = mem.recall(q["question"], k=50, mode=mode, min_score=0)  # the floor is applied below
        latency = time.perf_counter() - t
        verdict = getattr(result, "verdict", None)
        refused = verdict is not None and verdict.best is not None and verdict.best < mem.config.recall_floor
        opened = [cites(r) for r in result.results]
        ranked = [] if refused else opened
        score = scorer.score_question(q, ranked, [1, 10], False) if q.get("evidence_locations") else {}
        score["hitL@3"] = hit_within_lines(q.get("evidence_locations", []), ranked, 3)
        score["hitL@10_open"] = hit_within_lines(q.get("evidence_locations", []), opened, 10)
        top = result.results[0] if result.results and not refused else None
        rows.append({"qid": q["qid"], "type": q.get("type"), "lang": q["lang"],
                     "direction": direction(q) if q.get("evidence_locations") else None,
                     "score": score, "latency_s": latency,
                     "top_score": _best(result, top),
                     "near_kind": result.verdict.kind if getattr(result, "verdict", None) else None,
                     "answered_nothing": not ranked,
                     "top_kind": result_kind(mem.ws.root, ranked[0], pages) if ranked else None,
                     "top_source": top["source"] if top else None,
                     "top3_kinds": [result_kind(mem.ws.root, c, pages) for c in ranked[:3]]})
    return rows


def _best(result, top) -> float:
    """The query's confidence: the calibrated best score when recall gives one, else the top score."""
    verdict = getattr(result, "verdict", None)
    if verdict is not None and verdict.best is not None:
        return float(verdict.best)
    return float(top["score"]) if top else 0.0


def _share(rows, pred):
    return sum(1 for r in rows if pred(r)) / len(rows) if rows else None


def figures(rows: list[dict]) -> list:
    return [len(rows), H.mean_of(rows, "hit@1"), H.mean_of(rows, "hitL@3"), H.mean_of(rows, "hitL@10"),
            _share(rows, lambda r: r["top_kind"] is not None),
            _share(rows, lambda r: any(k is not None for k in r["top3_kinds"]))]


def report_docset(args, wss, scorer, out: dict) -> None:
    from bench.quality import read_jsonl, thin

    questions = read_jsonl(QUESTIONS)
    check_questions(questions)
    questions = thin(questions, args.quick, 2)
    offtopic = read_jsonl(OFFTOPIC)
    modes = ["hybrid"] if args.quick else args.modes.split(",")
    mem = wss.get("docset")
    header = ["mode", "group", "n", "hit@1", "hitL@3", "hitL@10", "scaffolding on top", "scaffolding in top 3"]
    table_rows, kinds_rows, result = [], [], {}
    for mode in modes:
        t = time.perf_counter()
        rows = run(mem, questions, mode, scorer)
        off = run(mem, offtopic, mode, scorer)
        print(f"  docset, {mode}: {len(rows) + len(off)} queries in {time.perf_counter() - t:.0f}s", file=sys.stderr)
        table_rows.append([mode, "all", *figures(rows)])
        table_rows += [[mode, f"type={t_}", *figures([r for r in rows if r["type"] == t_])] for t_ in TYPES]
        table_rows += [[mode, d, *figures([r for r in rows if r["direction"] == d])]
                       for d in DIRECTIONS if any(r["direction"] == d for r in rows)]
        table_rows.append([mode, "off-topic", len(off), None, None, None,
                           _share(off, lambda r: r["top_kind"] is not None),
                           _share(off, lambda r: any(k is not None for k in r["top3_kinds"]))])
        tops = [r["top_kind"] for r in rows + off]
        kinds_rows.append([mode, *(sum(k == kind for k in tops) for kind in ("link-only", "image", "table-header", "heading")),
                           H.auc([r["top_score"] for r in rows], [r["top_score"] for r in off]),
                           _share(off, lambda r: r["answered_nothing"]), _share(rows, lambda r: r["answered_nothing"])])
        result[mode] = {"rows": rows, "offtopic": off}
    text = H.markdown_table(header, table_rows)
    print("\ndocset (Quillbox help pages): per type and direction (question → evidence language); scaffolding = "
          f"first result (or one of the first 3) cites only link-only lines, image embeds, table header rows or headings\n{text}")
    text2 = H.markdown_table(["mode", "top is link-only", "image", "table header", "heading",
                              "best-score AUC answerable vs off-topic", "off-topic answered nothing",
                              "answerable answered nothing"], kinds_rows)
    print(f"\ndocset: what the content-less first results are (answerable and off-topic queries), and the top score as a signal\n{text2}")
    text3 = H.markdown_table(["mode", "calibration (kind of the nearest record)", "answerable", "off-topic",
                              "best-score AUC", "off-topic answered nothing", "answerable answered nothing",
                              "answerable that lose their evidence from the first 10 lines"], per_kind(result))
    print(f"\ndocset: the floor per kind of text, as shipped (bench/calibration.py)\n{text3}")
    out["docset"] = {"tables": [text, text2, text3], **result}


def per_kind(result: dict) -> list[list]:
    """Per mode and calibration used: the shipped floor on the docset's answerable and off-topic questions."""
    out = []
    for mode, got in result.items():
        for kind in sorted({r["near_kind"] for r in got["rows"] + got["offtopic"] if r["near_kind"]}):
            pos = [r for r in got["rows"] if r["near_kind"] == kind]
            neg = [r for r in got["offtopic"] if r["near_kind"] == kind]
            out.append([mode, kind, len(pos), len(neg), H.auc([r["top_score"] for r in pos], [r["top_score"] for r in neg]),
                        _share(neg, lambda r: r["answered_nothing"]), _share(pos, lambda r: r["answered_nothing"]),
                        _share(pos, lambda r: r["answered_nothing"] and r["score"].get("hitL@10_open") == 1.0)])
    return out
