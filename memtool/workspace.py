"""The workspace on disk: discovery, confined paths, listing with stats, reading, `init`; its writes
delegate to `safe_writes` (atomic replaces, appends, locks, backups)."""

from __future__ import annotations

import errno
import os
from contextlib import AbstractContextManager
from pathlib import Path
from collections import namedtuple
from collections.abc import Callable
from stat import S_ISDIR, S_ISLNK, S_ISREG

from memtool import safe_writes
from memtool.errors import UsageError, WorkspaceError, WorkspaceNotFound
from memtool.templates import DAILY_EXAMPLE, FOLDERS, TEMPLATES

STATE_DIR = ".memory"
CORE_FILES = ("memory.md", "MEMORY.md")  # core memory: ours, and OpenClaw's name for the same thing
# What makes a folder named by -w or $MEM_WORKSPACE a workspace; only `mem init` makes one of another folder
WORKSPACE_MARKS = (*CORE_FILES, "memory", "bank", STATE_DIR, "memtool.toml")
# Files other agents keep at a workspace root (OpenClaw, Claude Code, Codex, Gemini CLI) that hold
# facts: indexed as pages where they are, never written. Persona files (SOUL.md, IDENTITY.md) are
# instructions about the agent, not memory, and stay unindexed.
AGENT_FILES = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", "USER.md", "TOOLS.md")
ROOT_FILES = frozenset(CORE_FILES + AGENT_FILES)
LINKED_FOLDERS = ("memory", "bank", STATE_DIR)  # may be links to a folder elsewhere (see `Workspace.resolve`)
ENV_VAR = "MEM_WORKSPACE"
_LIST_BY_FD = os.scandir in os.supports_fd  # not on Windows


class ScanProblem(namedtuple("ScanProblem", "path reason code", defaults=("unreadable",))):
    """A path the scan left out, and why: `code` is `unreadable` (could not look; not to be taken
    for deleted), `outside-workspace` (a symbolic link leading out of the workspace: never
    indexed, as `get` refuses it too), `bad-name` (a name that is not UTF-8, `path` shown with
    escapes) or `not-a-file` (a folder, pipe or device named `….md`). Not typing.NamedTuple: see memtool.TYPE_CHECKING."""

    __slots__ = ()


BAD_NAME = "its name is not valid UTF-8 (written by another system?); not indexed: rename it"
NOT_A_FILE_FOLDER = ("a folder, not a Markdown file: neither it nor the files in it are indexed, and memtool "
                     "cannot write to it; rename it (e.g. add .folder to its name)")
NOT_A_FILE = "not a regular file (a pipe, socket or device); not indexed: replace it with a plain file, or remove it"


