"""This side of a sync: which files sync, their stats, and their revisions."""

from __future__ import annotations

import os
from stat import S_ISREG

from memtool.sync.apply import link_problem
from memtool.sync.manifest import rev_of, shown
from memtool.sync.plan import path_problem
from memtool.sync.remotes import MAX_OBJECT_BYTES
from memtool.sync.state import BaseEntry
from memtool.workspace import Workspace


# The largest file sync publishes: what every replica accepts from the remote (MAX_OBJECT_BYTES),
# less room for encryption's header, nonce and tag.
MAX_FILE_BYTES = MAX_OBJECT_BYTES - 2**16

_NOT_SAID = ("hidden", "a conflict copy", "not a Markdown file", "outside memory/")  # never meant to sync


def sync_files(ws: Workspace, skipped: list | None = None, too_big: set | None = None) -> dict[str, tuple[int, int, int]]:
    """path → (size, mtime_ns, ctime_ns) of what syncs: the Markdown files memtool reads plus top-level
    `*.md` (e.g. SOUL.md); never `.memory/`, hidden files or conflict copies (`path_problem` decides).

    The change time is in the key because an edit can keep size and mtime (`touch -r`, some editors
    and copy tools) but never the ctime, which no program can set. A file whose name sync cannot carry
    (too long, control or invisible characters), a file over MAX_FILE_BYTES and a top-level link that leads out of the workspace or
    to a file sync never publishes are left out, and named in `skipped` ("path: why"); a file over
    MAX_FILE_BYTES also in `too_big` (its round leaves it alone, as a conflict: never a deletion)."""
    paths = list(ws.scan())
    paths += [p.name for p in ws.root.glob("*.md") if p.name != "memory.md"]
    out: dict[str, tuple[int, int, int]] = {}
    root = str(ws.root) + os.sep
    for path in paths:
        problem = path_problem(path)
        if problem is not None:
            if skipped is not None and not problem.startswith(_NOT_SAID):
                skipped.append(f"{shown(path)}: {problem}")  # a name sync cannot carry: said, not dropped
            continue
        if "/" not in path and os.path.islink(root + path):
            problem = link_problem(ws, path)
            if problem:  # never read, so never published (scan leaves links out of the workspace out too)
                if skipped is not None:
                    skipped.append(f"{path}: {problem}")
                continue
        try:
            st = os.stat(root + path)
        except OSError:
            continue
        if S_ISREG(st.st_mode) and st.st_size > MAX_FILE_BYTES:
            if skipped is not None:  # another replica would refuse it: it stays on this machine only
                skipped.append(f"{path}: {st.st_size:,} bytes, over the {MAX_FILE_BYTES:,} sync carries for one file")
            if too_big is not None:  # in `too_big`, never taken for deleted
                too_big.add(path)
        elif S_ISREG(st.st_mode):
            out[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


def unchanged(stats: dict[str, tuple[int, int, int]], base: dict[str, BaseEntry], too_big=frozenset()) -> bool:
    """Every local file has the stat recorded when both sides last agreed, and none is gone (a file
    in `too_big`, which `sync_files` leaves out and a round leaves alone, is not gone)."""
    if too_big:
        base = {path: entry for path, entry in base.items() if path not in too_big}
    if len(stats) != len(base):
        return False
    for path, stat in stats.items():
        entry = base.get(path)
        if entry is None or entry.stat != stat:
            return False
    return True


def local_revs(ws: Workspace, stats, base) -> tuple[dict[str, str], dict[str, bytes]]:
    """Local revisions: the base's for files whose stat is unchanged, else hashed (bytes cached)."""
    local: dict[str, str] = {}
    cache: dict[str, bytes] = {}
    for path, stat in stats.items():
        entry = base.get(path)
        if entry and entry.stat == stat:
            local[path] = entry.rev
            continue
        try:
            data = ws.resolve(path).read_bytes()
        except FileNotFoundError:
            continue
        local[path] = rev_of(data)
        cache[path] = data
    return local, cache
