"""Dialogue turns in notes: a list item written as `**Name**: text` is a turn by Name. Pure.

Our importers write a turn with its time, `**Name** (14:03): text` (ChatGPT exports): that is a
turn by Name too. Shared by the parser's neighbours (embedding text) and recall's dialogue priors,
without either importing the other."""

from __future__ import annotations

import re

_SPEAKER = re.compile(r"^\*\*([^*\n]{1,60}?)\*\*(?:\s*\(\d{1,2}:\d{2}(?::\d{2})?\))?\s*:")


def speaker_of(content: str) -> str | None:
    """The speaker of a dialogue turn written as `**Name**: text` or `**Name** (14:03): text`, else None."""
    m = _SPEAKER.match(content)
    return m.group(1).strip() if m else None
