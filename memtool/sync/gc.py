"""`mem sync gc`: delete the revisions on a remote that its manifest no longer names (what `mem forget`
needs after the next sync published files without the forgotten text).

Only revisions older than `min_age` seconds go: another machine uploads a revision before its
manifest names it, so a younger unnamed one may be part of a sync in flight. A machine whose last
agreed base was deleted merges its next edits without a base (overlaps become conflicts; nothing
is dropped). `referenced` is pure."""

from __future__ import annotations

import json
import re
from typing import Callable

from memtool.errors import UsageError
from memtool.sync.manifest import parse_manifest
from memtool.sync.remotes import Remote

_REV = re.compile(r"[0-9a-f]{64}")
MIN_AGE = 600.0  # seconds: longer than any sync round takes between uploading and publishing


def referenced(*documents) -> set[str]:
    """Every revision the documents name: each 64-hex string anywhere in them (file revisions,
    conflict versions and bases, the shards a root names). Keeping too much is safe; too little is not."""
    out: set[str] = set()
    stack = list(documents)
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str) and _REV.fullmatch(x):
            out.add(x)
    return out


def collect(store: Remote, manifest: Remote, stored_name: Callable[[str], str], min_age: float = MIN_AGE,
            dry_run: bool = False) -> dict:
    """Delete (or with `dry_run` only list) the unnamed revisions older than `min_age` seconds.

    `store` lists and deletes the raw objects; `manifest` reads the manifest as sync does (keyed and
    assembled from its shards); `stored_name` maps a revision to its object's name (keyed names on
    an encrypted remote)."""
    root = manifest.inner.read_manifest(None) if hasattr(manifest, "inner") else None
    got = manifest.read_manifest(None)
    if got is None:
        raise UsageError(f"{store.url} has no manifest, so nothing there is known to be unused",
                         "run mem sync first; gc deletes only what a manifest no longer names")
    docs = [parse_manifest(got[0], store.url)]
    if root is not None:
        try:
            docs.append(json.loads(root[0]))
        except (ValueError, RecursionError):
            pass
    names = {stored_name(rev) for rev in referenced(*docs)}
    unnamed = [(rev, age) for rev, age in store.list_objects() if rev not in names]
    old = sorted(rev for rev, age in unnamed if age >= min_age)
    if not dry_run:
        for rev in old:
            store.delete_object(rev)
    return {"remote": store.url, "kept": len(names), "deleted": [] if dry_run else old,
            "would_delete": old if dry_run else [], "too_young": len(unnamed) - len(old)}
