"""One sync round: read the manifest, reconcile every changed path three-way, publish by CAS, apply.

Order of effects, so that a kill at any point loses nothing and the next run completes:
1. revisions are uploaded (immutable, content-addressed; unreferenced until step 2);
2. the manifest is replaced by compare-and-swap (a stale read is rejected and the round retried);
3. local files are written (each under its append lock, only if unchanged since it was read,
   the previous version backed up first), conflict copies written;
4. the base and the manifest cache are saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections import Counter
from stat import S_ISREG

from memtool.errors import ExitStatus, MemError, ProviderUnavailable, UsageError, WorkspaceError
from memtool.sync.merge import Merge, merge3, merge_unrelated
from memtool.sync.plan import CONFLICT_MARK, Decision, Step, decide, path_problem, remote_entry
from memtool.sync.remotes import NOT_MODIFIED, DamagedObject, Remote, StaleManifest, open_remote
from memtool.sync.state import BaseEntry, SyncState, now_iso
from memtool.workspace import Workspace

FORMAT = "memtool-sync/1"
ATTEMPTS = 6
PARALLEL = 8  # requests in flight for uploads and downloads


class SyncBlocked(MemError):
    """Sync is switched off, or this workspace is bound to another remote or memory."""

    exit_code = ExitStatus.SYNC_BLOCKED


def rev_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sync_files(ws: Workspace) -> dict[str, tuple[int, int, int]]:
    """path → (size, mtime_ns, ctime_ns) of what syncs: the Markdown files memtool reads plus top-level
    `*.md` (e.g. SOUL.md); never `.memory/`, hidden files or conflict copies (`path_problem` decides).

    The change time is in the key because an edit can keep size and mtime (`touch -r`, some editors
    and copy tools) but never the ctime, which no program can set."""
    paths = list(ws.scan())
    paths += [p.name for p in ws.root.glob("*.md") if p.name != "memory.md"]
    out: dict[str, tuple[int, int, int]] = {}
    root = str(ws.root) + os.sep
    for path in paths:
        if path_problem(path) is not None:
            continue
        try:
            st = os.stat(root + path)
        except OSError:
            continue
        if S_ISREG(st.st_mode):
            out[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


def shown(path: str) -> str:
    """A path from a manifest, safe to print (control characters escaped)."""
    return "".join(ch if ch >= " " and ch != "\x7f" else f"\\x{ord(ch):02x}" for ch in path)


def safe_device(device) -> str:
    """A device name from a manifest (untrusted) as it may appear in a file name or on a terminal."""
    text = device if isinstance(device, str) else ""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "-" for ch in text)[:40] or "remote"


def _parallel(fn, items: list, progress=None) -> list:
    """fn over items, in order; several requests in flight when there are many (remotes are I/O-bound).
    `progress(done, total)` is called as they complete."""
    if len(items) < 4:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=PARALLEL)
    try:
        futures = [pool.submit(fn, item) for item in items]
        out = []
        for done, future in enumerate(futures, 1):
            out.append(future.result())
            if progress:
                progress(done, len(futures))
        return out
    finally:  # on the first failure, queued requests are dropped rather than each failing slowly
        pool.shutdown(wait=True, cancel_futures=True)


def _unchanged(stats: dict[str, tuple[int, int, int]], base: dict[str, BaseEntry]) -> bool:
    """Every local file has the stat recorded when both sides last agreed, and none is gone."""
    if len(stats) != len(base):
        return False
    for path, stat in stats.items():
        entry = base.get(path)
        if entry is None or entry.stat != stat:
            return False
    return True


def starter_text(path: str) -> str | None:
    """The text `mem init` writes at `path` (identical on every machine, so a true common base)."""
    from memtool.templates import DAILY_EXAMPLE, TEMPLATES

    if path in TEMPLATES:
        return TEMPLATES[path]
    match = re.fullmatch(r"memory/(?:\d{4}/(?:\d{2}/)?)?(\d{4}-\d{2}-\d{2})\.md", path)
    return DAILY_EXAMPLE.format(day=match.group(1)) if match else None


def _merge_texts(path: str, base: str | None, ours: str, theirs: str) -> Merge:
    """Three-way with the base; without one, an untouched starter file counts as the base (the other
    side's text wins), else only extensions merge (`merge_unrelated`)."""
    if base is not None:
        return merge3(base, ours, theirs)
    starter = starter_text(path)
    if starter is not None and starter in (ours, theirs):
        return merge3(starter, ours, theirs)
    return merge_unrelated(ours, theirs)


def digest(manifest: bytes) -> str:
    return hashlib.sha256(manifest).hexdigest()[:32]


def check_generation(manifest: dict | None, data: bytes | None, seen: dict | None, url: str) -> None:
    """Refuse a remote that went backwards: an older generation than this workspace already synced
    with, another manifest under the same generation, or no manifest at all after one was seen."""
    if seen is None:
        return
    had, now = seen["generation"], (manifest or {}).get("generation", 0) if data is not None else None
    if now is None:
        what = f"{url} has no manifest any more, but this workspace synced generation {had} there"
    elif now < had:
        what = f"the manifest on {url} went backwards: generation {now}, but this workspace already synced {had}"
    elif now == had and seen.get("manifest") not in (None, digest(data)):
        what = f"the manifest on {url} was replaced: another version under generation {now}"
    else:
        return
    mount = "if the remote is a disk, check that it is mounted; " if now is None else ""
    raise SyncBlocked(what + " (restored from an old copy, or changed by hand); nothing was changed here",
                      f"{mount}if the remote was restored or emptied on purpose, move .memory/sync/base.json aside "
                      "and run mem sync again: files then merge without a base (extensions merge, anything else "
                      "becomes a conflict; nothing is dropped)")


def parse_manifest(data: bytes, url: str) -> dict:
    try:
        manifest = json.loads(data)
        if manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
            raise ValueError(manifest.get("format"))
        if not isinstance(manifest.get("memory_id", ""), str):
            raise ValueError("memory_id is not a string")
        generation = manifest.get("generation", 0)
        if not isinstance(generation, int) or isinstance(generation, bool) or generation < 0:
            raise ValueError("generation is not a count")
    except (ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise WorkspaceError(f"the manifest on {url} is not a memtool sync manifest ({exc})",
                             "point sync at a folder or prefix used only by memtool") from None
    return manifest


class Round:
    """The state of one sync attempt; `run` does it, `report` says what happened."""

    def __init__(self, ws: Workspace, remote: Remote, state: SyncState, identity: dict, progress: dict | None = None):
        self.ws, self.remote, self.state, self.identity = ws, remote, state, identity
        self.progress = progress or {}  # "upload" / "download" → progress(done, total)
        self.requests: Counter = Counter()
        self._count_lock = threading.Lock()
        self.done: dict[str, list] = {k: [] for k in
                                      ("pulled", "pushed", "merged", "deleted", "tombstoned", "adopted",
                                       "conflicts", "deferred", "kept", "backups", "refused", "damaged",
                                       "repaired")}
        self.repairs: dict[str, bytes] = {}  # revisions uploaded again over a damaged remote copy

    # --- remote calls, counted ----------------------------------------------------------------

    def _get(self, rev: str) -> bytes:
        with self._count_lock:
            self.requests["object_read"] += 1
        data = self.remote.get_object(rev)
        if rev_of(data) != rev:
            raise DamagedObject(f"revision {rev[:12]} on {self.remote.url} does not match its hash",
                                "the remote copy is damaged; a machine holding the right version repairs it")
        return data

    def _fetch(self, rev: str) -> bytes | None:
        """A revision's bytes; None when the remote's copy is missing or damaged (other files go on)."""
        try:
            return self._get(rev)
        except DamagedObject:
            return None

    def _mark_damaged(self, path: str, entry: dict, new_entries: dict) -> None:
        """Name the path, and say so in the manifest: the replica holding the right bytes repairs it."""
        self.done["damaged"].append(path)
        new_entries[path] = {**entry, "damaged": True}

    def run(self) -> dict:
        started = time.monotonic()
        cached = self.state.cached_manifest()
        self.requests["manifest_read"] += 1
        got = self.remote.read_manifest(cached[1] if cached else None)
        base = self.state.base()
        conflicts = self.state.conflicts()
        stats = sync_files(self.ws)
        if got is NOT_MODIFIED:
            data, etag = cached
            if not conflicts and not self.state.damaged() and _unchanged(stats, base):  # the common case
                return self._report(stats, started)
        elif got is None:
            data, etag = None, None
        else:
            data, etag = got
        manifest = parse_manifest(data, self.remote.url) if data is not None else None
        binding = self.state.binding()
        memory_id = (manifest or {}).get("memory_id") or (binding or {}).get("memory_id") or self.identity["workspace_id"]
        if binding and manifest and manifest.get("memory_id") != binding["memory_id"]:
            raise SyncBlocked(f"{self.remote.url} holds a different memory ({manifest.get('memory_id', '?')[:8]}) "
                              f"than the one this workspace syncs ({binding['memory_id'][:8]})",
                              "sync paused; use a separate folder or prefix for each memory")
        seen = self.state.seen()
        if got is not NOT_MODIFIED and base:
            check_generation(manifest, data, seen, self.remote.url)
        entries: dict[str, dict] = dict((manifest or {}).get("files", {}))
        local, cache = self._local_revs(stats, base)

        new_entries = dict(entries)
        new_base = dict(base)
        uploads: dict[str, bytes] = {}
        writes: list[tuple[str, str | None, bytes | str | None]] = []  # path, expected local rev, bytes or rev
        copies: list[tuple[str, dict, bytes, bytes]] = []  # path, conflict record, remote bytes, base bytes
        for path in sorted(set(local) | set(base) | set(entries)):
            problem = path_problem(path)
            if problem:  # never written here, whatever the manifest says; its entry is left as it is
                if path in entries:
                    self.done["refused"].append(f"{shown(path)}: {problem}")
                continue
            if path in conflicts:
                self.done["kept"].append(path)
                continue
            entry = entries.get(path)
            remote = remote_entry(entry) if entry is not None else None
            if entry is not None and remote is None:
                self.done["refused"].append(f"{path}: malformed manifest entry")
                continue
            base_entry = base.get(path)
            decision = decide(local.get(path), base_entry.rev if base_entry else None, remote)
            self._plan(path, decision, local, cache, stats, base_entry, entry, new_entries, new_base,
                       uploads, writes, copies)

        generation = int((manifest or {}).get("generation", 0))
        behind = seen is not None and generation < seen["generation"]  # accepted only without a base
        if uploads or self.repairs:
            self.requests["object_write"] += len(uploads) + len(self.repairs)
        _parallel(lambda item: self.remote.put_object(*item), list(uploads.items()), self.progress.get("upload"))
        _parallel(lambda item: self.remote.put_object(*item, replace=True), list(self.repairs.items()))
        writes = self._fetch_writes(writes, entries, new_entries)
        manifest_changed = new_entries != entries or manifest is None or behind
        if manifest_changed:
            generation = max(generation, seen["generation"] if seen else 0) + 1
            new_manifest = {"format": FORMAT, "memory_id": memory_id,
                            "generation": generation,
                            "updated": now_iso(), "device": self.identity["device"], "files": new_entries}
            data = json.dumps(new_manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            self.requests["manifest_write"] += 1
            etag = self.remote.write_manifest(data, etag)  # raises StaleManifest: the caller retries

        self._apply(writes, local, new_base)
        if copies:
            self._write_conflicts(copies, conflicts)
        if data is not None and (got is not NOT_MODIFIED or manifest_changed):
            self.state.cache_manifest(data, etag)
        if not self.state.binding():
            self.state.bind(self.remote.url, memory_id)
        if data is not None and (got is not NOT_MODIFIED or manifest_changed):
            if seen is None or (generation, digest(data)) != (seen["generation"], seen.get("manifest")):
                self.state.save_seen(generation, digest(data))
        if self.done["damaged"] or self.state.damaged():
            self.state.save_damaged(self.done["damaged"])
        report = self._report(stats, started)
        last = {"time": now_iso(), "remote": self.remote.url,
                "changed": sum(len(report[k]) for k in ("pulled", "pushed", "merged", "deleted", "tombstoned", "adopted"))}
        if new_base != base or report["conflicts"] or last["changed"]:
            self.state.save_base(new_base, last)
        return report

    def _fetch_writes(self, writes, entries, new_entries) -> list:
        """The writes with the revisions they name downloaded (in parallel); a path whose remote copy is
        damaged is dropped from them and marked in the manifest."""
        fetched = _parallel(self._fetch, [blob for _, _, blob in writes if isinstance(blob, str)],
                            self.progress.get("download"))
        out = []
        for path, mine, blob in writes:
            if isinstance(blob, str):
                blob = fetched.pop(0)
                if blob is None:
                    self._mark_damaged(path, entries[path], new_entries)
                    continue
            out.append((path, mine, blob))
        return out

    def _report(self, stats, started: float) -> dict:
        report = {k: sorted(v) for k, v in self.done.items()}
        report["new_conflicts"] = report["conflicts"]  # made by this round
        report["conflicts"] = sorted(self.state.conflicts())  # all waiting
        report.update(remote=self.remote.url, device=self.identity["device"], files=len(stats),
                      requests=dict(self.requests), seconds=round(time.monotonic() - started, 3))
        return report

    def _local_revs(self, stats, base) -> tuple[dict[str, str], dict[str, bytes]]:
        """Local revisions: the base's for files whose stat is unchanged, else hashed (bytes cached)."""
        local: dict[str, str] = {}
        cache: dict[str, bytes] = {}
        for path, stat in stats.items():
            entry = base.get(path)
            if entry and entry.stat == stat:
                local[path] = entry.rev
                continue
            try:
                data = self.ws.resolve(path).read_bytes()
            except FileNotFoundError:
                continue
            local[path] = rev_of(data)
            cache[path] = data
        return local, cache

    def _entry(self, rev: str | None, size: int = 0) -> dict:
        if rev is None:
            return {"deleted": True, "device": self.identity["device"], "time": now_iso()}
        return {"rev": rev, "size": size, "device": self.identity["device"], "time": now_iso()}

    def _plan(self, path, decision: Decision, local, cache, stats, base_entry, entry, new_entries, new_base,
              uploads, writes, copies) -> None:
        step = decision.step
        mine = local.get(path)
        if step in (Step.PULL, Step.DELETE, Step.MERGE):
            problem = self._link_problem(path)
            if problem:
                self.done["refused"].append(f"{path}: {problem}")
                return
        if step is Step.REPAIR:
            self._repair(path, mine, stats, entry, new_entries, new_base)
            return
        if step is Step.SKIP:
            if path in cache and base_entry:  # touched but identical: remember the new stat
                new_base[path] = BaseEntry(mine, *stats[path])
            return
        if decision.why.endswith("the change is kept"):
            self.done["kept"].append(f"{path}: {decision.why}")
        if step is Step.ADOPT:
            if mine is None:
                new_base.pop(path, None)
            else:
                new_base[path] = BaseEntry(mine, *stats[path])
            self.done["adopted"].append(path)
        elif step is Step.PULL:
            writes.append((path, mine, entry["rev"]))  # fetched in parallel before the writes
        elif step is Step.DELETE:
            writes.append((path, mine, None))
        elif step is Step.PUSH:
            data = cache.get(path)
            if data is None:
                data = self.ws.resolve(path).read_bytes()
            uploads[mine] = data
            new_entries[path] = self._entry(mine, len(data))
            new_base[path] = BaseEntry(mine, *stats[path])
            self.done["pushed"].append(path)
        elif step is Step.TOMBSTONE:
            new_entries[path] = self._entry(None)
            new_base.pop(path, None)
            self.done["tombstoned"].append(path)
        elif step is Step.MERGE:
            self._merge(path, mine, cache, base_entry, entry, new_entries, uploads, writes, copies)

    def _link_problem(self, path: str) -> str | None:
        """Why a path that passes `path_problem` must still not be written: it leads (through a
        symbolic link) outside the workspace or to a file sync never writes."""
        try:
            target = self.ws.resolve(path)
            real = self.ws.relative(target)
        except (UsageError, OSError, RuntimeError):
            return "leads outside the workspace"
        if real != path and path_problem(real) is not None:
            return f"a link to {real}"
        if target.exists() and not target.is_file():
            return "not a regular file here"
        if any(parent.exists() and not parent.is_dir() for parent in target.parents):
            return "a folder on its path is a file here"
        return None

    def _repair(self, path, mine, stats, entry, new_entries, new_base) -> None:
        """Upload the local bytes again over the remote's damaged copy, and clear the mark."""
        data = self.ws.resolve(path).read_bytes()
        if rev_of(data) != mine:
            return  # changed meanwhile: the next round decides again
        self.repairs[mine] = data
        new_entries[path] = {k: v for k, v in entry.items() if k != "damaged"}
        new_base[path] = BaseEntry(mine, *stats[path])
        self.done["repaired"].append(path)

    def _merge(self, path, mine, cache, base_entry, entry, new_entries, uploads, writes, copies) -> None:
        theirs = self._fetch(entry["rev"])
        if theirs is None:
            self._mark_damaged(path, entry, new_entries)
            return
        ours = cache.get(path)
        if ours is None:
            ours = self.ws.resolve(path).read_bytes()
        base_rev = base_entry.rev if base_entry else None
        base_bytes = self._fetch(base_rev) if base_rev else b""
        if base_bytes is None:  # the base's copy is damaged: merged as if there were no base
            base_rev, base_bytes = None, b""
        try:
            merged = _merge_texts(path, base_bytes.decode("utf-8") if base_rev else None,
                                  ours.decode("utf-8"), theirs.decode("utf-8"))
        except UnicodeDecodeError:
            merged = None
        if merged is None or not merged.clean:
            record = {"remote_rev": entry["rev"], "base_rev": base_rev, "local_rev": mine,
                      "device": safe_device(entry.get("device")), "time": now_iso(),
                      "lines": [c.line for c in merged.conflicts] if merged else []}
            copies.append((path, record, theirs, base_bytes))
            return
        blob = merged.text.encode("utf-8")
        rev = rev_of(blob)
        uploads[rev] = blob
        new_entries[path] = self._entry(rev, len(blob))
        writes.append((path, mine, blob))
        self.done["merged"].append(path)

    def _apply(self, writes, local, new_base) -> None:
        """Write what the published manifest now says, file by file, never over an unseen edit."""
        fresh = {path: blob for path, expected, blob in writes if expected is None and blob is not None}
        if fresh:  # files new here: created in one batch, never replacing one that appeared meanwhile
            created = set(self.ws.create_new(fresh))
            for path, blob in fresh.items():
                if path not in created:
                    self.done["deferred"].append(path)
                    continue
                st = self.ws.resolve(path).stat()
                new_base[path] = BaseEntry(rev_of(blob), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                self.done["pulled"].append(path)
        for path, expected, blob in writes:
            if path in fresh:
                continue
            with self.ws.lock(path):
                target = self.ws.resolve(path)
                try:
                    current = rev_of(target.read_bytes())
                except FileNotFoundError:
                    current = None
                if current != expected:
                    self.done["deferred"].append(path)  # edited during the sync: the next run merges it
                    continue
                if current is not None:
                    self.done["backups"].append(self.ws.backup(path))
                if blob is None:
                    target.unlink()
                    new_base.pop(path, None)
                    self.done["deleted"].append(path)
                    continue
                self.ws.write_atomic(path, blob)
                st = target.stat()
                new_base[path] = BaseEntry(rev_of(blob), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                if path not in self.done["merged"]:
                    self.done["pulled"].append(path)

    def _write_conflicts(self, copies, conflicts) -> None:
        for path, record, theirs, base_bytes in copies:
            record["copy"] = self._conflict_copy(path, record["device"], theirs)
            if record["base_rev"]:
                self.state.keep_base_text(record["base_rev"], base_bytes)
            conflicts[path] = record
            self.done["conflicts"].append(path)
        self.state.save_conflicts(conflicts)

    def _conflict_copy(self, path: str, device: str, data: bytes) -> str:
        stem, dot, ext = path.rpartition(".")
        if not dot or "/" in ext:
            stem, ext = path, ""
        safe = safe_device(device)
        for n in range(1, 1000):
            name = f"{stem}{CONFLICT_MARK}{safe}{'' if n == 1 else f'-{n}'}{'.' + ext if ext else ''}"
            target = self.ws.resolve(name)
            if not target.exists() or target.read_bytes() == data:
                self.ws.write_atomic(name, data)
                return name
        raise WorkspaceError(f"too many conflict copies of {path}", "resolve them with: mem sync resolve")


def run(ws: Workspace, url: str | None = None, *, endpoint_url: str | None = None, region: str | None = None,
        configured: str | None = None, progress: dict | None = None) -> dict:
    """Sync the workspace with `url` (else the bound or configured remote)."""
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
    if binding and binding["remote"] != remote.url:
        raise SyncBlocked(f"this workspace is bound to {binding['remote']}, not {remote.url}",
                          "sync paused to keep two memories apart; to use another remote, start a new workspace "
                          "(mem init PATH) and sync that one")
    with ws.lock("sync", busy="another mem sync is running in this workspace"):
        swept = ws.sweep_temp()
        if swept is not None:  # then the remote's leftovers are looked for too (a walk over a network folder)
            swept = len(swept) + remote.sweep_temp()
        identity = state.identity()
        for attempt in range(ATTEMPTS):
            try:
                report = Round(ws, remote, state, identity, progress).run()
                report["attempts"] = attempt + 1
                report["temp_files_removed"] = swept or 0
                return report
            except StaleManifest:
                time.sleep(0.05 * (attempt + 1))
        raise ProviderUnavailable(f"the manifest on {remote.url} kept changing during {ATTEMPTS} attempts",
                                  "another machine is syncing right now; run mem sync again in a moment")


def status(ws: Workspace) -> dict:
    """What sync knows without asking the remote: binding, off switch, conflicts, local changes."""
    state = SyncState(ws)
    base = state.base()
    stats = sync_files(ws)
    changed = []
    for path, stat in sorted(stats.items()):
        entry = base.get(path)
        if entry and entry.stat == stat:
            continue
        if entry is None or rev_of(ws.resolve(path).read_bytes()) != entry.rev:
            changed.append(path)
    deleted = sorted(p for p in base if p not in stats)
    binding = state.binding()
    identity = state.identity(create=False)
    return {"off": state.off(), "remote": (binding or {}).get("remote"),
            "memory_id": (binding or {}).get("memory_id"), "device": (identity or {}).get("device"),
            "last_sync": state.last_sync(), "conflicts": state.conflicts(),
            "local_changes": changed, "local_deletions": deleted, "files": len(stats)}


def resolve(ws: Workspace, path: str, keep: str) -> dict:
    """End a conflict: keep the local text, the remote text, or both (a union of the two)."""
    if keep not in ("local", "remote", "both"):
        raise UsageError(f"--keep must be local, remote or both, not {keep!r}")
    state = SyncState(ws)
    with ws.lock("sync", busy="a mem sync is running in this workspace; resolve after it ends"):
        conflicts = state.conflicts()
        rel = ws.relative(ws.resolve(path)) if path not in conflicts else path
        record = conflicts.get(rel)
        if record is None:
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


def set_off(ws: Workspace, off: bool) -> dict:
    SyncState(ws).set_off(off)
    return {"off": off}


def restore(ws: Workspace, backup_id: str | None) -> dict:
    """List backed-up versions, or restore one (the current file is backed up first)."""
    if backup_id is None:
        return {"backups": ws.backups()}
    return ws.restore(backup_id)
