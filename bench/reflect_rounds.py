"""`mem reflect` at 10^5 after 500 new facts, round by round, for A/B of two checkouts.

    python3 -m bench.reflect_rounds steady CHECKOUT INDEXED_WS STEADY_WS   # once per checkout
    python3 -m bench.reflect_rounds round CHECKOUT STEADY_WS ROUND_WS      # alternate checkouts

`steady` copies an indexed workspace (e.g. `bench.generate --facts 1e5` then `mem index`) and runs
reflect twice with that checkout (the backlog, then a run that records what the next may reuse).
`round` copies a steady state, runs reflect once (nothing new), appends 500 facts over 13 new days
(`bench.generate.append_days`), indexes them, then times `reflect --force` (the 500 new facts) and
one more run (nothing new): CPU is user + sys of the process. Everything under MEM_EMBEDDER=none,
`--time-limit 100000` (no run stops at the wall-clock limit), from /tmp with PYTHONPATH=CHECKOUT.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def mem(checkout: str, ws: Path, *args: str) -> tuple[float, float]:
    """(CPU s, wall s) of one `mem` process."""
    env = dict(os.environ, PYTHONPATH=checkout, MEM_EMBEDDER="none")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), *args], cwd="/tmp", env=env,
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


REFLECT = ("reflect", "--force", "--time-limit", "100000", "--json")


def steady(checkout: str, source: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out, symlinks=True)
    mem(checkout, out, "index")
    mem(checkout, out, *REFLECT)
    mem(checkout, out, *REFLECT)
    print(f"steady state of {checkout}: {out}")


def one_round(checkout: str, steady_ws: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(steady_ws, out, symlinks=True)
    mem(checkout, out, *REFLECT)
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from bench.generate import "
                    "append_days; append_days(Path(sys.argv[1]), 500)", str(out)], check=True,
                   env=dict(os.environ, PYTHONPATH=checkout), cwd="/tmp")
    mem(checkout, out, "index")
    new_cpu, new_wall = mem(checkout, out, *REFLECT)
    none_cpu, none_wall = mem(checkout, out, *REFLECT)
    print(f"{checkout}: 500 new facts {new_cpu:.2f} s CPU ({new_wall:.2f} s wall); "
          f"nothing new {none_cpu:.2f} s CPU ({none_wall:.2f} s wall); load {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 4 or args[0] not in ("steady", "round"):
        print(__doc__, file=sys.stderr)
        return 2
    (steady if args[0] == "steady" else one_round)(args[1], Path(args[2]), Path(args[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
