"""The prompt for a recap of memory material (`mem summarize`). Pure."""

from __future__ import annotations

MAX_MATERIAL_CHARS = 12_000  # about 3k tokens: enough for a few days, small enough for a local model

LANGUAGE_NAMES = {"de": "German", "en": "English"}


def system_prompt(lang: str) -> str:
    return (
        f"You write short recaps of a person's own notes. Answer in {LANGUAGE_NAMES.get(lang, 'English')}. "
        "Write 3 to 5 sentences of plain prose, no lists, no headings. Use only what the notes say; do not "
        "invent anything. After each statement, cite the day it comes from as [YYYY-MM-DD] (or the file "
        "name for undated notes)."
    )


def material(blocks: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """Join (label, text) blocks, newest first as given, within the size budget; returns text and labels used."""
    parts, used, size = [], [], 0
    for label, text in blocks:
        chunk = f"### {label}\n{text.strip()}\n"
        if size + len(chunk) > MAX_MATERIAL_CHARS:
            if not parts:
                chunk = chunk[:MAX_MATERIAL_CHARS]
            else:
                break
        parts.append(chunk)
        used.append(label)
        size += len(chunk)
    return "\n".join(parts), used


def user_prompt(subject: str, text: str) -> str:
    return f"Recap {subject} from these notes.\n\n{text}"
