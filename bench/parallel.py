"""The parallel set (issue 16 item 4): short encyclopedic paragraphs written in English and German,
laid out as daily logs (one bullet per sentence), the shape of a bilingual Wikipedia set.

    python -m bench.quality --report parallel --modes hybrid    # hit@1 / hitL@10 per direction and half
    python -m bench.parallel --build                            # bench/data/parallel_source.txt → the set
    python -m bench.parallel --compare main.json variant.json   # hits per set, direction and half

bench/data/parallel_source.txt holds 40 paragraphs (original text written for memtool): 24 in both
languages (the German a faithful, sentence-aligned translation), 8 only in English, 8 only in
German, and two questions per paragraph (three for those in one language), each asked in English
and in German. Every version of a paragraph is one day's log (bench/data/parallel/memory/),
English and German versions alternating over 64 days. A question is scored once per language its paragraph is written in, against that
language's sentence: a German question about a paragraph in both languages counts for de→de and for
de→en. "Parallel" rows are those questions (the answer exists in both languages, so the question's
own language competes for the first place), "one language" rows the paragraphs written only in the
evidence language (the answer exists only there). Halves split the paragraphs by odd and even number.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import time
from datetime import date, timedelta
from pathlib import Path

from bench import heldout as H

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "bench" / "data" / "parallel_source.txt"
WORKSPACE = ROOT / "bench" / "data" / "parallel"
QUESTIONS = ROOT / "bench" / "data" / "parallel_questions.jsonl"
FIRST_DAY = date(2026, 3, 2)
LANGS = ("en", "de")
DIRECTIONS = ("en→en", "de→de", "de→en", "en→de")

_HEAD = re.compile(r"^## (p\d+) ((?:en|de)(?:\+(?:en|de))?) \| (.+)$")
_QUESTION = re.compile(r"^q (\d+): (.+?) \| (.+)$")


def parse(text: str) -> list[dict]:
    """Paragraphs of the source: id, languages, topic, sentences per language, questions."""
    paras: list[dict] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        if m := _HEAD.match(line):
            paras.append({"id": m[1], "langs": m[2].split("+"), "topic": m[3], "en": [], "de": [], "questions": []})
        elif line[:3] in ("en:", "de:"):
            paras[-1][line[:2]].append(line[3:].strip())
        elif m := _QUESTION.match(line):
            paras[-1]["questions"].append({"sentence": int(m[1]), "en": m[2], "de": m[3]})
        else:
            raise SystemExit(f"parallel_source.txt: cannot read {line!r}")
    for p in paras:
        counts = {len(p[lang]) for lang in p["langs"]}
        if len(counts) != 1 or any(p[lang] for lang in LANGS if lang not in p["langs"]):
            raise SystemExit(f"{p['id']}: sentences do not align with its languages {p['langs']}")
        if any(not 1 <= q["sentence"] <= len(p[p["langs"][0]]) for q in p["questions"]):
            raise SystemExit(f"{p['id']}: a question names a sentence the paragraph does not have")
    return paras


def layout(paras: list[dict]) -> list[tuple[str, str]]:
    """(paragraph id, language) per day: each language's versions in a fixed shuffled order,
    alternating English and German from day to day."""
    order = {}
    for lang in LANGS:
        versions = [p["id"] for p in paras if lang in p["langs"]]
        random.Random(f"parallel-{lang}").shuffle(versions)
        order[lang] = versions
    days = []
    for i in range(max(len(v) for v in order.values())):
        days += [(order[lang][i], lang) for lang in LANGS if i < len(order[lang])]
    return days


def build(paras: list[dict], dest: Path) -> list[dict]:
    """Write the workspace's daily logs under `dest` and return the questions, with the cited
    sentence of each language as file#line."""
    if (dest / "memory").exists():
        shutil.rmtree(dest / "memory")
    (dest / "memory").mkdir(parents=True)
    (dest / "memtool.toml").write_text("# memtool settings for this workspace (all optional)\n\n"
                                       "[index]\nmax_file_bytes = 5_000_000\n", encoding="utf-8")
    where: dict[tuple[str, str], str] = {}
    by_id = {p["id"]: p for p in paras}
    for n, (pid, lang) in enumerate(layout(paras)):
        day = (FIRST_DAY + timedelta(days=n)).isoformat()
        bullets = "".join(f"- {s}\n" for s in by_id[pid][lang])
        (dest / "memory" / f"{day}.md").write_text(f"# {day}\n\n{bullets}", encoding="utf-8")
        where[(pid, lang)] = f"memory/{day}.md"
    questions = []
    for p in paras:
        for k, q in enumerate(p["questions"], 1):
            evidence = {lang: [f"{where[(p['id'], lang)]}#L{q['sentence'] + 2}"] for lang in p["langs"]}
            for qlang in LANGS:
                questions.append({"qid": f"par-{p['id']}-q{k}-{qlang}", "lang": qlang, "question": q[qlang],
                                  "paragraph": p["id"], "langs": p["langs"], "evidence_by_lang": evidence,
                                  "evidence_locations": [loc for locs in evidence.values() for loc in locs]})
    return questions


