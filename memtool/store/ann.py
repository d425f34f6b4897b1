"""Approximate nearest neighbours for many vectors: mean-centred sign bits, rescored exactly.

The file `.memory/vectors.signs` is derived (rebuilt from the index at any time): a 4 KiB JSON
header (format, embedding fingerprint, the index's vector epoch, dimension, the centring mean),
then one fixed-size record per vector in increasing id order: its id, a 64-bit tag of its hash,
and the signs of (vector − mean) packed into 64-bit words (48 bytes for 384 dimensions). The file
only grows by appends, under an exclusive lock (the index never gives an id out twice); a vector
removed from the index is simply not found when candidates are rescored, and the file is remade
once such records are many.

Beside it, `.memory/vectors.int8` holds the same records' int8 vectors (as the index stores
them), row for row: a JSON header like the sign file's, then per vector its id and its `dim` int8
components. The candidates are rescored from this copy (a few thousand `pread`s of one row each) instead of
as many random row reads from SQLite, which cost most of a search at 10^6.
The two files are written, appended and checked together: a missing, foreign or damaged copy is a
damaged index, rebuilt.

A search ranks every record by Hamming distance between its signs and the query's, and the best
candidates are then rescored exactly by the caller (`Vectors`). Why sign bits rather than a graph
index (HNSW): docs/benchmarks.md, "Approximate vector search".
"""

from __future__ import annotations

import json
import os
import weakref
from itertools import repeat
from pathlib import Path

from memtool.digests import blake2b

FORMAT = "memtool-signs-1"
COPY_FORMAT = "memtool-int8-1"
HEADER = 4096
BLOCK = 32_768  # records per pass of the Hamming scan (2 MiB at 384 dimensions: stays in cache)
SUM8 = 3  # 64-bit words whose bit counts are summed in a byte before the 16-bit distance (3 × 64 < 256)
SAMPLE = 16  # every SAMPLE-th distance bounds the cut of the nearest rows


class Damaged(Exception):
    """The file cannot be used as it is (say why); it is rebuilt from the index."""


class Stale(Damaged):
    """The file was made for other vectors (another model, or another index): made anew."""


def tag(hash_: str) -> int:
    """A signed 64-bit tag of a vector's hash: tells a record from another vector with the same id."""
    return int.from_bytes(blake2b(hash_.encode(), digest_size=8).digest(), "little", signed=True)


def words_for(dim: int) -> int:
    return (dim + 63) // 64


def copy_path(path: Path) -> Path:
    """The int8 copy beside a sign file."""
    return path.with_suffix(".int8")


def copy_dtype(dim: int):
    import numpy as np

    return np.dtype([("id", "<i8"), ("vec", "i1", (dim,))])


def unit(block):
    """int8 rows → L2-normalised float32 rows."""
    import numpy as np

    m = np.asarray(block, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def pack_signs(matrix, mean):
    """(n, dim) floats → (n, words) uint64: bit i set where component i is above the mean's."""
    import numpy as np

    bits = np.packbits(matrix > mean, axis=1, bitorder="little")
    pad = words_for(matrix.shape[1]) * 8 - bits.shape[1]
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits).view(np.uint64)


def records(ids, tags, signs):
    """Rows for the file: (n, 2 + words) int64/uint64 words as one uint64 array."""
    import numpy as np

    out = np.empty((len(ids), 2 + signs.shape[1]), dtype=np.uint64)
    out[:, 0] = np.asarray(ids, dtype=np.int64).view(np.uint64)
    out[:, 1] = np.asarray(tags, dtype=np.int64).view(np.uint64)
    out[:, 2:] = signs
    return out


