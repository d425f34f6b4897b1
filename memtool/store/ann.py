"""Approximate nearest neighbours for many vectors: mean-centred sign bits, rescored exactly.

The file `.memory/vectors.signs` is derived (rebuilt from the index at any time): a 4 KiB JSON
header (format, embedding fingerprint, the index's vector epoch, dimension, the centring mean),
then one fixed-size record per vector in increasing id order: its id, a 64-bit tag of its hash,
and the signs of (vector − mean) packed into 64-bit words (48 bytes for 384 dimensions). The file
only grows by appends, under an exclusive lock (the index never gives an id out twice); a vector
removed from the index is simply not found when candidates are rescored, and the file is remade
once such records are many.

A search ranks every record by Hamming distance between its signs and the query's, and the best
candidates are then rescored exactly by the caller (`Vectors`). Why sign bits rather than a graph
index (HNSW): docs/benchmarks.md, "Approximate vector search".
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

FORMAT = "memtool-signs-1"
HEADER = 4096
BLOCK = 65_536  # records per pass of the Hamming scan (4 MiB at 384 dimensions: stays in cache)


class Damaged(Exception):
    """The file cannot be used as it is (say why); it is rebuilt from the index."""


class Stale(Damaged):
    """The file was made for other vectors (another model, or another index): made anew."""


def tag(hash_: str) -> int:
    """A signed 64-bit tag of a vector's hash: tells a record from another vector with the same id."""
    return int.from_bytes(hashlib.blake2b(hash_.encode(), digest_size=8).digest(), "little", signed=True)


def words_for(dim: int) -> int:
    return (dim + 63) // 64


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

    def __init__(self, path: Path, header: dict, table):
        import numpy as np

        self.path = path
        self.header = header
        self.table = table  # (n, 2 + words) uint64, memory-mapped
        self.mean = np.frombuffer(base64.b64decode(header["mean"]), dtype=np.float16).astype(np.float32)
        stat = path.stat()
        self.identity = (stat.st_ino, stat.st_size)

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
        """Ids of the `count` records whose signs are nearest (Hamming) to the query's."""
        import numpy as np

        n = len(self)
        if n <= count:
            return np.array(self.ids)
        q = pack_signs(np.asarray(query, dtype=np.float32)[None, :], self.mean)[0]
        dist = np.empty(n, dtype=np.uint16)
        block = BLOCK
        word = np.empty(block, dtype=np.uint64)
        ones = np.empty(block, dtype=np.uint8)
        for start in range(0, n, block):  # a block of records stays in cache across its words
            rows = self.table[start:start + block]
            m = len(rows)
            out = dist[start:start + m]
            out[:] = 0
            for i in range(q.shape[0]):
                np.bitwise_xor(rows[:, 2 + i], q[i], out=word[:m])
                np.bitwise_count(word[:m], out=ones[:m])
                np.add(out, ones[:m], out=out)
        # The distances are small integers: a histogram finds the cut in two passes (no sort).
        cumulative = np.cumsum(np.bincount(dist))
        cut = int(np.searchsorted(cumulative, count))
        below = np.flatnonzero(dist < cut)
        at = np.flatnonzero(dist == cut)[:count - len(below)]
        return self.ids[np.concatenate([below, at])]


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
    width = (2 + words_for(dim)) * 8
    rows = (path.stat().st_size - HEADER) // width  # a torn last append is not read
    if rows == 0:
        table = np.zeros((0, 2 + words_for(dim)), dtype=np.uint64)
    else:
        table = np.memmap(path, dtype=np.uint64, mode="r", offset=HEADER, shape=(rows, 2 + words_for(dim)))
    try:
        return Signs(path, header, table)
    except (ValueError, KeyError, TypeError):
        raise Damaged("its header cannot be read") from None


def write(path: Path, fingerprint: str, epoch: str, mean, blocks) -> None:
    """Write a new file from `blocks` of (ids, tags, float matrix), atomically (temp + rename)."""
    import numpy as np

    mean16 = np.asarray(mean, dtype=np.float16)
    header = json.dumps({"format": FORMAT, "fingerprint": fingerprint, "epoch": epoch, "dim": len(mean16),
                         "mean": base64.b64encode(mean16.tobytes()).decode("ascii")}).encode("utf-8")
    if len(header) > HEADER:
        raise ValueError("the sign file header does not fit")
    mean32 = mean16.astype(np.float32)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as f:
            f.write(header.ljust(HEADER, b" "))
            for ids, tags, matrix in blocks:
                f.write(records(ids, tags, pack_signs(matrix, mean32)).tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def append(path: Path, signs: Signs, blocks_after) -> None:
    """Under an exclusive lock, append `blocks_after(last_id)`: (ids, tags, matrix) blocks of the
    vectors with larger ids than the file's last record. The file is never cut or rewritten in
    place (a reader's mapping stays valid); a torn last record is written over."""
    import numpy as np

    from filelock import FileLock  # as the workspace's locks (portable); only writers get here

    width = signs.table.shape[1] * 8
    with FileLock(str(path.with_name(path.name + ".lock")), timeout=60), open(path, "r+b") as f:
        rows = (os.fstat(f.fileno()).st_size - HEADER) // width
        last = int(np.fromfile(f, dtype=np.int64, count=1, offset=HEADER + (rows - 1) * width)[0]) if rows else 0
        f.seek(HEADER + rows * width)
        for ids, tags, matrix in blocks_after(last):
            f.write(records(ids, tags, pack_signs(matrix, signs.mean)).tobytes())
