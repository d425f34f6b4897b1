"""Approximate vector search (store/ann.py): the sign file beside the index, rescored exactly,
kept in step with the vectors, rebuilt when missing or damaged, and said in `mem status`."""

import json
import os

import numpy as np
import pytest

from conftest import mem_env, run_mem, write

from memtool.store import Store
from memtool.store.vectors import ANN_FILE

DIM = 64


def _store(tmp_path, n, seed=5):
    rng = np.random.default_rng(seed)
    store = Store.open(tmp_path / "index.sqlite")
    store.vectors.search_mode = "approximate"
    with store.transaction():
        store.vectors.reset("model-a", DIM)
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    put(store, [f"h{i}" for i in range(n)], matrix)
    return store, matrix, rng


def put(store, hashes, matrix):
    with store.transaction():
        store.vectors.put(hashes, matrix)


def exact(store, query, n):
    """The `n` nearest by brute force over every stored vector (float query, as the rescoring)."""
    hashes = [h for (h,) in store.conn.execute("SELECT hash FROM embeddings")]
    found, matrix = store.vectors.for_hashes(hashes)
    sims = matrix @ (query / np.linalg.norm(query))
    order = np.argsort(-sims)[:n]
    by_row = {row: h for h, row in found.items()}
    return [(by_row[i], float(sims[i])) for i in order]


def assert_like_exact(store, queries, n=5):
    """Every cosine returned is the exact one, and the exact nearest vector is found first."""
    for q in queries:
        got, want = store.vectors.nearest(q, n), exact(store, q, n)
        assert got[0][0] == want[0][0]
        exact_of = dict(exact(store, q, 10_000))
        assert all(abs(exact_of[h] - s) < 1e-5 for h, s in got)


def near(matrix, rng, rows):
    """Queries close to stored vectors (their nearest neighbour is known)."""
    return [matrix[i] + 0.3 * rng.standard_normal(DIM).astype(np.float32) for i in rows]


def test_1_approximate_search_rescores_exactly_and_follows_every_change(tmp_path):
    store, matrix, rng = _store(tmp_path, 3000)  # 3,000 > the 1,000 candidates: the prefilter is at work
    vectors = store.vectors
    assert_like_exact(store, near(matrix, rng, [5, 1500, 2999]))
    assert (tmp_path / ANN_FILE).exists()
    assert vectors.search_path().startswith("approximate: sign bits over 3,000 vectors")
    assert any("built the approximate vector index" in m for m in vectors.take_notices())

    more = rng.standard_normal((50, DIM)).astype(np.float32)
    put(store, [f"a{i}" for i in range(50)], more)  # appended: found at once
    assert vectors.nearest(more[7], 1)[0][0] == "a7"
    assert "3,050 vectors" in vectors.search_path()

    with store.transaction():  # the largest ids go; the next vectors get new ids (the file only grows)
        vectors.gc({f"a{i}" for i in range(40, 50)})
    reused = rng.standard_normal((10, DIM)).astype(np.float32)
    put(store, [f"r{i}" for i in range(10)], reused)
    for i in range(10):
        assert vectors.nearest(reused[i], 1)[0][0] == f"r{i}"
    assert vectors.nearest(more[45], 1)[0][0] != "a45"
    assert "3,050 vectors" in vectors.search_path()

    with store.transaction():  # removed in the middle: never returned
        vectors.gc({"h5"})
    assert all(h != "h5" for h, _ in vectors.nearest(matrix[5], 20))

    with store.transaction():  # most vectors removed: the file is remade without their records
        vectors.gc({f"h{i}" for i in range(6, 2900)})
    assert len(vectors.approximate()) == vectors.count() < 200
    assert_like_exact(store, near(matrix, rng, [2950, 2990]))

    with store.transaction():  # another model: the file of the old vectors is not used
        vectors.reset("model-b", DIM)
    fresh = rng.standard_normal((1200, DIM)).astype(np.float32)
    put(store, [f"m{i}" for i in range(1200)], fresh)
    assert vectors.nearest(fresh[3], 1)[0][0] == "m3"
    assert "1,200 vectors" in vectors.search_path()
    assert not [m for m in vectors.take_notices() if "unusable" in m]
    store.close()


def _garble_header(path):
    data = bytearray(path.read_bytes())
    data[:12] = b"\x00garbage!!\xff\xfe"
    path.write_bytes(bytes(data))


