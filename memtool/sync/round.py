"""One sync round: read the manifest, reconcile every changed path three-way, publish by CAS, apply.

Order of effects, so that a kill at any point loses nothing and the next run completes:
1. revisions are uploaded (immutable, content-addressed; unreferenced until step 2);
2. the manifest is replaced by compare-and-swap (a stale read is rejected and the round retried);
3. local files are written (each under its append lock, only if unchanged since it was read,
   the previous version backed up first), conflict copies written;
4. the base and the manifest cache are saved.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from memtool.sync.apply import apply_writes, link_problem, write_conflicts
from memtool.sync.local import local_revs, sync_files, unchanged
from memtool.sync.manifest import (FORMAT, check_generation, conflict_listing, digest, encode, parse_manifest, rev_of,
                                   safe_device, shown)
from memtool.sync.merge import merge_texts, starter_text
from memtool.sync.plan import Decision, Step, collisions, decide, named, path_problem, remote_entry
from memtool.sync.remotes import MAX_OBJECT_BYTES, NOT_MODIFIED, DamagedObject, OversizeObject, Remote
from memtool.sync.state import BaseEntry, SyncBlocked, SyncState, SyncStopped, now_iso
from memtool.workspace import Workspace

PARALLEL = 8  # requests in flight for uploads and downloads


def _parallel(fn, items: list, progress=None) -> list:
    """fn over items, in order; several requests in flight when there are many (remotes are I/O-bound).
    `progress(done, total)` is called as they complete."""
    if len(items) < 4:
        return [fn(item) for item in items]
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


class Round:
    """The state of one sync attempt; `run` does it, `report` says what happened."""

    def __init__(self, ws: Workspace, remote: Remote, state: SyncState, identity: dict, progress: dict | None = None):
        self.ws, self.remote, self.state, self.identity = ws, remote, state, identity
        self.stop = lambda: state.off() is not None  # `mem sync off` during the round: stop between files
        self.progress = progress or {}  # "upload" / "download" → progress(done, total)
        self.requests: Counter = Counter()
        self.bytes: Counter = Counter()  # revisions' bytes up and down (the manifest's: the remote's `traffic`)
        self._count_lock = threading.Lock()
        self.done: dict[str, list] = {k: [] for k in
                                      ("pulled", "pushed", "merged", "deleted", "tombstoned", "adopted",
                                       "conflicts", "deferred", "kept", "backups", "refused", "damaged",
                                       "repaired", "resolved_elsewhere", "stopped", "collisions", "not_synced",
                                       "removed_elsewhere", "oversize", "failed")}
        self.repairs: dict[str, bytes] = {}  # revisions uploaded again over a damaged remote copy
        self.oversized: dict[str, int] = {}  # revision → its size, for revisions over MAX_OBJECT_BYTES (never read)
        self.new_oversize: dict[str, dict] = {}  # path → {"rev", "size"}: the paths they left alone

    # --- remote calls, counted ----------------------------------------------------------------

    def _get(self, rev: str) -> bytes:
        with self._count_lock:
            self.requests["object_read"] += 1
        data = self.remote.get_object(rev)
        with self._count_lock:
            self.bytes["down"] += len(data)
        if rev_of(data) != rev:
            raise DamagedObject(f"revision {rev[:12]} on {self.remote.url} does not match its hash",
                                "the remote copy is damaged; a machine holding the right version repairs it")
        return data

    def _fetch(self, rev: str) -> bytes | None:
        """A revision's bytes; None when the remote's copy is missing, damaged or over the size limit
        (in `oversized` then): other files go on."""
        try:
            return self._get(rev)
        except OversizeObject as exc:
            self.oversized[rev] = exc.size
            return None
        except DamagedObject:
            return None

    def _unreadable(self, path: str, rev: str, entry: dict, new_entries: dict) -> None:
        """A path whose remote revision could not be used: over the size limit (left alone on both
        sides, named every round until resolved), else damaged (marked for a repair)."""
        if rev not in self.oversized:
            self._mark_damaged(path, entry, new_entries)
            return
        size = self.oversized[rev]
        self.new_oversize[path] = {"rev": rev, "size": size}
        self.done["oversize"].append(
            f"{path}: revision {rev[:12]} on the remote is {size:,} bytes, over the {MAX_OBJECT_BYTES:,} sync reads "
            f"for one file (an older memtool wrote it, or it was crafted); left as it is here and on the remote. "
            f"To publish this machine's version over it: mem sync resolve {path} --keep local; or shorten the file "
            "on the machine that holds it and sync there")

    def _mark_damaged(self, path: str, entry: dict, new_entries: dict) -> None:
        """Name the path, and say so in the manifest: the replica holding the right bytes repairs it."""
        self.done["damaged"].append(path)
        new_entries[path] = {**entry, "damaged": True}

    # --- the round, step by step ---------------------------------------------------------------

    def run(self) -> dict:
        """Read both sides, decide every path, publish by CAS, apply; return what happened."""
        started = time.monotonic()
        if self._read():  # nothing changed on either side: the common case
            return self._report(self.stats, started)
        self._settle_listing()
        self._decide_all()
        self._publish()
        return self._apply_and_save(started)

    def _read(self) -> bool:
        """Read the manifest (conditionally on the cached ETag) and the local side; True when neither
        changed since the last round, so there is nothing to do."""
        cached = self.state.cached_manifest()
        self.requests["manifest_read"] += 1
        self.got = got = self.remote.read_manifest(cached[1] if cached else None)
        self.base = self.state.base()
        self.conflicts = self.state.conflicts()
        self.too_big: set[str] = set()
        self.stats = sync_files(self.ws, self.done["not_synced"], self.too_big)
        if got is NOT_MODIFIED:
            self.data, self.etag = cached
            if (not self.conflicts and not self.state.damaged() and not self.state.oversize() and not self.state.listed()
                    and not self.state.dismissed() and unchanged(self.stats, self.base)):
                return True
        elif got is None:
            self.data, self.etag = None, None
        else:
            self.data, self.etag = got
        self.manifest = parse_manifest(self.data, self.remote.url) if self.data is not None else None
        self.memory_id = self._memory_id()
        self.seen = self.state.seen()
        if got is not NOT_MODIFIED and self.base:
            check_generation(self.manifest, self.data, self.seen, self.remote.url)
        self.entries: dict[str, dict] = dict((self.manifest or {}).get("files", {}))
        self.listing = conflict_listing(self.manifest)
        raw = (self.manifest or {}).get("conflicts")
        for path in raw if isinstance(raw, dict) else ():
            problem = path_problem(path)
            if problem:
                self.done["refused"].append(f"{shown(path)}: {problem} (listed as a conflict on another machine)")
        self.local, self.cache = local_revs(self.ws, self.stats, self.base)
        self._refuse_starters_into_a_memory()
        return False

    def _refuse_starters_into_a_memory(self) -> None:
        """A workspace holding only what `mem init` wrote does not join a remote's memory by merging its
        starter files into it (the first sync of a second machine): the user is told to clone instead."""
        if self.base or self.state.binding() or not self.cache or not any(
                isinstance(e, dict) and not e.get("deleted") for e in self.entries.values()):
            return
        if all(starter_text(path) == data.decode("utf-8", "replace") for path, data in self.cache.items()):
            raise SyncBlocked(f"{self.remote.url} already holds a memory ({len(self.entries)} files), and this workspace "
                              "holds only the starter files of mem init; nothing was changed",
                              f"to start this machine from that memory: mem sync clone {self.remote.url} NEW-DIR; or "
                              "delete the starter files here and run mem sync again")

    def _memory_id(self) -> str:
        """The memory this round syncs; refused when the remote holds another one than the bound one."""
        manifest, binding = self.manifest, self.state.binding()
        memory_id = (manifest or {}).get("memory_id") or (binding or {}).get("memory_id") or self.identity["workspace_id"]
        if binding and manifest and manifest.get("memory_id") != binding["memory_id"]:
            raise SyncBlocked(f"{self.remote.url} holds a different memory ({manifest.get('memory_id', '?')[:8]}) "
                              f"than the one this workspace syncs ({binding['memory_id'][:8]})",
                              "sync paused; use a separate folder or prefix for each memory")
        return memory_id

    def _settle_listing(self) -> None:
        """Follow the remote's conflict list: a conflict of this device that another machine resolved
        (its entry is gone) ends here too, its version becoming the base so the resolution is pulled (or
        merged with edits made since); another device's waiting version is fetched for `resolve`."""
        me = self.identity["device"]
        for path in [p for p in self.state.listed() if p in self.conflicts and me not in self.listing.get(p, {})]:
            record = self.conflicts.pop(path)
            self.base[path] = BaseEntry(record["local_rev"], -1, -1)
            copy = self.ws.resolve(record["copy"])
            if copy.exists():  # the remote's side of it, now part of the resolution: backed up, then removed
                self.done["backups"].append(self.ws.backup(record["copy"]))
                copy.unlink()
            self.done["resolved_elsewhere"].append(path)
        if self.done["resolved_elsewhere"]:
            self.state.save_conflicts(self.conflicts)
            self.state.save_base(self.base, self.state.last_sync() or {})
        wanted = {rev for by_device in self.listing.values() for d, e in by_device.items() if d != me
                  for rev in (e["rev"], e["against"], e.get("base")) if rev and not self.state.has_base_text(rev)}
        for rev, data in zip(sorted(wanted), _parallel(self._fetch, sorted(wanted))):
            if data is not None:
                self.state.keep_base_text(rev, data)
        for path, by_device in sorted(self.listing.items()):
            for device, entry in sorted(by_device.items()):
                if device != me and entry["rev"] in self.oversized:
                    self.done["oversize"].append(
                        f"{shown(path)}: the version {safe_device(device)} listed as a conflict (revision "
                        f"{entry['rev'][:12]}) is {self.oversized[entry['rev']]:,} bytes, over the {MAX_OBJECT_BYTES:,} "
                        f"sync reads for one file; not fetched. To keep this machine's: mem sync resolve {shown(path)} "
                        "--keep local")

    def _decide_all(self) -> None:
        """Decide every path either side knows, collecting the uploads, writes and conflict copies."""
        self.new_entries = dict(self.entries)
        self.new_base = dict(self.base)
        self.uploads: dict[str, bytes] = {}
        self.writes: list[tuple[str, str | None, bytes | str | None]] = []  # path, expected local rev, bytes or rev
        self.copies: list[tuple[str, dict, bytes, bytes]] = []  # path, conflict record, remote bytes, base bytes
        decided = []
        live = set()  # the paths that exist on either side once the round is done
        for path in sorted(set(self.local) | set(self.base) | set(self.entries)):
            problem = path_problem(path)
            if problem:  # never written here, whatever the manifest says; its entry is left as it is
                if path in self.entries:
                    self.done["refused"].append(f"{shown(path)}: {problem}")
                self.new_base.pop(path, None)  # synced under an older rule: no longer, and not every round
                continue
            if path in self.conflicts:
                self.done["kept"].append(path)
                live.add(path)
                continue
            if path in self.too_big:  # named in not_synced; left as it is on both sides, never deleted
                live.add(path)
                continue
            entry = self.entries.get(path)
            remote = remote_entry(entry) if path in self.entries else None
            if path in self.entries and remote is None:  # JSON null or a wrong type too: tampered
                kind = ("no valid revision" if isinstance(entry, dict) else
                        "null" if entry is None else type(entry).__name__)
                self.done["refused"].append(f"{path}: malformed manifest entry ({kind}: the manifest was tampered "
                                            "with or damaged)")
                if path in self.local:
                    live.add(path)
                continue
            base_entry = self.base.get(path)
            decision = decide(self.local.get(path), base_entry.rev if base_entry else None, remote)
            decided.append((path, decision, base_entry, entry))
            if (path in self.local and decision.step is not Step.DELETE
                    or remote is not None and remote.rev is not None and decision.step is not Step.TOMBSTONE):
                live.add(path)
        clashes = collisions(live)
        for path, decision, base_entry, entry in decided:
            if path in clashes:  # one file on macOS and Windows: neither is written or published
                self.done["collisions"].append(f"{named(path)}: differs only by case or Unicode form from "
                                               f"{named(clashes[path])}")
                continue
            self._plan(path, decision, self.local, self.cache, self.stats, base_entry, entry, self.new_entries,
                       self.new_base, self.uploads, self.writes, self.copies)

    def _publish(self) -> None:
        """Upload the new revisions, download the ones to write, then replace the manifest by
        compare-and-swap (raises StaleManifest: the caller retries)."""
        seen = self.seen
        generation = int((self.manifest or {}).get("generation", 0))
        behind = seen is not None and generation < seen["generation"]  # accepted only without a base
        if self.uploads or self.repairs:
            self.requests["object_write"] += len(self.uploads) + len(self.repairs)
            self.bytes["up"] += sum(map(len, self.uploads.values())) + sum(map(len, self.repairs.values()))
        _parallel(self._upload, list(self.uploads.items()), self.progress.get("upload"))
        _parallel(lambda item: self.remote.put_object(*item, replace=True), list(self.repairs.items()))
        self.writes = self._fetch_writes(self.writes, self.entries, self.new_entries)
        listing = self._new_listing()
        self.manifest_changed = (self.new_entries != self.entries or self.manifest is None or behind
                                 or listing != self.listing)
        if self.manifest_changed:
            self._stop_here("before publishing; nothing was published")
            generation = max(generation, seen["generation"] if seen else 0) + 1
            new_manifest = {"format": FORMAT, "memory_id": self.memory_id,
                            "generation": generation,
                            "updated": now_iso(), "device": self.identity["device"], "files": self.new_entries}
            if listing:
                new_manifest["conflicts"] = listing
            self.data = encode(new_manifest)
            self.requests["manifest_write"] += 1
            self.etag = self.remote.write_manifest(self.data, self.etag)
        self.generation = generation

    def _upload(self, item: tuple[str, bytes]) -> None:
        self._stop_here("during the uploads; nothing was published (the uploaded revisions are unreferenced)")
        self.remote.put_object(*item)

    def _stop_here(self, where: str) -> None:
        if self.stop():
            raise SyncStopped(f"sync was switched off {where}; nothing here changed", "mem sync on, then mem sync")

    def _new_listing(self) -> dict:
        """The remote's list of waiting conflicts: this device's entries are those still waiting here plus
        the new ones (a resolved one drops out); other devices' entries are kept as they are."""
        me = self.identity["device"]
        waiting = set(self.conflicts) | {path for path, *_ in self.copies}
        dismissed = self.state.dismissed()
        listing = {}
        for path, by_device in self.listing.items():
            kept = {d: e for d, e in by_device.items() if (d != me or path in waiting)
                    and dismissed.get(path, {}).get(safe_device(d)) != e["rev"]}  # (recorded as shown)
            if kept:
                listing[path] = kept
        for path, record, _, _ in self.copies:
            listing.setdefault(path, {})[me] = {"rev": record["local_rev"], "size": record["local_size"],
                                                "against": record["remote_rev"], "time": record["time"],
                                                **({"base": record["base_rev"]} if record["base_rev"] else {})}
        self.mine_listed = sorted(p for p, by_device in listing.items() if me in by_device)
        return listing

    def _apply_and_save(self, started: float) -> dict:
        """Write the local files and conflict copies, then save the manifest cache, binding, base."""
        data, seen, generation = self.data, self.seen, self.generation
        apply_writes(self.ws, self.writes, self.new_base, self.done, self.stop)
        if self.copies:
            write_conflicts(self.ws, self.state, self.copies, self.conflicts, self.done)
        # A stopped round, or one with a file the system refused, leaves the manifest uncached, so the
        # next round reads it whole and writes the rest.
        unfinished = self.done["stopped"] or self.done["failed"]
        fresh = data is not None and (self.got is not NOT_MODIFIED or self.manifest_changed) and not unfinished
        if fresh:
            self.state.cache_manifest(data, self.etag)
        elif unfinished:
            self.state.forget_manifest()
        if not self.state.binding():
            self.state.bind(self.remote.url, self.memory_id, encrypted=getattr(self.remote, "encrypted", False))
        if fresh:
            if seen is None or (generation, digest(data)) != (seen["generation"], seen.get("manifest")):
                self.state.save_seen(generation, digest(data))
        if self.done["damaged"] or self.state.damaged():
            self.state.save_damaged(self.done["damaged"])
        if self.new_oversize != self.state.oversize():
            self.state.save_oversize(self.new_oversize)
        if self.mine_listed != self.state.listed():
            self.state.save_listed(self.mine_listed)
        if self.manifest_changed and self.state.dismissed():
            self.state.save_dismissed({})
        report = self._report(self.stats, started)
        last = {"time": now_iso(), "remote": self.remote.url,
                "changed": sum(len(report[k]) for k in ("pulled", "pushed", "merged", "deleted", "tombstoned", "adopted"))}
        if self.new_base != self.base or report["conflicts"] or last["changed"]:
            self.state.save_base(self.new_base, last)
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
                    self._unreadable(path, entries[path]["rev"], entries[path], new_entries)
                    continue
            out.append((path, mine, blob))
        return out

    def _report(self, stats, started: float) -> dict:
        report = {k: sorted(v, key=lambda x: x["source"] if isinstance(x, dict) else x) for k, v in self.done.items()}
        report["new_conflicts"] = report["conflicts"]  # made by this round
        report["conflicts"] = sorted(self.state.conflicts())  # all waiting
        traffic = getattr(self.remote, "traffic", Counter())
        requests = self.requests + Counter({k: traffic[k] for k in ("shard_read", "shard_write") if traffic[k]})
        report.update(remote=self.remote.url, device=self.identity["device"], files=len(stats),
                      requests=dict(requests), seconds=round(time.monotonic() - started, 3),
                      bytes={"up": self.bytes["up"] + traffic["bytes_up"], "down": self.bytes["down"] + traffic["bytes_down"]})
        return report

    def _entry(self, rev: str | None, size: int = 0) -> dict:
        if rev is None:
            return {"deleted": True, "device": self.identity["device"], "time": now_iso()}
        return {"rev": rev, "size": size, "device": self.identity["device"], "time": now_iso()}

    # --- deciding one path -----------------------------------------------------------------------

    def _plan(self, path, decision: Decision, local, cache, stats, base_entry, entry, new_entries, new_base,
              uploads, writes, copies) -> None:
        step = decision.step
        mine = local.get(path)
        if step in (Step.PULL, Step.DELETE, Step.MERGE):
            problem = link_problem(self.ws, path)
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
            self._unreadable(path, entry["rev"], entry, new_entries)
            return
        ours = cache.get(path)
        if ours is None:
            ours = self.ws.resolve(path).read_bytes()
        base_rev = base_entry.rev if base_entry else None
        base_bytes = self._fetch(base_rev) if base_rev else b""
        if base_bytes is None:  # the base's copy is damaged: merged as if there were no base
            base_rev, base_bytes = None, b""
        try:
            merged = merge_texts(path, base_bytes.decode("utf-8") if base_rev else None,
                                 ours.decode("utf-8"), theirs.decode("utf-8"))
        except UnicodeDecodeError:
            merged = None
        if merged is None or not merged.clean:
            record = {"remote_rev": entry["rev"], "base_rev": base_rev, "local_rev": mine,
                      "device": safe_device(entry.get("device")), "time": now_iso(), "local_size": len(ours),
                      "lines": [c.line for c in merged.conflicts] if merged else []}
            copies.append((path, record, theirs, base_bytes))
            uploads[mine] = ours  # the version the remote does not hold: kept there too, listed for every machine
            return
        blob = merged.text.encode("utf-8")
        rev = rev_of(blob)
        uploads[rev] = blob
        new_entries[path] = self._entry(rev, len(blob))
        writes.append((path, mine, blob))
        self.done["merged"].append(path)
