"""Approximate nearest neighbours for many vectors: mean-centred sign bits, rescored exactly.

The file `.memory/vectors.signs` is derived (rebuilt from the index at any time): a 4 KiB JSON
header (format, embedding fingerprint, the index's vector epoch, dimension, the centring mean,
records per block), then blocks of `block` records in increasing id order, each block stored
column by column: the records' ids, then a 64-bit tag of each one's hash, then the signs of
(vector − mean) packed into 64-bit words (six at 384 dimensions), each word of the block's records
contiguous. The scan reads only the sign words, each a contiguous run (half the CPU of the row
layout, whose records interleaved ids, tags and words: docs/benchmarks-history.md). The file is whole
blocks long, the last one filled up to its first zero id (ids start at 1); it only grows, under an
exclusive lock (the index never gives an id out twice): a new block is added (`ftruncate`) before
a record is written in it, and a record counts once its id is written, after its tag and words, so
a process killed mid-append leaves the records before it. A vector removed from the index is
simply not found when candidates are rescored, and the file is remade once such records are many.
A file of the row layout (format 1, before 2026-12-01) is rewritten in this one from its own
records (`upgrade`), with a notice. The temp files of a writer killed midway are swept by the next
writer (`sweep_temps`).

Beside it, `.memory/vectors.int8` holds the same records' int8 vectors (as the index stores
them), row for row: a JSON header like the sign file's, then per vector its id and its `dim` int8
components. The candidates are rescored from this copy (a few thousand `pread`s of one row each) instead of
as many random row reads from SQLite, which cost most of a search at 10^6.
The two files are written, appended and checked together (the copy's rows first: a record is
searched once both hold it): a missing, foreign or damaged copy is a damaged index, rebuilt.

A search ranks every record by Hamming distance between its signs and the query's; the best
of them are narrowed further by an asymmetric estimate (the query's own components summed over
each record's set bits: `narrowed_each`; 1,000 of 8,007 at 10^6, store/vectors.py), and those
are then rescored exactly by the caller (`Vectors`). Why sign bits rather than a graph
index (HNSW): docs/benchmarks.md, "Approximate vector search".
"""

from __future__ import annotations

import json
import os
from itertools import repeat
from pathlib import Path

from memtool.digests import blake2b

FORMAT = "memtool-signs-2"  # blocks of columns
ROW_FORMAT = "memtool-signs-1"  # one record after another (before 2026-12-01): upgraded on open
COPY_FORMAT = "memtool-int8-1"
HEADER = 4096
BLOCK = 32_768  # records per block of the file and per pass of the scan (1.5 MiB of signs at 384 dimensions)
SUM8 = 3  # 64-bit words whose bit counts are summed in a byte before the 16-bit distance (3 × 64 < 256)
SAMPLE = 16  # every SAMPLE-th distance bounds the cut of the nearest rows


class Damaged(Exception):
    """The file cannot be used as it is (say why); it is rebuilt from the index."""


class Stale(Damaged):
    """The file was made for other vectors (another model, or another index): made anew."""


