"""What to do with one path, from its local, base and remote revisions (pure).

A revision is the SHA-256 of a file's bytes; None means "no file". The remote side also says
whether a missing file is a tombstone (deleted on purpose) or simply unknown there: only a
tombstone deletes. There is no last-write-wins case: when both sides changed, the result is
an adoption (same bytes), a resurrection (a change beats a deletion) or a merge.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class Step(str, Enum):
    SKIP = "skip"            # nothing changed on either side
    ADOPT = "adopt"          # both sides already hold the same bytes: only the base moves
    PULL = "pull"            # remote changed: write it here
    DELETE = "delete"        # remote deleted (tombstone) and the local file was unchanged
    PUSH = "push"            # local changed (or the remote lost it): upload it
    TOMBSTONE = "tombstone"  # local deleted and the remote was unchanged: record the deletion
    MERGE = "merge"          # both changed: three-way merge


class Remote(NamedTuple):
    rev: str | None
    deleted: bool = False


class Decision(NamedTuple):
    step: Step
    why: str


def decide(local: str | None, base: str | None, remote: Remote | None) -> Decision:
    """The step for one path. `remote` None: the manifest has no entry for it."""
    remote_rev = remote.rev if remote and not remote.deleted else None
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
