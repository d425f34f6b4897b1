"""Writing Markdown without ever losing a line: atomic replaces, appends that never replace a file,
creates that never overwrite, cross-process locks, backups, and sweeping temp files killed writes left.

Paths here are absolute and already confined; `Workspace` resolves workspace-relative paths and
hands them over."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISREG

from memtool.errors import Busy, UsageError, WorkspaceError

LOCK_TIMEOUT = 30.0
APPEND_PATIENCE = 10.0  # seconds an append keeps retrying while other programs keep replacing the file
# Compiled by `re` on first use (its cache): a read writes nothing.
BACKUP_STAMP = r"\.(\d{8}T\d{6}Z-\d{9})$"
TEMP_NAME = r"\..+\.[a-z0-9_]{8}\.tmp"  # what replace_atomically and create_new stage (mkstemp)
STALE_TEMP_SECONDS = 15 * 60  # no write of ours takes this long; a younger temp file may be in use
SWEEP_EVERY_SECONDS = 10 * 60
# The longest file name memtool creates or accepts from a sync remote: its temp file (+14 bytes) and
# its backup (+35 while partial) must stay within the 255 bytes file systems allow.
MAX_NAME_BYTES = 200


class FileChanged(WorkspaceError):
    """A file changed between the read an edit was made from and the moment it was to be replaced."""

    def __init__(self, name: str):
        super().__init__(f"{name} was changed by another program while mem was editing it",
                         "nothing was written; try again")


# --- replacing, appending, creating ----------------------------------------------------------


def _synced_temp(path: Path, data: bytes) -> str:
    """A temp file beside `path` (our `TEMP_NAME` pattern) holding `data`, flushed to disk."""
    import tempfile  # where written: a read (`mem recall`) does not import it and its `random`

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def replace_atomically(path: Path, data: bytes, expect: bytes | None = None) -> None:
    """Write `data` to `path` so that a reader or a crash sees the old file or the new one, never a
    mix: a temp file in the same folder, fsync, rename (the file's permissions are kept).

    With `expect` (the bytes the new content was made from), the file is compared again just before
    the rename and `FileChanged` is raised, writing nothing, if someone saved it meanwhile."""
    tmp = _synced_temp(path, data)
    try:
        try:
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        if expect is not None and (_current_bytes(path) or b"") != expect:
            raise FileChanged(path.name)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def append_unreplaced(path: Path, plan: Callable[[bytes], bytes], rel: str) -> tuple[bytes, bytes]:
    """Append `plan(current bytes)` to `path` without ever replacing it; returns (before, appended).

    The file is opened for appending and read through that same open file, so the bytes written
    follow exactly the bytes `plan` saw; if another program renamed a new version over the file
    or wrote to it meanwhile, the round starts again on the new content. Bytes another program
    appended between that check and the write end up before ours: `before` is then what precedes
    them, and nothing is written twice. `rel` names the file in the error raised when it keeps
    changing for `APPEND_PATIENCE` seconds."""
    deadline = time.monotonic() + APPEND_PATIENCE
    while time.monotonic() < deadline:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            data = plan(b"")
            if create_whole(path, data):
                return b"", data
            continue  # someone created it meanwhile: append to theirs
        try:
            before = _read_all(fd)
            data = plan(before)
            if not _still_the_file(path, fd, len(before)):
                continue  # changed between our read and our write: plan again on what is there now
            _write_all(fd, data)
            at = os.lseek(fd, 0, os.SEEK_CUR) - len(data)  # where it went: another append in between moves it
            os.fsync(fd)
            if _holds(path, fd, at, data):  # in the file the path names: never written twice
                return (before if at == len(before) else os.pread(fd, at, 0)), data
            if _landed(path, before + data):
                return before, data
        finally:
            os.close(fd)
    raise WorkspaceError(f"{rel} kept changing while mem tried to append to it",
                         "another program is rewriting it continuously; try again when it is done")


def create_new(files: dict[str, tuple[Path, bytes]]) -> list[str]:
    """Create files that do not exist yet (relative name → (path, data)), never replacing one (an
    atomic link, no lock needed). Returns the names created; a path that appeared meanwhile is left
    alone. Data is flushed once for the whole batch (`os.sync`) before any file becomes visible."""
    import tempfile

    staged: list[tuple[str, Path, str]] = []
    try:
        for rel, (path, data) in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((rel, path, tmp))  # removed below also when writing it fails (a full disk)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
        if staged:
            os.sync()
        created = []
        for rel, path, tmp in staged:
            try:
                os.link(tmp, path)
                created.append(rel)
            except FileExistsError:
                pass
        return created
    finally:
        for _, _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _still_the_file(path: Path, fd: int, size: int) -> bool:
    """Whether `path` still names the open file `fd`, and that file has `size` bytes."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino) and mine.st_size == size


def _holds(path: Path, fd: int, at: int, data: bytes) -> bool:
    """Whether `path` still names the open file `fd`, and that file holds `data` at offset `at`."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino) and os.pread(fd, len(data), at) == data


def create_whole(path: Path, data: bytes, mode: int = 0o644) -> bool:
    """Create `path` holding `data`, appearing whole or not at all; False if it exists already."""
    tmp = _synced_temp(path, data)
    try:
        os.chmod(tmp, mode)
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def _landed(path: Path, expected_prefix: bytes) -> bool:
    """After a rename raced our append: whether the new file already holds what we wrote."""
    current = _current_bytes(path)
    return current is not None and current.startswith(expected_prefix)


# --- locks -------------------------------------------------------------------------------------


def lock_file_stem(name: str) -> str:
    """The lock file's name (before `.lock`) for the lock `name` (a path, say): readable, and within what
    a file system allows for one name (a deep path's lock is its start plus a hash of the whole)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    if len(safe.encode("utf-8", "surrogatepass")) <= 200:
        return safe
    import hashlib  # only for such a name: a read (`mem recall`) does not load it

    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return safe.encode("utf-8", "surrogatepass")[:120].decode("utf-8", "ignore") + "-" + digest


@contextmanager
def lock(locks: Path, name: str, timeout: float = LOCK_TIMEOUT, busy: str | None = None) -> Iterator[None]:
    """A cross-process lock (flock-style) named `name`, a file in the folder `locks`.

    With `busy` (a message), a held lock raises `Busy` at once instead of waiting.
    """
    from filelock import FileLock, Timeout  # ~40 ms to import: only when a lock is taken

    locks.mkdir(parents=True, exist_ok=True)
    safe = lock_file_stem(name)
    held = FileLock(str(locks / f"{safe}.lock"), timeout=timeout)
    try:
        held.acquire(timeout=0 if busy else timeout)
    except Timeout:
        if busy:
            raise Busy(busy, "wait for the other run to finish; runs never interleave") from None
        raise WorkspaceError(f"another mem process holds the lock {name!r} for over {timeout:.0f}s",
                             f"wait for it to finish, or remove {locks / (safe + '.lock')} if none is running") from None
    try:
        yield
    finally:
        held.release()


# --- backups -----------------------------------------------------------------------------------


def backup(source: Path, backups: Path, rel: str) -> Path:
    """Copy `source` to `<backups>/<rel>.<UTC time>` before it is replaced; returns the copy's path."""
    import shutil  # here: with its bz2 and lzma, ~1.5 ms of every one-shot read, which never backs up

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{time.time_ns() % 1_000_000_000:09d}"
    target = backups / f"{rel}.{stamp}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")  # not a backup name: never listed, even after a crash
    try:
        shutil.copy2(source, partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)  # a full disk must not leave an empty or cut backup behind
        raise
    return target


def list_backups(backups: Path) -> list[dict]:
    """Every backed-up version under the folder `backups`, newest first."""
    out = []
    for path in backups.rglob("*") if backups.is_dir() else ():
        match = re.search(BACKUP_STAMP, path.name)
        if not match or not path.is_file():
            continue
        rel = path.relative_to(backups).as_posix()
        stamp = match.group(1)
        out.append({"id": rel, "path": rel[:len(rel) - len(match.group(0))],
                    "time": f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z",
                    "size": path.stat().st_size, "order": stamp})
    out.sort(key=lambda b: b.pop("order"), reverse=True)
    return out


def find_backup(backups: Path, backup_id: str) -> tuple[Path, str]:
    """The backed-up copy `backup_id` names and the relative path it is a version of."""
    folder = backups.resolve()
    source = (folder / backup_id).resolve()
    match = re.search(BACKUP_STAMP, source.name)
    if folder not in source.parents or not match or not source.is_file():
        raise UsageError(f"no backup {backup_id!r}", "list them with: mem sync restore")
    rel = source.relative_to(folder).as_posix()
    return source, rel[:len(rel) - len(match.group(0))]


# --- temp files killed writes left behind ------------------------------------------------------


def sweep_temp(root: Path, folders: tuple[str, ...], marker: Path) -> list[Path] | None:
    """Remove stale temp files at the top of `root` and below each of its `folders`, at most every
    10 minutes (`marker`'s time; None: not due yet)."""
    try:
        if time.time() - marker.stat().st_mtime < SWEEP_EVERY_SECONDS:
            return None
    except FileNotFoundError:
        pass
    removed = remove_stale_temp(root, recursive=False)
    for folder in folders:
        removed += remove_stale_temp(root / folder)
    if marker.parent.is_dir():
        marker.touch()
    return removed


def remove_stale_temp(folder: Path, recursive: bool = True, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Delete our own temp files (`TEMP_NAME`, regular files, older than `older_than` seconds) in `folder`
    (and below it, without following links); returns what was removed."""
    cutoff = time.time() - older_than
    removed = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames:
            if name[0] != "." or not name.endswith(".tmp") or not re.fullmatch(TEMP_NAME, name):
                continue
            path = Path(dirpath) / name
            try:
                st = path.lstat()
                if S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue
        if not recursive:
            break
    return removed
