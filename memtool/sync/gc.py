"""`mem sync gc`: delete the revisions on a remote that its manifest no longer names (what `mem forget`
needs after the next sync published files without the forgotten text).

Only revisions older than `min_age` seconds go: another machine uploads a revision before its
manifest names it, so a younger unnamed one may be part of a sync in flight. A machine whose last
agreed base was deleted merges its next edits without a base (overlaps become conflicts; nothing
is dropped). `referenced` is pure."""

from __future__ import annotations

from memtool.errors import UsageError
from memtool.sync.manifest import parse_manifest
from memtool.sync.remotes import Remote

MIN_AGE = 600.0  # seconds: longer than any sync round takes between uploading and publishing


def referenced(manifest: dict) -> set[str]:
    """Every revision a manifest names."""
    return {e["rev"] for e in manifest.get("files", {}).values() if isinstance(e, dict) and isinstance(e.get("rev"), str)}


def collect(remote: Remote, min_age: float = MIN_AGE, dry_run: bool = False) -> dict:
    """Delete (or with `dry_run` only list) the unnamed revisions older than `min_age` seconds."""
    got = remote.read_manifest(None)
    if got is None:
        raise UsageError(f"{remote.url} has no manifest, so nothing there is known to be unused",
                         "run mem sync first; gc deletes only what a manifest no longer names")
    names = referenced(parse_manifest(got[0], remote.url))
    unnamed = [(rev, age) for rev, age in remote.list_objects() if rev not in names]
    old = sorted(rev for rev, age in unnamed if age >= min_age)
    if not dry_run:
        for rev in old:
            remote.delete_object(rev)
    return {"remote": remote.url, "kept": len(names), "deleted": [] if dry_run else old,
            "would_delete": old if dry_run else [], "too_young": len(unnamed) - len(old)}
