"""A sharded manifest, so that a sync after one edit moves bytes in proportion to the change, not to
the memory: the manifest on the remote is a small root naming immutable shards.

    manifest.json   {"format": "memtool-sync/2", "memory_id", "generation", "updated", "device",
                     "conflicts"?, "depth": d, "shards": {"<prefix>": "<sha256 of the shard>"}}
    objects/…       each shard is an object like a revision (sealed and HMAC-named on an encrypted
                    remote): {"files": {path: entry}} for the paths whose SHA-256 starts with <prefix>
                    (the first d bits of the path's SHA-256: 2^d shards, d chosen so that the root and
                    one shard stay near √(2n) entries each)

The root is replaced by compare-and-swap exactly as the whole manifest was; shards are uploaded
before the root names them. Above this layer the round sees the whole manifest (format 1, assembled
deterministically), so planning, the generation check and the cache are unchanged. A remote that holds
a format-1 manifest stays format 1 (read and written whole): old remotes keep working.
Shards this machine has seen are kept in `.memory/sync/shards/` and never fetched twice.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

from memtool.errors import WorkspaceError
from memtool.safe_writes import replace_atomically
from memtool.sync.manifest import FORMAT, encode, rev_of
from memtool.sync.plan import REV
from memtool.sync.remotes import MAX_OBJECT_BYTES, NOT_MODIFIED, DamagedObject, OversizeObject, Remote

ROOT_FORMAT = "memtool-sync/2"
MAX_DEPTH = 16


def depth_for(files: int) -> int:
    """Bits of the shard key: 2^d shards near √(2n) (a root entry is about half a file entry), so the
    root and one shard stay about equal and a one-edit sync moves O(√n) manifest bytes."""
    if files < 32:
        return 0
    return max(0, min(MAX_DEPTH, round(math.log2(math.sqrt(2 * files)))))


def shard_of(path: str, depth: int) -> str:
    """The shard key of `path`: the first `depth` bits of its SHA-256, in hex ("" for one shard)."""
    if depth == 0:
        return ""
    value = int.from_bytes(hashlib.sha256(path.encode("utf-8")).digest()[:4], "big") >> (32 - depth)
    return f"{value:0{(depth + 3) // 4}x}"


def split(files: dict, depth: int) -> dict[str, bytes]:
    """The shards of `files`: prefix → bytes (deterministic)."""
    groups: dict[str, dict] = {}
    for path, entry in files.items():
        groups.setdefault(shard_of(path, depth), {})[path] = entry
    return {prefix: encode({"files": group}) for prefix, group in sorted(groups.items())}


class ShardedRemote:
    """Wraps a remote (plain or sealed): whole manifests above, root and shards below."""

    def __init__(self, inner: Remote, cache: Path, memory_id: str | None = None):
        self.inner, self.cache, self.memory_id = inner, cache, memory_id
        self.url = inner.url
        self.encrypted = getattr(inner, "encrypted", False)
        self.traffic: Counter = Counter()  # shard_read, shard_write, bytes_down, bytes_up (manifest side)

    # --- the manifest ------------------------------------------------------------------------

    def read_manifest(self, etag: str | None = None):
        got = self.inner.read_manifest(etag)
        if got is None or got is NOT_MODIFIED:
            return got
        data, tag = got
        self.traffic["bytes_down"] += len(data)
        try:
            root = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return got  # not ours: the round says so
        if not isinstance(root, dict) or root.get("format") != ROOT_FORMAT:
            self._set_format("1")
            return got
        self._set_format("2")
        if self.memory_id and root.get("memory_id") != self.memory_id:  # another memory: no shard is read,
            whole = {k: v for k, v in root.items() if k not in ("shards", "depth")}  # the round refuses it
            return encode({**whole, "format": FORMAT, "files": {}}), tag
        return self._assemble(root), tag

    def write_manifest(self, data: bytes, etag: str | None) -> str:
        if etag is not None and (self._format() or self._probe()) == "1":
            self.traffic["bytes_up"] += len(data)
            return self.inner.write_manifest(data, etag)
        manifest = json.loads(data)
        files = manifest.pop("files")
        manifest.pop("format", None)
        depth = depth_for(len(files))
        shards = {}
        for prefix, blob in split(files, depth).items():
            rev = rev_of(blob)
            shards[prefix] = rev
            if not (self.cache / rev).exists():
                self.traffic["shard_write"] += 1
                self.traffic["bytes_up"] += len(blob)
                self.inner.put_object(rev, blob)
                self._keep(rev, blob)
        root = encode({**manifest, "format": ROOT_FORMAT, "depth": depth, "shards": shards})
        self.traffic["bytes_up"] += len(root)
        tag = self.inner.write_manifest(root, etag)
        self._set_format("2")
        return tag

    def _assemble(self, root: dict) -> bytes:
        shards, depth = root.get("shards"), root.get("depth")
        if (not isinstance(shards, dict) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH
                or not all(isinstance(r, str) and REV.fullmatch(r) for r in shards.values())):
            raise WorkspaceError(f"the manifest on {self.url} is not a memtool sync manifest (malformed shard list)",
                                 "point sync at a folder or prefix used only by memtool")
        files: dict = {}
        for prefix, rev in sorted(shards.items()):
            part = self._shard(rev)
            if not all(isinstance(p, str) and shard_of(p, depth) == prefix for p in part):
                raise WorkspaceError(f"a manifest shard on {self.url} names paths outside its shard",
                                     "the remote was changed by hand; nothing was changed here")
            files.update(part)
        self._prune(set(shards.values()))
        whole = {k: v for k, v in root.items() if k not in ("shards", "depth")}
        return encode({**whole, "format": FORMAT, "files": dict(sorted(files.items()))})

    def _shard(self, rev: str) -> dict:
        try:
            blob = (self.cache / rev).read_bytes()
        except FileNotFoundError:
            self.traffic["shard_read"] += 1
            try:
                blob = self.inner.get_object(rev)
            except OversizeObject as exc:  # the manifest cannot be read whole: nothing is decided from a part
                raise WorkspaceError(f"a manifest shard on {self.url} ({rev[:12]}) is {exc.size:,} bytes, over the "
                                     f"limit of {MAX_OBJECT_BYTES:,}; it was not read and nothing was changed here",
                                     "the remote was changed by hand; point sync at a folder or prefix used only "
                                     "by memtool") from None
            self.traffic["bytes_down"] += len(blob)
            if rev_of(blob) != rev:
                raise DamagedObject(f"a manifest shard on {self.url} does not match its hash",
                                    "the remote copy is damaged; sync cannot read the manifest") from None
            self._keep(rev, blob)
        try:
            files = json.loads(blob)["files"]
            if not isinstance(files, dict):
                raise ValueError
        except (ValueError, KeyError, TypeError, RecursionError):  # (nested past Python's limit)
            raise WorkspaceError(f"a manifest shard on {self.url} is malformed", "the remote was changed by hand") from None
        return files

    # --- the local shard cache ---------------------------------------------------------------------

    def _keep(self, rev: str, blob: bytes) -> None:
        self.cache.mkdir(parents=True, exist_ok=True)
        replace_atomically(self.cache / rev, blob)

    def _prune(self, current: set[str]) -> None:
        for path in self.cache.glob("*"):
            if REV.fullmatch(path.name) and path.name not in current:
                path.unlink(missing_ok=True)

    def _probe(self) -> str:
        """The remote's format, read from its manifest (when this machine never recorded it)."""
        self.read_manifest()
        return self._format() or "2"

    def _format(self) -> str | None:
        try:
            return (self.cache / "FORMAT").read_text().strip()
        except FileNotFoundError:
            return None

    def _set_format(self, fmt: str) -> None:
        if self._format() != fmt:
            self.cache.mkdir(parents=True, exist_ok=True)
            replace_atomically(self.cache / "FORMAT", fmt.encode())

    # --- objects pass through ---------------------------------------------------------------------

    def put_object(self, rev: str, data: bytes, replace: bool = False) -> None:
        self.inner.put_object(rev, data, replace)

    def get_object(self, rev: str) -> bytes:
        return self.inner.get_object(rev)

    def sweep_temp(self) -> int:
        return self.inner.sweep_temp()

    def read_named(self, name: str) -> bytes | None:
        return self.inner.read_named(name)

    def create_named(self, name: str, data: bytes) -> bool:
        return self.inner.create_named(name, data)

    def stored_name(self, rev: str) -> str:
        return self.inner.stored_name(rev) if hasattr(self.inner, "stored_name") else rev
