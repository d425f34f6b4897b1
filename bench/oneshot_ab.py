"""One-shot `mem recall WORD --json` processes of two checkouts, alternating, each on its own copy
of a workspace: wall and CPU p50/p95 per side, and whether the answers are byte-identical.

    python3 -m bench.oneshot_ab CHECKOUT_A:WS_A CHECKOUT_B:WS_B [--rounds 16] [--hybrid] [--new-queries]

Each round runs every word on both sides in random order as `python3 -S -m memtool -w WS recall
WORD --json` from /tmp with PYTHONPATH=CHECKOUT plus this interpreter's site-packages (so neither
the working directory nor an editable install decides which memtool runs). CPU is user + sys of the
process and the children it reaped (a hybrid recall's search child). `--new-queries` appends a fresh
word per round ("WORD q<time><round>"): a query never asked before, whose vector is not kept.
Lexical unless `--hybrid` (MEM_EMBEDDER=none). Byte-compile both checkouts first.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import sysconfig
import time

WORDS = ["tea", "server", "deploy", "budget", "Anna", "migration", "garden", "invoice"]


def run(checkout: str, ws: str, query: str, hybrid: bool) -> tuple[float, float, int, bytes]:
    """(wall ms, CPU ms, exit code, stdout) of one recall process."""
    env = dict(os.environ, PYTHONPATH=f"{checkout}:{sysconfig.get_paths()['purelib']}")
    if not hybrid:
        env["MEM_EMBEDDER"] = "none"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-S", "-m", "memtool", "-w", ws, "recall", query, "--json"],
                          cwd="/tmp", env=env, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall * 1000, cpu * 1000, proc.returncode, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="CHECKOUT:WORKSPACE")
    ap.add_argument("b", help="CHECKOUT:WORKSPACE")
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--hybrid", action="store_true")
    ap.add_argument("--new-queries", action="store_true")
    ap.add_argument("--words", nargs="+", default=WORDS)
    args = ap.parse_args(argv)
    sides = {"A": args.a.split(":", 1), "B": args.b.split(":", 1)}
    walls = {k: [] for k in sides}
    cpus = {k: [] for k in sides}
    differ, stamp = 0, int(time.time())
    for r in range(args.rounds):
        for word in args.words:
            query = f"{word} q{stamp}{r}" if args.new_queries else word
            answers = {}
            for k in random.sample(list(sides), 2):
                wall, cpu, code, out = run(*sides[k], query, args.hybrid)
                walls[k].append(wall)
                cpus[k].append(cpu)
                answers[k] = (code, out)
            differ += answers["A"] != answers["B"]
    for k, (checkout, ws) in sides.items():
        w = sorted(walls[k])
        print(f"{k} {checkout} on {ws}: wall p50 {statistics.median(w):.1f} ms, p95 {w[int(len(w) * .95)]:.1f}, "
              f"CPU p50 {statistics.median(cpus[k]):.1f} ms (n={len(w)})")
    print(f"answers differing: {differ} of {args.rounds * len(args.words)}; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
