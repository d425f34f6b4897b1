"""The remote's manifest: its format, parsing, the generation check, and content-addressed revisions.

A manifest is untrusted input (another machine, or whoever can write the remote, wrote it): it is
validated before use, and its paths and device names are escaped before they are printed or used
in a file name.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

from memtool.errors import WorkspaceError
from memtool.sync.plan import INVISIBLE, REV, path_problem
from memtool.sync.state import SyncBlocked

FORMAT = "memtool-sync/1"
_MEMORY_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # memtool writes a workspace id: 32 hex digits


def rev_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()



def digest(manifest: bytes) -> str:
    return hashlib.sha256(manifest).hexdigest()[:32]



def shown(path: str) -> str:
    """A path from a manifest, safe to print (control and invisible formatting characters escaped)."""
    return "".join(ch if ch >= " " and not "\x7f" <= ch <= "\x9f" and (ch.isascii() or unicodedata.category(ch)
                                                                      not in INVISIBLE)
                   else f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" for ch in path)


def safe_device(device) -> str:
    """A device name from a manifest (untrusted) as it may appear in a file name or on a terminal."""
    text = device if isinstance(device, str) else ""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "-" for ch in text)[:40] or "remote"



def parse_manifest(data: bytes, url: str) -> dict:
    try:
        manifest = json.loads(data)
        if manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
            raise ValueError(manifest.get("format"))
        if "memory_id" in manifest and not (isinstance(manifest["memory_id"], str)
                                            and _MEMORY_ID.fullmatch(manifest["memory_id"])):
            raise ValueError("memory_id is not an id: 1-64 ASCII letters, digits, '-' or '_'")
        generation = manifest.get("generation", 0)
        if not isinstance(generation, int) or isinstance(generation, bool) or generation < 0:
            raise ValueError("generation is not a count")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError) as exc:  # (nested past Python's limit)
        raise WorkspaceError(f"the manifest on {url} is not a memtool sync manifest ({exc})",
                             "point sync at a folder or prefix used only by memtool") from None
    return manifest


def conflict_listing(manifest: dict | None) -> dict[str, dict[str, dict]]:
    """The manifest's waiting conflicts, `path → device → {rev, size, against, time}`; malformed entries
    and paths sync never writes (`path_problem`: `memtool.toml`, `.memory/…`; the manifest is untrusted,
    and `mem sync resolve` writes a listed version) are dropped."""
    raw = (manifest or {}).get("conflicts")
    out: dict[str, dict[str, dict]] = {}
    if not isinstance(raw, dict):
        return out
    for path, by_device in raw.items():
        if path_problem(path) is not None or not isinstance(by_device, dict):
            continue
        good = {device: entry for device, entry in by_device.items()
                if isinstance(device, str) and isinstance(entry, dict)
                and all(isinstance(entry.get(k), str) and REV.fullmatch(entry[k]) for k in ("rev", "against"))
                and (entry.get("base") is None or (isinstance(entry["base"], str) and REV.fullmatch(entry["base"])))}
        if good:
            out[path] = good
    return out


def check_generation(manifest: dict | None, data: bytes | None, seen: dict | None, url: str) -> None:
    """Refuse a remote that went backwards: an older generation than this workspace already synced
    with, another manifest under the same generation, or no manifest at all after one was seen."""
    if seen is None:
        return
    had, now = seen["generation"], (manifest or {}).get("generation", 0) if data is not None else None
    if now is None:
        what = f"{url} has no manifest any more, but this workspace synced generation {had} there"
    elif now < had:
        what = f"the manifest on {url} went backwards: generation {now}, but this workspace already synced {had}"
    elif now == had and seen.get("manifest") not in (None, digest(data)):
        what = f"the manifest on {url} was replaced: another version under generation {now}"
    else:
        return
    mount = "if the remote is a disk, check that it is mounted; " if now is None else ""
    raise SyncBlocked(what + " (restored from an old copy, or changed by hand); nothing was changed here",
                      f"{mount}if the remote was restored or emptied on purpose, move .memory/sync/base.json aside "
                      "and run mem sync again: files then merge without a base (extensions merge, anything else "
                      "becomes a conflict; nothing is dropped)")



def encode(manifest: dict) -> bytes:
    """The manifest as written to the remote (compact, keys sorted, UTF-8). A lone surrogate read from
    a remote's JSON escape (in a refused path or a device name, kept as it was) has no UTF-8 form:
    then the whole manifest is written with non-ASCII characters escaped, valid JSON all the same."""
    try:
        return json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
