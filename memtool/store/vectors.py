"""Embedding vectors in the index: content-addressed storage, and nearest-neighbour search.

`embeddings` (hash of the embedded text → int8 BLOB) is the portable truth; when sqlite-vec
loads, a `vec0` table mirrors it for fast KNN. Without the extension, search falls back to numpy
over the stored BLOBs (exact, slower to load). The fingerprint of the model that made the vectors
is kept in `meta`; vectors of two fingerprints never mix.

Vectors are stored quantized to int8, each scaled by its largest component (cosine does not care
about scale): a quarter of float32's bytes; the recall-quality benchmark moved by less than a
point (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memtool.store import ann
from memtool.store.driver import Meta, Transaction, select_in

VEC_TABLE = "vec_embeddings"
# Approximate search (store/ann.py) from this many vectors on; below it an exact scan takes ≲ 20 ms.
ANN_MIN = 20_000
ANN_CANDIDATES = 1000  # sign-bit candidates (Hamming), at least (trade-off curve: docs/benchmarks.md) …
ANN_CANDIDATE_SHARE = 1 / 125  # … and this share of the vectors: 8,000 at 10^6 …
# … of which those whose signs estimate the nearest (ann.Signs.narrowed_each) are rescored exactly:
# at 10^6, 1,000 of 8,000 found more of the exact top 10 than all of the 4,000 nearest by Hamming
# distance that were rescored before, with a quarter of the reads (docs/benchmarks-history.md, "hyb10 session").
ANN_RESCORED = 1000
ANN_RESCORED_SHARE = 1 / 1000
ANN_FILE = "vectors.signs"
ANN_STALE_MAX = 1.5  # records per live vector before the sign file is remade
# Up to this many vectors, a process that searches more than once keeps them in memory as float32
# (~1.5 KB each): 11 ms per search at 10^5 against 117 ms for sqlite-vec's int8 scan on 2 cores.
MEMORY_SEARCH_MAX = 200_000
# Pairs `Vectors.twins` compares inside SQLite at most (~0.7 µs a pair at 384 dimensions); past them numpy
# (~40 ms to import, then ~10 µs per thousand pairs): a --k 1000 recall with a filter lifts among 4,000
# candidates, ~4·10^6 pairs, 2.9 s in SQLite, 40 ms in numpy.
TWIN_PAIRS_IN_SQL = 50_000


def quantize(matrix):
    """float vectors → int8 rows scaled so that each row's largest component is ±127."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    scale = np.abs(m).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    return np.clip(np.rint(m / scale * 127.0), -127, 127).astype(np.int8)


def dequantize(blobs: list[bytes], dim: int):
    """int8 BLOBs → an L2-normalised float32 matrix (cosine similarity is then a dot product)."""
    import numpy as np

    m = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dim).astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


