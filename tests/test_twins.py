"""`Vectors.twins` (the lift across languages, memtool.recall.candidates.lifted) among many candidates:
a recall with a large --k and a filter lifts among thousands."""

import time

import numpy as np
import pytest

from memtool.store import Store

DIM = 384


def test_twins_among_a_thousand_candidates_each_side_take_no_seconds(tmp_path):
    """Compared inside SQLite (sqlite-vec), 1,000 × 1,000 pairs took ~0.7 s and 2,000 × 2,000 (a
    `--k 1000 --since …` recall: 4,000 candidates) ~2.9 s, once or twice per recall; numpy reads the
    same twins in milliseconds."""
    store = Store.open(tmp_path / "index.sqlite")
    try:
        if not store.vectors.accelerated:
            pytest.skip(f"sqlite-vec is not loaded here: {store.vectors.vec_problem}")
        with store.transaction():
            store.vectors.reset("model-a", DIM)
        rng = np.random.default_rng(3)
        matrix = rng.standard_normal((2000, DIM)).astype(np.float32)
        matrix[1000:1100] = matrix[:100] + 0.05 * rng.standard_normal((100, DIM)).astype(np.float32)  # 100 twins
        with store.transaction():
            store.vectors.put([f"h{i}" for i in range(2000)], matrix)
        mine, theirs = [f"h{i}" for i in range(1000)], [f"h{i}" for i in range(1000, 2000)]
        started = time.perf_counter()
        found = store.vectors.twins(mine, theirs, 0.88)
        seconds = time.perf_counter() - started
        assert found == {f"h{i}" for i in range(100)}
        assert seconds < 0.3, seconds
        small = store.vectors.twins(mine[:40], theirs[:40], 0.88)  # few pairs: still inside SQLite
        store.vectors.vec_problem = "as if sqlite-vec had not loaded"
        assert small == store.vectors.twins(mine[:40], theirs[:40], 0.88) == {f"h{i}" for i in range(40)}
    finally:
        store.close()
