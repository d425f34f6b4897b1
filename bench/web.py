"""Page-render times of `mem serve` at 10⁵ facts (target: every page < 200 ms).

    python -m bench.web                        # 100,000 facts, 15 runs per page
    python -m bench.web --facts 10000 --runs 5 # a quick look

Generates a workspace (bench.generate), indexes it, runs `mem reflect --force` once (so the review
queue, journal and opinions have content), starts a real `mem serve` on 127.0.0.1 and times each
page over HTTP from this process: the time to the last byte, server work included (index freshness
check, facade call, template), and the server's CPU time per page (from /proc, whatever the load).
The first request per page is reported apart ("first visit", wall and CPU: it fills the page's cache
of index answers, kept until the index changes); the very first request (the token's redirect to
the search page) also pays the server's imports. Prints a table and writes bench/results/web.json.
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

import httpx

from bench.generate import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def mem(ws: Path, *args: str) -> float:
    env = dict(os.environ, MEM_EMBEDDER="none")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def mem_json(ws: Path, *args: str) -> dict:
    env = dict(os.environ, MEM_EMBEDDER="none")
    return json.loads(subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), *args, "--json"], check=True,
                                     env=env, capture_output=True, text=True).stdout)


def pages(ws: Path) -> dict[str, tuple[str, dict]]:
    """The pages to time (path, extra headers); entity and file chosen from the workspace by the
    CLI, so the server's first visit to every page is the timed one."""
    entity = mem_json(ws, "entities", "-k", "1")["entities"][0]["name"]
    day = sorted(p.name for p in (ws / "memory").glob("*.md"))[-1]
    open_items = mem_json(ws, "review", "list")["open"]
    hx = {"HX-Request": "true"}
    return {
        "search as you type (partial)": ("/search?q=deployment+server", hx),
        "search, filters (kind, since)": ("/search?q=Projekt&kind=world&since=2y", hx),
        "search page, entity filter": ("/?q=meeting&entity=" + entity, {}),
        "file view, cited lines": (f"/file?path=memory/{day}&lines=5-7", {}),
        "timeline (heat map; as-of list follows)": ("/timeline", {}),
        "timeline as-of slider (partial)": ("/timeline/as-of?day=737500", hx),
        "entities (list + graph)": ("/entities", {}),
        f"entity page ({entity})": (f"/entity/{entity}", {}),
        f"review queue ({open_items} open)": ("/review", {}),
        "journal": ("/journal", {}),
        "status": ("/status", {}),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux /proc): what a page costs, whatever the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/memtool-bench-web"))
    args = ap.parse_args(argv)
    ws = args.workdir / f"ws-{args.facts}"
    if not (ws / ".memory" / "index.sqlite").exists():
        generate(ws, args.facts)
        print(f"index: {mem(ws, 'index'):.1f} s", file=sys.stderr)
        print(f"reflect: {mem(ws, 'reflect', '--force', '--time-limit', '120'):.1f} s", file=sys.stderr)
    timed = pages(ws)
    load = os.getloadavg()[0]
    server = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "serve", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=dict(os.environ, MEM_EMBEDDER="none"))
    rows = []
    try:
        url = server.stdout.readline().strip()
        base = url.split("/?token=")[0]
        with httpx.Client(base_url=base, timeout=60, follow_redirects=True) as client:
            client.get(url)  # the token becomes a cookie (the search page: the server's first request)
            for name, (path, headers) in timed.items():
                cpu, started = cpu_seconds(server.pid), time.perf_counter()
                client.get(path, headers=headers).raise_for_status()  # warm-up: the first visit
                cold, cold_cpu = time.perf_counter() - started, cpu_seconds(server.pid) - cpu
                times = []
                cpu = cpu_seconds(server.pid)
                for _ in range(args.runs):
                    started = time.perf_counter()
                    reply = client.get(path, headers=headers)
                    times.append(time.perf_counter() - started)
                    reply.raise_for_status()
                cpu = (cpu_seconds(server.pid) - cpu) / args.runs
                times.sort()
                rows.append({"page": name, "path": path, "first_ms": round(cold * 1000, 1), "first_cpu_ms": round(cold_cpu * 1000, 1), "p50_ms": round(statistics.median(times) * 1000, 1), "cpu_ms": round(cpu * 1000, 1),
                             "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))] * 1000, 1),
                             "bytes": len(reply.content)})
    finally:
        server.terminate()
        server.wait(15)
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores")
    print(f"| page ({args.facts:,} facts) | server CPU per page | first visit: server CPU | first visit | p50 | p95 | size |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ok = "✓" if r["p50_ms"] < 200 else "✗"
        print(f"| {r['page']} | {r['cpu_ms']:.0f} ms | {r['first_cpu_ms']:.0f} ms | {r['first_ms']:.0f} ms | {r['p50_ms']:.0f} ms {ok}"
              f" | {r['p95_ms']:.0f} ms | {r['bytes'] / 1024:.0f} KB |")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "web.json").write_text(json.dumps({"facts": args.facts, "runs": args.runs, "load": load, "pages": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
