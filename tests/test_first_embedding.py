"""While one process embeds a big memory for the first time, reads answer at once with what is there."""

import json


from conftest import mem_env, run_mem, write

from memtool.freshness import EMBED_LOCK
from memtool.workspace import Workspace


def test_6_recall_answers_while_another_process_embeds(tmp_path, stub):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n- Bought a red bicycle for the commute.\n")
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    env = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url, MEM_WORKSPACE=str(ws))
    run_mem("index", env=env, check=0)
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n- The plumber fixed the kitchen sink.\n")
    before = list(stub.embedded)
    with Workspace(ws).lock(EMBED_LOCK):  # as a long `mem index` holds it while embedding
        proc = run_mem("recall", "plumber kitchen sink", "--json", env=env, check=0)
        out = json.loads(proc.stdout)
        assert out["results"][0]["source"] == "memory/2026-11-02.md#L2"  # found by words at once
        said = " ".join(out.get("warnings", [])) + proc.stderr
        assert "another process (mem index or mem watch) is embedding" in said
        assert "the 1 vectors made so far" in said
        assert [t for t in stub.embedded[len(before):] if "fixed" in t] == []  # the record is left to the other
        index = run_mem("index", env=env, check=0)
        assert "another process (mem index or mem watch) is embedding" in index.stdout + index.stderr
    run_mem("recall", "plumber", "--json", env=env, check=0)  # the lock is free: the read embeds it
    assert [t for t in stub.embedded if "fixed" in t]
