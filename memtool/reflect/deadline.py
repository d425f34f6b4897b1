"""The time limit of one reflect run: each phase asks before it starts work, and the first phase that
finds the time up is remembered (the journal names it; what was not examined waits for the next run)."""

from __future__ import annotations

import time


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.hit_at: str | None = None  # the phase that found the time up

    def passed(self, phase: str) -> bool:
        """Whether the time is up (and stays up), noting `phase` the first time it is."""
        if self.hit_at is None and time.monotonic() > self.end:
            self.hit_at = phase
        return self.hit_at is not None