def _shuffle_records(path):
    data = bytearray(path.read_bytes())  # the first two ids of the id column swapped
    data[4096:4104], data[4104:4112] = data[4104:4112], data[4096:4104]
    path.write_bytes(bytes(data))


def _truncate_mid_record(path):
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 100)


def _empty(path):
    path.write_bytes(b"")


def _damaged_and_reopened(tmp_path, name, damage):
    """A store of 2,500 vectors searched once, closed, its file `name` damaged, reopened approximate."""
    store, matrix, rng = _store(tmp_path, 2500)
    store.vectors.nearest(matrix[0], 3)
    store.vectors.take_notices()
    store.close()
    damage(tmp_path / name)
    reopened = Store.open(tmp_path / "index.sqlite")
    reopened.vectors.search_mode = "approximate"
    return reopened, matrix, rng


@pytest.mark.parametrize("damage", [_garble_header, _shuffle_records, _truncate_mid_record, _empty, lambda p: p.unlink()])
def test_1_a_damaged_or_missing_sign_file_is_rebuilt_with_a_notice(tmp_path, damage):
    reopened, matrix, rng = _damaged_and_reopened(tmp_path, ANN_FILE, damage)
    assert_like_exact(reopened, near(matrix, rng, [1, 2000, 2499]))
    notices = " ".join(reopened.vectors.take_notices())
    assert "approximate vector index" in notices and ("rebuilt" in notices or "built" in notices)
    if damage is _truncate_mid_record:  # memtool only ever adds whole blocks
        assert "(it was cut short)" in notices
    assert "2,500 vectors" in reopened.vectors.search_path()
    reopened.close()


def test_1_below_the_threshold_search_is_exact_and_status_says_why(tmp_path, stub):
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n- Bought a red bicycle for the commute.\n- The plumber fixed the sink.\n")
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    env = mem_env(MEM_EMBEDDER="ollama", OLLAMA_HOST=stub.url, MEM_WORKSPACE=str(ws))
    run_mem("index", env=env, check=0)
    status = json.loads(run_mem("status", "--json", env=env, check=0).stdout)
    assert status["embedder"]["vector_search"] == "sqlite-vec (exact: 2 vectors: an exact scan is fast enough below 20,000)"
    assert not (ws / ".memory" / ANN_FILE).exists()

    forced = dict(env, MEM_VECTOR_SEARCH="approximate")
    status = json.loads(run_mem("status", "--json", env=forced, check=0).stdout)
    assert status["embedder"]["vector_search"].startswith("approximate: sign bits over 2 vectors")
    human = run_mem("status", env=forced, check=0).stdout
    assert "approximate: sign bits" in human

    (ws / ".memory" / ANN_FILE).write_bytes(b"not a sign file")
    proc = run_mem("recall", "red bicycle", env=forced, check=0)
    assert "memory/2026-11-01.md#L2" in proc.stdout
    assert "approximate vector index vectors.signs was unusable (its header cannot be read); rebuilt it" in proc.stderr + proc.stdout

    bad = run_mem("status", env=dict(env, MEM_VECTOR_SEARCH="fastest"))
    assert bad.returncode != 0 and "MEM_VECTOR_SEARCH" in bad.stderr and "Traceback" not in bad.stderr


# --- the int8 copy beside the sign file (issue 19: rescoring without SQLite row reads) --------------

COPY = ANN_FILE.replace(".signs", ".int8")
COPY_WIDTH = 8 + DIM  # id, then the int8 vector


def _copy_missing(path):
    path.unlink()


def _copy_garbled(path):
    _garble_header(path)


def _copy_cut_mid_record(path):
    with open(path, "r+b") as f:
        f.truncate(4096 + 700 * COPY_WIDTH + 5)


def _copy_empty(path):
    path.write_bytes(b"")


def _copy_records_swapped(path):
    data = bytearray(path.read_bytes())
    for a, b in ((10, 2000), (11, 1500), (2499, 3)):  # ids no longer in the sign file's order
        x, y = 4096 + a * COPY_WIDTH, 4096 + b * COPY_WIDTH
        data[x:x + COPY_WIDTH], data[y:y + COPY_WIDTH] = data[y:y + COPY_WIDTH], data[x:x + COPY_WIDTH]
    path.write_bytes(bytes(data))