class Outdated(Damaged):
    """The file is of the row layout (ROW_FORMAT): `upgrade` rewrites it from its own records."""


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
    """An open sign file (memory-mapped: opening reads only its header and its last block's ids)."""

    def __init__(self, path: Path, header: dict, blocks, count: int, fd: int, copy_fd: int):
        import base64  # here and in `write`, with numpy and weakref: a lexical recall needs none of them
        import weakref

        import numpy as np

        self.path = path
        # The descriptor the header and the blocks were read through, held open for the Signs'
        # life: its inode is the one `append` checks (never reused meanwhile, even with no mapping).
        self.fd = fd
        self.header = header
        self.blocks = blocks  # (blocks, 2 + words, block) uint64, memory-mapped: ids, tags, sign words
        self.count = count  # records in use (the last block's are followed by zeros)
        # The int8 copy is read with pread, not mapped: the kernel maps ~64 KiB around every page a
        # mapping faults in, so a gather of 4,000 rows would add most of the file to the RSS.
        self.copy_fd = copy_fd
        self.copy_dtype = copy_dtype(int(header["dim"]))
        self.mean = np.frombuffer(base64.b64decode(header["mean"]), dtype=np.float16).astype(np.float32)
        stat = os.fstat(fd)
        self.identity = (stat.st_ino, stat.st_size)  # of the file opened, as `Vectors` compares the path's
        self.copy_inode = os.fstat(copy_fd).st_ino
        self._close = weakref.finalize(self, _close_all, fd, copy_fd)  # last: a failed __init__ leaves the closing to open_signs

    def close(self) -> None:
        """Close its descriptors now (else when it is collected); it is not used after."""
        self._close()

    def __len__(self) -> int:
        return self.count

    @property
    def block(self) -> int:
        return self.blocks.shape[2]

    @property
    def ids(self):
        """Every record's id, in file order (a copy)."""
        return self.blocks[:, 0, :].reshape(-1)[:self.count].view("int64")

    def ids_at(self, rows):
        """The ids of these records (row numbers)."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        return self.blocks[rows // self.block, 0, rows % self.block].view(np.int64)

    def last(self) -> tuple[int, int] | None:
        """(id, tag) of the last record."""
        if not self.count:
            return None
        b, slot = divmod(self.count - 1, self.block)
        row = self.blocks[b, :2, slot].view("int64")
        return int(row[0]), int(row[1])

    def check_order(self) -> None:
        import numpy as np

        before = 0  # ids are positive
        for b, start in enumerate(range(0, self.count, self.block)):
            ids = self.blocks[b, 0, :min(self.block, self.count - start)].view(np.int64)
            if ids[0] <= before or not bool(np.all(ids[1:] > ids[:-1])):
                raise Damaged("its records are out of order")
            before = ids[-1]

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
        size = self.block
        work = (np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint8), np.empty(size, dtype=np.uint8))
        for b, start in enumerate(range(0, n, size)):  # a block's words stay in cache across the queries
            words = self.blocks[b, 2:, :min(size, n - start)]
            for q, dist in zip(packed, dists):
                _hamming(words, q, dist[start:start + words.shape[1]], work)
        return [_nearest_rows(dist, count) for dist in dists]

    def narrowed_each(self, rows_each, queries, keep: int) -> list:
        """Of each query's candidate rows, the `keep` whose signs estimate the highest inner
        product with the query itself (not its signs), in file order: the asymmetric estimate
        Σ qᵢ·bitᵢ, read from the signs the scan already brought into memory, ranks the
        Hamming candidates far better than their distance: at 10^6 the best eighth of twice as
        many, read from the int8 copy, holds more of the exact neighbours than all of the
        Hamming candidates did before (docs/benchmarks-history.md, "hyb10 session")."""
        import numpy as np

        out = []
        for rows, query in zip(rows_each, queries):
            rows = np.asarray(rows, dtype=np.int64)
            if len(rows) <= keep:
                out.append(np.sort(rows))
                continue
            estimate = _estimates(self._signs_at(rows), query)
            out.append(np.sort(rows[np.argsort(-estimate, kind="stable")[:keep]]))
        return out

    def _signs_at(self, rows):
        """The sign words of these records (row numbers), one row of words per record: taken from
        the flat file by position (half the time of indexing the blocks by block and offset)."""
        import numpy as np

        size, columns = self.block, self.blocks.shape[1]
        first = rows // size * (columns * size) + rows % size + 2 * size  # each record's first sign word
        return self.blocks.reshape(-1).take(first[:, None] + np.arange(columns - 2) * size)

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
        if not np.array_equal(found["id"], self.ids_at(rows)):
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


def _estimates(words, query):
    """Σ qᵢ·bitᵢ for each record's signs (`words`: one row of packed words per record) and the
    float `query`: a table of each byte value's sum per byte of the signs, then one look-up
    per byte (48 at 384 dimensions)."""
    import numpy as np

    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)
    width = words.shape[1] * 64
    q = np.zeros(width, dtype=np.float32)
    q[:len(query)] = query
    table = (bits @ q.reshape(-1, 8).T).T.ravel()  # byte position × byte value → the bits' share
    signs = np.ascontiguousarray(words).view(np.uint8)
    return table.take(signs + np.arange(0, width // 8 * 256, 256)) @ np.ones(width // 8, dtype=np.float32)


def _hamming(words, q, out, work) -> None:
    """`out` ← the Hamming distances between the records' signs (`words`: one row per sign word,
    one column per record) and `q` (packed words). The bit counts of up to SUM8 words add up in a
    byte before the 16-bit sum (fewer passes over it)."""
    import numpy as np

    m = words.shape[1]
    word, ones, part = (w[:m] for w in work)
    count = q.shape[0]
    for group in range(0, count, SUM8):
        for i in range(group, min(group + SUM8, count)):
            np.bitwise_xor(words[i], q[i], out=word)
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
    """The file, checked against the index's vectors; None when there is none. Damaged: unusable
    (Outdated: of the row layout, for `upgrade`). Its header, blocks and identity are read through
    one descriptor: a file renamed over the path meanwhile is not mixed with the one opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    fds = [fd]
    try:
        header = _header(os.pread(fd, HEADER, 0))
        if header.get("fingerprint") != fingerprint or header.get("epoch") != epoch or int(header["dim"]) != dim:
            raise Stale("it was made for other vectors (another model or another index)")
        if header["format"] == ROW_FORMAT:
            raise Outdated("it is of the row layout (memtool-signs-1)")
        fds.append(_open_copy(copy_path(path), fingerprint, epoch, dim))
        try:
            with open(fd, "rb", closefd=False) as f:  # numpy maps a file object
                blocks, count = _mapped(f, header)
            copy_rows = (os.fstat(fds[1]).st_size - HEADER) // copy_dtype(dim).itemsize
            return Signs(path, header, blocks, min(count, copy_rows), *fds)  # a torn last append is not read
        except (ValueError, KeyError, TypeError):
            raise Damaged("its header cannot be read") from None
    except BaseException:
        _close_all(*fds)
        raise


