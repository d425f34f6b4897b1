"""Applying a published round to local files: writes under each file's lock, never over an unseen
edit (backed up first), conflict copies beside the file, and the symbolic-link check before any write."""

from __future__ import annotations

from memtool import retain_log
from memtool.errors import StorageError, UsageError, WorkspaceError
from memtool.safe_writes import MAX_NAME_BYTES
from memtool.sync.manifest import rev_of, safe_device
from memtool.sync.plan import CONFLICT_MARK, path_problem
from memtool.sync.state import BaseEntry, SyncState
from memtool.workspace import Workspace


def link_problem(ws: Workspace, path: str) -> str | None:
    """Why a path that passes `path_problem` must still not be written: it leads (through a
    symbolic link) outside the workspace or to a file sync never writes."""
    try:
        target = ws.resolve(path)
        real = ws.relative(target)
    except (UsageError, OSError, RuntimeError):
        return "leads outside the workspace"
    if real != path and path_problem(real) is not None:
        return f"a link to {real}"
    if target.exists() and not target.is_file():
        return "not a regular file here"
    if any(parent.exists() and not parent.is_dir() for parent in target.parents):
        return "a folder on its path is a file here"
    return None


def apply_writes(ws: Workspace, writes, new_base, done: dict[str, list], stop=None) -> None:
    """Write what the published manifest now says, file by file, never over an unseen edit. When
    `stop()` turns true (sync switched off), the files not yet written are listed as `stopped`: their
    base is unchanged, so the next round writes them. A file the system refuses to write (a full disk
    or quota, a file too large, a name too long) is listed as `failed` ("path: why"), its base
    unchanged: every other file is written, and the next round tries it again."""
    if stop and stop():
        done["stopped"].extend(path for path, _, _ in writes)
        return
    fresh = {path: blob for path, expected, blob in writes if expected is None and blob is not None}
    if fresh:  # files new here: created in one batch, never replacing one that appeared meanwhile
        try:
            created = set(ws.create_new(fresh))
        except (OSError, StorageError):  # one of them refused: each on its own, to name it
            created = set()
            for path, blob in fresh.items():
                try:
                    created |= set(ws.create_new({path: blob}))
                except (OSError, StorageError) as exc:
                    done["failed"].append(f"{path}: {_reason(exc)}")
        failed = {note.split(": ", 1)[0] for note in done["failed"]}
        for path, blob in fresh.items():
            if path in failed:
                continue
            if path not in created:
                done["deferred"].append(path)
                continue
            st = ws.resolve(path).stat()
            new_base[path] = BaseEntry(rev_of(blob), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            done["pulled"].append(path)
    watched: dict = {}  # the retain log's lines, by file: read once, when a file here is first replaced
    for path, expected, blob in writes:
        if path in fresh:
            continue
        if done["stopped"] or (stop and stop()):
            done["stopped"].append(path)
            continue
        try:
            _write_one(ws, path, expected, blob, new_base, done, watched)
        except (OSError, StorageError) as exc:
            done["failed"].append(f"{path}: {_reason(exc)}")


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, StorageError) else StorageError.from_os(exc).message


def _write_one(ws: Workspace, path: str, expected, blob, new_base, done: dict, watched: dict) -> None:
    """Replace (or, `blob` None, delete) one file under its lock, only if it still holds the revision
    `expected` the round read; the replaced version backed up first. `watched` caches the retain log."""
    with ws.lock(path):
        target = ws.resolve(path)
        try:
            before = target.read_bytes()
        except FileNotFoundError:
            before = None
        current = None if before is None else rev_of(before)
        if current != expected:
            done["deferred"].append(path)  # edited during the sync: the next run merges it
            return
        if current is not None:
            done["backups"].append(ws.backup(path))
            if "lines" not in watched:
                watched["lines"] = retain_log.by_path(ws)
            done["removed_elsewhere"].extend(
                e.to_dict() for e in retain_log.synced_away(
                    ws, path, watched["lines"].get(path, []), before.decode("utf-8", "replace"),
                    None if blob is None else blob.decode("utf-8", "replace")))
        if blob is None:
            target.unlink()
            new_base.pop(path, None)
            done["deleted"].append(path)
            return
        ws.write_atomic(path, blob)
        st = target.stat()
        new_base[path] = BaseEntry(rev_of(blob), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if path not in done["merged"]:
            done["pulled"].append(path)


def write_conflicts(ws: Workspace, state: SyncState, copies, conflicts, done: dict[str, list]) -> None:
    """Write each conflict copy, keep its base text for `resolve`, and record the conflicts."""
    for path, record, theirs, base_bytes in copies:
        record["copy"] = conflict_copy(ws, path, record["device"], theirs)
        if record["base_rev"]:
            state.keep_base_text(record["base_rev"], base_bytes)
        conflicts[path] = record
        done["conflicts"].append(path)
    state.save_conflicts(conflicts)


def conflict_copy(ws: Workspace, path: str, device: str, data: bytes) -> str:
    """Write the remote's version beside `path`, named for the device it came from; its name."""
    stem, dot, ext = path.rpartition(".")
    if not dot or "/" in ext:
        stem, ext = path, ""
    safe = safe_device(device)
    folder, _, base = stem.rpartition("/")
    room = MAX_NAME_BYTES - len(f"{CONFLICT_MARK}{safe}-999.{ext}".encode())  # a long name's copy: its start
    base = base.encode()[:room].decode("utf-8", "ignore")
    stem = f"{folder}/{base}" if folder else base
    for n in range(1, 1000):
        name = f"{stem}{CONFLICT_MARK}{safe}{'' if n == 1 else f'-{n}'}{'.' + ext if ext else ''}"
        target = ws.resolve(name)
        if not target.exists() or target.read_bytes() == data:
            ws.write_atomic(name, data)
            return name
    raise WorkspaceError(f"too many conflict copies of {path}", "resolve them with: mem sync resolve")
