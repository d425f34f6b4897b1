"""Dialogue turns in notes: a list item written as `**Name**: text` is a turn by Name. Pure.

Our importers write a turn with its time, `**Name** (14:03): text` (ChatGPT exports): that is a
turn by Name too. Shared by the parser's neighbours (embedding text) and recall's dialogue priors,
without either importing the other."""

from __future__ import annotations

import re

_SPEAKER = re.compile(r"^\*\*([^*\n]{1,60}?)\*\*(?:\s*\(\d{1,2}:\d{2}(?::\d{2})?\))?\s*:")


def speaker_of(content: str) -> str | None:
    """The speaker of a dialogue turn written as `**Name**: text` or `**Name** (14:03): text`, else None."""
    if not content.startswith("**"):  # (most text: a full build asks for every record)
        return None
    m = _SPEAKER.match(content)
    return m.group(1).strip() if m else None


def spoken(content: str) -> str:
    """What a dialogue turn says, without its `**Name**:` label (the text itself when it is no turn)."""
    return _SPEAKER.sub("", content, count=1)


# Bracketed asides (image captions, a link's text), a link's target, web addresses and code spans:
# a `?` there asks nothing. These three are compiled by `re` where first used (its cache): only a
# turn with a question mark reads them (a one-shot `mem recall` compiled them at import: ~1.5 ms under load).
_ASIDE = r"\[[^\]]*\](?:\([^)\s]*\))?|\b(?:https?|ftp)://\S+|`[^`]*`"
_SENTENCE = r"[^.!?？؟]+[.!?？؟]*"  # linear: a piece, then its end marks
_WORD = r"\w"
_ASKS = ("?", "？", "؟")


def asking(content: str) -> float:
    """The share of a dialogue turn's sentences that are questions (0 for text that is no turn):
    those ending in a question mark (`?!` too; the full-width and Arabic marks as well). A turn
    that asks is answered by the turn after it. Pure."""
    if not any(mark in content for mark in _ASKS) or not speaker_of(content):
        return 0.0
    text = re.sub(_ASIDE, " ", _SPEAKER.sub("", content, count=1))
    sentences = [s.strip() for s in re.findall(_SENTENCE, text) if re.search(_WORD, s)]
    return sum(s.rstrip("!").endswith(_ASKS) for s in sentences) / len(sentences) if sentences else 0.0
