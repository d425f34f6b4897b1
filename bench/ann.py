"""Approximate vector search against exact search, on real model vectors.

    python3 -m bench.ann --sizes 30000,1000000 [--usearch]

Passages and queries come from the cache that bench.ann_vectors fills (real e5 vectors of the
LoCoMo dev turns and of generated facts; the dev questions as queries). A size beyond the vectors
cached is reached with perturbed copies: a real vector plus Gaussian noise (cosine ≈ 0.9 to its
source), renormalised. Vectors are int8-quantized as the index stores them. For each size: recall@10
of memtool's sign-bit search (store/ann.py) against exact search for several candidate counts,
with its latency; with --usearch, an HNSW index (usearch, int8) for several `ef`, with its build time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.ann_vectors import load
from memtool.store import ann
from memtool.store.vectors import dequantize, quantize

CANDIDATES = (250, 500, 1000, 2000, 4000)
NARROWED = ((4000, 500), (4000, 1000), (4000, 2000), (8000, 1000))  # Hamming pool → kept by the signs' estimate
EFS = (16, 32, 64, 128, 256)
RESULTS = Path(__file__).resolve().parent / "results"


def corpus(real, n: int, seed: int = 11):
    """`n` int8-quantized, renormalised vectors: the real ones, then perturbed copies."""
    import numpy as np

    rng = np.random.default_rng(seed)
    parts, have = [real[:n]], min(n, len(real))
    sigma = (0.2346 / real.shape[1]) ** 0.5  # E[cos(copy, source)] ≈ 0.9
    while have < n:
        take = min(len(real), n - have, 100_000)
        src = real[rng.integers(0, len(real), take)]
        parts.append(src + sigma * rng.standard_normal(src.shape).astype(np.float32))
        have += take
    q = quantize(np.concatenate(parts))
    return q


def rows(q8, start: int, stop: int):
    import numpy as np

    m = q8[start:stop].astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True).clip(1e-9)


def exact_top(q8, queries, k: int = 10, block: int = 100_000):
    import numpy as np

    best = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.zeros((len(queries), k), dtype=np.int64)
    for s in range(0, len(q8), block):
        sims = queries @ rows(q8, s, s + block).T
        cand = np.concatenate([best, sims], axis=1)
        cid = np.concatenate([ids, np.arange(s, s + sims.shape[1])[None, :].repeat(len(queries), 0)], axis=1)
        top = np.argpartition(-cand, k - 1, axis=1)[:, :k]
        best, ids = np.take_along_axis(cand, top, 1), np.take_along_axis(cid, top, 1)
    return [set(r.tolist()) for r in ids]


def sign_file(q8, path: Path):
    """memtool's sign file over these vectors (ids 1..n) and the open Signs."""
    import numpy as np

    n, dim = q8.shape
    step = max(1, n // 20_000)
    mean = rows(q8, 0, n)[::step].mean(axis=0)

    def blocks():
        for s in range(0, n, 50_000):
            ids = np.arange(s + 1, min(n, s + 50_000) + 1)
            yield ids, ids, q8[s:s + 50_000]

    t = time.perf_counter()
    ann.write(path, "bench", "bench", mean, blocks())
    built = time.perf_counter() - t
    return ann.open_signs(path, "bench", "bench", dim), built


def rescored(q8, query, ids, k: int = 10):
    import numpy as np

    idx = np.asarray(ids, dtype=np.int64) - 1
    sims = dequantize([q8[i].tobytes() for i in idx], q8.shape[1]) @ query
    return set(idx[np.argsort(-sims)[:k]].tolist())


def bench_signs(q8, queries, truth, workdir: Path) -> list[dict]:
    signs, built = sign_file(q8, workdir / "bench.signs")
    out = []
    for c in CANDIDATES:
        lat, hits = [], []
        for q, want in zip(queries, truth):
            t = time.perf_counter()
            got = rescored(q8, q, signs.ids_at(signs.candidates(q, c)))  # rows → ids (1..n)
            lat.append(time.perf_counter() - t)
            hits.append(len(got & want) / len(want))
        out.append({"method": "sign bits", "knob": f"candidates={c}", "recall_at_10": statistics.mean(hits),
                    "p50_ms": statistics.median(lat) * 1000, "p95_ms": sorted(lat)[int(0.95 * len(lat))] * 1000,
                    "build_s": built, "bytes_per_vector": signs.blocks.shape[1] * 8})
    for pool, keep in NARROWED:  # as the product searches beyond 250,000 vectors (store/vectors.py)
        lat, hits = [], []
        for q, want in zip(queries, truth):
            t = time.perf_counter()
            kept = signs.narrowed_each([signs.candidates(q, pool)], [q], keep)[0]
            got = rescored(q8, q, signs.ids_at(kept))
            lat.append(time.perf_counter() - t)
            hits.append(len(got & want) / len(want))
        out.append({"method": "sign bits, narrowed", "knob": f"candidates={pool}, rescored={keep}",
                    "recall_at_10": statistics.mean(hits), "p50_ms": statistics.median(lat) * 1000,
                    "p95_ms": sorted(lat)[int(0.95 * len(lat))] * 1000, "build_s": built,
                    "bytes_per_vector": signs.blocks.shape[1] * 8})
    return out


def bench_usearch(q8, queries, truth, workdir: Path) -> list[dict]:
    import numpy as np
    from usearch.index import Index

    n, dim = q8.shape
    index = Index(ndim=dim, metric="cos", dtype="i8", connectivity=16, expansion_add=128)
    t = time.perf_counter()
    for s in range(0, n, 50_000):
        index.add(np.arange(s, min(n, s + 50_000)), rows(q8, s, s + 50_000), threads=1)
    built = time.perf_counter() - t
    path = workdir / "bench.usearch"
    index.save(str(path))
    view = Index.restore(str(path), view=True)
    out = []
    for ef in EFS:
        view.expansion_search = ef
        lat, hits = [], []
        for q, want in zip(queries, truth):
            t = time.perf_counter()
            found = view.search(q, max(10, ef))  # ef results, rescored exactly as the sign bits' are
            got = rescored(q8, q, (found.keys + 1).tolist())
            lat.append(time.perf_counter() - t)
            hits.append(len(got & want) / len(want))
        out.append({"method": "usearch HNSW i8 (M=16)", "knob": f"ef={ef}", "recall_at_10": statistics.mean(hits),
                    "p50_ms": statistics.median(lat) * 1000, "p95_ms": sorted(lat)[int(0.95 * len(lat))] * 1000,
                    "build_s": built, "bytes_per_vector": path.stat().st_size / n})
    return out


def bench_store(q8, queries, truth, workdir: Path, counts: str = "") -> list[dict]:
    """The product path at this size: an index holding these vectors, searched through
    `Vectors.nearest` (sign file + exact rescoring from its int8 copy) in a fresh process, against
    the exact scan (sqlite-vec); recall@10 of the product path against exact search, for the
    default candidate count or each of `counts` (comma-separated)."""
    import numpy as np

    from memtool.store import Store

    import hashlib

    n = len(q8)
    path = workdir / f"store-{n}" / "index.sqlite"
    digest = hashlib.blake2b(q8[::997].tobytes(), digest_size=8).hexdigest()  # the vectors it holds
    marker = path.parent / "corpus"
    if path.exists() and (not marker.exists() or marker.read_text() != digest):
        for stale in path.parent.iterdir():  # made from other vectors (e.g. before the cache grew)
            stale.unlink()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        store = Store.open(path)
        with store.transaction():
            store.vectors.reset("bench", q8.shape[1])
        for s in range(0, n, 20_000):
            with store.transaction():
                store.vectors.put([f"v{i}" for i in range(s, min(n, s + 20_000))], rows(q8, s, s + 20_000))
        store.close()
        marker.write_text(digest)
    np.save(path.parent / "queries.npy", queries)
    out = []
    for count in counts.split(",") if counts else [""]:
        child = subprocess.run([sys.executable, "-m", "bench.ann", "--search", str(path), "--candidates", count],
                               capture_output=True, text=True, check=True)
        row = json.loads(child.stdout.strip().splitlines()[-1])
        hits = [len({int(h[1:]) for h in got[:10]} & want) / len(want) for got, want in zip(row.pop("found"), truth)]
        out.append({"size": n, "candidates": count or "default", **row, "recall_at_10": statistics.mean(hits)})
    return out


def search_child(path: Path, count: str) -> None:
    """In a fresh process (its RSS is the search's own): open the index, search every query (k = 100,
    as recall asks), with `count` candidates rescored (empty: the default)."""
    import numpy as np

    from memtool.store import Store, vectors

    if count:  # the benchmark's knob, POOL or POOL/RESCORED (the product's defaults are module constants)
        pool, _, keep = count.partition("/")
        vectors.ANN_CANDIDATES, vectors.ANN_CANDIDATE_SHARE = int(pool), 0.0
        vectors.ANN_RESCORED, vectors.ANN_RESCORED_SHARE = int(keep or pool), 0.0
    queries = np.load(path.parent / "queries.npy")
    store = Store.open(path)
    t = time.perf_counter()
    store.vectors.nearest(queries[0], 10)  # the first search opens (or builds) the sign file
    first = time.perf_counter() - t
    lat, cpu, found = [], [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        got = store.vectors.nearest(q, 100)
        lat.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        found.append([h for h, _ in got[:10]])
    rss = peak_rss_mb()
    exact = Store.open(path)
    exact.vectors.search_mode = "exact"
    t = time.perf_counter()
    exact.vectors.nearest(queries[0], 100)
    print(json.dumps({"first_search_s": first, "p50_ms": statistics.median(lat) * 1000,
                      "p95_ms": sorted(lat)[int(0.95 * len(lat))] * 1000, "cpu_p50_ms": statistics.median(cpu) * 1000,
                      "exact_scan_ms": (time.perf_counter() - t) * 1000, "path": store.vectors.search_path(),
                      "peak_rss_mb": rss, "load": os.getloadavg()[0], "found": found}))


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: ru_maxrss would carry the parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memtool-ann-cache"))
    ap.add_argument("--sizes", default="0", help="comma-separated sizes; 0: the real vectors cached")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--usearch", action="store_true", help="also an HNSW index (needs usearch)")
    ap.add_argument("--store", action="store_true", help="the product path instead: an index of this size, searched")
    ap.add_argument("--candidates", default="",
                    help="with --store: comma-separated candidate counts to rescore (POOL or POOL/RESCORED)")
    ap.add_argument("--search", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.search:
        search_child(args.search, args.candidates)
        return 0
    real, queries = load(args.cache)
    queries = queries[:args.queries]
    print(f"{len(real):,} real vectors, {len(queries)} queries", file=sys.stderr)
    report = []
    for size in [int(float(s)) for s in args.sizes.split(",")]:
        size = size or len(real)
        q8 = corpus(real, size)
        truth = exact_top(q8, queries)
        if args.store:
            for row in bench_store(q8, queries, truth, args.cache, args.candidates):
                print(json.dumps(row), flush=True)
                report.append(row)
            continue
        found = bench_signs(q8, queries, truth, args.cache)
        if args.usearch and size <= 200_000:  # HNSW builds at ~1 ms a vector on one core
            found += bench_usearch(q8, queries, truth, args.cache)
        for row in found:
            row.update(size=size, real=min(size, len(real)))
            print(f"{size:>9,} {row['method']:<24} {row['knob']:<16} recall@10 {row['recall_at_10']:.3f}"
                  f"  p50 {row['p50_ms']:6.1f} ms  p95 {row['p95_ms']:6.1f} ms  build {row['build_s']:6.1f} s"
                  f"  {row['bytes_per_vector']:.0f} B/vector", flush=True)
        report += found
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ann.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
