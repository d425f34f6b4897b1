"""Typed errors raised by the library; only the CLI prints them and picks exit codes."""

from __future__ import annotations


class MemError(Exception):
    """Base error: a one-line reason plus a hint saying what to do."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "hint": self.hint}


class UsageError(MemError):
    """The caller's input is invalid (bad date, bad bullet, empty query, …)."""

    exit_code = 2


class WorkspaceNotFound(MemError):
    exit_code = 3


class WorkspaceError(MemError):
    """The workspace is in a state we refuse to touch (path outside it, undecodable file, …)."""

    exit_code = 4


class IndexUnavailable(MemError):
    """The derived index is unusable (corrupt, newer schema, driver problem)."""

    exit_code = 5

    def __init__(self, message: str, hint: str | None = None, corrupt: bool = False, newer: bool = False):
        super().__init__(message, hint)
        self.corrupt = corrupt
        self.newer = newer  # written by a newer memtool: `mem index --rebuild` sets it aside


class ProviderUnavailable(MemError):
    """An external provider (embedding model, Ollama) cannot answer right now."""

    exit_code = 6


class Busy(MemError):
    """Another process holds a lock this command does not wait for (e.g. a second `mem reflect`)."""

    exit_code = 7


class StorageError(WorkspaceError):
    """The operating system refused a read or write: permissions, a read-only or full disk, I/O."""

    @classmethod
    def from_os(cls, exc: OSError) -> "StorageError":
        """The one-line reason and hint for an OSError that reached the surface."""
        import errno

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
        return cls(f"{exc.strerror or type(exc).__name__}{where}", "check the disk and the path, then try again")


class EgressRefused(ProviderUnavailable):
    """The trust gate refused: text of a tier that may not go to this provider was about to be sent."""