class Resident:
    """Vectors kept in memory as float32 by a long-running process, brought up to date incrementally:
    rows added since the last look are appended, removed ones masked; only a new model or many
    removals reload everything (1.2 s at 10^5; a few changed rows cost a pass over ids and hashes)."""

    GROWTH = 1.25

    def __init__(self):
        self.fingerprint = None
        self.hashes: list[str] = []
        self.ids = None  # int64 row ids, in matrix order
        self.matrix = None  # float32, capacity ≥ len(hashes) rows
        self.alive = None  # bool: False for rows removed (or replaced) since they were loaded

    def __len__(self) -> int:
        return len(self.hashes)

    def sync(self, conn, fingerprint: str | None, dim: int) -> None:
        """Bring the resident rows in step with the `embeddings` table."""
        import numpy as np

        if fingerprint != self.fingerprint or self.matrix is None:  # (re)load everything
            self.__init__()
            self.fingerprint = fingerprint
            self.matrix = np.zeros((0, dim), dtype=np.float32)
            self.ids = np.zeros(0, dtype=np.int64)
            self.alive = np.zeros(0, dtype=bool)
            rows = conn.execute("SELECT id, hash, vec FROM embeddings ORDER BY id").fetchall()
            if rows:
                self._append([r[0] for r in rows], [r[1] for r in rows], dequantize([r[2] for r in rows], dim))
            return
        # Row ids can be reused once the largest are deleted, so rows are matched by (id, hash).
        current = dict(conn.execute("SELECT id, hash FROM embeddings"))
        n = len(self)
        self.alive[:n] = np.fromiter((current.get(i) == h for i, h in zip(self.ids[:n].tolist(), self.hashes)),
                                     dtype=bool, count=n)
        if n and self.alive[:n].mean() < 0.8:  # mostly stale rows: start over
            self.matrix = None
            return self.sync(conn, fingerprint, dim)
        kept = set(self.ids[:n][self.alive[:n]].tolist())
        new = sorted(i for i in current if i not in kept)
        rows = list(select_in(conn, "SELECT id, hash, vec FROM embeddings WHERE id IN ({marks}) ORDER BY id", new))
        if rows:
            self._append([r[0] for r in rows], [r[1] for r in rows], dequantize([r[2] for r in rows], dim))

    def _append(self, ids: list[int], hashes: list[str], block) -> None:
        import numpy as np

        n, k = len(self), len(ids)
        if n + k > self.matrix.shape[0]:
            capacity = max(n + k, int(self.matrix.shape[0] * self.GROWTH))
            for name, dtype in (("matrix", np.float32), ("ids", np.int64), ("alive", bool)):
                old = getattr(self, name)
                grown = np.zeros((capacity, *old.shape[1:]), dtype=dtype)
                grown[:n] = old[:n]
                setattr(self, name, grown)
        self.matrix[n:n + k] = block
        self.ids[n:n + k] = ids
        self.alive[n:n + k] = True
        self.hashes.extend(hashes)

    def nearest(self, query, n: int) -> list[tuple[str, float]]:
        import numpy as np

        size = len(self)
        if not size:
            return []
        sims = self.matrix[:size] @ (query / (np.linalg.norm(query) or 1.0))
        sims[~self.alive[:size]] = -np.inf
        n = min(n, int(self.alive[:size].sum()))
        if n <= 0:
            return []
        top = np.argpartition(-sims, n - 1)[:n]
        top = top[np.argsort(-sims[top])]
        return [(self.hashes[i], float(sims[i])) for i in top]


class ReadOnly(Exception):
    """A search that may not write (`Vectors.writes` False) would have to: the sign file is to be
    made, caught up, upgraded or repaired, or the index given its vector epoch (say which)."""


