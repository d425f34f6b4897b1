"""Dialogue turns in notes: a list item written as `**Name**: text` is a turn by Name. Pure.

Shared by the parser's neighbours (embedding text) and recall's dialogue priors, without either
importing the other."""

from __future__ import annotations

import re

_SPEAKER = re.compile(r"^\*\*([^*\n]{1,60}?)\*\*\s*:")


def speaker_of(content: str) -> str | None:
    """The speaker of a dialogue turn written as `**Name**: text`, else None."""
    m = _SPEAKER.match(content)
    return m.group(1).strip() if m else None
