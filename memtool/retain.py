"""The `## Retain` bullet grammar (DESIGN §1.1) and appending a line to a daily log. Pure.

    - W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.
    - O(c=0.95) @Peter: Prefers concise replies; long content goes into files. [because:: memory/2025-11-20.md#L4]
    - S: Three sessions this week were about the sync protocol.

A type letter (W world, B experience, O opinion, S observation), an optional confidence
`(c=0..1)`, optional `@Entity` subjects, a colon, then the text. `@mentions`,
`[[Wiki Links]]` and `[key:: value]` fields may appear anywhere in the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from memtool.records import RETAIN_KINDS
from memtool.sections import Heading, headings, line_end, lines_keepends

# \u0300-\u036f: combining accents, as text pasted from macOS file names or PDFs spells ü (u + U+0308)
ENTITY = r"@([^\W_][\w.\-\u0300-\u036f]*[\w\u0300-\u036f]|[^\W_])"
_ENTITY_RE = re.compile(r"(?<![\w@])" + ENTITY)
_WIKI_RE = re.compile(r"\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\]")
# A value holds no bracket but a whole `[[link]]`: each `[key::` then scans only to the next bracket, so a
# line of many unclosed fields is read in linear time (not one scan to the line's end per opening). The
# value is taken greedily and trimmed where it is read (a lazy value before `\s*\]` tried the trim at each
# character: quadratic in a run of spaces with no `]`).
_FIELD_RE = re.compile(r"\[([A-Za-z][\w\-]*)::((?:[^\[\]\n]|\[\[[^\[\]\n]*\]\])*)\]")
_HEAD_RE = re.compile(
    r"^(?P<type>[A-Za-z])(?P<conf>\(\s*c\s*=\s*(?P<c>[^)]*)\))?"
    r"(?P<subjects>(?:[ \t,]+@[^\s:,]+)*)[ \t]*:(?P<text>.*)$",
    re.S,
)
_LONE_AT = r"^[WBOS](\([^)]*\))?\s+@(?=[\s:]|$)"  # `W @: …`: an @ with no name after it
_LOOKS_TYPED = re.compile(r"^[A-Za-z](\([^)]*\))?(\s+@\S+)*\s*:"
                          # near misses: `W@Peter …` (no space: no word starts so), `O (c=0.5) …`, `O(c=…)` with no colon,
                          # an @ without its name (`W @: …`, `W @ Peter: …`; a type letter, as `I @ home: …` is text)
                          r"|^[A-Z]@[^\W_]|^[A-Za-z]\s*\(\s*c\s*=|" + _LONE_AT)

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
    at, wiki = "@" in text, "[[" in text
    if not (at and wiki):  # most text has neither, or one kind (in order already): a full build asks 10^5 times
        names = ([m.group(1).rstrip(".") for m in _ENTITY_RE.finditer(text)] if at else
                 [m.group(1).strip() for m in _WIKI_RE.finditer(text)] if wiki else [])
        return [_composed(name) for name in dict.fromkeys(names) if name]
    found = [(m.start(), m.group(1).rstrip(".")) for m in _ENTITY_RE.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _WIKI_RE.finditer(text)]
    return [_composed(name) for name in dict.fromkeys(n for _, n in sorted(found)) if name]


def _composed(name: str) -> str:
    """A name as people type it (NFC): `Müller` whether written with ü or with u + U+0308."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