def _close_all(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


def _header(head: bytes) -> dict:
    """A sign file's header (either layout); Damaged when it is not one."""
    try:
        header = json.loads(head.rstrip(b"\0 ").decode("utf-8"))
        ok = (header.get("format") == ROW_FORMAT or (header.get("format") == FORMAT and int(header["block"]) > 0)) \
            and int(header["dim"]) > 0 and len(head) == HEADER
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
        ok = False
    if not ok:
        raise Damaged("its header cannot be read")
    return header


def _mapped(f, header: dict):
    """(blocks, records in use) of an open sign file of the column layout: the blocks mapped
    read-only as one (blocks, 2 + words, block) uint64 array. Damaged when it is not whole blocks
    long (nothing of memtool's cuts it: a new block is added in one `ftruncate`)."""
    import numpy as np

    block, columns = int(header["block"]), 2 + words_for(int(header["dim"]))
    count, rest = divmod(os.fstat(f.fileno()).st_size - HEADER, block * columns * 8)
    if rest:
        raise Damaged("it was cut short")
    if count == 0:
        return np.zeros((0, columns, block), dtype=np.uint64), 0
    blocks = np.asarray(np.memmap(f, dtype=np.uint64, mode="r", offset=HEADER,
                                  shape=(count, columns, block)))  # a plain array: memmap's indexing is slow
    return blocks, _in_use(blocks)


def _in_use(blocks) -> int:
    """Records written: up to the first zero id of the last block that starts with a record (an
    append adds a block before writing in it, and writes each record's id last)."""
    import numpy as np

    block = blocks.shape[2]
    for b in range(blocks.shape[0] - 1, -1, -1):
        ids = blocks[b, 0]
        if ids[0]:
            zeros = np.flatnonzero(ids == 0)
            return b * block + (int(zeros[0]) if len(zeros) else block)
    return 0


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


def _temp(path: Path) -> Path:
    """This process's temp file for `path` (renamed over it when whole)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def sweep_temps(path: Path) -> None:
    """Remove the temp files of the sign file and its copy left by a process killed while writing
    them (`.vectors.signs.<pid>.tmp`: ~64 MiB at 10^6). A temp whose process still runs (or whose
    pid was given to another process) stays; so does this process's own."""
    names = {f".{p.name}." for p in (path, copy_path(path))}
    for temp in path.parent.glob(".*.tmp"):
        prefix, _, pid = temp.name[:-len(".tmp")].rpartition(".")
        if prefix + "." in names and pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            try:
                temp.unlink(missing_ok=True)
            except OSError:  # e.g. a read-only folder: the write that follows says why, the sweep waits
                pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it runs
        return True
    return True


def write(path: Path, fingerprint: str, epoch: str, mean, blocks, block: int = BLOCK) -> None:
    """Write a new sign file and its int8 copy from `blocks` of (ids, tags, int8 matrix),
    atomically (temp + rename each; a reader that opens one old and one new file finds their ids
    apart at its first search: Damaged). `block`: records per block of the file."""
    import base64

    import numpy as np

    mean16 = np.asarray(mean, dtype=np.float16)
    identity = {"fingerprint": fingerprint, "epoch": epoch, "dim": len(mean16)}
    header = {"format": FORMAT, **identity, "block": block, "mean": base64.b64encode(mean16.tobytes()).decode("ascii")}
    copy_header = json.dumps({"format": COPY_FORMAT, **identity}).encode("utf-8")
    mean32 = mean16.astype(np.float32)
    copy = copy_path(path)
    sweep_temps(path)
    temp, copy_temp = _temp(path), _temp(copy)
    try:
        with open(temp, "wb", buffering=0) as f, open(copy_temp, "wb", buffering=0) as g:
            f.write(_header_bytes(header))
            g.write(copy_header.ljust(HEADER, b" "))
            _append_records(f.fileno(), g.fileno(), 0, header, mean32, blocks)
            for h in (f, g):
                os.fsync(h.fileno())
        os.replace(copy_temp, copy)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
        copy_temp.unlink(missing_ok=True)


def _header_bytes(header: dict) -> bytes:
    data = json.dumps(header).encode("utf-8")
    if len(data) > HEADER:
        raise ValueError("the sign file header does not fit")
    return data.ljust(HEADER, b" ")


def _append_records(fd: int, copy_fd: int, start: int, header: dict, mean, blocks) -> None:
    """Write `blocks` of (ids, tags, int8 matrix) as records `start`, `start` + 1, … of a sign file
    (`fd`) and its int8 copy (`copy_fd`): the copy's rows first, then the signs."""
    copy_width = copy_dtype(int(header["dim"])).itemsize
    row = start
    for ids, tags, matrix in blocks:
        os.pwrite(copy_fd, copy_records(ids, matrix).tobytes(), HEADER + row * copy_width)
        _put_records(fd, row, records(ids, tags, pack_signs(unit(matrix), mean)), int(header["block"]))
        row += len(ids)


def _put_records(fd: int, start: int, rows, block: int) -> None:
    """Write `rows` ((n, 2 + words) uint64: id, tag, sign words) as records `start`, … of a sign
    file of the column layout: block by block, a block added whole before anything is written in
    it, each record's tag and words before its id (what counts it; see `_in_use`)."""
    columns = rows.shape[1]
    done = 0
    while done < len(rows):
        b, slot = divmod(start + done, block)
        take = min(block - slot, len(rows) - done)
        base = HEADER + b * block * columns * 8
        if os.fstat(fd).st_size < base + block * columns * 8:
            os.ftruncate(fd, base + block * columns * 8)
        for c in [*range(1, columns), 0]:
            os.pwrite(fd, rows[done:done + take, c].tobytes(), base + (c * block + slot) * 8)
        done += take


def append(path: Path, signs: Signs, blocks_after) -> None:
    """Under an exclusive lock, append `blocks_after(last_id)`: (ids, tags, int8 matrix) blocks of
    the vectors with larger ids than the last record both files hold, to both. The files are never
    cut (a reader's mapping stays valid); a torn last record, or the records one file holds beyond
    the other (an append stopped between them), are written over with the same bytes. Nothing is
    written when the file is no longer the one `signs` opened (remade meanwhile: the caller's
    check of the reopened file sees it)."""
    from filelock import FileLock  # as the workspace's locks (portable); only writers get here

    with (FileLock(str(path.with_name(path.name + ".lock")), timeout=60), open(path, "r+b", buffering=0) as f,
          open(copy_path(path), "r+b", buffering=0) as g):
        sweep_temps(path)
        if os.fstat(f.fileno()).st_ino != signs.identity[0] or os.fstat(g.fileno()).st_ino != signs.copy_inode:
            return
        blocks, count = _mapped(f, signs.header)
        rows = min(count, (os.fstat(g.fileno()).st_size - HEADER) // signs.copy_dtype.itemsize)
        last = int(blocks[(rows - 1) // signs.block, 0, (rows - 1) % signs.block].view("int64")) if rows else 0
        del blocks
        _append_records(f.fileno(), g.fileno(), rows, signs.header, signs.mean, blocks_after(last))


def upgrade(path: Path) -> int:
    """Rewrite a sign file of the row layout (ROW_FORMAT) in the column layout from its own
    records, atomically (temp + rename), under the append lock; the int8 copy and the index are not
    read. Returns how many records it holds (a torn last record is left out: appended again).
    Damaged when it cannot be read."""
    import numpy as np

    from filelock import FileLock

    with FileLock(str(path.with_name(path.name + ".lock")), timeout=60), open(path, "rb") as f:
        header = _header(f.read(HEADER))
        if header["format"] != ROW_FORMAT:
            with open(path, "rb") as again:
                return _mapped(again, header)[1]  # upgraded meanwhile by another process
        columns = 2 + words_for(int(header["dim"]))
        count = (os.fstat(f.fileno()).st_size - HEADER) // (columns * 8)
        table = np.memmap(f, dtype=np.uint64, mode="r", offset=HEADER, shape=(count, columns)) if count else ()
        header = {**header, "format": FORMAT, "block": BLOCK}
        sweep_temps(path)
        temp = _temp(path)
        try:
            with open(temp, "wb", buffering=0) as out:
                out.write(_header_bytes(header))
                for start in range(0, count, BLOCK):
                    _put_records(out.fileno(), start, np.asarray(table[start:start + BLOCK]), BLOCK)
                os.fsync(out.fileno())
            del table
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
    return count