def half(q: dict) -> str:
    return "A" if int(q["paragraph"][1:]) % 2 else "B"


def run(mem, questions: list[dict], mode: str, scorer) -> list[dict]:
    """One row per question and language its paragraph is written in, scored against that
    language's sentence, as shipped: a question the floor refuses cites nothing."""
    from bench.quality import cites, last_day

    rows, today = [], last_day(mem.ws.root)
    for q in questions:
        t = time.perf_counter()
        result = mem.recall(q["question"], k=50, mode=mode, today=today, min_score=0)
        latency = time.perf_counter() - t
        refused = result.verdict is not None and result.verdict.best is not None and result.verdict.best < mem.config.recall_floor
        ranked = [] if refused else [cites(r) for r in result.results]
        for lang, evidence in q["evidence_by_lang"].items():
            score = scorer.score_question({"evidence_locations": evidence}, ranked, [1, 10], False)
            rows.append({"qid": q["qid"], "direction": f"{q['lang']}→{lang}", "half": half(q),
                         "parallel": len(q["langs"]) > 1, "score": score, "latency_s": latency, "refused": refused})
        either = scorer.score_question(q, ranked, [1, 10], False)
        if len(q["langs"]) > 1:
            rows.append({"qid": q["qid"], "direction": f"{q['lang']}→either", "half": half(q), "parallel": True,
                         "score": either, "latency_s": latency, "refused": refused})
    return rows


def figures(rows: list[dict]) -> list:
    parts = [[r for r in rows if r["half"] == h] for h in "AB"]
    return [len(rows), H.mean_of(rows, "hit@1"), H.mean_of(rows, "hitL@10"),
            *(H.mean_of(p, "hit@1") for p in parts), *(H.mean_of(p, "hitL@10") for p in parts)]


def table_rows(mode: str, rows: list[dict]) -> list[list]:
    out = []
    for d in DIRECTIONS:
        sel = [r for r in rows if r["direction"] == d]
        out.append([mode, d, "all", *figures(sel)])
        out.append([mode, d, "parallel", *figures([r for r in sel if r["parallel"]])])
        out.append([mode, d, "one language", *figures([r for r in sel if not r["parallel"]])])
    for lang in LANGS:
        out.append([mode, f"{lang}→either", "parallel", *figures([r for r in rows if r["direction"] == f"{lang}→either"])])
    return out


def gaps(rows: list[dict]) -> dict[str, float | None]:
    """Cross-lingual hit@1 minus the monolingual figure of the same evidence language (the target:
    within .05): en→de against de→de, de→en against en→en."""
    def hit(d, one=False):
        return H.mean_of([r for r in rows if r["direction"] == d and (not one or not r["parallel"])], "hit@1")
    return {"en→de − de→de": _minus(hit("en→de"), hit("de→de")), "de→en − en→en": _minus(hit("de→en"), hit("en→en")),
            "one language: en→de − de→de": _minus(hit("en→de", True), hit("de→de", True)),
            "one language: de→en − en→en": _minus(hit("de→en", True), hit("en→en", True))}


def _minus(a, b):
    return None if a is None or b is None else a - b


def load_questions() -> list[dict]:
    from bench.quality import read_jsonl

    return read_jsonl(QUESTIONS)


