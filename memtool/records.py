"""Plain data shared by the parser, the index and recall."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from memtool.kinds import FILE_KINDS, KINDS, PARSER_VERSION, RETAIN_KINDS  # noqa: F401 (defined here before)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in a file; `line` is 1-based (0 means the whole file)."""

    path: str
    line: int
    severity: str  # "error" | "warning"
    code: str
    message: str

    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(slots=True)
class Record:
    """One recallable unit of text with its exact place in the file.

    `content` is the unit's text as written (list markers and indentation removed);
    every line of it occurs in the file between `line_start` and `line_end` (1-based, inclusive).
    """

    kind: str
    content: str
    line_start: int
    line_end: int
    context: str = ""  # heading path, e.g. "2026-11-27 > Call with Peter"
    entities: list[str] = field(default_factory=list)  # mentions as written, no "@" / "[[ ]]"
    fields: dict[str, str] = field(default_factory=dict)  # [key:: value] fields
    tags: list[str] = field(default_factory=list)  # #tags in the text and the file's front-matter tags
    confidence: float | None = None
    valid_from: date | None = None
    valid_to: date | None = None


@dataclass(slots=True)
class ParsedFile:
    """Everything the parser learned from one file."""

    path: str
    file_kind: str
    date: date | None = None
    title: str = ""
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # front matter `tags:`, normalised
    trust: str = "normal"
    entity: str | None = None  # the entity slug a bank/entities page describes
    records: list[Record] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
