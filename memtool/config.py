"""Settings: `memtool.toml` in the workspace (travels with it), then environment overrides."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memtool.errors import WorkspaceError

DEFAULT_MAX_FILE_BYTES = 5_000_000


@dataclass(frozen=True)
class Config:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    @classmethod
    def load(cls, path: Path) -> "Config":
        """Read `memtool.toml`; a missing file means defaults, a broken one is a clear error."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls()
        import tomllib

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise WorkspaceError(f"{path.name} is not valid TOML: {exc}",
                                 f"fix or remove {path}; every setting is optional") from None
        index = data.get("index", {})
        max_bytes = index.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
        if not isinstance(max_bytes, int) or max_bytes <= 0:
            raise WorkspaceError(f"{path.name}: index.max_file_bytes must be a positive integer, not {max_bytes!r}",
                                 "e.g. max_file_bytes = 5_000_000")
        return cls(max_file_bytes=max_bytes)
