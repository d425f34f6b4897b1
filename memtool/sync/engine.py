"""`mem sync` and its subcommands: a round with retries (the round itself is `round.py`), status,
resolve, the off switch, and restoring backups."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from memtool.errors import ProviderUnavailable, UsageError, WorkspaceError
from memtool.sync.encryption import SyncKeyError, key_line, parse_marker
from memtool.sync.keys import KEY_HINT, Unlocked, create_key_file, open_remote_keyed, read_key_file
from memtool.sync.local import sync_files
from memtool.sync.manifest import conflict_listing, parse_manifest, rev_of, safe_device, shown
from memtool.sync.merge import merge3
from memtool.sync.remotes import FolderRemote, StaleManifest, open_remote
from memtool.sync.round import Round
from memtool.sync.shards import ShardedRemote
from memtool.sync.state import BaseEntry, SyncBlocked, SyncState, SyncStopped
from memtool.workspace import Workspace, home_path

__all__ = ["run", "status", "resolve", "set_off", "restore", "SyncBlocked"]

ATTEMPTS = 6


def run(ws: Workspace, url: str | None = None, *, endpoint_url: str | None = None, region: str | None = None,
        configured: str | None = None, progress: dict | None = None, encrypt: bool = False,
        key_file: Path | None = None, passphrase: str | None = None) -> dict:
    """Sync the workspace with `url` (else the bound or configured remote); `encrypt` makes a new remote
    encrypted (the key from `key_file`, else `passphrase`, else $MEM_SYNC_PASSPHRASE)."""
    state = SyncState(ws)
    off = state.off()
    if off:
        raise SyncBlocked(f"sync is off in this workspace (since {off.get('since', '?')})",
                          "switch it back on with: mem sync on")
    binding = state.binding()
    url = url or (binding or {}).get("remote") or configured
    if not url:
        raise UsageError("no remote to sync with",
                         "give one: mem sync /path/to/folder  or  mem sync s3://bucket/prefix")
    remote = open_remote(url, endpoint_url=endpoint_url, region=region)
    if isinstance(remote, FolderRemote) and remote.root.is_relative_to(ws.root):
        raise UsageError(f"the remote {remote.url} is {'this workspace' if remote.root == ws.root else 'inside this workspace'}"
                         "; its manifest and objects would be written among your notes",
                         "sync with a folder outside the workspace (another disk, a synced folder)")
    if binding and binding["remote"] != remote.url:
        raise SyncBlocked(f"this workspace is bound to {binding['remote']}, not {remote.url}",
                          "sync paused to keep two memories apart; to use another remote, start a new workspace "
                          "(mem init PATH) and sync that one")
    unlocked = open_remote_keyed(remote, state, encrypt=encrypt, key_file=key_file, passphrase=_passphrase(passphrase))
    return _rounds(ws, state, unlocked, progress)


def _passphrase(given: str | None) -> str | None:
    return given if given is not None else (os.environ.get("MEM_SYNC_PASSPHRASE") or None)


def _rounds(ws: Workspace, state: SyncState, unlocked: Unlocked, progress: dict | None) -> dict:
    """Rounds until one publishes (a stale compare-and-swap starts the round again)."""
    remote = ShardedRemote(unlocked.remote, state.dir / "shards", (state.binding() or {}).get("memory_id"))
    with ws.lock("sync", busy="another mem sync is running in this workspace"):
        swept = ws.sweep_temp()
        if swept is not None:  # then the remote's leftovers are looked for too (a walk over a network folder)
            swept = len(swept) + remote.sweep_temp()
        identity = state.identity()
        for attempt in range(ATTEMPTS):
            try:
                report = Round(ws, remote, state, identity, progress).run()
                if report["stopped"]:
                    raise SyncStopped(f"sync was switched off during the round: {len(report['stopped'])} file(s) "
                                      "not yet written here (everything else is consistent)",
                                      "mem sync on, then mem sync writes them")
                report["attempts"] = attempt + 1
                report["temp_files_removed"] = swept or 0
                report["encrypted"] = unlocked.marker is not None
                _keep_key(state, unlocked)
                return report
            except StaleManifest:
                time.sleep(0.05 * (attempt + 1))
        raise ProviderUnavailable(f"the manifest on {remote.url} kept changing during {ATTEMPTS} attempts",
                                  "another machine is syncing right now; run mem sync again in a moment")


def gc(ws: Workspace, url: str | None = None, *, endpoint_url: str | None = None, region: str | None = None,
       configured: str | None = None, min_age: float | None = None, dry_run: bool = False,
       key_file: Path | None = None) -> dict:
    """Delete the revisions on the remote that its manifest no longer names (see `memtool.sync.gc`); an
    encrypted remote needs its key, as for a sync."""
    from memtool.sync import gc as collector

    url = url or (SyncState(ws).binding() or {}).get("remote") or configured
    if not url:
        raise UsageError("no remote to collect on", "give one: mem sync gc /path/to/folder  or  s3://bucket/prefix")
    remote = open_remote(url, endpoint_url=endpoint_url, region=region)
    state = SyncState(ws)
    with ws.lock("sync", busy="another mem sync is running in this workspace"):
        keyed = open_remote_keyed(remote, state, key_file=key_file, passphrase=_passphrase(None)).remote
        manifest = ShardedRemote(keyed, state.dir / "shards", (state.binding() or {}).get("memory_id"))
        return collector.collect(remote, manifest, manifest.stored_name,
                                 collector.MIN_AGE if min_age is None else min_age, dry_run)
def clone(url: str, dest: Path, *, endpoint_url: str | None = None, region: str | None = None,
          key_file: Path | None = None, passphrase: str | None = None, progress: dict | None = None) -> dict:
    """A new workspace at `dest` holding the memory on `url`, bound to it. `dest` must be new or empty;
    the key (of an encrypted remote) is checked before anything is created."""
    dest = home_path(dest).absolute()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty folder", "clone into a new folder: mem sync clone REMOTE NEW-DIR")
    remote = open_remote(url, endpoint_url=endpoint_url, region=region)
    ws = Workspace(dest)
    state = SyncState(ws)
    unlocked = open_remote_keyed(remote, state, key_file=key_file, passphrase=_passphrase(passphrase))
    if unlocked.remote.read_manifest() is None:
        raise UsageError(f"{remote.url} holds no memory yet: nothing to clone",
                         "make one there from a workspace: mem sync REMOTE (add --encrypt to encrypt it)")
    created = not dest.exists()
    try:
        ws.state_dir.mkdir(parents=True, exist_ok=True)
        if key_file is not None:
            ws.write_atomic("memtool.toml", f"[sync]\nkey_file = {json.dumps(str(key_file.absolute()))}\n")
        report = _rounds(ws, state, unlocked, progress)
    except BaseException:  # no half-made workspace is left: the folder was new or empty
        for child in dest.iterdir() if dest.exists() else ():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        if created:
            dest.rmdir()
        raise
    report["workspace"] = str(dest)
    return report


def _keep_key(state: SyncState, unlocked) -> None:
    """After the first round with an encrypted remote: keep its marker, and its key unless a key file holds it."""
    if unlocked.marker is None:
        return
    if state.marker() is None:
        state.save_marker(unlocked.marker)
    if unlocked.source == "passphrase" and state.saved_key() is None:
        state.save_key(key_line(unlocked.key))


def status(ws: Workspace) -> dict:
    """What sync knows without asking the remote: binding, off switch, conflicts, local changes."""
    state = SyncState(ws)
    base = state.base()
    too_big: set[str] = set()
    stats = sync_files(ws, None, too_big)
    changed = []
    for path, stat in sorted(stats.items()):
        entry = base.get(path)
        if entry and entry.stat == stat:
            continue
        if entry is None or rev_of(ws.resolve(path).read_bytes()) != entry.rev:
            changed.append(path)
    deleted = sorted(p for p in base if p not in stats and p not in too_big)  # too big: left alone, not deleted
    binding = state.binding()
    identity = state.identity(create=False)
    return {"off": state.off(), "remote": (binding or {}).get("remote"),
            "memory_id": (binding or {}).get("memory_id"), "device": (identity or {}).get("device"),
            "last_sync": state.last_sync(), "conflicts": state.conflicts(),
            "conflicts_elsewhere": _elsewhere(state, (identity or {}).get("device")), "oversize": state.oversize(),
            "local_changes": changed, "local_deletions": deleted, "files": len(stats)}


def _elsewhere(state: SyncState, me: str | None) -> list[dict]:
    """Conflicts other machines listed on the remote (as of the last sync), not yet resolved here."""
    cached = state.cached_manifest()
    if cached is None:
        return []
    dismissed = state.dismissed()
    out = []
    for path, by_device in sorted(conflict_listing(parse_manifest(cached[0], "the cached manifest")).items()):
        for device, entry in sorted(by_device.items()):
            if device != me and dismissed.get(path, {}).get(safe_device(device)) != entry["rev"]:
                out.append({"path": shown(path), "device": safe_device(device), "rev": entry["rev"],
                            "against": entry["against"], "base": entry.get("base"),
                            "time": shown(str(entry.get("time", "?"))[:40])})  # untrusted: escaped
    return out


def resolve(ws: Workspace, path: str, keep: str) -> dict:
    """End a conflict: keep the local text, the remote text, or both (a union of the two)."""
    if keep not in ("local", "remote", "both"):
        raise UsageError(f"--keep must be local, remote or both, not {keep!r}",
                         "--keep both keeps the local lines, then the remote's; the version that loses is backed up")
    state = SyncState(ws)
    with ws.lock("sync", busy="a mem sync is running in this workspace; resolve after it ends"):
        conflicts = state.conflicts()
        rel = ws.relative(ws.resolve(path)) if path not in conflicts else path
        record = conflicts.get(rel)
        if record is None and rel in state.oversize():
            return _resolve_oversize(state, rel, keep)
        if record is None:
            elsewhere = [c for c in _elsewhere(state, (state.identity(create=False) or {}).get("device"))
                         if c["path"] == rel]
            if elsewhere:
                return _resolve_elsewhere(ws, state, rel, keep, elsewhere)
            listed = ", ".join(sorted(conflicts)) or "none"
            raise UsageError(f"{path} is not in conflict (conflicts: {listed})", "see: mem sync status")
        copy = ws.resolve(record["copy"])
        backups = []
        with ws.lock(rel):
            target = ws.resolve(rel)
            ours = target.read_bytes() if target.exists() else b""
            theirs = copy.read_bytes() if copy.exists() else None
            if theirs is None and keep != "local":
                raise WorkspaceError(f"the conflict copy {record['copy']} is gone",
                                     "restore it with mem sync restore, or resolve with --keep local")
            if keep == "remote":
                result = theirs
            elif keep == "both":
                base_text = state.base_text(record.get("base_rev")).decode("utf-8", "replace")
                try:
                    result = merge3(base_text, ours.decode("utf-8"), theirs.decode("utf-8"), union=True).text.encode()
                except UnicodeDecodeError:
                    result = ours + (b"" if ours.endswith(b"\n") or not ours else b"\n") + theirs
            else:
                result = ours
            if result != ours:
                if target.exists():
                    backups.append(ws.backup(rel))
                ws.write_atomic(rel, result)
            if copy.exists():
                backups.append(ws.backup(record["copy"]))
                copy.unlink()
        base = state.base()
        # The base moves to the remote revision: the next sync sees only this side's change.
        st = target.stat()
        base[rel] = BaseEntry(record["remote_rev"], -1, -1) if rev_of(result) != record["remote_rev"] \
            else BaseEntry(record["remote_rev"], st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        state.save_base(base, state.last_sync() or {})
        del conflicts[rel]
        state.save_conflicts(conflicts)
    return {"resolved": rel, "kept": keep, "backups": backups, "remaining": sorted(conflicts)}


def _resolve_oversize(state: SyncState, rel: str, keep: str) -> dict:
    """A path whose remote revision is over the size limit: `--keep local` makes that revision the
    base, so the next sync publishes this machine's version (or its deletion) over it; the revision
    itself stays on the remote (until `mem sync gc`). Called under the sync lock."""
    entry = state.oversize()[rel]
    if keep != "local":
        raise UsageError(f"the remote's version of {rel} (revision {entry['rev'][:12]}, {entry['size']:,} bytes) is "
                         "over the limit sync reads for one file: it cannot be brought here",
                         f"keep this machine's with mem sync resolve {rel} --keep local, or shorten the file on the "
                         "machine that holds it and sync there")
    base = state.base()
    base[rel] = BaseEntry(entry["rev"], -1, -1)
    state.save_base(base, state.last_sync() or {})
    state.save_oversize({p: e for p, e in state.oversize().items() if p != rel})
    return {"resolved": rel, "kept": keep, "backups": [], "remaining": sorted(state.conflicts())}


def create_key(key_file: Path | None) -> dict:
    """`mem sync key --create`: make the key file memtool.toml names (see `keys.create_key_file`)."""
    if key_file is None:
        raise UsageError("memtool.toml names no key file to create",
                         'add [sync] key_file = "~/.config/memtool/sync.key" to memtool.toml (outside the '
                         "workspace, never synced), then run mem sync key --create")
    return {"key_path": str(key_file), "created": create_key_file(key_file)}


def key_info(ws: Workspace, key_file: Path | None, show: bool = False) -> dict:
    """Whether the bound remote is encrypted, where this machine's key is, and (with `show`) the key itself."""
    state = SyncState(ws)
    binding = state.binding() or {}
    info = {"remote": binding.get("remote"), "encrypted": bool(binding.get("encrypted")), "kdf": None,
            "key_source": None, "key_path": None, "key": None}
    if not info["encrypted"]:
        if show:  # printing nothing (or "None") into the file meant to carry the key would look like success
            raise UsageError(f"there is no key to show: {info['remote'] or 'this workspace'} is not "
                             f"{'encrypted' if info['remote'] else 'bound to a remote yet'}",
                             "mem sync NEW-REMOTE --encrypt makes an encrypted remote; mem sync key says where things stand")
        return info
    marker = parse_marker(state.marker() or b"", info["remote"]) if state.marker() else None
    info["kdf"] = marker["kdf"]["name"] if marker else None
    if key_file is not None:
        info.update(key_source="key file", key_path=str(key_file))
        line = key_line(read_key_file(key_file)) if show and key_file.exists() else None  # only ever a key
    else:
        line = (state.saved_key() or "").strip() or None
        info.update(key_source="saved" if line else None, key_path=str(state.key_path) if line else None)
    if show:
        if line is None:
            raise SyncKeyError("this machine holds no key for its encrypted remote", KEY_HINT)
        info["key"] = line
    return info