class Vectors:
    def __init__(self, conn, vec_problem: str | None, ann_path: Path | None = None):
        self.conn = conn
        self._meta = Meta(conn)
        self.vec_problem = vec_problem  # None when sqlite-vec is loaded
        self.ann_path = ann_path  # the sign file beside the index (None: exact search only)
        self.search_mode = "auto"  # auto | exact | approximate (Config.vector_search)
        self.notices: list[str] = []  # what the user should hear (the sign file rebuilt, …)
        self._signs: tuple | None = None  # (index version, file identity, ann.Signs) last checked
        self._exact_why: str | None = None  # why the last search was exact
        self._resident: Resident | None = None  # in memory for a long-running process (or without sqlite-vec)
        self._resident_version = None
        self._mirror_checked = False
        self._missing: tuple | None = None  # (index version, count) of records without a vector
        self._searches = 0
        self.writes = True  # False: a read-only search (memtool.search_aside) raises ReadOnly where it would write

    @property
    def accelerated(self) -> bool:
        return self.vec_problem is None

    def version(self) -> str | None:
        return self.conn.execute("SELECT vec_version()").fetchone()[0] if self.accelerated else None

    def search_path(self) -> str:
        """Which vector search answers, and why."""
        signs = self.approximate()
        if signs is not None:
            best = max(ANN_CANDIDATES, int(len(signs) * ANN_CANDIDATE_SHARE))
            kept = min(best, max(ANN_RESCORED, int(len(signs) * ANN_RESCORED_SHARE)))
            return (f"approximate: sign bits over {self.count():,} vectors, the best {best:,}"
                    + (f" narrowed to {kept:,}" if kept < best else "") + " rescored exactly")
        exact = "sqlite-vec" if self.accelerated else f"numpy fallback ({self.vec_problem})"
        return f"{exact} (exact: {self._exact_why})" if self._exact_why else f"{exact} (exact)"

    def take_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    # --- identity --------------------------------------------------------------------------

    def fingerprint(self) -> str | None:
        return self._meta.get("embed_fingerprint")

    def dim(self) -> int | None:
        value = self._meta.get("embed_dim")
        return int(value) if value else None

    def reset(self, fingerprint: str, dim: int) -> int:
        """Forget every vector and start over for a new model; returns how many were dropped."""
        dropped = self.count()
        self.conn.execute("DELETE FROM embeddings")
        self.conn.execute("UPDATE files SET embedded = 0")
        self.conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        self._meta.set("vectors_epoch", os.urandom(8).hex())  # the sign file of the old vectors is stale
        self._meta.delete("vectors_high_water")
        self._meta.set("embed_fingerprint", fingerprint)
        self._meta.set("embed_dim", str(dim))
        self.ensure_vec_table()
        return dropped

    def _has_vec_table(self) -> bool:
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,)).fetchone()
        return row is not None and "int8[" in row[0]

    def ensure_vec_table(self) -> None:
        """Create (and fill from the BLOBs) the vec0 mirror when sqlite-vec is available."""
        dim = self.dim()
        if not self.accelerated or not dim:
            return
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,)).fetchone()
        if row and "int8[" in row[0]:
            return
        if row:  # a float mirror from before vectors were quantized
            self.conn.execute(f"DROP TABLE {VEC_TABLE}")
        self.conn.execute(f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding int8[{dim}] distance_metric=cosine)")
        self.conn.execute(f"INSERT INTO {VEC_TABLE}(rowid, embedding) SELECT id, vec_int8(vec) FROM embeddings")

    # --- coverage --------------------------------------------------------------------------

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

    def pending_files(self) -> list[tuple[str, str]]:
        """(path, content hash) of files whose records may lack a vector (`files.embedded = 0`)."""
        return self.conn.execute("SELECT path, hash FROM files WHERE embedded = 0").fetchall()

    def mark_embedded(self, files: list[tuple[str, str]]) -> None:
        """Every record of these files has a vector now (only where the file is still that version)."""
        self.conn.executemany("UPDATE files SET embedded = 1 WHERE path = ? AND hash IS ?", files)

    def missing(self, limit: int | None = None) -> list[tuple[str, str, str, str | None]]:
        """(hash, content, context, previous record's content) of embeddable text without a vector,
        looked for only in files not known to be fully embedded."""
        sql = ("SELECT f.ehash, f.content, f.context, p.content FROM files fi JOIN facts f ON f.path = fi.path"
               " LEFT JOIN facts p ON p.path = f.path AND p.ord = f.ord - 1"
               " WHERE fi.embedded = 0 AND f.ehash IS NOT NULL"
               " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = f.ehash)"
               " GROUP BY f.ehash ORDER BY MIN(f.id)")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.conn.execute(sql).fetchall()

    def missing_sources(self) -> list[tuple[str, str, str]]:
        """(hash, path, declared trust) of embeddable text without a vector, for every file that
        holds it, in files not known to be fully embedded: what the trust gate decides on."""
        return self.conn.execute(
            "SELECT DISTINCT f.ehash, fi.path, COALESCE(fi.trust, 'normal') FROM files fi JOIN facts f ON f.path = fi.path"
            " WHERE fi.embedded = 0 AND f.ehash IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = f.ehash)").fetchall()

    def _version(self) -> tuple[int, int]:
        """Changes when this connection or any other writes the index."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes

    def count_missing(self) -> int:
        version = self._version()
        if self._missing is None or self._missing[0] != version:  # a full scan: once per index change
            count = 0  # every file fully embedded (the usual case): no scan (~10 ms at 10^5, every one-shot read)
            if self.conn.execute("SELECT EXISTS (SELECT 1 FROM files WHERE embedded = 0)").fetchone()[0]:
                count = self.conn.execute(  # in hash order over (ehash, path): no table rows, no sort
                    "SELECT COUNT(DISTINCT f.ehash) FROM facts f INDEXED BY facts_ehash WHERE f.ehash IS NOT NULL"
                    " AND f.path IN (SELECT path FROM files WHERE embedded = 0)"
                    " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = f.ehash)").fetchone()[0]
            self._missing = (version, count)
        return self._missing[1]

    # --- writing ---------------------------------------------------------------------------

    def put(self, hashes: list[str], matrix) -> None:
        """Store one vector per hash (rows of a float matrix), quantized to int8."""
        mirror = self.accelerated and self._has_vec_table()
        # Ids only grow (SQLite alone would give the largest removed ids out again): the sign file
        # then only ever needs appends.
        top = self.conn.execute("SELECT MAX(id) FROM embeddings").fetchone()[0] or 0
        next_id = max(top, int(self._meta.get("vectors_high_water") or 0)) + 1
        first = next_id
        for h, row in zip(hashes, quantize(matrix)):
            cur = self.conn.execute("INSERT OR IGNORE INTO embeddings(id, hash, vec) VALUES (?, ?, ?)",
                                    (next_id, h, row.tobytes()))
            if cur.rowcount:
                if mirror:
                    self.conn.execute(f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, vec_int8(?))",
                                      (next_id, row.tobytes()))
                next_id += 1
        if next_id > first:
            self._meta.set("vectors_high_water", str(next_id - 1))

    def gc(self, candidates: set[str] | None = None) -> int:
        """Drop vectors no fact refers to any more (all, or among `candidates`: the hashes of facts
        just removed); returns how many."""
        no_fact = "NOT EXISTS (SELECT 1 FROM facts f WHERE f.ehash = e.hash)"
        if candidates is None:
            orphans = [r[0] for r in self.conn.execute(f"SELECT id FROM embeddings e WHERE {no_fact}")]
        else:
            sql = f"SELECT id FROM embeddings e WHERE e.hash IN ({{marks}}) AND {no_fact}"
            orphans = [r[0] for r in select_in(self.conn, sql, sorted(candidates))]
        list(select_in(self.conn, "DELETE FROM embeddings WHERE id IN ({marks})", orphans))
        if orphans and self.accelerated and self._has_vec_table():
            list(select_in(self.conn, f"DELETE FROM {VEC_TABLE} WHERE rowid IN ({{marks}})", orphans))
        if orphans and self.ann_path is not None and self.ann_path.exists():
            self._compact_signs()
        return len(orphans)

    # --- search ----------------------------------------------------------------------------

    def nearest(self, query, n: int) -> list[tuple[str, float]]:
        """(hash, cosine similarity) of the `n` nearest vectors, best first."""
        return self.nearest_each([query], n)[0]

    def nearest_each(self, queries: list, n: int) -> list[list[tuple[str, float]]]:
        """`nearest` for each of `queries` (a query and its translation): approximate search
        scans the sign file once for all of them."""
        import numpy as np

        queries = [np.ascontiguousarray(q, dtype=np.float32) for q in queries]
        if self.accelerated and not self._mirror_checked:
            self._mirror_checked = True
            if not self._has_vec_table():  # e.g. right after the int8 migration: build it once
                try:
                    with Transaction(self.conn):
                        self.ensure_vec_table()
                except Exception:  # another process is building it, or cannot: numpy answers meanwhile
                    pass
        signs, found = self.approximate(), None
        if signs is not None:
            try:
                found = self._approximate_nearest(signs, queries, n)
            except ann.Damaged as exc:  # found out while rescoring (its int8 copy out of step)
                try:
                    signs = self._rebuilt(exc)
                except OSError as err:  # e.g. a read-only .memory/: exact search answers
                    self._signs = None
                    self._exact_why = f"the approximate vector index cannot be written ({err.strerror})"
                else:
                    found = self._approximate_nearest(signs, queries, n)
        if found is not None:
            self._searches += len(queries)
            return found
        return [self._exact_nearest(q, n) for q in queries]

    def _exact_nearest(self, query, n: int) -> list[tuple[str, float]]:
        """sqlite-vec's scan, or the vectors in memory for a process that searches again."""
        self._searches += 1
        scan = self.accelerated and self._has_vec_table()  # sqlite-vec can answer from disk
        if not scan or self._resident is not None or (self._searches >= 2 and self.count() <= MEMORY_SEARCH_MAX):
            resident = self._in_memory(capped=scan)  # a long-running process (MCP, watch), or no sqlite-vec
            if resident is not None:
                return resident.nearest(query, n)
        rows = self.conn.execute(
            f"SELECT e.hash, v.distance FROM (SELECT rowid, distance FROM {VEC_TABLE}"
            f" WHERE embedding MATCH vec_int8(?) AND k = ?) v JOIN embeddings e ON e.id = v.rowid ORDER BY v.distance",
            (quantize(query[None, :])[0].tobytes(), min(n, 4096))).fetchall()
        return [(h, 1.0 - d) for h, d in rows]

    # --- approximate search (store/ann.py) ---------------------------------------------------

    def approximate(self) -> "ann.Signs | None":
        """The sign file, in step with the vectors (made, caught up or rebuilt here, with a notice
        when it was missing or damaged), when approximate search applies; else None, and
        `_exact_why` says why."""
        if self.search_mode == "exact" or self.ann_path is None:
            self._exact_why = "MEM_VECTOR_SEARCH=exact" if self.ann_path else None
            return None
        fingerprint, dim = self.fingerprint(), self.dim()
        if not (fingerprint and dim):  # no vectors: nothing to approximate, nor numpy to load (~0.1 s of a lexical build)
            self._signs = None
            return None
        import numpy as np

        if not hasattr(np, "bitwise_count"):
            self._exact_why = f"approximate search needs numpy 2 (this is numpy {np.__version__})"
            return None
        version = self._version()
        if self._signs is not None and self._signs[0] == version and self._signs[1] == _identity(self.ann_path):
            return self._signs[2]
        try:
            try:
                signs = self._signs_in_step(fingerprint, dim)
            except ann.Damaged as exc:
                return self._rebuilt(exc)
        except OSError as exc:  # e.g. a read-only .memory/: exact search still answers
            self._exact_why = f"the approximate vector index cannot be written ({exc.strerror})"
            return None
        self._signs = (self._version(), signs.identity, signs) if signs is not None else None
        return signs

    def _rebuilt(self, why: ann.Damaged) -> "ann.Signs":
        """The sign file and its int8 copy made anew from the index, with a notice of why."""
        self._may_write(f"the approximate vector index is to be rebuilt ({why})")
        self.notices.append(f"the approximate vector index {self.ann_path.name} was unusable ({why});"
                            " rebuilt it from the index")
        signs = self._build_signs(self.fingerprint(), self.dim())
        self._signs = (self._version(), signs.identity, signs)
        return signs

    def _signs_in_step(self, fingerprint: str, dim: int) -> "ann.Signs | None":
        try:
            signs = ann.open_signs(self.ann_path, fingerprint, self._epoch(), dim)
        except ann.Stale:
            self._drop_files()
            signs = None
        except ann.Outdated:  # of an older memtool: rewritten from its own records, not the index
            self._may_write("the approximate vector index is of an older layout")
            count = ann.upgrade(self.ann_path)
            self.notices.append(f"the approximate vector index {self.ann_path.name} was of an older layout"
                                f" ({ann.ROW_FORMAT}: rows); rewrote its {count:,} records in columns ({ann.FORMAT})")
            signs = ann.open_signs(self.ann_path, fingerprint, self._epoch(), dim)
        if signs is None:
            count = self.count()  # cheap below ANN_MIN; above it the file is made once
            if count < ANN_MIN and not (self.search_mode == "approximate" and count):
                self._exact_why = f"{count:,} vectors: an exact scan is fast enough below {ANN_MIN:,}"
                return None
            self.notices.append(f"built the approximate vector index for {count:,} vectors ({self.ann_path.name})")
            return self._build_signs(fingerprint, dim)
        signs.check_order()
        top, last = self._top(), signs.last()
        top_id, last_id = (top[0] if top else 0), (last[0] if last else 0)
        if top_id == last_id and _matches(self.conn, last):
            return signs  # in step: the file ends where the index does
        if top_id < last_id:  # ids given out again (by a memtool before sign files): made anew
            self._drop_files()
            return self._build_signs(fingerprint, dim)
        if not _matches(self.conn, last, gone_ok=True):
            raise ann.Damaged("its last vector is not the index's")
        self._may_write("the approximate vector index is behind the index")
        ann.append(self.ann_path, signs, self._blocks_after)  # vectors stored since
        signs = ann.open_signs(self.ann_path, fingerprint, self._epoch(), dim)
        if not _matches(self.conn, signs.last()):
            raise ann.Damaged("its last vector is not the index's")
        return signs

    def _may_write(self, why: str) -> None:
        if not self.writes:
            raise ReadOnly(why)

    def _drop_files(self) -> None:
        self._may_write("the approximate vector index is to be made anew")
        self.ann_path.unlink(missing_ok=True)
        ann.copy_path(self.ann_path).unlink(missing_ok=True)

    def _compact_signs(self) -> None:
        """Remake the sign file once most of its records name removed vectors (they cost scan time)."""
        signs = self.approximate()
        if signs is not None and len(signs) > ANN_STALE_MAX * max(1, self.count()):
            self._signs = None
            self._build_signs(self.fingerprint(), self.dim())

    def _build_signs(self, fingerprint: str, dim: int) -> "ann.Signs":
        self._may_write("the approximate vector index is to be made")
        import numpy as np

        top = (self._top() or (0, ""))[0]
        step = max(1, top // 20_000)
        sample = [r[0] for r in self.conn.execute("SELECT vec FROM embeddings WHERE id % ? = 0", (step,))]
        mean = dequantize(sample, dim).mean(axis=0) if sample else np.zeros(dim, dtype=np.float32)
        ann.write(self.ann_path, fingerprint, self._epoch(), mean, self._blocks_after(0))
        return ann.open_signs(self.ann_path, fingerprint, self._epoch(), dim)

    def _blocks_after(self, last_id: int, size: int = 20_000):
        """(ids, tags, int8 matrix) blocks of the vectors with ids beyond `last_id`, in id order."""
        import numpy as np

        dim = self.dim() or 0
        cursor = self.conn.execute("SELECT id, hash, vec FROM embeddings WHERE id > ? ORDER BY id", (last_id,))
        while rows := cursor.fetchmany(size):
            block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(len(rows), dim)
            yield [r[0] for r in rows], [ann.tag(r[1]) for r in rows], block

    def _top(self) -> tuple[int, str] | None:
        return self.conn.execute("SELECT id, hash FROM embeddings ORDER BY id DESC LIMIT 1").fetchone()

    def _epoch(self) -> str:
        """Names this index's set of vectors: a sign file made for another index (or for vectors
        since dropped) is not used."""
        epoch = self._meta.get("vectors_epoch")
        if epoch is None:
            self._may_write("the index has no vector epoch yet")
            epoch = os.urandom(8).hex()
            if self.conn.in_transaction:
                self._meta.set("vectors_epoch", epoch)
            else:
                with Transaction(self.conn):
                    epoch = self._meta.get("vectors_epoch") or epoch
                    self._meta.set("vectors_epoch", epoch)
        return epoch

    def _approximate_nearest(self, signs: "ann.Signs", queries: list, n: int) -> list[list[tuple[str, float]]]:
        """The sign file's candidates for each query (one scan for all), rescored exactly."""
        import numpy as np

        count = max(ANN_CANDIDATES, int(len(signs) * ANN_CANDIDATE_SHARE), 4 * n)
        rows = signs.candidates_each(queries, count)
        rows = signs.narrowed_each(rows, queries, max(ANN_RESCORED, int(len(signs) * ANN_RESCORED_SHARE), 4 * n))
        units = [query / (np.linalg.norm(query) or 1.0) for query in queries]
        rescored = signs.rescore_each(rows, units)
        return [self._rescored(signs, unit, found, n) for unit, found in zip(units, rescored)]

    def _rescored(self, signs: "ann.Signs", unit, rescored, n: int) -> list[tuple[str, float]]:
        """The candidates rescored exactly from the sign file's int8 copy (`rescored`: their ids,
        int8 vectors and cosines to the `unit` query), then the best of them (and any vector stored
        since the files were last brought in step) read from the index: a removed vector is not
        returned, and every cosine returned is that of the index's own vector (a copy that differs
        there is Damaged)."""
        import numpy as np

        ids, vecs, sims = rescored
        order = np.argsort(-sims, kind="stable")
        last = signs.last()
        since = self.conn.execute("SELECT id, hash, vec FROM embeddings WHERE id > ?", (last[0] if last else 0,)).fetchall()
        found = [(h, float(s)) for h, s in zip((r[1] for r in since), _cosines([r[2] for r in since], unit))]
        step = n + 16
        for start in range(0, len(order), step):  # removed vectors are skipped: read on until n are found
            part = order[start:start + step]
            stored = {r[0]: r[1:] for r in self.conn.execute(
                "SELECT id, hash, vec FROM embeddings WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids[part].tolist()),))}
            for i in part.tolist():
                row = stored.get(int(ids[i]))
                if row is None:
                    continue  # removed since
                if row[1] != vecs[i].tobytes():
                    raise ann.Damaged(f"its int8 copy {ann.copy_path(self.ann_path).name} differs from the index")
                found.append((row[0], float(sims[i])))
            if len(found) >= n + len(since):
                break
        found.sort(key=lambda hs: -hs[1])
        return found[:n]

    def _in_memory(self, capped: bool) -> Resident | None:
        """The resident vectors, synced with the index when any connection has written since the last
        look; None once they outgrow MEMORY_SEARCH_MAX and sqlite-vec can answer instead (`capped`)."""
        version = self._version()
        if self._resident is None:
            self._resident = Resident()
        if self._resident_version != version:
            self._resident.sync(self.conn, self.fingerprint(), self.dim() or 0)  # reads only
            self._resident_version = version
            if capped and len(self._resident) > MEMORY_SEARCH_MAX:
                self._resident = None  # grew past what memory should hold: back to sqlite-vec
        return self._resident

    def for_hashes(self, hashes: list[str]):
        """(hash → row index, float32 matrix) of the stored vectors among `hashes`."""

        found: dict[str, int] = {}
        blobs = []
        for h, vec in select_in(self.conn, "SELECT hash, vec FROM embeddings WHERE hash IN ({marks})", hashes):
            if h not in found:
                found[h] = len(blobs)
                blobs.append(vec)
        matrix = dequantize(blobs, self.dim() or 0) if blobs else None
        return found, matrix

    def twins(self, hashes: list[str], others: list[str], threshold: float) -> set[str]:
        """Those of `hashes` whose stored vector has a cosine of `threshold` or more with that of
        any of `others`. sqlite-vec compares the int8 BLOBs in SQLite (a one-shot read whose vectors a
        child searched never imports numpy: memtool.search_aside); without it, numpy over the same
        BLOBs, and for many pairs (TWIN_PAIRS_IN_SQL). Both read the same cosine (to float rounding:
        int8 rows, each scale cancels)."""
        if not hashes or not others:
            return set()
        if self.accelerated and len(hashes) * len(others) <= TWIN_PAIRS_IN_SQL:
            limit = 1.0 - threshold  # cosine distance
            found: set[str] = set()
            for h, in select_in(self.conn, "SELECT DISTINCT a.hash FROM embeddings a JOIN embeddings b "
                                "ON b.hash IN (" + ",".join("?" * len(others)) + ") "
                                "WHERE a.hash IN ({marks}) "
                                "AND vec_distance_cosine(vec_int8(a.vec), vec_int8(b.vec)) <= ?",
                                hashes, before=others, after=[limit]):
                found.add(h)
            return found
        index, matrix = self.for_hashes(list(dict.fromkeys([*hashes, *others])))
        mine = [h for h in hashes if h in index]
        theirs = [index[h] for h in others if h in index]
        if matrix is None or not mine or not theirs:
            return set()
        near = (matrix[[index[h] for h in mine]] @ matrix[theirs].T).max(axis=1) >= threshold
        return {h for h, twin in zip(mine, near) if twin}


def _cosines(blobs: list[bytes], unit):
    """Cosines of int8 BLOBs to a unit query."""
    import numpy as np

    return dequantize(blobs, len(unit)) @ unit if blobs else np.zeros(0, dtype=np.float32)


def _identity(path: Path) -> tuple | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size


def _matches(conn, last: tuple[int, int] | None, gone_ok: bool = False) -> bool:
    """Whether the index holds the vector a sign file's last record describes (or, with `gone_ok`,
    holds nothing under its id any more)."""
    if last is None:
        return conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is None
    row = conn.execute("SELECT hash FROM embeddings WHERE id = ?", (last[0],)).fetchone()
    return (row is None and gone_ok) or (row is not None and ann.tag(row[0]) == last[1])