class Signs:
    """An open sign file (memory-mapped: opening reads only its header)."""

    def __init__(self, path: Path, header: dict, table, copy_fd: int):
        import base64  # here and in `write`, with numpy: a lexical recall needs neither

        import numpy as np

        self.path = path
        self.header = header
        self.table = table  # (n, 2 + words) uint64, memory-mapped
        # The int8 copy is read with pread, not mapped: the kernel maps ~64 KiB around every page a
        # mapping faults in, so a gather of 4,000 rows would add most of the file to the RSS.
        self.copy_fd = copy_fd
        self.copy_dtype = copy_dtype(int(header["dim"]))
        self.mean = np.frombuffer(base64.b64decode(header["mean"]), dtype=np.float16).astype(np.float32)
        stat = path.stat()
        self.identity = (stat.st_ino, stat.st_size)
        weakref.finalize(self, os.close, copy_fd)  # last: a failed __init__ leaves the closing to open_signs

    def __len__(self) -> int:
        return self.table.shape[0]

    @property
    def ids(self):
        return self.table[:, 0].view("int64")

    def last(self) -> tuple[int, int] | None:
        """(id, tag) of the last record."""
        if not len(self):
            return None
        row = self.table[-1, :2].view("int64")
        return int(row[0]), int(row[1])

    def check_order(self) -> None:
        import numpy as np

        ids = self.ids
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            raise Damaged("its records are out of order")

    def candidates(self, query, count: int):
        """Row numbers of the `count` records whose signs are nearest (Hamming) to the query's."""
        return self.candidates_each([query], count)[0]

    def candidates_each(self, queries, count: int) -> list:
        """`candidates` for each of `queries`, in one pass over the file (a query and its
        translation: the scan is bound by reading memory, and each block is read once for all)."""
        import numpy as np

        n = len(self)
        if n <= count:
            return [np.arange(n) for _ in queries]
        packed = pack_signs(np.asarray(queries, dtype=np.float32).reshape(len(queries), -1), self.mean)
        dists = np.empty((len(queries), n), dtype=np.uint16)
        work = (np.empty(BLOCK, dtype=np.uint64), np.empty(BLOCK, dtype=np.uint8), np.empty(BLOCK, dtype=np.uint8))
        for start in range(0, n, BLOCK):  # a block of records stays in cache across its words
            rows = self.table[start:start + BLOCK]
            for q, dist in zip(packed, dists):
                _hamming(rows, q, dist[start:start + len(rows)], work)
        return [_nearest_rows(dist, count) for dist in dists]

    def rescore(self, rows, query):
        """(ids, int8 vectors, cosines to the unit `query`) of these rows, from the int8 copy.
        Damaged when the copy's ids there are not the sign file's."""
        return self.rescore_each([rows], [query])[0]

    def rescore_each(self, rows_each, queries) -> list:
        """`rescore` for each (rows, unit query) pair, the rows they share read once (a query and
        its translation share about half of their candidates)."""
        import numpy as np

        rows_each = [np.sort(np.asarray(rows, dtype=np.int64)) for rows in rows_each]  # in file order
        union = rows_each[0] if len(rows_each) == 1 else np.unique(np.concatenate(rows_each))
        found = self._copy_rows(union)
        return [_cosines(found if len(rows_each) == 1 else found[np.searchsorted(union, rows)], query)
                for rows, query in zip(rows_each, queries)]

    def _copy_rows(self, rows):
        """The int8 copy's records at these rows (sorted), one `pread` each; Damaged when their ids
        are not the sign file's there."""
        import numpy as np

        size = self.copy_dtype.itemsize
        fd = self.copy_fd
        data = b"".join(map(os.pread, repeat(fd), repeat(size), (HEADER + rows * size).tolist()))  # ~10 % < a loop
        if len(data) != size * len(rows):
            raise Damaged(f"its int8 copy {copy_path(self.path).name} was cut short")
        found = np.frombuffer(data, dtype=self.copy_dtype)
        if not np.array_equal(found["id"], self.table[rows, 0].view(np.int64)):
            raise Damaged(f"its int8 copy {copy_path(self.path).name} is out of step with it")
        return found


