"""What bringing the index in step must do, decided from a scan and the index's file table: the
`IndexPlan`, `plan` (pure), and the `IndexReport` every path returns.

Apart from `memtool.indexer` (parsing, writing, embedding), so that a read whose files did not
change imports neither the indexer nor the parser's record classes (docs/benchmarks-history.md, One-shot
`mem recall`)."""

from __future__ import annotations

from collections.abc import Callable

from memtool.value import Value
from memtool.workspace import FileStat

Progress = Callable[[int, int], None]
STALE_MTIME = -1  # stored for a file that could not be read: every refresh tries it again


class IndexPlan:
    """Which files to parse, which only to re-check, which to drop (`plan` fills it). A plain
    class: a dataclass's generated methods are compiled on every import (~0.5 ms of a `mem recall`)."""

    __slots__ = ("new", "modified", "removed", "unchanged", "stale")

    def __init__(self):
        self.new: list[FileStat] = []
        self.modified: list[FileStat] = []  # size, mtime or ctime differ: hash decides
        self.removed: list[str] = []
        self.unchanged = 0
        self.stale: list[str] = []  # indexed, now in a folder the scan could not look into

    @property
    def empty(self) -> bool:
        return not (self.new or self.modified or self.removed or self.stale)


class IndexReport(Value):
    """What bringing the index in step did: files seen, parsed, removed, facts, vectors made."""

    __slots__ = ("files_seen", "parsed", "removed", "touched", "unreadable", "facts", "seconds", "rebuilt",
                 "embedded", "embed_seconds", "degraded", "notices")

    def __init__(self, files_seen: int = 0):
        self.files_seen = files_seen
        self.parsed = 0
        self.removed = 0
        self.touched = 0  # stat changed but content identical
        self.unreadable = 0
        self.facts = 0
        self.seconds = 0.0
        self.rebuilt = False
        self.embedded = 0
        self.embed_seconds = 0.0  # time spent embedding, apart from `seconds` (reading and indexing text)
        self.degraded: str | None = None  # why no vectors were made (the text index is complete; recall answers by words)
        self.notices: list[str] = []

    def to_dict(self) -> dict:
        return self.as_dict()


def plan(scanned: dict[str, tuple[int, int, int]], stored: dict[str, tuple[int, int, int]],
         unlisted: tuple[str, ...] | list[str] = ()) -> IndexPlan:
    """Compare a directory scan with the index's file table (both path → (size, mtime_ns, ctime_ns)). Pure.

    `unlisted` names files and folders the scan could not look into: indexed files there are kept
    (their last facts stay, reported as stale), never taken for deleted."""
    p = IndexPlan()
    if scanned == stored:  # the common case, decided in C
        p.unchanged = len(scanned)
        return p
    for path in sorted(scanned):
        stat = scanned[path]
        old = stored.get(path)
        if old is None:
            p.new.append(FileStat(path, *stat))
        elif old != stat:
            p.modified.append(FileStat(path, *stat))
        else:
            p.unchanged += 1
    gone = sorted(set(stored) - set(scanned))
    under = tuple(u + "/" for u in unlisted)
    hidden = [path for path in gone if path in unlisted or path.startswith(under)]
    p.removed = [path for path in gone if not (path in unlisted or path.startswith(under))]
    p.stale = [path for path in hidden if stored[path][1] != STALE_MTIME]
    p.unchanged += len(hidden) - len(p.stale)
    return p
