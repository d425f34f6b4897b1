"""Reading a remote's manifest in tests as the round sees it: a sharded root (format 2) assembled from
its shards into the whole manifest (format 1); a format-1 manifest as it is."""

from __future__ import annotations

import json
from pathlib import Path


def whole(data: bytes, read_object) -> dict:
    root = json.loads(data)
    if root.get("format") != "memtool-sync/2":
        return root
    files: dict = {}
    for rev in root["shards"].values():
        files.update(json.loads(read_object(rev))["files"])
    rest = {k: v for k, v in root.items() if k not in ("shards", "depth")}
    return {**rest, "format": "memtool-sync/1", "files": files}


def folder_manifest(remote: Path) -> dict:
    return whole((remote / "manifest.json").read_bytes(), lambda r: (remote / "objects" / r[:2] / r).read_bytes())