def undecodable(name: str) -> bool:
    """Whether a name from the file system holds bytes that are not UTF-8 (as surrogates): no path
    memtool stores, prints or cites can hold it."""
    if name.isascii():
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown(rel: str) -> str:
    """A path with bytes that are not UTF-8 written as `\\xff` escapes: printable, for messages only."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


class FileStat(namedtuple("FileStat", "path size mtime_ns ctime_ns")):
    """A file's workspace-relative path (POSIX separators), size, mtime and change time. The change
    time is in the stat because an edit can keep size and mtime (`touch -r`, rsync -t, an editor or a
    checkout that restores the mtime) but never the ctime, which no program can set back; a chmod or
    a new hard link changes it too (the file is then read again, and its hash finds it unchanged)."""

    __slots__ = ()


def indexable(rel: str) -> bool:
    """Whether a workspace-relative POSIX path names a file memtool indexes (what `scan` lists)."""
    return rel in ROOT_FILES or rel.endswith(".md") and rel.startswith(("memory/", "bank/")) and \
        not any(part.startswith(".") for part in rel.split("/"))


class Workspace:
    """A folder of Markdown memory plus its machine-local `.memory/` state."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self._root_text = str(self.root)
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

    @property
    def core_path(self) -> str:
        """Where core memory is: memory.md, else an OpenClaw workspace's MEMORY.md, else memory.md (new)."""
        if not (self.root / CORE_FILES[0]).is_file() and (self.root / CORE_FILES[1]).is_file():
            return CORE_FILES[1]
        return CORE_FILES[0]

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
        """The absolute path of a workspace-relative path; refuses anything outside the workspace.
        `memory/`, `bank/` and `.memory/` may be symbolic links to a folder elsewhere (a synced
        folder, another disk): a path under one is confined to where that folder really is."""
        if not rel or "\x00" in rel:
            raise UsageError("empty or invalid path", "give a path inside the workspace, e.g. memory/2025-11-27.md")
        try:
            candidate = _real(self.root / rel)
            if candidate == self.root or self.root in candidate.parents:
                return candidate
            top = Path(rel).parts[0]
            home = self._linked_home(top) if top in LINKED_FOLDERS else None
        except OSError as exc:
            raise WorkspaceError(f"cannot follow {rel!r}: {_reason(exc)}",
                                 "fix or remove the symbolic link (ls -l shows where it points)") from None
        if home is None or (candidate != home and home not in candidate.parents):
            raise UsageError(f"{rel!r} is outside the workspace {self.root}",
                             "only files inside the workspace can be read or written")
        return candidate

    def relative(self, path: Path) -> str:
        """The workspace-relative path of `path` (ValueError when it is outside, see `resolve`)."""
        real = _real(path)
        if real != self.root and self.root not in real.parents:
            for top in LINKED_FOLDERS:
                home = self._linked_home(top)
                if home is not None and (real == home or home in real.parents):
                    return Path(top, real.relative_to(home)).as_posix()
        return real.relative_to(self.root).as_posix()

    def _linked_home(self, top: str) -> Path | None:
        """Where the folder `top` (one of LINKED_FOLDERS) really is, or None when that holds the
        workspace itself (`bank -> ..`, `memory -> /`, a clone carrying such a link): confining its
        paths there would confine nothing (every file of the home folder, keys included)."""
        home = _real(self.root / top)
        return None if home == self.root or home in self.root.parents else home

    # --- listing ---------------------------------------------------------------------------

    def scan(self, problems: list | None = None) -> dict[str, tuple[int, int, int]]:
        """path → (size, mtime_ns, ctime_ns) of every Markdown file memtool indexes: one stat each, no reads.

        Folders and files that cannot be listed or stat'ed are left out and, with `problems`, named
        there as (relative path, reason): a caller must not take them for deleted."""
        out: dict[str, tuple[int, int, int]] = {}
        problems = [] if problems is None else problems
        try:
            entries = list(os.scandir(self.root))
        except OSError as exc:  # nothing below the root can be listed: none of it is taken for deleted
            problems.extend(ScanProblem(name, _reason(exc)) for name in (*sorted(ROOT_FILES), "memory", "bank"))
            return out
        for entry in entries:
            if entry.name in ROOT_FILES:
                self._scan_entry(entry, self.root, entry.name, out, problems)
        for folder in ("memory", "bank"):  # followed when they are links (a synced folder elsewhere)
            if (self.root / folder).is_symlink() and self._holds_root(folder):
                problems.append(ScanProblem(folder, "a symbolic link to a folder that holds the workspace itself; "
                                                    "not read (link it to a folder of its own)"))
                continue
            self._scan_dir(self.root / folder, folder, out, problems)
        return out

    def _holds_root(self, top: str) -> bool:
        try:
            return self._linked_home(top) is None
        except OSError:
            return False  # a loop or a dangling link: the scan names it

    def stat_paths(self, rels, problems: list | None = None) -> dict[str, tuple[int, int, int]]:
        """Like `scan`, for the given relative paths only (those that are indexable files now)."""
        out: dict[str, tuple[int, int, int]] = {}
        for rel in rels:
            if not indexable(rel):
                continue
            if undecodable(rel):
                if problems is not None:
                    problems.append(ScanProblem(shown(rel), BAD_NAME, "bad-name"))
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
                out[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        return out

    def unchanged(self, rel: str, size: int, mtime_ns: int, ctime_ns: int) -> bool:
        """Whether the file `rel` still has the size, mtime and ctime an index recorded for it: one stat,
        following links as `scan` does. Only for skipping a re-read: reading goes through `resolve`."""
        try:
            st = os.stat(f"{self._root_text}/{rel}")  # not a Path: ~2,800 of these in a reflect run
        except (OSError, ValueError):
            return False
        return S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (size, mtime_ns, ctime_ns)

    def _scan_dir(self, folder: Path, rel: str, out: dict, problems: list) -> None:
        # The hot path of every read command: as little Python per file as possible. Listed through
        # an open descriptor of the folder where the platform can, so that each `stat` resolves one
        # name, not the whole path again (~10 % of the check's CPU at 25,000 files).
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if _LIST_BY_FD else None
            try:
                entries = os.scandir(folder if fd is None else fd)
            except BaseException:
                if fd is not None:
                    os.close(fd)
                raise
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            problems.append(ScanProblem(rel, _reason(exc)))
            return
        try:
            with entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    if not name.isascii() and undecodable(name):
                        problems.append(ScanProblem(shown(f"{rel}/{name}"), BAD_NAME, "bad-name"))
                        continue
                    if name.endswith(".md"):  # a plain file, the common case, without a call per file
                        try:  # (the entry keeps the result for _scan_entry; an error is its to report)
                            st = entry.stat(follow_symlinks=False)
                        except OSError:
                            st = None
                        if st is not None and S_ISREG(st.st_mode):
                            out[f"{rel}/{name}"] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                            continue
                    self._scan_entry(entry, folder, f"{rel}/{name}", out, problems)
        finally:
            if fd is not None:
                os.close(fd)

    def _scan_entry(self, entry: os.DirEntry, folder: Path, path: str, out: dict, problems: list) -> None:
        """Add one listed file (a .md, or a symbolic link to one inside the workspace), or a folder's
        files; `folder` is the listed folder (`entry.path` may name the entry only by its name)."""
        try:
            if entry.name.endswith(".md"):
                st = entry.stat(follow_symlinks=False)
                if S_ISLNK(st.st_mode):
                    if not self._inside(folder / entry.name):
                        problems.append(ScanProblem(path, "a symbolic link to outside the workspace;"
                                                    " not indexed (mem get refuses it too)", "outside-workspace"))
                        return
                    st = entry.stat()
                if S_ISREG(st.st_mode):
                    out[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                else:
                    problems.append(ScanProblem(path, NOT_A_FILE_FOLDER if S_ISDIR(st.st_mode) else NOT_A_FILE, "not-a-file"))
            elif entry.is_dir(follow_symlinks=False):
                self._scan_dir(folder / entry.name, path, out, problems)
        except FileNotFoundError:
            return
        except OSError as exc:
            problems.append(ScanProblem(path, _reason(exc)))

    def _inside(self, path: Path) -> bool:
        return self.root in _real(path).parents

    def read_bytes(self, rel: str) -> bytes:
        return regular_bytes(self.resolve(rel), rel)

    def read_text(self, rel: str) -> str:
        """A file's text; a clear error if it is not UTF-8 (we never rewrite what we cannot read)."""
        path = self.resolve(rel)
        try:
            raw = regular_bytes(path, rel)
        except FileNotFoundError:
            return ""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(f"{rel} is not valid UTF-8 (byte {exc.start}); memtool neither reads nor changes it",
                                 "save it as UTF-8 in an editor, then try again") from None

    # --- writing (the machinery is safe_writes.py) --------------------------------------------

    def write_atomic(self, rel: str, text: str | bytes, expect: bytes | None = None) -> Path:
        """Replace a file's content atomically (temp file in the same folder, fsync, rename).

        With `expect`, raises `FileChanged` (writing nothing) unless the file still holds exactly
        those bytes just before the rename (see `safe_writes.replace_atomically`)."""
        path = self.resolve(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        safe_writes.replace_atomically(path, text.encode("utf-8") if isinstance(text, str) else text, expect)
        self._note(rel)
        return path

    def append(self, rel: str, plan: Callable[[bytes], bytes]) -> tuple[bytes, bytes]:
        """Append `plan(current bytes)` to a file without ever replacing it; returns (before, appended).

        An append cannot overwrite anyone's save (see `safe_writes.append_unreplaced`). Callers hold
        `lock(rel)` against other `mem` writers."""
        path = self.resolve(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        before, data = safe_writes.append_unreplaced(path, plan, rel)
        self._note(rel)
        return before, data

    def create_new(self, files: dict[str, bytes]) -> list[str]:
        """Create files that do not exist yet, never replacing one (an atomic link, no lock needed).

        Returns the paths created; a path that appeared meanwhile is left alone. Data is flushed once
        for the whole batch (`os.sync`) before any file becomes visible, instead of an fsync each."""
        paths = {}
        for rel, data in files.items():
            path = self.resolve(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            paths[rel] = (path, data)
        created = safe_writes.create_new(paths)
        for rel in created:
            self._note(rel)
        return created

    def _note(self, rel: str) -> None:
        if self.written:
            self.written(rel)

    @property
    def backups_dir(self) -> Path:
        return self.state_dir / "backups"

    def backup(self, rel: str) -> str:
        """Copy a file to `.memory/backups/<path>.<UTC time>` before it is replaced; returns the copy's path."""
        target = safe_writes.backup(self.resolve(rel), self.backups_dir, rel)
        return target.relative_to(self.root).as_posix()

    def backups(self) -> list[dict]:
        """Every backed-up version under `.memory/backups/`, newest first."""
        return safe_writes.list_backups(self.backups_dir)

    def restore(self, backup_id: str) -> dict:
        """Put a backed-up version back in place; the current file (if any) is backed up first."""
        source, rel = safe_writes.find_backup(self.backups_dir, backup_id)
        with self.lock(rel):
            saved = self.backup(rel) if self.resolve(rel).exists() else None
            self.write_atomic(rel, source.read_bytes())
        return {"restored": rel, "from": backup_id, "backup": saved}

    def sweep_temp(self) -> list[str] | None:
        """Remove temp files that killed writes left behind (our naming only, older than 15 minutes) at
        the top level, in memory/, bank/ and .memory/; at most every 10 minutes (None: not due yet)."""
        removed = safe_writes.sweep_temp(self.root, ("memory", "bank", STATE_DIR), self.state_dir / "swept")
        # the paths as listed under the workspace (`.memory/` may link elsewhere: not resolved)
        return None if removed is None else [path.relative_to(self.root).as_posix() for path in removed]

    def lock(self, name: str, timeout: float = safe_writes.LOCK_TIMEOUT,
             busy: str | None = None) -> AbstractContextManager[None]:
        """A cross-process lock (flock-style) named `name`, kept under `.memory/locks/`.

        With `busy` (a message), a held lock raises `Busy` at once instead of waiting.
        """
        return safe_writes.lock(self.state_dir / "locks", name, timeout, busy)


def _real(path: Path) -> Path:
    """`path` with every symbolic link followed; a loop is an OSError (ELOOP), as from Python 3.13 on."""
    try:
        return path.resolve()
    except RuntimeError:  # Python 3.11 and 3.12 raise this for a loop
        raise OSError(errno.ELOOP, "symbolic link loop", str(path)) from None


def _reason(exc: OSError) -> str:
    """An OS error's reason without the path (the caller names the path)."""
    return exc.strerror or type(exc).__name__


def home_path(path: str | os.PathLike) -> Path:
    """`path` with a leading `~` or `~user` expanded; a usage error when that home folder is unknown."""
    try:
        return Path(path).expanduser()
    except RuntimeError:  # ~name of no user here, or no home folder at all
        text = os.fspath(path)
        raise UsageError(f"cannot find the home folder {text.split('/')[0]!r} names in {text!r}",
                         "write the full path") from None


def regular_bytes(path: Path, rel: str) -> bytes:
    """The bytes of a regular file. A folder, a named pipe (whose open waited for a writer for ever)
    or a device (/dev/zero: read until memory ran out) where a note belongs is a WorkspaceError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if S_ISDIR(mode):  # (python's open of its descriptor would name the descriptor's number, not the file)
            raise WorkspaceError(f"{rel} is a folder, not a file; memtool neither reads nor changes it",
                                 f"move the folder away (e.g. mv {_quoted(rel)} {_quoted(rel + '.folder')}), then try again")
        if not S_ISREG(mode):
            raise WorkspaceError(f"{rel} is not a regular file (a pipe, socket or device); memtool neither reads nor changes it",
                                 "replace it with a plain file, or remove it")
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as f:
        return f.read()


def blank(value: str | os.PathLike) -> bool:
    """Whether a folder given as text is only white space (`MEM_WORKSPACE="  "`): no folder anyone means."""
    text = os.fspath(value)
    return bool(text) and not text.strip()


def refuse_unnamed(source: str, value: str | os.PathLike | None) -> None:
    """A UsageError when the workspace option or variable is given but names no folder: empty
    (`mem -w ""`, `MEM_WORKSPACE=`) or blank. Neither means the current folder (`-w .` does)."""
    if value is None or os.fspath(value).strip():
        return
    text = os.fspath(value)
    raise UsageError(f"{source} is {f'blank ({text!r})' if text else 'empty'}: it names no folder",
                     f"unset it (unset {ENV_VAR}) or set it to the workspace's folder, e.g. ~/memory"
                     if source in (ENV_VAR, f"${ENV_VAR}") else "give the workspace's folder, e.g. mem -w ~/memory status")


def _quoted(value: str | os.PathLike) -> str:
    """A path as a shell reads it back (quoted when it holds spaces); `shlex` loaded only for a message."""
    import shlex

    return shlex.quote(os.fspath(value))


def discover(explicit: str | os.PathLike | None = None, cwd: Path | None = None) -> Workspace:
    """Find the workspace: `-w PATH`, else $MEM_WORKSPACE, else walk up from the current directory."""
    for source, value in (("--workspace", explicit), (ENV_VAR, os.environ.get(ENV_VAR))):
        refuse_unnamed(source, value)
        if value is not None:
            root = home_path(value)
            if not root.is_dir():
                raise WorkspaceNotFound(f"{source} {value} is not a folder",
                                        f"give the workspace's folder (the one holding memory.md), e.g. {root.resolve().parent}"
                                        if root.exists() else f"create one with: mem init {_quoted(value)}")
            if not any((root / mark).exists() for mark in WORKSPACE_MARKS):  # else a typo'd or empty folder
                raise WorkspaceNotFound(f"not a memtool workspace: {value} (named by {source}; it holds none of "
                                        "memory.md, memory/, bank/, .memory/, memtool.toml)",
                                        f"create one with: mem init {_quoted(value)} (a second machine: "
                                        f"mem sync clone REMOTE {_quoted(value)}), or give the workspace's folder")
            return Workspace(root)
    here = (cwd or Path.cwd()).resolve()
    passed = []  # memory/ folders on the way that are not daily logs, and why
    for folder in (here, *here.parents):
        if any((folder / m).exists() for m in (*CORE_FILES, STATE_DIR)):
            return Workspace(folder)
        logs = folder / "memory"
        if logs.is_dir():
            why = _not_logs(logs)
            if why is None:
                return Workspace(folder)
            passed.append((logs, why))
    for logs, why in passed:
        if why == "workspace":  # `mem init ~/memory`, then mem in ~/projects
            raise WorkspaceNotFound(f"no memtool workspace in {here} or any parent folder ({logs} is one, but "
                                    "not a parent of this folder)",
                                    f"run mem in it, or point to it: mem -w {logs} …, or export MEM_WORKSPACE={logs}")
    raise WorkspaceNotFound(f"no memtool workspace in {here} or any parent folder"
                            + "".join(f" ({logs} holds {why}: not daily logs)" for logs, why in passed[:1]),
                            "create one with 'mem init PATH', or point to one with -w PATH or MEM_WORKSPACE")


# Files that make a `memory/` folder source code, not daily logs (`memory/__init__.py`: a package).
CODE_SUFFIXES = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".h")


def _not_logs(folder: Path) -> str | None:
    """Why a `memory/` folder is not the daily logs of the folder above it, or None when it may be:
    `workspace` when it is a workspace itself (core memory, state or settings in it), or the name of
    a source file in it (a code package named memory, say). A folder holding a daily log
    (`YYYY-MM-DD.md`) is logs whatever else lies beside them (an editor's backup, a pasted picture)."""
    if any((folder / m).exists() for m in (*CORE_FILES, STATE_DIR, "memtool.toml")):
        return "workspace"
    code = None
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if len(name) == 13 and name.endswith(".md") and name[4] == name[7] == "-" \
                        and name[:4].isdigit() and name[5:7].isdigit() and name[8:10].isdigit():
                    return None
                if code is None and name[0] != "." and name.endswith(CODE_SUFFIXES) and entry.is_file():
                    code = name
    except OSError:
        return None  # unreadable: the scan reports it
    return code


def init_path(path: Path | None, explicit: Path | None, env: str | None = None) -> Path:
    """The folder `mem init` creates: its PATH, else -w's (`mem -w DIR init`), else $MEM_WORKSPACE's
    (`env`), else the current one; a usage error when PATH and -w (or $MEM_WORKSPACE) name different folders."""
    for given in (path, explicit):
        if given is not None and blank(given):
            raise UsageError(f"the folder to create is blank ({os.fspath(given)!r})", "give a folder, e.g. mem init ~/memory")
    if explicit is None:
        refuse_unnamed(ENV_VAR, env)
    named, how = (explicit, "-w") if explicit is not None else (Path(env), f"${ENV_VAR}") if env else (None, "")
    if path is not None and named is not None and home_path(path).resolve() != home_path(named).resolve():
        raise UsageError(f"mem init got two folders: {path} and {how} {named}", "give one of them")
    return path if path is not None else named if named is not None else Path(".")


def init(root: Path, today) -> tuple[Workspace, list[str]]:
    """Create the workspace layout at `root`; existing files are never touched. Returns what was created.

    Every target is checked before anything is written (`_init_plan`): a refusal changes nothing."""
    root = home_path(root)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder", "choose another path for the workspace")
    _refuse_foreign_logs(root)
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    folders, files, gitignore = _init_plan(ws, today)
    created: list[str] = []
    for folder in folders:
        (ws.root / folder).mkdir(parents=True, exist_ok=True)
        created.append(folder + "/")
    for rel, text in files.items():
        ws.write_atomic(rel, text)
        created.append(rel)
    if gitignore is not None:
        ws.write_atomic(".gitignore", gitignore)
        created.append(".gitignore (added .memory/)")
    ws.state_dir.mkdir(exist_ok=True)
    return ws, created


def _refuse_foreign_logs(root: Path) -> None:
    """A UsageError when `root`, not a workspace yet, has a `memory/` folder that is no daily logs
    (`_not_logs`): a workspace itself (`mem init ~/memory`, then `mem init` in ~) or code. Its files
    would be read as daily logs, and today's log written among them; discovery refuses the layout too."""
    root = root.resolve()
    logs = root / "memory"
    if not logs.is_dir() or any((root / m).exists() for m in (*CORE_FILES, STATE_DIR)):
        return
    why = _not_logs(logs)
    if why == "workspace":
        raise UsageError(f"{logs} is a memtool workspace itself; a workspace in {root} would read its files as daily logs",
                         f"use that one (cd {_quoted(logs)}), or create the new workspace in another folder: mem init PATH")
    if why is not None:
        raise UsageError(f"{logs} holds {why}: not daily logs, and a workspace in {root} would keep its daily logs there",
                         "create the workspace in another folder: mem init PATH")


def _init_plan(ws: Workspace, today) -> tuple[list[str], dict[str, str], str | None]:
    """What `init` would create: folders, new files, and the completed .gitignore (None: nothing to
    add). Raises, before anything is written, for a path to write that is a dangling symbolic link,
    leads out of the workspace or cannot be read; existing files are left as they are."""
    folders = [folder for folder in FOLDERS if not (ws.root / folder).exists()]
    files = {rel: text for rel, text in TEMPLATES.items() if not (ws.root / rel).exists()}
    if ws.core_path != CORE_FILES[0]:  # an OpenClaw workspace: its MEMORY.md is the core memory
        files.pop(CORE_FILES[0], None)
    memory = ws.root / "memory"
    if not memory.is_dir() or not any(memory.glob("*.md")):
        files[ws.daily_path(today)] = DAILY_EXAMPLE.format(day=today.isoformat())
    for rel in (*folders, *files, STATE_DIR):
        _init_target(ws, rel)
    gitignore = None
    target = ws.root / ".gitignore"
    if ".gitignore" in TEMPLATES and ".gitignore" not in files:
        try:
            current = regular_bytes(target, ".gitignore").decode("utf-8", errors="replace")
        except OSError as exc:
            raise WorkspaceError(f"cannot read .gitignore in {ws.root}: {_reason(exc)}; nothing was created",
                                 "fix its permissions, then run mem init again") from None
        if not any(line.strip() in (".memory/", ".memory", "/.memory/") for line in current.splitlines()):
            _init_target(ws, ".gitignore")
            sep = "" if current.endswith("\n") or not current else "\n"
            gitignore = current + sep + TEMPLATES[".gitignore"]
    return folders, files, gitignore


def _init_target(ws: Workspace, rel: str) -> None:
    """Refuse a path `init` would create or complete that is a dangling symbolic link or leads out
    of the workspace (`resolve` says so), before anything is written."""
    parts = Path(rel).parts
    for depth in range(1, len(parts) + 1):
        target = ws.root.joinpath(*parts[:depth])
        if target.is_symlink() and not target.exists():
            raise WorkspaceError(f"{Path(*parts[:depth]).as_posix()} in {ws.root} is a symbolic link to "
                                 f"{os.readlink(target)}, which does not exist; nothing was created",
                                 f"remove the link (rm {target}) or create what it points to, then run mem init again")
    try:
        ws.resolve(rel)
    except UsageError as exc:
        raise UsageError(f"{exc.message}; nothing was created", exc.hint) from None
