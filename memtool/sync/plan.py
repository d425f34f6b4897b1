"""What to do with one path, from its local, base and remote revisions (pure).

A revision is the SHA-256 of a file's bytes; None means "no file". The remote side also says
whether a missing file is a tombstone (deleted on purpose) or simply unknown there: only a
tombstone deletes. There is no last-write-wins case: when both sides changed, the result is
an adoption (same bytes), a resurrection (a change beats a deletion) or a merge.

`path_problem` is the one rule for which paths sync touches at all, used both for what a replica
publishes and for what it accepts from a remote's manifest (which is untrusted input).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from enum import Enum
from typing import NamedTuple

from memtool.safe_writes import MAX_NAME_BYTES

CONFLICT_MARK = ".conflict-"
SYNCED_FOLDERS = ("memory", "bank")
REV = re.compile(r"[0-9a-f]{64}")
_PART = r"[^./\x00-\x1f\x7f-\x9f\\][^/\x00-\x1f\x7f-\x9f\\]*"
_PLAIN = re.compile(rf"(?:(?:memory|bank)(?:/{_PART})*/)?{_PART}\.md")  # the common case, checked fast
# Invisible in a listing or reordering how a name shows: format characters (bidi overrides and
# isolates, zero-width space, BOM, soft hyphen, tag characters), line/paragraph separators, lone
# surrogates (which no file system name can hold: writing one would fail mid-round). The zero-width
# non-joiner and joiner are spelling, not disguise (Persian and Indic names, emoji sequences): kept.
INVISIBLE = frozenset(("Cf", "Zl", "Zp", "Cs"))
JOINERS = frozenset("\u200c\u200d")
# Blocks that hold every such character (a test checks it against `unicodedata`): a name without any
# of them skips the per-character look-up.
_SUSPECT = r"[\u00ad\u0600-\u08ff\u180e\u2000-\u206f\ufe00-\ufeff\ufff0-\uffff\ud800-\udfff\U00010000-\U0010ffff]"


class Step(str, Enum):
    SKIP = "skip"            # nothing changed on either side
    ADOPT = "adopt"          # both sides already hold the same bytes: only the base moves
    PULL = "pull"            # remote changed: write it here
    DELETE = "delete"        # remote deleted (tombstone) and the local file was unchanged
    PUSH = "push"            # local changed (or the remote lost it): upload it
    TOMBSTONE = "tombstone"  # local deleted and the remote was unchanged: record the deletion
    MERGE = "merge"          # both changed: three-way merge
    REPAIR = "repair"        # the remote's copy is damaged and the bytes here are the right ones: upload again


class Remote(NamedTuple):
    rev: str | None
    deleted: bool = False
    damaged: bool = False  # a replica found the remote's bytes for `rev` missing or not matching it


class Decision(NamedTuple):
    step: Step
    why: str


def decide(local: str | None, base: str | None, remote: Remote | None) -> Decision:
    """The step for one path. `remote` None: the manifest has no entry for it."""
    remote_rev = remote.rev if remote and not remote.deleted else None
    if remote is not None and remote.damaged and local is not None and local == remote_rev:
        return Decision(Step.REPAIR, "damaged on the remote; the bytes here are right")
    if local == remote_rev:
        if local == base:
            return Decision(Step.SKIP, "unchanged")
        return Decision(Step.ADOPT, "same on both sides")
    if local == base:
        if remote_rev is not None:
            return Decision(Step.PULL, "changed on the remote")
        if remote is not None and remote.deleted:
            return Decision(Step.DELETE, "deleted on the remote")
        return Decision(Step.PUSH, "missing on the remote (never treated as a deletion)")
    if remote_rev == base:
        if local is None:
            return Decision(Step.TOMBSTONE, "deleted here")
        return Decision(Step.PUSH, "changed here")
    if local is None:
        return Decision(Step.PULL, "deleted here but changed on the remote: the change is kept")
    if remote_rev is None:
        if remote is not None and remote.deleted:
            return Decision(Step.PUSH, "changed here but deleted on the remote: the change is kept")
        return Decision(Step.PUSH, "changed here and missing on the remote")
    return Decision(Step.MERGE, "changed on both sides")


def path_problem(path) -> str | None:
    """Why sync never reads or writes `path` (a workspace-relative POSIX path), or None if it syncs.

    Syncs: `memory.md` and other top-level `*.md`, `memory/**.md`, `bank/**.md`. Never: anything
    hidden (so never `.memory/`), conflict copies, other file types, files below a folder named `*.md`
    (which the workspace scan does not enter), and anything that is not a
    plain relative path (absolute, `..`, backslashes, control characters, invisible formatting
    characters such as bidi overrides or zero-width spaces)."""
    if not isinstance(path, str) or not path:
        return "not a path"
    ascii_ = path.isascii()
    short = len(path) <= 50 or (len(path) <= MAX_NAME_BYTES and ascii_)  # no name can exceed MAX_NAME_BYTES
    if (short and _PLAIN.fullmatch(path) and CONFLICT_MARK not in path.rsplit("/", 1)[-1] and ".md/" not in path
            and (ascii_ or not re.search(_SUSPECT, path))):
        return None  # the common case
    if len(path) > 1024 or len(path.encode("utf-8", "surrogatepass")) > 1024:  # bytes: its backup's path must fit
        return "path too long"
    if any(ch < " " or "\x7f" <= ch <= "\x9f" for ch in path):  # C0, DEL, C1 (\x9b: a terminal's CSI)
        return "control character in the path"
    if not ascii_:
        kinds = {unicodedata.category(ch) for ch in path if ch not in JOINERS} & INVISIBLE
        if "Cs" in kinds:
            return "not valid Unicode (a lone surrogate in the path)"
        if kinds:
            return "invisible or bidirectional formatting character in the path"
    if "\\" in path:
        return "backslash in the path"
    if path.startswith("/"):
        return "absolute path"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "not a plain relative path"
    if any(part.startswith(".") for part in parts):
        return "hidden file or folder"
    if any(len(part.encode("utf-8", "replace")) > 255 for part in parts):
        return "path too long"
    if len(parts[-1].encode("utf-8", "replace")) > MAX_NAME_BYTES:  # its temp file or backup would not fit
        return f"file name longer than {MAX_NAME_BYTES} bytes"
    if not path.endswith(".md"):
        return "not a Markdown file"
    if any(part.endswith(".md") for part in parts[:-1]):  # `Workspace.scan` never reads below one
        return "below a folder named *.md (memtool reads no file there)"
    if CONFLICT_MARK in parts[-1]:
        return "a conflict copy"
    if len(parts) > 1 and parts[0] not in SYNCED_FOLDERS:
        return "outside memory/ and bank/"
    return None


def remote_entry(entry) -> Remote | None:
    """A manifest entry read as a Remote; None when it is malformed (not an object, no valid revision)."""
    if not isinstance(entry, dict):
        return None
    if entry.get("deleted") is True:
        return Remote(None, deleted=True, damaged=False)
    rev = entry.get("rev")
    if not isinstance(rev, str) or not REV.fullmatch(rev):
        return None
    return Remote(rev, damaged=entry.get("damaged") is True)


def fold(path: str) -> str:
    """`path` as a file system that ignores case and Unicode normalisation (macOS, Windows) sees it:
    two paths with the same fold are one file there."""
    if path.isascii():
        return path.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def collisions(paths: Iterable[str]) -> dict[str, str]:
    """path → another of `paths` that differs from it only by case or Unicode normalisation (NFC vs
    NFD), for every such path: on macOS or Windows one of the two would overwrite the other."""
    paths = set(paths)
    if len(set(map(fold, paths))) == len(paths):
        return {}  # the common case, found without grouping
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(fold(path), []).append(path)
    out: dict[str, str] = {}
    for group in groups.values():
        if len(group) > 1:
            group.sort()
            for path in group:
                out[path] = next(other for other in group if other != path)
    return out


def named(path: str) -> str:
    """`path` for a message, marked "(NFD)" when it is not in NFC (two such paths print alike)."""
    return path if unicodedata.is_normalized("NFC", path) else f"{path} (NFD)"