def _copy_vectors_changed(path):
    data = bytearray(path.read_bytes())  # ids kept, every vector's components garbled
    rng = np.random.default_rng(0)
    for i in range(2500):
        at = 4096 + i * COPY_WIDTH + 8
        data[at:at + DIM] = rng.integers(-127, 128, DIM, dtype=np.int8).tobytes()
    path.write_bytes(bytes(data))


def _copy_of_another_index(path):
    data = bytearray(path.read_bytes())
    head = data[:4096].rstrip(b" ")
    epoch = json.loads(head)["epoch"]
    data[:4096] = head.replace(epoch.encode(), b"0" * len(epoch)).ljust(4096, b" ")
    path.write_bytes(bytes(data))


def test_i19_candidates_are_rescored_from_an_int8_copy_written_and_appended_with_the_sign_file(tmp_path):
    store, matrix, rng = _store(tmp_path, 2500)
    assert_like_exact(store, near(matrix, rng, [0, 1200, 2499]))
    copy = tmp_path / COPY
    assert copy.stat().st_size == 4096 + 2500 * COPY_WIDTH
    head = json.loads(copy.read_bytes()[:4096])
    assert head["format"] == "memtool-int8-1" and head["dim"] == DIM
    stored = dict(store.conn.execute("SELECT id, vec FROM embeddings"))
    rows = np.frombuffer(copy.read_bytes()[4096:], dtype=[("id", "<i8"), ("vec", "i1", (DIM,))])
    assert [int(i) for i in rows["id"]] == sorted(stored)  # row for row the sign file's order
    assert all(stored[int(i)] == v.tobytes() for i, v in zip(rows["id"], rows["vec"]))

    more = rng.standard_normal((30, DIM)).astype(np.float32)
    put(store, [f"a{i}" for i in range(30)], more)
    assert store.vectors.nearest(more[4], 1)[0][0] == "a4"  # appended to both files
    assert copy.stat().st_size == 4096 + 2530 * COPY_WIDTH
    assert not [m for m in store.vectors.take_notices() if "unusable" in m]
    store.close()


@pytest.mark.parametrize("damage", [_copy_missing, _copy_garbled, _copy_empty, _copy_of_another_index,
                                    _copy_records_swapped, _copy_vectors_changed])
def test_i19_a_missing_damaged_or_foreign_int8_copy_is_rebuilt_with_a_notice(tmp_path, damage):
    reopened, matrix, rng = _damaged_and_reopened(tmp_path, COPY, damage)
    queries = near(matrix, rng, [3, 10, 2000])
    assert_like_exact(reopened, queries)
    notices = reopened.vectors.take_notices()
    assert len(notices) == 1 and "vectors.signs was unusable" in notices[0] and "int8 copy" in notices[0], notices
    assert "rebuilt it from the index" in notices[0]
    assert (tmp_path / COPY).stat().st_size == 4096 + 2500 * COPY_WIDTH
    assert_like_exact(reopened, queries)  # and now in step: no second rebuild
    assert reopened.vectors.take_notices() == []
    reopened.close()


def test_i19_an_int8_copy_cut_short_is_appended_again_like_a_torn_append(tmp_path):
    store, matrix, rng = _store(tmp_path, 2500)
    store.vectors.nearest(matrix[0], 3)
    store.close()
    _copy_cut_mid_record(tmp_path / COPY)

    reopened = Store.open(tmp_path / "index.sqlite")
    reopened.vectors.search_mode = "approximate"
    assert_like_exact(reopened, near(matrix, rng, [5, 699, 700, 2499]))  # the rows beyond the cut came back
    assert "2,500 vectors" in reopened.vectors.search_path()
    assert (tmp_path / COPY).stat().st_size == 4096 + 2500 * COPY_WIDTH
    assert len(reopened.vectors.approximate()) == 2500
    reopened.close()


