"""Issue 16, multi-hop: `--report turn-alone` (bench/turn_alone.py) scores a dialogue turn by its
vector with the turn before it (as recall does) and by its vector alone, combined by a point of the
sweep; measured held out and not kept (docs/recall-experiments.md, "The multi-hop misses, held out, once more")."""

import numpy as np

from bench import turn_alone


def _vectors(pair, alone, speakers):
    vecs = object.__new__(turn_alone.AloneVectors)  # the combination only: no workspace, no model
    vecs.ids = list(range(1, len(pair) + 1))
    vecs.pair, vecs.alone = np.array(pair, dtype=np.float32), np.array(alone, dtype=np.float32)
    vecs.speakers = np.array(speakers, dtype=object)
    return vecs


def test_turn_alone_combinations_read_both_cosines():
    # fact 1 is near the query by its pair, fact 2 by itself alone, fact 3 by neither
    vecs = _vectors([[1, 0], [0, 1], [0, 1]], [[0, 1], [1, 0], [0, 1]], ["Maria", "Maria", "John"])
    q = np.array([1.0, 0.0])
    assert vecs.cosines(q, "pair").tolist() == [1.0, 0.0, 0.0]
    assert vecs.cosines(q, "max").tolist() == [1.0, 1.0, 0.0]
    assert vecs.cosines(q, "mean .75").tolist() == [0.75, 0.25, 0.0]
    assert np.allclose(vecs.cosines(q, "max -.04"), [1.0, 0.96, 0.0])
    # only the named speaker's turns read their own vector
    assert vecs.cosines(q, "named max", {"John"}).tolist() == [1.0, 0.0, 0.0]
    assert vecs.cosines(q, "named max", {"Maria"}).tolist() == [1.0, 1.0, 0.0]
    assert vecs.cosines(q, "named max", set()).tolist() == [1.0, 0.0, 0.0]
    rrf = vecs.cosines(q, "rrf")
    assert rrf[0] == rrf[1] > rrf[2]  # first by one list, second by the other
    assert [i for i, _ in turn_alone._top(vecs, vecs.cosines(q, "pair"), 2)] == [1, 2]  # ties: lower id first


def test_turn_alone_names_speakers_as_written():
    vecs = _vectors([[1, 0]] * 2, [[1, 0]] * 2, ["Maria", "Al"])
    assert turn_alone._named(vecs, "Where has Maria made friends?") == {"Maria"}
    assert turn_alone._named(vecs, "Did all of them go?") == set()