def _resolve_elsewhere(ws: Workspace, state: SyncState, rel: str, keep: str, listed: list[dict]) -> dict:
    """End conflicts another machine listed for `rel`: keep this file (local), their version (remote),
    or both; the next mem sync publishes the result and takes them off the remote's list. Called under
    the sync lock."""
    theirs = [state.base_text(c["rev"]) if state.has_base_text(c["rev"]) else None for c in listed]
    if keep != "local" and None in theirs:
        raise WorkspaceError(f"the other version of {rel} has not been fetched yet", "run mem sync, then resolve again")
    backups = []
    with ws.lock(rel):
        target = ws.resolve(rel)
        ours = target.read_bytes() if target.exists() else b""
        result = ours
        for c, data in zip(listed, theirs) if keep != "local" else ():
            if keep == "remote":
                result = data
                continue
            try:  # the union over the base both versions came from
                base = state.base_text(c["base"]).decode("utf-8")
                result = merge3(base, result.decode("utf-8"), data.decode("utf-8"), union=True).text.encode()
            except UnicodeDecodeError:
                result = result + (b"" if result.endswith(b"\n") or not result else b"\n") + data
        if result != ours:
            if target.exists():
                backups.append(ws.backup(rel))
            ws.write_atomic(rel, result)
    dismissed = state.dismissed()
    for c in listed:
        dismissed.setdefault(rel, {})[c["device"]] = c["rev"]
    state.save_dismissed(dismissed)
    return {"resolved": rel, "kept": keep, "backups": backups, "remaining": sorted(state.conflicts()),
            "devices": [c["device"] for c in listed]}


def set_off(ws: Workspace, off: bool) -> dict:
    SyncState(ws).set_off(off)
    return {"off": off}


def restore(ws: Workspace, backup_id: str | None) -> dict:
    """List backed-up versions, or restore one (the current file is backed up first)."""
    if backup_id is None:
        return {"backups": ws.backups()}
    return ws.restore(backup_id)
