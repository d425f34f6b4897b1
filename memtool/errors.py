"""Typed errors raised by the library; only the CLI prints them and picks exit codes."""

from __future__ import annotations

import errno
from enum import IntEnum


class ExitStatus(IntEnum):
    """What `mem` exits with (the table in docs/cli.md); every command and error uses these names."""

    OK = 0  # success, including "nothing found"
    FAILED = 1  # an unexpected failure
    CHECK_FAILED = 1  # `mem check` found errors
    USAGE = 2  # bad input: an option, date, bullet, an empty query
    NO_WORKSPACE = 3  # no workspace found (`mem init PATH` creates one)
    REFUSED = 4  # the workspace is in a state memtool refuses to touch, or the system refused a read or write
    INDEX_UNUSABLE = 5  # the derived index cannot be used
    PROVIDER = 6  # a provider or sync remote does not answer, a remote copy is damaged, the trust gate refused
    BUSY = 7  # another process holds a lock this command does not wait for
    SYNC_BLOCKED = 8  # sync is off, bound elsewhere, or the remote went backwards
    CONFLICTS = 9  # `mem sync` finished, and conflicts wait for `mem sync resolve`
    INTERRUPTED = 130  # Ctrl-C


class MemError(Exception):
    """Base error: a one-line reason plus a hint saying what to do."""

    exit_code: int = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "hint": self.hint}


class UsageError(MemError):
    """The caller's input is invalid (bad date, bad bullet, empty query, …)."""

    exit_code = ExitStatus.USAGE


class WorkspaceNotFound(MemError):
    exit_code = ExitStatus.NO_WORKSPACE


class WorkspaceError(MemError):
    """The workspace is in a state we refuse to touch (path outside it, undecodable file, …)."""

    exit_code = ExitStatus.REFUSED


class IndexUnavailable(MemError):
    """The derived index is unusable (corrupt, newer schema, driver problem)."""

    exit_code = ExitStatus.INDEX_UNUSABLE

    def __init__(self, message: str, hint: str | None = None, corrupt: bool = False, newer: bool = False):
        super().__init__(message, hint)
        self.corrupt = corrupt
        self.newer = newer  # written by a newer memtool: `mem index --rebuild` sets it aside


class ProviderUnavailable(MemError):
    """An external provider (embedding model, Ollama) cannot answer right now."""

    exit_code = ExitStatus.PROVIDER


class Busy(MemError):
    """Another process holds a lock this command does not wait for (e.g. a second `mem reflect`)."""

    exit_code = ExitStatus.BUSY


class StorageError(WorkspaceError):
    """The operating system refused a read or write: permissions, a read-only or full disk, I/O."""

    @classmethod
    def from_os(cls, exc: OSError) -> "StorageError":
        """The one-line reason and hint for an OSError that reached the surface."""
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return cls(f"the disk is full{where}",
                       "free some space, then run the command again; files are replaced whole, so none was left half-written")
        if exc.errno == errno.EROFS:
            return cls(f"the file system is read-only{where}",
                       "memtool writes its index and locks under .memory/; use a writable copy of the workspace")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return cls(f"permission denied{where}",
                       "memtool reads the workspace and writes under .memory/ (and to files it changes): "
                       "fix the permissions (ls -l, chmod) or run as the workspace's owner")
        if exc.errno == errno.ELOOP:
            return cls(f"a symbolic link loop{where}", "fix or remove the link (ls -l shows where it points)")
        if exc.errno in (errno.EEXIST, errno.ENOTDIR):  # makedirs or a path through a file
            return cls(f"a file stands where a folder belongs{where}",
                       "move or rename that file: memtool needs a folder there (.memory/ holds its index and locks)")
        return cls(f"{exc.strerror or type(exc).__name__}{where}", "check the disk and the path, then try again")


class EgressRefused(ProviderUnavailable):
    """The trust gate refused: text of a tier that may not go to this provider was about to be sent."""
