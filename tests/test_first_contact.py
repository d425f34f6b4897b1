"""What a new user meets in the first hour (issue: first contact): real processes, real files."""

from __future__ import annotations

import json

import pytest
from conftest import mem_env, run_json, run_mem, write
from ollama_stub import OllamaStub


@pytest.fixture
def stub():
    s = OllamaStub(bind="127.0.0.1")
    yield s
    s.stop()


def _notes(ws):
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n- Jonas lives in Leipzig now.\n- Lena rides a red bicycle.\n")


def test_14_2_reads_fill_missing_vectors_when_no_file_changed(tmp_path, stub):
    ws = tmp_path / "ws"
    _notes(ws)
    run_mem("-w", ws, "index", env=mem_env(MEM_EMBEDDER="none"), check=0)  # text only: no vectors yet
    env = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url)
    proc, data = run_json("-w", ws, "recall", "where does Jonas live", env=env)
    assert proc.returncode == 0, proc.stderr
    assert any("Jonas lives in Leipzig now." in t for t in stub.embedded)  # the read embedded what was missing
    assert not [w for w in data["warnings"] if "no vector yet" in w], data["warnings"]
    assert data["mode"] == "hybrid"


def test_14_3_first_index_of_a_new_workspace_says_nothing_changed_and_times_embedding(tmp_path, stub):
    ws = tmp_path / "ws"
    _notes(ws)
    proc = run_mem("-w", ws, "index", env=mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url), check=0)
    assert "changed since this index was built" not in proc.stderr
    assert "newly embedded in" in proc.stderr and "facts read in" in proc.stderr
    proc, data = run_json("-w", ws, "index", "--rebuild", env=mem_env(MEM_EMBEDDER="none"))
    assert data["rebuilt"] is True and "embed_seconds" in data


def test_14_4_starter_text_never_answers_a_question(tmp_path):
    ws = tmp_path / "brain"
    run_mem("init", ws, check=0)
    for query in ("Curated objective facts", "daily logs live in memory", "durable facts preferences",
                  "set up this memory workspace", "what was done and learned", "persona assistant"):
        proc = run_mem("-w", ws, "recall", query, "--json")
        assert json.loads(proc.stdout)["results"] == [], query
    listed = json.loads(run_mem("-w", ws, "recall", "--since", "1990-01-01", "--json").stdout)
    assert listed["results"] == []
    assert "\n- \n" not in (ws / "memory.md").read_text(encoding="utf-8")  # no empty starter bullets
    run_mem("-w", ws, "core", "append", "- Prefers tea.", check=0)
    core = (ws / "memory.md").read_text(encoding="utf-8")
    assert core.endswith("-->\n\n- Prefers tea.\n")
    hit = json.loads(run_mem("-w", ws, "recall", "tea", "--json").stdout)["results"]
    assert [r["source"] for r in hit] == ["memory.md#L6"]