def test_i19_a_query_and_its_translation_share_one_scan_and_each_answers_as_alone(tmp_path):
    store, matrix, rng = _store(tmp_path, 3_000)  # beyond the 1,000 candidates: the scan picks
    queries = [matrix[7] + 0.3 * rng.standard_normal(DIM).astype(np.float32),
               matrix[2_900] + 0.3 * rng.standard_normal(DIM).astype(np.float32)]
    signs = store.vectors.approximate()
    assert signs is not None
    together = signs.candidates_each(queries, 1_000)
    assert [len(rows) for rows in together] == [1_000, 1_000]
    assert all(np.array_equal(rows, signs.candidates(q, 1_000)) for rows, q in zip(together, queries))
    assert not np.array_equal(np.sort(together[0]), np.sort(together[1]))  # two queries, two answers
    units = [q / np.linalg.norm(q) for q in queries]
    shared = signs.rescore_each(together, units)  # the rows both hold are read once
    for (ids, vecs, sims), rows, unit in zip(shared, together, units):
        alone = signs.rescore(rows, unit)
        assert np.array_equal(ids, alone[0]) and np.array_equal(vecs, alone[1]) and np.array_equal(sims, alone[2])
        assert np.array_equal(ids, np.sort(signs.ids[rows]))
    both = store.vectors.nearest_each(queries, 5)
    assert both == [store.vectors.nearest(q, 5) for q in queries]
    assert both[0][0][0] == "h7" and both[1][0][0] == "h2900"


def _stored_signs(store, signs):
    """Every stored vector's signs, in id order (the file's), packed as the sign file packs them."""
    from memtool.store import ann

    blobs = [v for (v,) in store.conn.execute("SELECT vec FROM embeddings ORDER BY id")]
    matrix = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)
    return ann.pack_signs(ann.unit(matrix), signs.mean)


def _reference_rows(words, packed, count):
    """The `count` nearest rows by Hamming distance, ties first in the file, the slow way."""
    bits = np.unpackbits(words.view(np.uint8), axis=1)
    q = np.unpackbits(np.asarray(packed, dtype=np.uint64).view(np.uint8))
    dist = (bits != q).sum(axis=1)
    return np.sort(np.lexsort((np.arange(len(dist)), dist))[:count])


def test_i19_the_sign_scan_finds_the_nearest_rows_ties_first_in_the_file(tmp_path):
    from memtool.store import ann

    rng = np.random.default_rng(3)
    store = Store.open(tmp_path / "index.sqlite")
    store.vectors.search_mode = "approximate"
    dim = 256  # four words: counts summed in a byte for three, then the fourth
    with store.transaction():
        store.vectors.reset("model-a", dim)
    matrix = rng.standard_normal((2_500, dim)).astype(np.float32)
    put(store, [f"h{i}" for i in range(len(matrix))], matrix)
    signs = store.vectors.approximate()
    for query in (matrix[5], rng.standard_normal(dim).astype(np.float32)):
        packed = ann.pack_signs(query[None, :], signs.mean)[0]
        for count in (1, 100, 1_000, 2_499):
            got = signs.candidates(query, count)
            assert np.array_equal(np.sort(got), _reference_rows(_stored_signs(store, signs), packed, count))
    # Distances a sample misjudges: too few rows at or below its bound (all rows are counted then),
    # and the small ones all between the sampled rows.
    for small in (slice(0, None, ann.SAMPLE), slice(1, None, ann.SAMPLE)):
        dist = np.full(10_000, 40, dtype=np.uint16)
        dist[small] = 0
        dist[2::ann.SAMPLE] = 2
        rows = ann._nearest_rows(dist, 1_000)
        assert np.array_equal(rows, np.sort(np.lexsort((np.arange(len(dist)), dist))[:1_000]))


# --- the sign file in blocks of columns (issue 19: the scan reads each sign word contiguously) -----

HEADER = 4096


def _signs_of(matrix8, mean):
    from memtool.store import ann

    return ann.pack_signs(ann.unit(matrix8), np.asarray(mean, dtype=np.float16).astype(np.float32))