def _cosines(found, query):
    """(ids, int8 vectors, cosines to the unit `query`) of records of the int8 copy (the float
    copy of the vectors lives only here: a query's is freed before the next one's is made)."""
    import numpy as np

    vecs = found["vec"]
    m = vecs.astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", m, m))
    norms[norms == 0] = 1.0
    return found["id"], vecs, (m @ query) / norms


def _hamming(rows, q, out, work) -> None:
    """`out` ← the Hamming distances between the signs of `rows` (records) and `q` (packed words).
    The bit counts of up to SUM8 words add up in a byte before the 16-bit sum (fewer passes over it)."""
    import numpy as np

    m = len(rows)
    word, ones, part = (w[:m] for w in work)
    words = q.shape[0]
    for group in range(0, words, SUM8):
        for i in range(group, min(group + SUM8, words)):
            np.bitwise_xor(rows[:, 2 + i], q[i], out=word)
            np.bitwise_count(word, out=part if i == group else ones)
            if i != group:
                np.add(part, ones, out=part)
        if group:
            np.add(out, part, out=out)
        else:
            out[:] = part


def _nearest_rows(dist, count: int):
    """Row numbers, in file order, of the `count` smallest Hamming distances (ties: the first in
    the file)."""
    import numpy as np

    # The distances are small integers: the cut is found from their histogram (no sort). A
    # sample's histogram bounds it first, so that only the rows at or below the bound are
    # counted exactly (a full histogram casts every distance to a machine integer: ~1.2 ms at 10^6);
    # a bound that holds too few rows falls back to all of them.
    sample = np.cumsum(np.bincount(dist[::SAMPLE]))
    bound = int(np.searchsorted(sample, -(-count // SAMPLE))) + 2
    rows = np.flatnonzero(dist <= bound)
    if len(rows) < count:
        rows = np.arange(len(dist))
    near = dist[rows]
    cumulative = np.cumsum(np.bincount(near))
    cut = int(np.searchsorted(cumulative, count))
    below = int(cumulative[cut - 1]) if cut else 0
    at = near == cut
    return rows[(near < cut) | (at & (np.cumsum(at) <= count - below))]


def open_signs(path: Path, fingerprint: str, epoch: str, dim: int) -> Signs | None:
    """The file, checked against the index's vectors; None when there is none. Damaged: unusable."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            head = f.read(HEADER)
    except FileNotFoundError:
        return None
    try:
        header = json.loads(head.rstrip(b"\0 ").decode("utf-8"))
        ok = header.get("format") == FORMAT and int(header["dim"]) > 0
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
        raise Damaged("its header cannot be read") from None
    if not ok or len(head) < HEADER:
        raise Damaged("its header cannot be read")
    if header.get("fingerprint") != fingerprint or header.get("epoch") != epoch or int(header["dim"]) != dim:
        raise Stale("it was made for other vectors (another model or another index)")
    copy_fd = _open_copy(copy_path(path), fingerprint, epoch, dim)
    try:
        width = (2 + words_for(dim)) * 8
        copy_rows = (os.fstat(copy_fd).st_size - HEADER) // copy_dtype(dim).itemsize
        rows = min((path.stat().st_size - HEADER) // width, copy_rows)  # a torn last append is not read
        if rows == 0:
            table = np.zeros((0, 2 + words_for(dim)), dtype=np.uint64)
        else:
            table = np.asarray(np.memmap(path, dtype=np.uint64, mode="r", offset=HEADER,
                                         shape=(rows, 2 + words_for(dim))))  # a plain array: memmap's indexing is slow
        return Signs(path, header, table, copy_fd)
    except (ValueError, KeyError, TypeError):
        os.close(copy_fd)
        raise Damaged("its header cannot be read") from None
    except BaseException:
        os.close(copy_fd)
        raise


def _open_copy(path: Path, fingerprint: str, epoch: str, dim: int) -> int:
    """The int8 copy opened for reading (a descriptor), checked against the sign file's identity."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise Damaged(f"its int8 copy {path.name} is missing") from None
    try:
        head = os.pread(fd, HEADER, 0)
        _check_copy_header(path, head, fingerprint, epoch, dim)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_copy_header(path: Path, head: bytes, fingerprint: str, epoch: str, dim: int) -> None:
    try:
        header = json.loads(head.rstrip(b"\0 ").decode("utf-8"))
        ok = isinstance(header, dict) and header.get("format") == COPY_FORMAT and len(head) == HEADER
    except (ValueError, UnicodeDecodeError):
        ok = False
    if not ok:
        raise Damaged(f"the header of its int8 copy {path.name} cannot be read")
    if header.get("fingerprint") != fingerprint or header.get("epoch") != epoch or header.get("dim") != dim:
        raise Damaged(f"its int8 copy {path.name} was made for other vectors")


def copy_records(ids, block):
    """Rows for the int8 copy."""
    import numpy as np

    out = np.empty(len(ids), dtype=copy_dtype(block.shape[1]))
    out["id"] = ids
    out["vec"] = block
    return out


def write(path: Path, fingerprint: str, epoch: str, mean, blocks) -> None:
    """Write a new sign file and its int8 copy from `blocks` of (ids, tags, int8 matrix),
    atomically (temp + rename each; a reader that opens one old and one new file finds their ids
    apart at its first search: Damaged)."""
    import base64

    import numpy as np

    mean16 = np.asarray(mean, dtype=np.float16)
    identity = {"fingerprint": fingerprint, "epoch": epoch, "dim": len(mean16)}
    header = json.dumps({"format": FORMAT, **identity,
                         "mean": base64.b64encode(mean16.tobytes()).decode("ascii")}).encode("utf-8")
    copy_header = json.dumps({"format": COPY_FORMAT, **identity}).encode("utf-8")
    if len(header) > HEADER:
        raise ValueError("the sign file header does not fit")
    mean32 = mean16.astype(np.float32)
    copy = copy_path(path)
    temp, copy_temp = (p.with_name(f".{p.name}.{os.getpid()}.tmp") for p in (path, copy))
    try:
        with open(temp, "wb") as f, open(copy_temp, "wb") as g:
            f.write(header.ljust(HEADER, b" "))
            g.write(copy_header.ljust(HEADER, b" "))
            for ids, tags, block in blocks:
                f.write(records(ids, tags, pack_signs(unit(block), mean32)).tobytes())
                g.write(copy_records(ids, block).tobytes())
            for h in (f, g):
                h.flush()
                os.fsync(h.fileno())
        os.replace(copy_temp, copy)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
        copy_temp.unlink(missing_ok=True)


def append(path: Path, signs: Signs, blocks_after) -> None:
    """Under an exclusive lock, append `blocks_after(last_id)`: (ids, tags, int8 matrix) blocks of
    the vectors with larger ids than the last record both files hold, to both. The files are never
    cut (a reader's mapping stays valid); a torn last record, or the records one file holds beyond
    the other (an append stopped between them), are written over with the same bytes."""
    import numpy as np

    from filelock import FileLock  # as the workspace's locks (portable); only writers get here

    width = signs.table.shape[1] * 8
    copy_width = signs.copy_dtype.itemsize
    with (FileLock(str(path.with_name(path.name + ".lock")), timeout=60), open(path, "r+b") as f,
          open(copy_path(path), "r+b") as g):
        rows = min((os.fstat(f.fileno()).st_size - HEADER) // width,
                   (os.fstat(g.fileno()).st_size - HEADER) // copy_width)
        last = int(np.fromfile(f, dtype=np.int64, count=1, offset=HEADER + (rows - 1) * width)[0]) if rows else 0
        f.seek(HEADER + rows * width)
        g.seek(HEADER + rows * copy_width)
        for ids, tags, block in blocks_after(last):
            f.write(records(ids, tags, pack_signs(unit(block), signs.mean)).tobytes())
            g.write(copy_records(ids, block).tobytes())
