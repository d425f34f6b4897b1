"""The `## Retain` bullet grammar (DESIGN §1.1) and inserting a bullet into a daily log. Pure.

    - W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.
    - O(c=0.95) @Peter: Prefers concise replies; long content goes into files. [because:: memory/2025-11-20.md#L4]
    - S: Three sessions this week were about the sync protocol.

A type letter (W world, B experience, O opinion, S observation), an optional confidence
`(c=0..1)`, optional `@Entity` subjects, a colon, then the text. `@mentions`,
`[[Wiki Links]]` and `[key:: value]` fields may appear anywhere in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memtool.records import RETAIN_KINDS
from memtool.sections import headings, lines_keepends, section_end

ENTITY = r"@([^\W_][\w.\-]*[\w]|[^\W_])"
_ENTITY_RE = re.compile(r"(?<![\w@])" + ENTITY)
_WIKI_RE = re.compile(r"\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\]")
_FIELD_RE = re.compile(r"\[([A-Za-z][\w\-]*)::\s*([^\]\n]*?)\s*\]")
_HEAD_RE = re.compile(
    r"^(?P<type>[A-Za-z])(?P<conf>\(\s*c\s*=\s*(?P<c>[^)]*)\))?"
    r"(?P<subjects>(?:[ \t,]+@[^\s:,]+)*)[ \t]*:(?P<text>.*)$",
    re.S,
)
_LOOKS_TYPED = re.compile(r"^[A-Za-z](\([^)]*\))?(\s+@\S+)*\s*:")

RETAIN_HEADING = "retain"


@dataclass
class Bullet:
    kind: str
    text: str  # everything after "TYPE(c=…)" up to the end: subjects, colon and text
    confidence: float | None = None
    entities: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


class BulletError(ValueError):
    """A bullet that does not follow the grammar; the message says what is wrong."""


def mentions(text: str) -> list[str]:
    """Entity mentions in order of appearance: `@Slug` and `[[Wiki Link]]` targets."""
    found = [(m.start(), m.group(1).rstrip(".")) for m in _ENTITY_RE.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _WIKI_RE.finditer(text)]
    return [name for name in dict.fromkeys(n for _, n in sorted(found)) if name]


_TAG_RE = re.compile(r"(?<![\w#/&])#([\w][\w/\-]*)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def normalise_tag(tag: str) -> str | None:
    """`#Project/Alpha` → `project/alpha`; None unless it is a tag (Obsidian's rule: letters, digits,
    `_`, `-` and `/` for nesting, with at least one character that is not a digit)."""
    tag = tag.strip().lstrip("#").strip("/").casefold()
    if not tag or not re.fullmatch(r"[\w][\w/\-]*", tag) or re.fullmatch(r"[\d/\-_]+", tag):
        return None
    return tag


def hashtags(text: str) -> list[str]:
    """`#tags` in order of appearance, normalised (not inside code spans, URLs or `&#…;`)."""
    found = (normalise_tag(m.group(1)) for m in _TAG_RE.finditer(_CODE_SPAN.sub(" ", text)))
    return list(dict.fromkeys(t for t in found if t))


def wiki_links(text: str) -> list[str]:
    """`[[Target]]` targets in order (`[[Target|label]]` and `[[Target#heading]]` give `Target`)."""
    return list(dict.fromkeys(m.group(1).strip() for m in _WIKI_RE.finditer(text) if m.group(1).strip()))


def inline_fields(text: str) -> dict[str, str]:
    """`[key:: value]` fields; a repeated key keeps its first value."""
    out: dict[str, str] = {}
    for m in _FIELD_RE.finditer(text):
        out.setdefault(m.group(1).lower(), m.group(2))
    return out


def inline_field_values(text: str, key: str) -> list[str]:
    """Every value of the `[key:: value]` fields in `text`, in order (a key may repeat)."""
    return [m.group(2) for m in _FIELD_RE.finditer(text) if m.group(1).lower() == key and m.group(2)]


def looks_like_bullet(text: str) -> bool:
    """Whether a Retain line tries to be a typed bullet (so a failure is worth reporting)."""
    return bool(_LOOKS_TYPED.match(text.strip()))


def parse_bullet(text: str) -> Bullet:
    """Parse the text of one Retain bullet (without the leading `- `); raise BulletError."""
    s = text.strip()
    m = _HEAD_RE.match(s)
    if not m:
        if s[:1].isalpha() and (len(s) == 1 or s[1] in " (:"):
            raise BulletError("expected ':' after the type letter and @entities, e.g. 'W @Peter: text'")
        raise BulletError("a Retain bullet starts with a type letter W, B, O or S, e.g. 'W @Peter: text'")
    letter = m.group("type")
    kind = RETAIN_KINDS.get(letter.upper())
    if kind is None:
        raise BulletError(f"unknown type {letter!r}: use W (world), B (experience), O (opinion) or S (observation)")
    confidence = None
    if m.group("conf"):
        raw = m.group("c").strip()
        try:
            confidence = float(raw)
        except ValueError:
            raise BulletError(f"confidence {raw!r} is not a number; write e.g. O(c=0.8)") from None
        if not 0.0 <= confidence <= 1.0 or confidence != confidence:
            raise BulletError(f"confidence {raw} is outside 0..1; write e.g. O(c=0.8)")
        if kind != "opinion":
            raise BulletError(f"only opinions (O) carry a confidence, not {letter!r}")
    body = m.group("text").strip()
    if not body:
        raise BulletError("the bullet has no text after the colon")
    rest = s[1 + len(m.group("conf") or ""):].lstrip()
    if rest.startswith(":"):
        rest = rest[1:].lstrip()
    return Bullet(kind=kind, text=rest, confidence=confidence, entities=mentions(s), fields=inline_fields(s))


def is_retain_heading(title: str) -> bool:
    return title.strip().strip("#").strip().lower() == RETAIN_HEADING


def insert_bullet(text: str, bullet: str, day_title: str) -> tuple[str, int]:
    """Insert `- bullet` at the end of the first `## Retain` section of a daily log.

    Returns the new text and the 1-based line of the new bullet. Every existing line is kept
    byte for byte; the section (and the file, with `# day_title`) is created when missing.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = lines_keepends(text)
    new_line = f"- {bullet}{newline}"
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    heads = headings(lines)
    retain = next((h for h in heads if is_retain_heading(h.title)), None)
    if retain is None:
        prefix: list[str] = []
        if not lines:
            prefix = [f"# {day_title}{newline}", newline]
        elif lines[-1].strip():
            prefix = [newline]
        out = lines + prefix + [f"## Retain{newline}", new_line]
        return "".join(out), len(out)
    start, end = retain.index, section_end(heads, retain, len(lines))
    # insert after the last non-blank line of the section
    at = end
    while at > start + 1 and not lines[at - 1].strip():
        at -= 1
    out = lines[:at] + [new_line] + lines[at:]
    return "".join(out), at + 1