def test_i19_the_sign_file_is_stored_in_blocks_of_columns_and_appends_across_blocks(tmp_path):
    from memtool.store import ann

    rng = np.random.default_rng(11)
    dim, block = 192, 1_000  # three words a record; 2,500 records: two blocks and half of a third
    matrix8 = rng.integers(-127, 128, (4_200, dim), dtype=np.int8)
    ids = np.arange(1, 4_201) * 3  # ids with gaps, as after removals
    mean = rng.standard_normal(dim).astype(np.float32) * 0.01
    path = tmp_path / "v.signs"

    def chunks(start, stop, size=700):  # chunks that do not fall on the blocks' bounds
        for s in range(start, stop, size):
            e = min(stop, s + size)
            yield ids[s:e], ids[s:e] + 7, matrix8[s:e]

    ann.write(path, "fp", "ep", mean, chunks(0, 2_500), block=block)
    signs = ann.open_signs(path, "fp", "ep", dim)
    width = (2 + 3) * 8
    assert path.stat().st_size == HEADER + 3 * block * width and len(signs) == 2_500
    raw = path.read_bytes()
    for b in range(3):  # each block: its ids, its tags, then each sign word of its records, contiguous
        at = HEADER + b * block * width
        column = np.frombuffer(raw[at:at + block * 8], dtype=np.int64)
        assert np.array_equal(column[:min(block, 2_500 - b * block)], ids[b * block:min(2_500, (b + 1) * block)])
        words = np.frombuffer(raw[at + 2 * block * 8:at + 5 * block * 8], dtype=np.uint64).reshape(3, block)
        assert np.array_equal(words[:, :min(block, 2_500 - b * block)].T, _signs_of(matrix8[b * block:(b + 1) * block][:block], mean)[:min(block, 2_500 - b * block)])
    assert not raw[HEADER + 2 * block * width + 500 * 8:HEADER + 2 * block * width + block * 8].strip(b"\0")  # unused: zeros
    assert signs.last() == (int(ids[2_499]), int(ids[2_499]) + 7)

    ann.append(path, signs, lambda last: chunks(int(np.searchsorted(ids, last, side="right")), 4_200))
    signs = ann.open_signs(path, "fp", "ep", dim)
    assert len(signs) == 4_200 and path.stat().st_size == HEADER + 5 * block * width
    assert np.array_equal(signs.ids, ids)
    signs.check_order()
    packed_all = _signs_of(matrix8, mean)
    for query in (rng.standard_normal(dim).astype(np.float32), matrix8[3_999].astype(np.float32)):
        packed = ann.pack_signs(query[None, :], signs.mean)[0]
        for count in (1, 999, 1_000, 1_001, 4_199):
            assert np.array_equal(np.sort(signs.candidates(query, count)), _reference_rows(packed_all, packed, count))
        rows = signs.candidates(query, 50)
        found_ids, vecs, _ = signs.rescore(rows, query / np.linalg.norm(query))
        assert np.array_equal(found_ids, np.sort(ids[rows])) and np.array_equal(vecs, matrix8[np.sort(rows)])


def _to_row_layout(path, cut: int = 0):
    """The sign file rewritten as an older memtool wrote it (memtool-signs-1: a record after
    another), less `cut` bytes at its end."""
    header = json.loads(path.read_bytes()[:HEADER])
    block, columns = header.pop("block"), 2 + header["dim"] // 64
    blocks = np.frombuffer(path.read_bytes()[HEADER:], dtype=np.uint64).reshape(-1, columns, block)
    rows = blocks.transpose(0, 2, 1).reshape(-1, columns)
    rows = rows[:int(np.flatnonzero(rows[:, 0] == 0)[0])]
    header["format"] = "memtool-signs-1"
    data = json.dumps(header).encode().ljust(HEADER, b" ") + rows.tobytes()
    path.write_bytes(data[:len(data) - cut])


def test_i19_a_sign_file_of_the_row_layout_is_rewritten_in_columns_with_a_notice(tmp_path):
    store, matrix, rng = _store(tmp_path, 2500)
    store.vectors.nearest(matrix[0], 3)
    store.close()
    _to_row_layout(tmp_path / ANN_FILE, cut=10)  # its last record torn, as by an append killed midway
    copy = (tmp_path / COPY).stat()

    reopened = Store.open(tmp_path / "index.sqlite")
    reopened.vectors.search_mode = "approximate"
    assert_like_exact(reopened, near(matrix, rng, [1, 2000, 2499]))
    notices = reopened.vectors.take_notices()
    assert len(notices) == 1 and "vectors.signs was of an older layout (memtool-signs-1: rows)" in notices[0], notices
    assert "rewrote its 2,499 records in columns (memtool-signs-2)" in notices[0]
    assert json.loads((tmp_path / ANN_FILE).read_bytes()[:HEADER])["format"] == "memtool-signs-2"
    assert len(reopened.vectors.approximate()) == 2500  # the torn record appended again
    assert (tmp_path / COPY).stat().st_ino == copy.st_ino  # not rebuilt from the index
    assert_like_exact(reopened, near(matrix, rng, [7, 2498]))
    assert reopened.vectors.take_notices() == []
    reopened.close()