def report_parallel(args, wss, scorer, out: dict) -> None:
    questions = load_questions()
    modes = ["hybrid"] if args.quick else args.modes.split(",")
    mem = wss.get("parallel")
    header = ["mode", "question → evidence", "questions", "n", "hit@1", "hitL@10",
              "hit@1 half A", "hit@1 half B", "hitL@10 half A", "hitL@10 half B"]
    table, result = [], {}
    for mode in modes:
        t = time.perf_counter()
        rows = run(mem, questions, mode, scorer)
        print(f"  parallel, {mode}: {len(questions)} queries in {time.perf_counter() - t:.0f}s", flush=True)
        table += table_rows(mode, rows)
        result[mode] = {"rows": rows, "gaps": gaps(rows)}
    text = H.markdown_table(header, table)
    print("\nparallel set (bench/data/parallel: encyclopedic paragraphs as daily logs, English and German), per "
          "direction (question → evidence language), halves by paragraph (odd A, even B)\n" + text)
    for mode, got in result.items():
        print(f"{mode}: cross-lingual hit@1 minus monolingual: "
              + ", ".join(f"{k} {v:+.3f}" for k, v in got["gaps"].items() if v is not None))
    out["parallel"] = {"table": text, **result}


# --- comparing variants over the three bilingual sets ----------------------------------------

def per_half(path: Path, mode: str = "hybrid") -> dict[tuple[str, str], dict[str, tuple[int, int, int, int]]]:
    """(set, direction) → metric → (hits in half A, questions in A, hits in B, questions in B), from a
    `bench.quality --report parallel,bilingual,docset --json` file. Halves: the parallel set by
    paragraph, the example set and the docset by the parity of the question's number."""
    data = json.loads(Path(path).read_text())
    cells: dict = {}

    def add(set_, direction, half_, score):
        for metric in ("hit@1", "hitL@10"):
            if score.get(metric) is None:
                continue
            c = cells.setdefault((set_, direction), {}).setdefault(metric, [0, 0, 0, 0])
            i = 0 if half_ == "A" else 2
            c[i] += int(score[metric])
            c[i + 1] += 1

    def parity(qid):
        return "A" if int(re.sub(r"\D", "", qid) or 0) % 2 else "B"

    for r in data.get("parallel", {}).get(mode, {}).get("rows", []):
        if "either" not in r["direction"]:
            add("parallel", r["direction"], r["half"], r["score"])
            if not r["parallel"] and r["direction"][:2] != r["direction"][-2:]:
                add("parallel, one language", r["direction"], r["half"], r["score"])
    bil = data.get("bilingual", {})
    for r in bil.get("rows", {}).get(mode, []):
        add("example", bil["direction"][r["qid"]], parity(r["qid"]), r["score"])
    for r in data.get("docset", {}).get(mode, {}).get("rows", []):
        if r["direction"]:
            add("docset", r["direction"], parity(r["qid"]), r["score"])
    return {k: {m: tuple(v) for m, v in ms.items()} for k, ms in cells.items()}


def compare(paths: list[Path], metric: str = "hit@1") -> str:
    """A table of `metric` per set and direction (rows) and variant (columns, the files' names):
    hits in half A + half B = all / questions."""
    got = {Path(p).stem: per_half(p) for p in paths}
    keys = sorted({k for cells in got.values() for k in cells}, key=lambda k: (k[0], DIRECTIONS.index(k[1]) if k[1] in DIRECTIONS else 9, k[1]))
    rows = []
    for key in keys:
        cells = []
        for name in got:
            c = got[name].get(key, {}).get(metric)
            cells.append(f"{c[0]}+{c[2]}={c[0] + c[2]}/{c[1] + c[3]}" if c else "–")
        rows.append([key[0], key[1], *cells])
    return H.markdown_table(["set", "question → evidence", *got], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="write bench/data/parallel/ and parallel_questions.jsonl from the source")
    ap.add_argument("--compare", nargs="+", metavar="JSON",
                    help="per set, direction and half, hit@1 and hitL@10 of each --json file of "
                         "bench.quality --report parallel,bilingual,docset (one file per variant)")
    args = ap.parse_args()
    if args.compare:
        for metric in ("hit@1", "hitL@10"):
            print(f"\n{metric}: hits in half A + half B = all / questions\n{compare(args.compare, metric)}")
        return
    if not args.build:
        ap.error("nothing to do: pass --build or --compare (the report runs from bench.quality --report parallel)")
    questions = build(parse(SOURCE.read_text(encoding="utf-8")), WORKSPACE)
    QUESTIONS.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    print(f"{len(list((WORKSPACE / 'memory').glob('*.md')))} days, {len(questions)} questions → {QUESTIONS}")


if __name__ == "__main__":
    main()
