"""Other tools' memories as plans of Markdown to add to a workspace. Pure: each format turns a
`Source` (the files read from it, as bytes) into a `Plan` (items to write, things skipped and why);
`memtool.importing` reads the source and applies the plan.

    obsidian.py       a vault: daily notes (folder and date format from its settings) and pages
    basic_memory.py   a basic-memory project: notes with observations and relations, as entity pages
    chatgpt.py        a ChatGPT data export: conversations as speaker turns in daily logs
    claude_code.py    Claude Code's memory: CLAUDE.md files, .claude/rules, auto memory

Every item carries a provenance key; the applied item is marked with it in the Markdown (an HTML
comment), so a second import of the same thing adds nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from importlib import import_module
from urllib.parse import quote

from memtool.control_chars import first

FORMATS = ("obsidian", "basic-memory", "chatgpt", "claude-code")
MARKER = re.compile(r"^<!-- mem import (\S+) sha=([0-9a-f]+) -->[ \t\r]*$", re.M)  # a CRLF file keeps its markers


@dataclass(frozen=True)
class Source:
    """What was read from the source: `files` (path → bytes, the ones the format asked for) and
    `others` (paths seen and not read: other files, and hidden folders as `name/`)."""

    label: str  # the source folder's name, e.g. the vault's
    files: dict[str, bytes]
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """One thing to bring in. A page (`day` None) is a whole new file at `target`, never written into
    a file that exists; a day's `text` is the log for that day when the log does not exist yet, and
    `section` is appended to it when it does."""

    origin: str  # where it came from, for reports: a source path, or a conversation and day
    key: str  # provenance: the same thing imported twice has the same key
    text: str
    target: str | None = None  # workspace path of a page
    day: date | None = None
    section: str = ""
    tier: str = "normal"  # the trust tier the text declares (its section goes only into a log as strict)

    @property
    def digest(self) -> str:
        return hashlib.blake2b(self.text.encode("utf-8"), digest_size=8).hexdigest()

    def marker(self) -> str:
        return f"<!-- mem import {self.key} sha={self.digest} -->"


@dataclass(frozen=True)
class Skipped:
    origin: str
    reason: str


@dataclass
class Plan:
    items: list[Item] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, origin: str, reason: str) -> None:
        self.skipped.append(Skipped(origin, reason))

    def text_of(self, rel: str, raw: bytes) -> str | None:
        """The text of source file `rel`, or None after noting why it is skipped (not UTF-8, empty)."""
        text = decode(raw)
        if text is None:
            self.skip(rel, "not UTF-8 text")
        elif not text.strip():
            self.skip(rel, "empty")
            return None
        return text


def key(fmt: str, *parts: str) -> str:
    """A provenance key: `fmt:part/part`, percent-encoded to one word (no spaces, no `-->`)."""
    return fmt + ":" + quote("/".join(parts), safe="/@:+,;=")


def imported(text: str) -> dict[str, str]:
    """Provenance key → content digest of every import marker in a file's text."""
    return {m.group(1): m.group(2) for m in MARKER.finditer(text)}


def decode(raw: bytes) -> str | None:
    """A source file's text (BOM and CRLF normalised), or None when it is not UTF-8 text."""
    if b"\x00" in raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def control_char(source: Source) -> tuple[str, int, int, str] | None:
    """The first control character (C0 but tab and line ends, DEL, C1: what `mem note` refuses) in a
    source text file, as (path, line, column, character), or None. A NUL byte would make the log
    it lands in a binary file that drops out of recall; the other characters could drive a terminal.
    JSON files are left to their format (a ChatGPT export's turns drop them)."""
    for rel in sorted(source.files):
        if rel.endswith(".json"):
            continue
        try:
            text = source.files[rel].decode("utf-8")
        except UnicodeDecodeError:
            continue  # not UTF-8 text: skipped and named by the format
        text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")  # as `decode` reads it
        m = first(text, lines=True)
        if m:
            line_start = text.rfind("\n", 0, m.start()) + 1
            return rel, text.count("\n", 0, m.start()) + 1, m.start() - line_start + 1, m.group()
    return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # C0, DEL and C1: a file name that sync and terminals refuse


def bank_path(*parts: str) -> str:
    """A path under bank/ that memtool indexes and syncs: no part starts with a dot or a space
    (`.claude` → `claude`), control characters become `-`, and the file keeps a name before `.md`
    (`...md` → `untitled.md`)."""
    *folders, name = "/".join(parts).split("/")
    cleaned = [p for p in (_clean(part) for part in folders) if p]
    stem = _clean(name[:-3] if name.lower().endswith(".md") else name)
    return "/".join(["bank", *cleaned, f"{stem or 'untitled'}.md"])


def _clean(part: str) -> str:
    return _CONTROL.sub("-", part).strip().lstrip(".").strip()


def format_module(fmt: str):
    """The module that plans imports of `fmt` (one of FORMATS)."""
    return import_module(f"memtool.importers.{fmt.replace('-', '_')}")
