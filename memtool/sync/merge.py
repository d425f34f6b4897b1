"""Line-wise three-way merge (pure): what both sides changed relative to their common base.

Edits are hunks over the base's lines. Hunks from the two sides that touch different base lines
are both applied. Two insertions at the same point (two machines appending to one daily log) are
both kept: their common lines once, then the local lines, then the remote ones. Anything else
where both sides changed the same base lines differently is a conflict; the caller keeps both
versions. With `union=True` (the user's "keep both") a conflict keeps local then remote lines.

Without a common base (`merge_unrelated`: a lost `.memory/sync/base.json`, a second machine's first
sync) there is nothing to diff against, so only extensions merge: one side continuing the other,
or both appending entirely different lines to the beginning they share. Anything else is a conflict.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import NamedTuple

from memtool.templates import DAILY_EXAMPLE, TEMPLATES


class Hunk(NamedTuple):
    start: int  # base line range [start, end); start == end is an insertion before `start`
    end: int
    lines: tuple[str, ...]  # what the side has there instead


class Conflict(NamedTuple):
    line: int  # 1-based base line where the conflicting region starts
    local: tuple[str, ...]
    remote: tuple[str, ...]


class Merge(NamedTuple):
    text: str
    conflicts: tuple[Conflict, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merge3(base: str, local: str, remote: str, union: bool = False) -> Merge:
    """Merge `local` and `remote`, both descended from `base`; conflicting regions keep the local lines."""
    if local == remote or remote == base:
        return Merge(local, ())
    if local == base:
        return Merge(remote, ())
    b, l, r = base.split("\n"), local.split("\n"), remote.split("\n")
    hunks = sorted([(h, 0) for h in hunks_of(b, l)] + [(h, 1) for h in hunks_of(b, r)],
                   key=lambda item: (item[0].start, item[0].end, item[1]))
    out: list[str] = []
    conflicts: list[Conflict] = []
    cursor = 0
    for lo, hi, group in _groups(hunks):
        out.extend(b[cursor:lo])
        cursor = hi
        sides = {side for _, side in group}
        mine = _apply(b, lo, hi, [h for h, side in group if side == 0])
        if len(sides) == 1:
            out.extend(mine if 0 in sides else _apply(b, lo, hi, [h for h, _ in group]))
            continue
        theirs = _apply(b, lo, hi, [h for h, side in group if side == 1])
        if mine == theirs:
            out.extend(mine)
        elif lo == hi or union:
            out.extend(_union(mine, theirs))
        else:
            conflicts.append(Conflict(lo + 1, tuple(mine), tuple(theirs)))
            out.extend(mine)
    out.extend(b[cursor:])
    return Merge("\n".join(out), tuple(conflicts))


def merge_unrelated(local: str, remote: str) -> Merge:
    """Merge two versions that have no known common base; a conflict unless one merely extends the other."""
    if remote.startswith(local):
        return Merge(remote, ())
    if local.startswith(remote):
        return Merge(local, ())
    mine, theirs = local.splitlines(keepends=True), remote.splitlines(keepends=True)
    pre = 0
    while pre < len(mine) and pre < len(theirs) and mine[pre] == theirs[pre]:
        pre += 1
    tail_mine, tail_theirs = mine[pre:], theirs[pre:]
    if {line.strip() for line in tail_mine} & {line.strip() for line in tail_theirs} - {""}:
        return Merge(local, (Conflict(pre + 1, tuple(tail_mine), tuple(tail_theirs)),))
    # Two appends to one beginning (two machines starting the same day's log): local lines, then remote.
    added = "".join(tail_mine)
    if not added.endswith(("\n", "\r")):
        added += "\n"
    return Merge("".join(mine[:pre]) + added + "".join(tail_theirs), ())


def hunks_of(base: list[str], other: list[str]) -> list[Hunk]:
    """The edits that turn `base` into `other` (common prefix and suffix trimmed first: appends are O(n))."""
    n, m = len(base), len(other)
    pre = 0
    while pre < n and pre < m and base[pre] == other[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and suf < m - pre and base[n - 1 - suf] == other[m - 1 - suf]:
        suf += 1
    b, o = base[pre:n - suf], other[pre:m - suf]
    if not b and not o:
        return []
    if not b or not o:
        return [Hunk(pre, n - suf, tuple(o))]
    matcher = SequenceMatcher(None, b, o, autojunk=False)
    return [Hunk(pre + i1, pre + i2, tuple(o[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _overlaps(lo: int, hi: int, h: Hunk) -> bool:
    if lo == hi and h.start == h.end:
        return lo == h.start  # two insertions at the same point
    if lo == hi:
        return h.start < lo < h.end
    if h.start == h.end:
        return lo < h.start < hi
    return h.start < hi and lo < h.end


def _groups(hunks: list[tuple[Hunk, int]]):
    """Runs of hunks whose base ranges overlap (by the rules above), as (lo, hi, members)."""
    group: list[tuple[Hunk, int]] = []
    lo = hi = 0
    for hunk, side in hunks:
        if group and _overlaps(lo, hi, hunk):
            group.append((hunk, side))
            hi = max(hi, hunk.end)
            continue
        if group:
            yield lo, hi, group
        group, lo, hi = [(hunk, side)], hunk.start, hunk.end
    if group:
        yield lo, hi, group


def _apply(base: list[str], lo: int, hi: int, hunks: list[Hunk]) -> list[str]:
    """One side's version of base[lo:hi], given that side's hunks inside it."""
    out: list[str] = []
    cursor = lo
    for h in sorted(hunks, key=lambda h: (h.start, h.end)):
        out.extend(base[cursor:h.start])
        out.extend(h.lines)
        cursor = h.end
    out.extend(base[cursor:hi])
    return out


def _union(mine: list[str], theirs: list[str]) -> list[str]:
    """Both versions: shared leading and trailing lines once, local middle, then remote middle."""
    pre = 0
    while pre < len(mine) and pre < len(theirs) and mine[pre] == theirs[pre]:
        pre += 1
    suf = 0
    while (suf < len(mine) - pre and suf < len(theirs) - pre
           and mine[len(mine) - 1 - suf] == theirs[len(theirs) - 1 - suf]):
        suf += 1
    return mine[:len(mine) - suf] + theirs[pre:len(theirs) - suf] + mine[len(mine) - suf:]


def starter_text(path: str) -> str | None:
    """The text `mem init` writes at `path` (identical on every machine, so a true common base)."""
    if path in TEMPLATES:
        return TEMPLATES[path]
    match = re.fullmatch(r"memory/(?:\d{4}/(?:\d{2}/)?)?(\d{4}-\d{2}-\d{2})\.md", path)
    return DAILY_EXAMPLE.format(day=match.group(1)) if match else None


def merge_texts(path: str, base: str | None, ours: str, theirs: str) -> Merge:
    """Three-way with the base; without one, an untouched starter file counts as the base (the other
    side's text wins), else only extensions merge (`merge_unrelated`)."""
    if base is not None:
        return merge3(base, ours, theirs)
    starter = starter_text(path)
    if starter is not None and starter in (ours, theirs):
        return merge3(starter, ours, theirs)
    return merge_unrelated(ours, theirs)

