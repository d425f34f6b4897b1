"""A hybrid recall's lexical side in a worker thread (memtool.recall.worker): the same answers and
the same errors as in one thread, one thread per Memory, none left after close (issue 19)."""

import threading

import pytest

from conftest import BICYCLE_NOTES, write

from memtool.config import Config
from memtool.memory import Memory
from memtool.store import Filters
from memtool.store.driver import sqlite
from memtool.workspace import Workspace

THREAD_NAME = "mem-recall-lexical"  # memtool.recall.worker names its thread so

QUERIES = ["red bicycle commute", "Peter tea", "night train Vienna bicycle", "Lisbon", "kitchen sink plumber",
           "Kaffee oder Tee", "what does Peter prefer"]


@pytest.fixture
def mem(tmp_path, stub):
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    m = Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder="ollama", track_access=False)
    m.index()
    yield m
    m.close()


@pytest.fixture
def lexical_threads():
    """The lexical worker threads started during this test (another test's Memory, not closed,
    may keep its own until it is collected)."""
    before = {t for t in threading.enumerate() if t.name.startswith(THREAD_NAME)}
    return lambda: [t for t in threading.enumerate() if t.name.startswith(THREAD_NAME) and t not in before]


def answers(mem: Memory, threads: bool) -> list[dict]:
    mem.recall_threads = threads
    return [mem.recall(q, k=5).to_dict() for q in QUERIES]


def test_19_hybrid_recall_with_its_lexical_side_in_a_thread_answers_as_in_one(mem, lexical_threads):
    # the lexical gates of a large index, set on the caller's store: the worker's reader must use them too
    mem.store.prune_min_facts, mem.store.rare_facts, mem.store.recent_facts = 0, 1, 2
    alone = answers(mem, threads=False)
    assert not lexical_threads(), "one thread: the worker never started"
    beside = answers(mem, threads=True)
    assert len(lexical_threads()) == 1, "one worker serves every recall of the process"
    assert beside == alone
    assert all(a["mode"] == "hybrid" and a["results"] for a in beside[:5])
    mem.store.prune_min_facts = 10**9  # the gates as they are now, not as when the reader was opened
    assert answers(mem, threads=True) == answers(mem, threads=False)


def test_19_no_lexical_thread_is_left_after_close(mem, lexical_threads):
    mem.recall("red bicycle")
    assert len(lexical_threads()) == 1
    mem.close()
    assert not lexical_threads()
    assert mem.recall("red bicycle").results  # a later recall starts it again …
    mem.close()
    assert not lexical_threads()  # … and close ends it again


def test_19_an_error_in_the_lexical_thread_is_the_error_one_thread_raised(mem, lexical_threads):
    mem.recall("red bicycle")
    conn = sqlite.connect(str(mem.ws.index_path))  # the full-text index loses its segments
    conn.execute("DELETE FROM facts_fts_data WHERE id != 10")
    conn.commit()
    conn.close()
    raised = {}
    for threads in (False, True):
        mem.recall_threads = threads
        with pytest.raises(sqlite.DatabaseError) as err:
            mem.recall("red bicycle")
        raised[threads] = (type(err.value), str(err.value))
    assert lexical_threads(), "the failing side ran in the worker"
    assert raised[True] == raised[False]
    mem.close()
    assert not lexical_threads()


def test_19_an_embedder_failing_beside_the_lexical_thread_degrades_as_without_it(mem, stub, lexical_threads):
    """The embedder stops answering while the lexical side runs in the worker: the recall answers by
    words and says why, with the worker as without it (it raised ProviderUnavailable before stop 32)."""
    mem.recall("red bicycle")
    stub.stop()
    answered = {}
    for threads in (True, False):
        mem.recall_threads = threads
        got = mem.recall("red bicycle")
        answered[threads] = (got.mode, got.degraded, [h["source"] for h in got.results], got.warnings)
    assert answered[True] == answered[False]
    mode, degraded, sources, warnings = answered[True]
    assert sources and degraded and any("semantic search unavailable, answering by words only" in w for w in warnings)
    assert lexical_threads()
    mem.recall_threads = True
    assert mem.recall("red bicycle", mode="lexical").results  # the worker is free again
    mem.close()
    assert not lexical_threads()


def test_19_a_reader_beside_the_index_reads_only_what_is_committed(mem):
    store = mem.store
    reader = store.reader()
    try:
        with pytest.raises(sqlite.OperationalError):
            reader.conn.execute("DELETE FROM facts")  # read-only
        assert reader.search_terms(["bicycle"], Filters(), 5) == store.search_terms(["bicycle"], Filters(), 5) != []
    finally:
        reader.close()
    with store.transaction():
        assert store.reader() is None, "uncommitted writes: the caller's own connection must read"

