"""The file system side of a workspace: discovery, listing, confined paths, atomic writes, locks."""

from __future__ import annotations

import os
import re
import tempfile
import time
from stat import S_ISLNK, S_ISREG
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from memtool.errors import Busy, UsageError, WorkspaceError, WorkspaceNotFound

STATE_DIR = ".memory"
MARKERS = ("memory.md", "memory", STATE_DIR)
ENV_VAR = "MEM_WORKSPACE"
LOCK_TIMEOUT = 30.0
APPEND_PATIENCE = 10.0  # seconds an append keeps retrying while other programs keep replacing the file
BACKUP_STAMP = re.compile(r"\.(\d{8}T\d{6}Z-\d{9})$")
TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")  # what replace_atomically and create_new stage (mkstemp)
STALE_TEMP_SECONDS = 15 * 60  # no write of ours takes this long; a younger temp file may be in use
SWEEP_EVERY_SECONDS = 10 * 60


class ScanProblem(NamedTuple):
    """A path the scan left out: `unreadable` (could not look; not to be taken for deleted) or
    `outside-workspace` (a symbolic link leading out of the workspace: never indexed, as `get`
    refuses it too)."""

    path: str
    reason: str
    code: str = "unreadable"


class FileStat(NamedTuple):
    path: str  # workspace-relative, POSIX separators
    size: int
    mtime_ns: int


def indexable(rel: str) -> bool:
    """Whether a workspace-relative POSIX path names a file memtool indexes (what `scan` lists)."""
    return rel.endswith(".md") and (rel == "memory.md" or rel.startswith(("memory/", "bank/"))) and \
        not any(part.startswith(".") for part in rel.split("/"))