_TAG_RE = re.compile(r"(?<![\w#/&])#([\w][\w/\-\u0300-\u036f]*)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def normalise_tag(tag: str) -> str | None:
    """`#Project/Alpha` → `project/alpha`; None unless it is a tag (Obsidian's rule: letters, digits,
    `_`, `-` and `/` for nesting, with at least one character that is not a digit)."""
    tag = _composed(tag.strip().lstrip("#").strip("/")).casefold()
    if not tag or not re.fullmatch(r"[\w][\w/\-]*", tag) or re.fullmatch(r"[\d/\-_]+", tag):
        return None
    return tag


def hashtags(text: str) -> list[str]:
    """`#tags` in order of appearance, normalised (not inside code spans, URLs or `&#…;`)."""
    if "#" not in text:
        return []
    found = (normalise_tag(m.group(1)) for m in _TAG_RE.finditer(_CODE_SPAN.sub(" ", text)))
    return list(dict.fromkeys(t for t in found if t))


def wiki_links(text: str) -> list[str]:
    """`[[Target]]` targets in order (`[[Target|label]]` and `[[Target#heading]]` give `Target`)."""
    return list(dict.fromkeys(m.group(1).strip() for m in _WIKI_RE.finditer(text) if m.group(1).strip()))


def inline_fields(text: str) -> dict[str, str]:
    """`[key:: value]` fields; a repeated key keeps its first value."""
    out: dict[str, str] = {}
    if "::" not in text:
        return out
    for m in _FIELD_RE.finditer(text):
        out.setdefault(m.group(1).lower(), m.group(2).strip())
    return out


def inline_field_values(text: str, key: str) -> list[str]:
    """Every value of the `[key:: value]` fields in `text`, in order (a key may repeat)."""
    return [value for m in _FIELD_RE.finditer(text) if m.group(1).lower() == key and (value := m.group(2).strip())]


# Invisible format characters text pasted from a web page or chat may carry before the type letter:
# zero-width space, non-joiner and joiner, word joiner, byte-order mark, left-to-right and right-to-left marks.
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f"


def _visible(text: str) -> str:
    """`text` without white space at its ends, nor invisible format characters before its first letter."""
    return text.strip().lstrip(_INVISIBLE).strip()


def looks_like_bullet(text: str) -> bool:
    """Whether a Retain line tries to be a typed bullet (so a failure is worth reporting)."""
    return bool(_LOOKS_TYPED.match(_visible(text)))


def parse_bullet(text: str) -> Bullet:
    """Parse the text of one Retain bullet (without the leading `- `); raise BulletError. Invisible
    characters before the type letter are no text (`_INVISIBLE`)."""
    s = _visible(text)
    m = _HEAD_RE.match(s)
    if not m:
        if s[1:2] == "@":
            entity = re.match(r"@[^\s:,]*", s[1:]).group()
            raise BulletError(f"put a space between the type letter and the entity, e.g. '{s[0]} {entity}: …'")
        if re.match(_LONE_AT, s):
            raise BulletError(f"an @ needs the entity's name right after it, e.g. '{s[0]} @Peter: …'")
        if re.match(r"[A-Za-z]\s+\(", s):
            raise BulletError(f"write the confidence right after the type letter, without a space, e.g. '{s[0]}(c=0.8)'")
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


def parse_line(text: str) -> Bullet:
    """A line for `mem retain`: a typed bullet, or (when it does not try to be one) a plain `log` line.

    Raises BulletError for a line that looks typed but breaks the grammar (`X: …`, `O(c=7): …`)."""
    if looks_like_bullet(text):
        return parse_bullet(text)
    s = text.strip()
    return Bullet(kind="log", text=s, entities=mentions(s), fields=inline_fields(s))


_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def append_item(text: str, item: str, typed: bool, day_title: str) -> tuple[str, int]:
    """What to append to a daily log so that `- item` becomes its last line: (text to append, its line).

    Nothing is inserted above the end, so every existing line keeps its number and every citation
    stays valid. A typed bullet goes at the end of a trailing `## Retain` section, else under a new
    `## Retain` heading at the end; an untyped line goes at the end, under a new `## Notes` heading
    only when the file ends inside a Retain section. A new file starts with `# day_title`.
    """
    newline = line_end(text)
    lines = lines_keepends(text)
    out: list[str] = []
    if not lines:
        out += [f"# {day_title}{newline}", newline] + ([f"## Retain{newline}"] if typed else [])
    else:
        if not lines[-1].endswith(("\n", "\r")):
            out.append(newline)  # ends the last line; its number stays
        levels = [h.level for h in _open_headings(lines) if is_retain_heading(h.title)]
        heading = "## Retain" if typed and not levels else \
            "#" * min(levels) + " Notes" if levels and not typed else None
        blank_first = lines[-1].strip() and (heading or not _LIST_ITEM.match(lines[-1]))
        out += ([newline] if blank_first else []) + ([heading + newline] if heading else [])
    out.append(f"- {item}{newline}")
    suffix = "".join(out)
    return suffix, len(lines_keepends(text + suffix))


def _open_headings(lines: list[str]) -> list[Heading]:
    """The headings whose sections the end of the file is in, outermost first."""
    stack: list[Heading] = []
    for h in headings(lines):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
    return stack
