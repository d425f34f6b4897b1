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

    def __init__(self, message: str, hint: str | None = None, corrupt: bool = False):
        super().__init__(message, hint)
        self.corrupt = corrupt


class ProviderUnavailable(MemError):
    """An external provider (embedding model, Ollama) cannot answer right now."""

    exit_code = 6


class Busy(MemError):
    """Another process holds a lock this command does not wait for (e.g. a second `mem reflect`)."""

    exit_code = 7


class EgressRefused(ProviderUnavailable):
    """The trust gate refused: text of a tier that may not go to this provider was about to be sent."""