class Workspace:
    """A folder of Markdown memory plus its machine-local `.memory/` state."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.written = None  # called with each relative path this process writes (see ChangeFeed.note)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.sqlite"

    @property
    def config_path(self) -> Path:
        return self.root / "memtool.toml"

    def daily_path(self, day) -> str:
        """The day's log: where it already is (memory/, memory/YYYY/ or memory/YYYY/MM/), else
        memory/YYYY-MM-DD.md, or the nested layout when this month's or year's folder exists."""
        name = f"{day.isoformat()}.md"
        nested = (f"memory/{day.year:04d}/{day.month:02d}", f"memory/{day.year:04d}")
        for rel in (f"memory/{name}", *(f"{folder}/{name}" for folder in nested)):
            if (self.root / rel).is_file():
                return rel
        folder = next((f for f in nested if (self.root / f).is_dir()), "memory")
        return f"{folder}/{name}"

    # --- paths -----------------------------------------------------------------------------

    def resolve(self, rel: str) -> Path:
        """The absolute path of a workspace-relative path; refuses anything outside the workspace."""
        if not rel or "\x00" in rel:
            raise UsageError("empty or invalid path", "give a path inside the workspace, e.g. memory/2025-11-27.md")
        try:
            candidate = _real(self.root / rel)
        except OSError as exc:
            raise WorkspaceError(f"cannot follow {rel!r}: {_reason(exc)}",
                                 "fix or remove the symbolic link (ls -l shows where it points)") from None
        if candidate != self.root and self.root not in candidate.parents:
            raise UsageError(f"{rel!r} is outside the workspace {self.root}",
                             "only files inside the workspace can be read or written")
        return candidate

    def relative(self, path: Path) -> str:
        return _real(path).relative_to(self.root).as_posix()

    # --- listing ---------------------------------------------------------------------------

    def scan(self, problems: list | None = None) -> dict[str, tuple[int, int]]:
        """path → (size, mtime_ns) of every Markdown file memtool indexes: one stat each, no reads.

        Folders and files that cannot be listed or stat'ed are left out and, with `problems`, named
        there as (relative path, reason): a caller must not take them for deleted."""
        out: dict[str, tuple[int, int]] = {}
        problems = [] if problems is None else problems
        try:
            st = os.stat(self.root / "memory.md")
            if S_ISREG(st.st_mode):
                out["memory.md"] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(ScanProblem("memory.md", _reason(exc)))
        for folder in ("memory", "bank"):
            self._scan_dir(self.root / folder, folder, out, problems)
        return out

    def stat_paths(self, rels, problems: list | None = None) -> dict[str, tuple[int, int]]:
        """Like `scan`, for the given relative paths only (those that are indexable files now)."""
        out: dict[str, tuple[int, int]] = {}
        for rel in rels:
            if not indexable(rel):
                continue
            try:
                path = self.resolve(rel)
                st = os.stat(path)
            except (FileNotFoundError, NotADirectoryError, UsageError):
                continue
            except (OSError, WorkspaceError) as exc:
                if problems is not None:
                    problems.append(ScanProblem(rel, exc.message if isinstance(exc, WorkspaceError) else _reason(exc)))
                continue
            if S_ISREG(st.st_mode):
                out[rel] = (st.st_size, st.st_mtime_ns)
        return out

    def _scan_dir(self, folder: Path, rel: str, out: dict, problems: list) -> None:
        # The hot path of every read command: as little Python per file as possible.
        try:
            entries = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            problems.append(ScanProblem(rel, _reason(exc)))
            return
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if name.endswith(".md"):
                        st = entry.stat(follow_symlinks=False)
                        if S_ISLNK(st.st_mode):
                            if not self._inside(Path(entry.path)):
                                problems.append(ScanProblem(f"{rel}/{name}", "a symbolic link to outside the workspace;"
                                                            " not indexed (mem get refuses it too)", "outside-workspace"))
                                continue
                            st = entry.stat()
                        if S_ISREG(st.st_mode):
                            out[f"{rel}/{name}"] = (st.st_size, st.st_mtime_ns)
                    elif entry.is_dir(follow_symlinks=False):
                        self._scan_dir(Path(entry.path), f"{rel}/{name}", out, problems)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    problems.append(ScanProblem(f"{rel}/{name}", _reason(exc)))

    def _inside(self, path: Path) -> bool:
        return self.root in _real(path).parents

    def read_bytes(self, rel: str) -> bytes:
        return self.resolve(rel).read_bytes()

    def read_text(self, rel: str) -> str:
        """A file's text; a clear error if it is not UTF-8 (we never rewrite what we cannot read)."""
        path = self.resolve(rel)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return ""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(f"{rel} is not valid UTF-8 (byte {exc.start}); refusing to modify it",
                                 "save it as UTF-8 in an editor, then try again") from None

    # --- writing ---------------------------------------------------------------------------

    def write_atomic(self, rel: str, text: str | bytes, expect: bytes | None = None) -> Path:
        """Replace a file's content atomically (temp file in the same folder, fsync, rename).

        With `expect`, raises `FileChanged` (writing nothing) unless the file still holds exactly
        those bytes just before the rename (see `replace_atomically`)."""
        path = self.resolve(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, text.encode("utf-8") if isinstance(text, str) else text, expect)
        if self.written:
            self.written(rel)
        return path

    def append(self, rel: str, plan: Callable[[bytes], bytes]) -> tuple[bytes, bytes]:
        """Append `plan(current bytes)` to a file without ever replacing it; returns (before, appended).

        The file is opened for appending and read through that same open file, so the bytes written
        follow exactly the bytes `plan` saw; if another program renamed a new version over the file
        or wrote to it meanwhile, the round starts again on the new content. An append cannot
        overwrite anyone's save. Callers hold `lock(rel)` against other `mem` writers."""
        path = self.resolve(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + APPEND_PATIENCE
        while time.monotonic() < deadline:
            try:
                fd = os.open(path, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                data = plan(b"")
                if _create_whole(path, data):
                    if self.written:
                        self.written(rel)
                    return b"", data
                continue  # someone created it meanwhile: append to theirs
            try:
                before = _read_all(fd)
                data = plan(before)
                if not _still_the_file(path, fd, len(before)):
                    continue  # changed between our read and our write: plan again on what is there now
                _write_all(fd, data)
                os.fsync(fd)
                if _still_the_file(path, fd, len(before) + len(data)) or _landed(path, before + data):
                    if self.written:
                        self.written(rel)
                    return before, data
            finally:
                os.close(fd)
        raise WorkspaceError(f"{rel} kept changing while mem tried to append to it",
                             "another program is rewriting it continuously; try again when it is done")

    def create_new(self, files: dict[str, bytes]) -> list[str]:
        """Create files that do not exist yet, never replacing one (an atomic link, no lock needed).

        Returns the paths created; a path that appeared meanwhile is left alone. Data is flushed once
        for the whole batch (`os.sync`) before any file becomes visible, instead of an fsync each."""
        staged: list[tuple[str, Path, str]] = []
        try:
            for rel, data in files.items():
                path = self.resolve(rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp, 0o644)
                staged.append((rel, path, tmp))
            if staged:
                os.sync()
            created = []
            for rel, path, tmp in staged:
                try:
                    os.link(tmp, path)
                    created.append(rel)
                except FileExistsError:
                    pass
            if self.written:
                for rel in created:
                    self.written(rel)
            return created
        finally:
            for _, _, tmp in staged:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass

    def backup(self, rel: str) -> str:
        """Copy a file to `.memory/backups/<path>.<UTC time>` before it is replaced; returns the copy's path."""
        import shutil
        import time

        source = self.resolve(rel)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{time.time_ns() % 1_000_000_000:09d}"
        target = self.state_dir / "backups" / f"{rel}.{stamp}"
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")  # not a backup name: never listed, even after a crash
        try:
            shutil.copy2(source, partial)
            os.replace(partial, target)
        except BaseException:
            partial.unlink(missing_ok=True)  # a full disk must not leave an empty or cut backup behind
            raise
        return target.relative_to(self.root).as_posix()

    def backups(self) -> list[dict]:
        """Every backed-up version under `.memory/backups/`, newest first."""
        folder = self.state_dir / "backups"
        out = []
        for path in folder.rglob("*") if folder.is_dir() else ():
            match = BACKUP_STAMP.search(path.name)
            if not match or not path.is_file():
                continue
            rel = path.relative_to(folder).as_posix()
            stamp = match.group(1)
            out.append({"id": rel, "path": rel[:len(rel) - len(match.group(0))],
                        "time": f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z",
                        "size": path.stat().st_size, "order": stamp})
        out.sort(key=lambda b: b.pop("order"), reverse=True)
        return out

    def restore(self, backup_id: str) -> dict:
        """Put a backed-up version back in place; the current file (if any) is backed up first."""
        folder = (self.state_dir / "backups").resolve()
        source = (folder / backup_id).resolve()
        match = BACKUP_STAMP.search(source.name)
        if folder not in source.parents or not match or not source.is_file():
            raise UsageError(f"no backup {backup_id!r}", "list them with: mem sync restore")
        rel = source.relative_to(folder).as_posix()
        rel = rel[:len(rel) - len(match.group(0))]
        with self.lock(rel):
            saved = self.backup(rel) if self.resolve(rel).exists() else None
            self.write_atomic(rel, source.read_bytes())
        return {"restored": rel, "from": backup_id, "backup": saved}

    def sweep_temp(self) -> list[str] | None:
        """Remove temp files that killed writes left behind (our naming only, older than 15 minutes) at
        the top level, in memory/, bank/ and .memory/; at most every 10 minutes (None: not due yet)."""
        import time

        marker = self.state_dir / "swept"
        try:
            if time.time() - marker.stat().st_mtime < SWEEP_EVERY_SECONDS:
                return None
        except FileNotFoundError:
            pass
        removed = remove_stale_temp(self.root, recursive=False)
        for folder in ("memory", "bank", STATE_DIR):
            removed += remove_stale_temp(self.root / folder)
        if self.state_dir.is_dir():
            marker.touch()
        return [self.relative(path) for path in removed]

    @contextmanager
    def lock(self, name: str, timeout: float = LOCK_TIMEOUT, busy: str | None = None) -> Iterator[None]:
        """A cross-process lock (flock-style) named `name`, kept under `.memory/locks/`.

        With `busy` (a message), a held lock raises `Busy` at once instead of waiting.
        """
        from filelock import FileLock, Timeout

        locks = self.state_dir / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
        lock = FileLock(str(locks / f"{safe}.lock"), timeout=timeout)
        try:
            lock.acquire(timeout=0 if busy else timeout)
        except Timeout:
            if busy:
                raise Busy(busy, "wait for the other run to finish; runs never interleave") from None
            raise WorkspaceError(f"another mem process holds the lock {name!r} for over {timeout:.0f}s",
                                 f"wait for it to finish, or remove {locks / (safe + '.lock')} if none is running") from None
        try:
            yield
        finally:
            lock.release()


def _real(path: Path) -> Path:
    """`path` with every symbolic link followed; a loop is an OSError (ELOOP), as from Python 3.13 on."""
    try:
        return path.resolve()
    except RuntimeError:  # Python 3.11 and 3.12 raise this for a loop
        import errno

        raise OSError(errno.ELOOP, "symbolic link loop", str(path)) from None


def _reason(exc: OSError) -> str:
    """An OS error's reason without the path (the caller names the path)."""
    return exc.strerror or type(exc).__name__


def replace_atomically(path: Path, data: bytes, expect: bytes | None = None) -> None:
    """Write `data` to `path` so that a reader or a crash sees the old file or the new one, never a
    mix: a temp file in the same folder, fsync, rename (the file's permissions are kept).

    With `expect` (the bytes the new content was made from), the file is compared again just before
    the rename and `FileChanged` is raised, writing nothing, if someone saved it meanwhile."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
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


def remove_stale_temp(folder: Path, recursive: bool = True, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Delete our own temp files (`TEMP_NAME`, regular files, older than `older_than` seconds) in `folder`
    (and below it, without following links); returns what was removed."""
    import time

    cutoff = time.time() - older_than
    removed = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames:
            if name[0] != "." or not name.endswith(".tmp") or not TEMP_NAME.fullmatch(name):
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


class FileChanged(WorkspaceError):
    """A file changed between the read an edit was made from and the moment it was to be replaced."""

    def __init__(self, name: str):
        super().__init__(f"{name} was changed by another program while mem was editing it",
                         "nothing was written; try again")


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


def _create_whole(path: Path, data: bytes) -> bool:
    """Create `path` holding `data`, appearing whole or not at all; False if it exists already."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
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


def discover(explicit: str | os.PathLike | None = None, cwd: Path | None = None) -> Workspace:
    """Find the workspace: `-w PATH`, else $MEM_WORKSPACE, else walk up from the current directory."""
    for source, value in (("--workspace", explicit), (ENV_VAR, os.environ.get(ENV_VAR))):
        if value:
            root = Path(value).expanduser()
            if not root.is_dir():
                raise WorkspaceNotFound(f"{source} {value} is not a folder",
                                        f"create one with: mem init {value}")
            return Workspace(root)
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / m).exists() for m in MARKERS):
            return Workspace(folder)
    raise WorkspaceNotFound(f"no memtool workspace in {here} or any parent folder",
                            "create one with 'mem init PATH', or point to one with -w PATH or MEM_WORKSPACE")


def init(root: Path, today) -> tuple[Workspace, list[str]]:
    """Create the workspace layout at `root`; existing files are never touched. Returns what was created."""
    from memtool.templates import DAILY_EXAMPLE, FOLDERS, TEMPLATES

    root = root.expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder", "choose another path for the workspace")
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    created: list[str] = []
    for folder in FOLDERS:
        target = ws.root / folder
        if not target.exists():
            target.mkdir(parents=True)
            created.append(folder + "/")
    files = dict(TEMPLATES)
    if not any((ws.root / "memory").glob("*.md")):
        files[ws.daily_path(today)] = DAILY_EXAMPLE.format(day=today.isoformat())
    for rel, text in files.items():
        target = ws.root / rel
        if rel == ".gitignore" and target.exists():
            current = target.read_text(encoding="utf-8", errors="replace")
            if not any(line.strip() in (".memory/", ".memory", "/.memory/") for line in current.splitlines()):
                sep = "" if current.endswith("\n") or not current else "\n"
                ws.write_atomic(rel, current + sep + text)
                created.append(".gitignore (added .memory/)")
            continue
        if not target.exists():
            ws.write_atomic(rel, text)
            created.append(rel)
    ws.state_dir.mkdir(exist_ok=True)
    return ws, created