def _ids_of_the_last_records_unwritten(path):
    """An append killed after writing the tags and words of records 2,400–2,499, before their ids."""
    with open(path, "r+b") as f:
        f.seek(HEADER + 2_400 * 8)
        f.write(bytes(100 * 8))


def _words_half_written(path):
    """An append killed midway through the words of records 2,400–2,499 (their ids not yet written)."""
    _ids_of_the_last_records_unwritten(path)
    block = json.loads(path.read_bytes()[:HEADER])["block"]
    with open(path, "r+b") as f:
        f.seek(HEADER + (2 * block + 2_450) * 8)
        f.write(b"\xff" * 50 * 8)


def _block_added_and_nothing_written(path):
    """An append killed right after adding a block (one `ftruncate`), before writing in it."""
    header = json.loads(path.read_bytes()[:HEADER])
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size + header["block"] * (2 + header["dim"] // 64) * 8)


@pytest.mark.parametrize("killed", [_ids_of_the_last_records_unwritten, _words_half_written,
                                    _block_added_and_nothing_written])
def test_i19_what_a_process_killed_mid_append_leaves_is_caught_up_in_place(tmp_path, killed):
    store, matrix, rng = _store(tmp_path, 2500)
    store.vectors.nearest(matrix[0], 3)
    store.close()
    killed(tmp_path / ANN_FILE)
    inode = (tmp_path / ANN_FILE).stat().st_ino

    reopened = Store.open(tmp_path / "index.sqlite")
    reopened.vectors.search_mode = "approximate"
    assert_like_exact(reopened, near(matrix, rng, [1, 2399, 2400, 2499]))
    assert len(reopened.vectors.approximate()) == 2500
    more = rng.standard_normal((40, DIM)).astype(np.float32)
    put(reopened, [f"a{i}" for i in range(40)], more)
    assert reopened.vectors.nearest(more[39], 1)[0][0] == "a39"
    assert len(reopened.vectors.approximate()) == 2540
    assert (tmp_path / ANN_FILE).stat().st_ino == inode  # appended in place, not rebuilt
    assert reopened.vectors.take_notices() == []
    reopened.close()


# --- one sign file per Signs: header, blocks and identity read through one descriptor -----------

def _sign_file(path, first_id, mean_sign, n=100, dim=64, block=64):
    """A sign file (and its int8 copy) of `n` records from id `first_id`, centred on a mean of
    `mean_sign` × 0.5 everywhere; returns its records (ids, tags, int8 matrix)."""
    from memtool.store import ann

    rng = np.random.default_rng(first_id)
    ids = np.arange(first_id, first_id + n)
    matrix8 = rng.integers(-127, 128, (n, dim), dtype=np.int8)
    ann.write(path, "fp", "ep", np.full(dim, 0.5 * mean_sign, dtype=np.float32), [(ids, ids + 7, matrix8)] if n else [], block=block)
    return ids, ids + 7, matrix8


_RENAMER = """
import os, sys
path, temp, ready, *sources = sys.argv[1:]
open(ready, "w").close()
while True:
    for source in sources:
        os.link(source, temp)
        os.replace(temp, path)
"""


def test_ann2_1_a_sign_file_renamed_over_the_path_while_opening_is_never_mixed_with_the_one_opened(tmp_path):
    """A writer's rename (it takes no lock) between reading the header and mapping the blocks gave
    a Signs with one file's header and mean but another's records or inode."""
    import subprocess
    import sys
    import time

    from memtool.store import ann

    path = tmp_path / "v.signs"
    a, b = tmp_path / "a.signs", tmp_path / "b.signs"
    _sign_file(path, 1, +1)
    path.rename(a)
    _sign_file(path, 1001, -1)  # its int8 copy stays at the path's (only the sign file is renamed)
    path.rename(b)
    inode_a = a.stat().st_ino
    path.hardlink_to(a)
    ready = tmp_path / "ready"
    renamer = subprocess.Popen([sys.executable, "-c", _RENAMER, str(path), str(tmp_path / "t.signs"), str(ready), str(b), str(a)])  # each rename replaces the other file
    try:
        while not ready.exists() and renamer.poll() is None:
            time.sleep(0.01)
        seen, stop = set(), time.monotonic() + 2.0
        while time.monotonic() < stop or (len(seen) < 2 and time.monotonic() < stop + 10):
            signs = ann.open_signs(path, "fp", "ep", 64)
            of_a = int(signs.ids[0]) == 1
            assert of_a == (signs.identity[0] == inode_a) == (float(signs.mean[0]) > 0), \
                "the header, the records and the identity of one Signs came from different files"
            assert len(signs) == 100 and signs.last() == ((100 if of_a else 1100), (107 if of_a else 1107))
            seen.add(of_a)
            del signs
        assert seen == {True, False} and renamer.poll() is None  # the files were renamed meanwhile
    finally:
        renamer.kill()
        renamer.wait()


def test_ann2_1_an_append_through_a_signs_whose_files_were_replaced_writes_into_neither(tmp_path):
    """`write` renames the int8 copy, then the sign file: an append (under the lock `write` does
    not take) that came between them wrote the old file's records into the new copy."""
    from memtool.store import ann

    path, copy = tmp_path / "v.signs", tmp_path / "v.int8"
    ids, tags, matrix8 = _sign_file(path, 1, +1, n=150)
    signs = ann.open_signs(path, "fp", "ep", 64)
    more = lambda last: [(ids[ids > last], tags[ids > last], matrix8[ids > last])]  # noqa: E731
    _sign_file(tmp_path / "new.signs", 1, -1, n=100)  # a rebuild midway: its copy renamed, not yet its sign file
    (tmp_path / "new.int8").replace(copy)
    before = (path.read_bytes(), copy.read_bytes())
    ann.append(path, signs, lambda last: [(ids[100:], tags[100:], matrix8[100:])])
    assert (path.read_bytes(), copy.read_bytes()) == before, "an append wrote into a file its Signs did not open"
    (tmp_path / "new.signs").replace(path)  # the rebuild ends
    before = (path.read_bytes(), copy.read_bytes())
    ann.append(path, signs, more)  # the old Signs: nothing written either
    assert (path.read_bytes(), copy.read_bytes()) == before
    signs.close()

    fresh = ann.open_signs(path, "fp", "ep", 64)  # the file in place appends as ever
    assert float(fresh.mean[0]) < 0 and len(fresh) == 100
    ann.append(path, fresh, more)
    fresh = ann.open_signs(path, "fp", "ep", 64)
    assert len(fresh) == 150 and np.array_equal(fresh.ids, ids) and float(fresh.mean[0]) < 0
    found_ids, vecs, _ = fresh.rescore(np.arange(150), np.ones(64, dtype=np.float32) / 8)
    assert np.array_equal(found_ids, ids) and np.array_equal(vecs, matrix8)
    assert np.array_equal(fresh.blocks[2, 2:, :22].T, _signs_of(matrix8[128:], -0.5 * np.ones(64)))
    fresh.close()


def test_ann2_1_an_empty_sign_file_keeps_its_inode_while_open_and_opening_leaks_no_descriptor(tmp_path):
    """With no records nothing is mapped: the Signs' own descriptor keeps its inode from being
    given to another file (whose append would then pass the inode check)."""
    import gc

    from memtool.store import ann

    path = tmp_path / "v.signs"
    _sign_file(path, 1, +1, n=0)
    gc.collect()  # descriptors of earlier tests' objects are closed now, not while this one counts
    fds = len(os.listdir("/proc/self/fd"))
    signs = ann.open_signs(path, "fp", "ep", 64)
    assert len(signs) == 0 and os.fstat(signs.fd).st_ino == path.stat().st_ino == signs.identity[0]
    path.unlink()
    assert os.fstat(signs.fd).st_nlink == 0  # held: its inode is not reused while the Signs lives
    signs.close()
    _sign_file(path, 1, +1, n=300)
    for i in range(300):
        signs = ann.open_signs(path, "fp", "ep", 64)
        if i % 2:
            signs.close()
        del signs
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds


# --- temp files of a process killed while writing the sign file are swept ---------------------

_WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from memtool.store import ann
path, ready = Path(sys.argv[1]), Path(sys.argv[2])
def blocks():
    ids = np.arange(1, 101)
    yield ids, ids, np.ones((100, 64), dtype=np.int8)
    ready.touch()  # its temp files hold a block: killed (or left running) here
    time.sleep(120)
ann.write(path, "fp", "ep", np.zeros(64, dtype=np.float32), blocks())
"""


def test_ann2_2_the_temp_files_of_a_writer_killed_midway_are_swept_a_running_ones_stay(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    store, matrix, rng = _store(tmp_path, 2500)
    store.vectors.nearest(matrix[0], 3)
    assert len(store.vectors.take_notices()) == 1  # built
    signs = tmp_path / ANN_FILE
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(signs), str(tmp_path / f"ready{i}")]) for i in range(2)]
    try:
        while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
            assert all(w.poll() is None for w in writers)
            time.sleep(0.02)
        temps = [{tmp_path / f".{name}.{w.pid}.tmp" for name in (ANN_FILE, COPY)} for w in writers]
        assert all(t.stat().st_size > 4096 for t in temps[0] | temps[1])
        writers[1].send_signal(signal.SIGKILL)
        writers[1].wait()
        put(store, [f"a{i}" for i in range(40)], rng.standard_normal((40, DIM)).astype(np.float32))
        assert store.vectors.nearest(matrix[7], 1)[0][0] == "h7"  # the next use appends: sweeps
        assert not any(t.exists() for t in temps[1]), "a killed writer's temp files were left behind"
        assert all(t.exists() for t in temps[0]), "a running writer's temp files were removed"
        assert len(store.vectors.approximate()) == 2540 and store.vectors.take_notices() == []
    finally:
        for w in writers:
            w.kill()
            w.wait()
        store.close()


def test_hyb10_the_candidates_narrowed_by_their_estimate_keep_the_nearest(tmp_path):
    store, matrix, rng = _store(tmp_path, 3_000)
    signs = store.vectors.approximate()
    queries = near(matrix, rng, [11, 1_234, 2_999])
    pools = signs.candidates_each(queries, 2_000)
    narrowed = signs.narrowed_each(pools, queries, 300)
    bits = np.unpackbits(_stored_signs(store, signs).view(np.uint8), axis=1, bitorder="little")[:, :DIM]
    for rows, pool, q, nearest in zip(narrowed, pools, queries, [11, 1_234, 2_999]):
        assert len(rows) == 300 and np.array_equal(rows, np.sort(rows)) and set(rows) <= set(pool)
        estimate = bits[pool].astype(np.float64) @ q  # Σ qᵢ·bitᵢ, the slow way
        assert set(rows) == set(pool[np.argsort(-estimate, kind="stable")[:300]])
        assert nearest in rows  # the vector the query was made from is among the few rescored
    few = pools[0][::-1]  # nothing to narrow: all of them, in file order as always
    assert np.array_equal(signs.narrowed_each([few], queries[:1], 2_000)[0], np.sort(few))
    store.close()


def test_hyb10_narrowing_reads_each_candidates_signs_across_the_blocks_of_the_file(tmp_path):
    """The estimate reads a row's sign words in its block (row // block, row % block): with blocks of
    1,000 records, candidates on both sides of every bound get the estimate the slow way gives."""
    from memtool.store import ann

    rng = np.random.default_rng(29)
    dim, block, n = 192, 1_000, 3_500
    matrix8 = rng.integers(-127, 128, (n, dim), dtype=np.int8)
    ids = np.arange(1, n + 1)
    mean = rng.standard_normal(dim).astype(np.float32) * 0.01
    path = tmp_path / "v.signs"
    ann.write(path, "fp", "ep", mean, [(ids, ids + 7, matrix8)], block=block)
    signs = ann.open_signs(path, "fp", "ep", dim)
    bits = np.unpackbits(_signs_of(matrix8, mean).view(np.uint8), axis=1, bitorder="little")[:, :dim]
    for row in (999, 1_000, 1_999, 2_000, 3_499):
        query = matrix8[row].astype(np.float32)
        query /= np.linalg.norm(query)
        pool = np.sort(rng.choice(n, 1_200, replace=False))
        pool = np.union1d(pool, [998, 999, 1_000, 1_001, 1_999, 2_000, row])
        kept = signs.narrowed_each([pool], [query], 200)[0]
        estimate = dict(zip(pool.tolist(), bits[pool].astype(np.float64) @ query))
        left = set(pool.tolist()) - set(kept.tolist())
        assert len(kept) == 200 and row in kept  # float32 sums may swap near-ties at the cut, nothing more:
        assert min(estimate[r] for r in kept.tolist()) >= max(estimate[r] for r in left) - 1e-4
