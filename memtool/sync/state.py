"""Machine-local sync state under `.memory/sync/` (never synced, never in the index).

    identity.json    this workspace's id (created once) and device name
    binding.json     the remote this workspace is bound to, the memory id found there, whether it is encrypted
    encryption.json  the encrypted remote's marker, as first read (the remote's copy is not trusted later)
    key              the encrypted remote's key (mode 600), unless a key file named in memtool.toml holds it
    base.json        per path, the revision both sides last agreed on (+ the local size, mtime, ctime then)
    manifest.json    the last manifest read from the remote, with its ETag (a conditional read)
    damaged.json     paths whose remote copy was found damaged (present only while there are any)
    oversize.json    paths whose remote revision is over the size limit, left alone (only while there are any)
    seen.json        the newest manifest generation seen on the remote (and its digest): a remote that
                     goes backwards is detected
    conflicts.json   paths waiting for `mem sync resolve`; conflicts/<rev> keeps their base text
    listed.json      paths whose conflict this device listed in the remote's manifest (until resolved)
    dismissed.json   other devices' listed conflicts resolved here, until the next sync drops them
    off.json         present while sync is switched off
    auto.json        what automatic sync (`mem watch --sync`) last did: success, error, next try
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path
from typing import NamedTuple

from memtool.errors import ExitStatus, MemError, WorkspaceError
from memtool.workspace import Workspace

DIR = ".memory/sync"


class SyncBlocked(MemError):
    """Sync is switched off, or this workspace is bound to another remote or memory."""

    exit_code = ExitStatus.SYNC_BLOCKED


class SyncStopped(SyncBlocked):
    """`mem sync off` arrived during a round, which stopped between two files (everything consistent)."""


class BaseEntry(NamedTuple):
    rev: str
    size: int
    mtime_ns: int
    ctime_ns: int = -1  # -1: unknown (a base written before it was recorded): the file is hashed once

    @property
    def stat(self) -> tuple[int, int, int]:
        return self.size, self.mtime_ns, self.ctime_ns


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class SyncState:
    def __init__(self, ws: Workspace):
        self.ws = ws
        self.dir = ws.root / DIR

    def _read(self, name: str, default=None):
        path = self.dir / name
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default
        except (ValueError, UnicodeDecodeError):
            raise WorkspaceError(f"{DIR}/{name} is damaged",
                                 "move it away; without it sync treats every file as new (nothing is lost)") from None

    def _write(self, name: str, data) -> None:
        self.ws.write_atomic(f"{DIR}/{name}", json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")

    # --- identity and binding --------------------------------------------------------------

    def identity(self, create: bool = True) -> dict | None:
        data = self._read("identity.json")
        if data is None and create:
            wid = uuid.uuid4().hex
            host = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in socket.gethostname().lower())[:24] or "host"
            data = {"workspace_id": wid, "device": f"{host}-{wid[:6]}", "created": now_iso()}
            self._write("identity.json", data)
        return data

    def binding(self) -> dict | None:
        return self._read("binding.json")

    def bind(self, remote: str, memory_id: str, encrypted: bool = False) -> None:
        self._write("binding.json", {"remote": remote, "memory_id": memory_id, "bound": now_iso(),
                                     "encrypted": encrypted})

    # --- the key of an encrypted remote --------------------------------------------------------

    @property
    def key_path(self) -> Path:
        return self.dir / "key"

    def marker(self) -> bytes | None:
        try:
            return (self.dir / "encryption.json").read_bytes()
        except FileNotFoundError:
            return None

    def save_marker(self, data: bytes) -> None:
        self.ws.write_atomic(f"{DIR}/encryption.json", data)

    def saved_key(self) -> str | None:
        try:
            return self.key_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def save_key(self, line: str) -> None:
        """Keep the key for the next rounds (cron, mem watch --sync), readable by this user only."""
        from memtool.safe_writes import create_whole, replace_atomically

        self.dir.mkdir(parents=True, exist_ok=True)
        if not create_whole(self.key_path, line.encode() + b"\n", mode=0o600):
            os.chmod(self.key_path, 0o600)
            replace_atomically(self.key_path, line.encode() + b"\n")

    # --- off switch --------------------------------------------------------------------------

    def off(self) -> dict | None:
        return self._read("off.json")

    def set_off(self, off: bool) -> None:
        if off:
            self._write("off.json", {"since": now_iso()})
        else:
            (self.dir / "off.json").unlink(missing_ok=True)

    # --- base and manifest cache --------------------------------------------------------------

    def base(self) -> dict[str, BaseEntry]:
        raw = self._read("base.json", {})
        return {path: BaseEntry(*entry) for path, entry in raw.get("files", {}).items()}

    def save_base(self, base: dict[str, BaseEntry], last_sync: dict) -> None:
        self._write("base.json", {"files": {p: list(e) for p, e in sorted(base.items())}, "last_sync": last_sync})

    def last_sync(self) -> dict | None:
        return self._read("base.json", {}).get("last_sync")

    def cached_manifest(self) -> tuple[bytes, str] | None:
        meta = self._read("manifest.etag.json")
        try:
            data = (self.dir / "manifest.json").read_bytes()
        except FileNotFoundError:
            return None
        return (data, meta["etag"]) if meta else None

    def cache_manifest(self, data: bytes, etag: str) -> None:
        self.ws.write_atomic(f"{DIR}/manifest.json", data)
        self._write("manifest.etag.json", {"etag": etag})

    def forget_manifest(self) -> None:
        """Drop the cached manifest: the next round reads the remote's whole."""
        (self.dir / "manifest.etag.json").unlink(missing_ok=True)

    def seen(self) -> dict | None:
        """{"generation": N, "manifest": digest} of the newest remote manifest this workspace synced with."""
        data = self._read("seen.json")
        return data if isinstance(data, dict) and isinstance(data.get("generation"), int) else None

    def save_seen(self, generation: int, digest: str) -> None:
        self._write("seen.json", {"generation": generation, "manifest": digest})

    def auto(self) -> dict | None:
        """The record of automatic sync (`mem watch --sync`): last success, last error, next try."""
        data = self._read("auto.json")
        return data if isinstance(data, dict) else None

    def save_auto(self, record: dict) -> None:
        self._write("auto.json", record)

    def damaged(self) -> list[str]:
        """Paths whose remote copy was found damaged and not yet pulled (the next round tries again)."""
        return self._read("damaged.json", [])

    def save_damaged(self, paths: list[str]) -> None:
        if paths:
            self._write("damaged.json", sorted(paths))
        else:
            (self.dir / "damaged.json").unlink(missing_ok=True)

    def oversize(self) -> dict[str, dict]:
        """Paths whose remote revision is over the size limit (`path → {"rev", "size"}`), left alone by
        every round until resolved (`mem sync resolve PATH --keep local`) or replaced on the remote."""
        data = self._read("oversize.json", {})
        return data if isinstance(data, dict) else {}

    def save_oversize(self, paths: dict[str, dict]) -> None:
        if paths:
            self._write("oversize.json", paths)
        else:
            (self.dir / "oversize.json").unlink(missing_ok=True)

    # --- conflicts ---------------------------------------------------------------------------

    def conflicts(self) -> dict[str, dict]:
        return self._read("conflicts.json", {})

    def save_conflicts(self, conflicts: dict[str, dict]) -> None:
        self._write("conflicts.json", conflicts)

    def listed(self) -> list[str]:
        """Paths whose conflict this device has listed on the remote (cleared there once resolved here)."""
        return self._read("listed.json", [])

    def save_listed(self, paths: list[str]) -> None:
        if paths:
            self._write("listed.json", sorted(paths))
        else:
            (self.dir / "listed.json").unlink(missing_ok=True)

    def dismissed(self) -> dict[str, dict[str, str]]:
        """Other devices' listed conflicts resolved here (`path → device → rev`), dropped from the remote's
        list by the next sync."""
        return self._read("dismissed.json", {})

    def save_dismissed(self, dismissed: dict) -> None:
        if dismissed:
            self._write("dismissed.json", dismissed)
        else:
            (self.dir / "dismissed.json").unlink(missing_ok=True)

    def has_base_text(self, rev: str) -> bool:
        return (self.dir / "conflicts" / rev).exists()

    def keep_base_text(self, rev: str, data: bytes) -> None:
        self.ws.write_atomic(f"{DIR}/conflicts/{rev}", data)

    def base_text(self, rev: str | None) -> bytes:
        if rev is None:
            return b""
        try:
            return (self.dir / "conflicts" / rev).read_bytes()
        except FileNotFoundError:
            return b""

    @property
    def path(self) -> Path:
        return self.dir
