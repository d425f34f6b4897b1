"""Parse one Markdown file into records and diagnostics. Pure: text in, data out, never raises.

Units: every paragraph (in a list item, a blockquote or at top level) is one record, as is
every fenced or indented code block and every table row; long units are cut at line
boundaries. Paragraphs in list items under a `## Retain` heading are parsed as typed bullets.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

from memtool import blocks, frontmatter, trust
from memtool.dates import extract_range
from memtool.linescan import scan
from memtool.records import Diagnostic, ParsedFile, Record
from memtool.sections import split_lines
from memtool.retain import (BulletError, hashtags, inline_fields, is_retain_heading, looks_like_bullet, mentions,
                            normalise_tag, parse_bullet)

MAX_UNIT_CHARS = 1200  # longer paragraphs are cut into pieces of about this size
# markdown-it stops parsing a container nested deeper than this (each list level counts twice) and
# drops the rest of it; `_rescue` indexes such lines as plain text. 60 is 30 list levels, far past
# real outlines, and keeps markdown-it's recursion well inside Python's limit.
MAX_NESTING = 60
# A daily log is named after its day, in memory/ or any folder below it (Periodic Notes and Obsidian
# daily-note layouts such as memory/2025/10/2025-10-01.md).
_DAILY_NAME = re.compile(r"^memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})\.md$")
JOURNAL = "bank/journal.md"
DECISIONS = "bank/decisions.md"  # review decisions (memtool.reflect.decisions): sources and keys, no facts


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING}).enable("table")
    md.core.ruler.disable(["inline", "text_join"])  # block structure is all we use; inline parsing costs ~30 %
    return md


def decode(raw: bytes, path: str, max_bytes: int) -> tuple[str | None, list[Diagnostic]]:
    """Bytes of a file to text, or None with an error diagnostic (binary, not UTF-8, too large)."""
    if len(raw) > max_bytes:
        return None, [Diagnostic(path, 0, "error", "too-large",
                                 f"file is {len(raw):,} bytes, over the limit of {max_bytes:,} (index.max_file_bytes); not indexed")]
    if b"\x00" in raw:
        return None, [Diagnostic(path, 0, "error", "binary", "file contains NUL bytes (binary?); not indexed")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [Diagnostic(path, line, "error", "not-utf8",
                                 f"byte {exc.start} is not valid UTF-8; save the file as UTF-8 to index it")]
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, []


_CONFLICT_COPY = re.compile(r"^(.+)\.conflict-[\w-]+(\.md)$")


def classify(path: str) -> tuple[str, date | None, list[Diagnostic]]:
    """File kind and date from a workspace-relative POSIX path."""
    if path in ("memory.md", "MEMORY.md"):  # ours, and OpenClaw's (see workspace.CORE_FILES)
        return "core", None, []
    conflict = _CONFLICT_COPY.match(path)
    if conflict:  # the remote's side of a sync conflict, kept beside the file: indexed, and flagged
        kind, day, _ = classify(conflict[1] + conflict[2])
        return kind, day, [Diagnostic(path, 0, "warning", "sync-conflict",
                                      f"the other machine's version of {conflict[1] + conflict[2]} from a sync "
                                      "conflict; see mem sync status, then mem sync resolve")]
    if path.startswith("memory/"):
        m = _DAILY_NAME.match(path)
        if m:
            try:
                return "daily", date(int(m[1]), int(m[2]), int(m[3])), []
            except ValueError:
                pass
        return "daily", None, [Diagnostic(path, 0, "error", "bad-daily-name",
                                          "daily logs are named YYYY-MM-DD.md (in memory/ or a folder below it) with a real date;"
                                          " indexed without a date")]
    if path.startswith("bank/"):
        return "bank", None, []
    return "other", None, []


def parse(path: str, text: str, line_scan: bool = True) -> ParsedFile:
    """Records and diagnostics for the file at workspace-relative `path` holding `text`.

    `line_scan=False` reads every file with markdown-it, even one the line scanner
    (`memtool.linescan`) reads to the same records."""
    file_kind, day, diags = classify(path)
    out = ParsedFile(path=path, file_kind=file_kind, date=day, diagnostics=list(diags))
    if "\x00" in text:  # markdown-it would turn it into U+FFFD; do it first so content matches the lines
        out.diagnostics.append(Diagnostic(path, 1 + text[: text.index("\x00")].count("\n"), "warning", "nul",
                                          "NUL character in text; read as U+FFFD"))
        text = text.replace("\x00", "\ufffd")
    lines = split_lines(text)
    body_start = 0
    meta, fm_end, fm_diags = frontmatter.split(lines, path)
    out.diagnostics.extend(fm_diags)
    if fm_end:
        body_start = fm_end
    _apply_meta(out, meta)
    out.trust, problem = trust.declared(lines, fm_end)
    if problem:
        out.diagnostics.append(Diagnostic(path, 1, "warning", "bad-trust", problem))
    if path.startswith("bank/entities/") and path.endswith(".md") and path.count("/") == 2:
        out.entity = path[len("bank/entities/"):-3]
    # Blank out the front matter and generated blocks (derived text, already indexed from its
    # sources) so markdown-it's line numbers stay those of the file.
    kept = [""] * body_start + lines[body_start:]
    if not body_start and kept and kept[0][:1] == "\ufeff":  # a byte-order mark: no text, so `# Title` stays a heading
        kept[0] = kept[0][1:]
    for a, b in _generated_spans(kept):
        kept[a:b] = [""] * (b - a)
    if path in (JOURNAL, DECISIONS):  # reflect's account of its runs quotes facts; decisions name them
        return out
    body = "\n".join(kept)
    base_kind = "log" if file_kind == "daily" else "page"
    covered = _walk(out, body, lines, base_kind, line_scan)
    _rescue(out, kept, covered, base_kind)
    _place(out)
    if out.entity:
        for r in out.records:
            if out.entity not in r.entities:
                r.entities.insert(0, out.entity)
    if out.tags:
        for r in out.records:
            r.tags = list(dict.fromkeys([*r.tags, *out.tags]))
    return out


def read_lines(path: str, text: str) -> set[int]:
    """The 1-based lines of `text` that some record holds (not structure, not hidden in a comment)."""
    return {n for r in parse(path, text).records for n in range(r.line_start, r.line_end + 1)}


class Reading:
    """How Markdown reads each line of a text, for edits that must leave the lines they do not touch
    read as before (`mem forget`, `mem core`): `kinds[i]` for 0-based line i is "comment" (hidden in
    an HTML comment), "code" (a fence's or indented code's line), "heading", "text" (any other block)
    or "" (blank, or held by no block: a link definition, the space between blocks); `marks` maps the
    lines that open or close a comment or fence to the marker alone, after the line's own indentation
    and quote marks (`  -->`, `> ````); `left_open` counts comments and fences open to the end."""

    __slots__ = ("kinds", "marks", "left_open")

    def __init__(self, text: str):
        lines = split_lines(text)
        if lines and lines[0][:1] == "\ufeff":  # a byte-order mark is no text (as `parse` reads it)
            lines[0] = lines[0][1:]
        self.kinds = [""] * len(lines)
        self.marks: dict[int, str] = {}
        self.left_open = 0
        for tok in _markdown().parse("\n".join(lines)):
            if tok.type not in _LEAVES or not tok.map:
                continue
            first, last = tok.map[0], min(tok.map[1], len(lines)) - 1
            comment = tok.type == "html_block" and tok.content.lstrip().startswith("<!--")
            kind = ("code" if tok.type in ("fence", "code_block") else "comment" if comment
                    else "heading" if tok.type == "heading_open" else "text")
            self.kinds[first:last + 1] = [kind] * (last + 1 - first)
            if tok.type == "fence":
                closed = _closes_fence(lines, tok)
                self._mark(lines, first, tok.markup)
                if closed:
                    self._mark(lines, last, tok.markup)
                self.left_open += not closed and _to_the_end(lines, tok)
            elif comment and last > first:
                self._mark(lines, first, "<!--")
                if "-->" in lines[last]:
                    self._mark(lines, last, "-->")
            if comment and "-->" not in tok.content and _to_the_end(lines, tok):
                self.left_open += 1

    def of(self, i: int) -> str:
        """The kind of 0-based line `i` ("" past the end)."""
        return self.kinds[i] if 0 <= i < len(self.kinds) else ""

    def _mark(self, lines: list[str], i: int, marker: str) -> None:
        self.marks[i] = re.match(r"[ \t>]*", lines[i]).group() + marker


def _place(out: ParsedFile) -> None:
    """Every record's context starts with its page: the title (H1 or front matter), else the day of a
    daily log or the file's name (`bank/Note composer.md` → `Note composer`), so a short line like
    "Open the [[Command palette]]." is read, searched and embedded with the page it belongs to."""
    page = out.title or (out.date.isoformat() if out.date else out.path.rsplit("/", 1)[-1].removesuffix(".md"))
    for r in out.records:
        if r.context != page and not r.context.startswith(page + " > "):
            r.context = f"{page} > {r.context}" if r.context else page


_GEN_BEGIN = re.compile(r"^<!-- memtool:begin (\S+)(?: sha=[0-9a-f]+)? -->\s*$")


def _generated_spans(lines: list[str]) -> list[tuple[int, int]]:
    """[start, end) line ranges of complete `<!-- memtool:begin NAME -->` … `<!-- memtool:end NAME -->` blocks."""
    spans, i = [], 0
    code = blocks.fenced(lines) if any("memtool:begin" in line for line in lines) else ()
    while i < len(lines):
        m = None if code and code[i] else _GEN_BEGIN.match(lines[i])
        if m:
            end_marker = f"<!-- memtool:end {m.group(1)} -->"
            j = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == end_marker and not (code and code[j])),
                     None)
            if j is not None:
                spans.append((i, j + 1))
                i = j + 1
                continue
        i += 1
    return spans


def _apply_meta(out: ParsedFile, meta: dict) -> None:
    aliases = meta.get("aliases", [])
    if isinstance(aliases, str):
        aliases = [aliases]
    out.aliases = [a for a in aliases if a]
    tags = meta.get("tags", [])
    if isinstance(tags, str):
        tags = re.split(r"[,\s]+", tags)
    out.tags = list(dict.fromkeys(t for t in (normalise_tag(str(x)) for x in tags if x) if t))


_LEAVES = ("paragraph_open", "heading_open", "fence", "code_block", "hr", "html_block", "table_open")


def _walk(out: ParsedFile, body: str, lines: list[str], base_kind: str, line_scan: bool) -> set[int]:
    """Add the records of `body`; return the 0-based lines that markdown-it placed in a leaf block."""
    tokens = scan(body) if line_scan else None  # the plain subset, line by line, in a fraction of markdown-it's time
    if tokens is None:
        tokens = _markdown().parse(body)
    covered: set[int] = set()
    headings: list[tuple[int, str]] = []
    context, retain = "", False  # of `headings`: worked out when they change, not for each record
    # A heading inside a list item or blockquote belongs to that block: the outline before it comes
    # back at the block's close (the level of the block's tokens), so a Retain list goes on after it.
    scoped: list[tuple[int, list[tuple[int, str]], str, bool]] = []
    list_depth = 0
    table = _Table()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        t = tok.type
        if t in _LEAVES and tok.map:
            covered.update(range(tok.map[0], tok.map[1]))
        if scoped and tok.level == scoped[-1][0] and t.endswith("_close"):
            _, headings, context, retain = scoped.pop()
        if t == "heading_open":
            level = int(tok.tag[1])
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            if tok.level and not (scoped and scoped[-1][0] == tok.level - 1):
                scoped.append((tok.level - 1, headings[:], context, retain))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, title))
            context, retain = _context(headings), any(is_retain_heading(h) for _, h in headings)
            if level == 1 and not out.title:
                out.title = title
            i += 3
            continue
        if t in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif t in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif t == "paragraph_open" and tok.map and i + 1 < len(tokens):
            _paragraph(out, tokens[i + 1].content, _first_line(tokens[i + 1].content, lines, tok.map),
                       context, base_kind, list_depth > 0 and retain)
        elif t in ("fence", "code_block") and tok.map:
            closed = t == "fence" and _closes_fence(lines, tok)
            start = tok.map[0] + (1 if t == "fence" else 0)
            _add_lines(out, lines, start, tok.map[1] - closed, context, base_kind)
            if t == "fence" and not closed and _to_the_end(lines, tok):
                out.diagnostics.append(Diagnostic(out.path, tok.map[0] + 1, "warning", "unclosed-fence",
                                                  "a code fence opened here is never closed: the rest of the file "
                                                  "is read as code (and nothing can be appended after it)"))
        elif t in ("thead_open", "thead_close", "table_close"):
            table.step(t, out, lines, context, base_kind)
        elif t == "tr_open" and tok.map:
            table.row(tok.map, out, lines, headings, base_kind)
        elif t == "html_block" and tok.map and not tok.content.lstrip().startswith("<!--"):
            _add_lines(out, lines, tok.map[0], tok.map[1], context, base_kind)
        elif t == "html_block" and tok.map and "-->" not in tok.content and _to_the_end(lines, tok):
            out.diagnostics.append(Diagnostic(out.path, tok.map[0] + 1, "warning", "unclosed-comment",
                                              "an HTML comment opened here is never closed ('-->'): the rest of "
                                              "the file is hidden and not indexed (and nothing can be appended after it)"))
        i += 1
    return covered


class _Table:
    """Table rows as records: the header row is no fact of its own but the context of every body
    row (so `| Heating | broken | Jonas |` is read under `Feature | Status | Owner`); a table with
    no body rows keeps its header as a record."""

    def __init__(self):
        self.in_head, self.header, self.rows = False, None, 0

    def step(self, t: str, out: ParsedFile, lines: list[str], context: str, base_kind: str) -> None:
        if t == "thead_open":
            self.in_head, self.header, self.rows = True, None, 0
        elif t == "thead_close":
            self.in_head = False
        elif t == "table_close" and self.header and not self.rows:
            _add_lines(out, lines, *self.header, context, base_kind)

    def row(self, span: list[int], out: ParsedFile, lines: list[str], headings, base_kind: str) -> None:
        if self.in_head:
            self.header = (span[0], span[1])
            return
        self.rows += 1
        cells = _header_cells(lines, self.header) if self.header else ""
        _add_lines(out, lines, span[0], span[1], _context([*headings, (7, cells)] if cells else headings), base_kind)


def _header_cells(lines: list[str], header: tuple[int, int]) -> str:
    """`| Feature | Status |` → `Feature | Status` (empty cells left out)."""
    cells = [c.strip() for c in "\n".join(lines[header[0]:header[1]]).strip().strip("|").split("|")]
    return " | ".join(c for c in cells if c)


# What a line holds besides text: blockquote and list markers, or a link reference definition.
_MARKERS = re.compile(r"^(?:\s*(?:>|[-+*](?=\s|$)|\d{1,9}[.)](?=\s|$)))*\s*")
_REFERENCE = re.compile(r"^\[[^\]]+\]:\s*\S")


def _text_of(line: str) -> str:
    """A line's text without the container markers in front of it ('' for structure only)."""
    text = line[_MARKERS.match(line).end():].strip()
    return "" if _REFERENCE.match(text) else text


def _rescue(out: ParsedFile, kept: list[str], covered: set[int], base_kind: str) -> None:
    """Index lines of text that markdown-it dropped (nesting past MAX_NESTING) as plain text, and say so."""
    run: list[tuple[int, str]] = []
    for n, line in enumerate(kept + [""]):
        text = "" if n in covered or n == len(kept) else _text_of(line)
        if text:
            run.append((n + 1, text))
            continue
        if run:
            first, last = run[0][0], run[-1][0]
            for a, b, piece in _cut("\n".join(t for _, t in run), first):
                out.records.append(_record(base_kind, piece, a, b, ""))
            where = f"lines {first}-{last}" if last > first else f"line {first}"
            out.diagnostics.append(Diagnostic(out.path, first, "warning", "too-deep",
                                              f"{where} not read as Markdown: a list or quote nested over "
                                              f"{MAX_NESTING // 2} levels stops the parser; indexed as plain text"))
            run = []
    out.records.sort(key=lambda r: r.line_start)


def _first_line(content: str, lines: list[str], span: list[int]) -> int:
    """1-based line where a paragraph's content starts (markdown-it may trim odd blank lines)."""
    end = content.find("\n")
    head = (content if end < 0 else content[:end]).strip()
    if head and span[0] < min(span[1], len(lines)) and head in lines[span[0]]:
        return span[0] + 1  # (the common case: the loop below, decided by its first line)
    pieces = content.split("\n")
    for offset, piece in enumerate(pieces):
        head = piece.strip()
        if head:
            for j in range(span[0] + offset, min(span[1], len(lines))):
                if head in lines[j]:
                    return j - offset + 1
            break
    return span[0] + 1


def _to_the_end(lines: list[str], tok) -> bool:
    """Whether a block runs to the end of the file (an unclosed fence or comment swallows what follows)."""
    return not any(line.strip() for line in lines[tok.map[1]:])


def _closes_fence(lines: list[str], tok) -> bool:
    """Whether the fence token's last line closes it: the opening's character only, at least as many
    (CommonMark; `~~~` inside a `~~~~` fence is code, and so is ```` ```x ````)."""
    last = tok.map[1] - 1
    if not tok.map[0] < last < len(lines):
        return False
    line = lines[last].strip()
    return len(line) >= len(tok.markup) and line == tok.markup[0] * len(line)


def _context(headings: list[tuple[int, str]]) -> str:
    return " > ".join(h for _, h in headings if h)


def _paragraph(out: ParsedFile, content: str, start: int, context: str, base_kind: str, in_retain: bool) -> None:
    end = start + content.count("\n")
    if in_retain:
        try:
            b = parse_bullet(content)
        except BulletError as exc:
            severity = "error" if looks_like_bullet(content) else "warning"
            out.diagnostics.append(Diagnostic(out.path, start, severity, "bad-bullet", f"{exc}; indexed as plain text"))
        else:
            out.records.append(_record(b.kind, b.text, start, end, context, confidence=b.confidence))
            return
    for a, b_, piece in _cut(content, start):
        out.records.append(_record(base_kind, piece, a, b_, context))


_YEAR = re.compile(r"\d{4}").search
# Fields (as retain reads them) and cited daily logs: a cited path is matched from its word's start only
# (from every character of a long word, each try scanned to the word's end: quadratic).
_NOT_DATES = re.compile(r"\[[\w\-]+::(?:[^\[\]]|\[\[[^\[\]]*\]\])*\]|(?<!\S)\S*/\d{4}-\d{2}-\d{2}\.md\S*")


def _record(kind: str, content: str, start: int, end: int, context: str, confidence: float | None = None) -> Record:
    # A cited file name is no validity date; every date names a year in four digits (dates.find_dates).
    if _YEAR(content):  # (a field holds `::`, a cited file `.md`: most texts hold neither, and the search is slow)
        span = extract_range(_NOT_DATES.sub(" ", content) if "::" in content or ".md" in content else content)
    else:
        span = None
    return Record(kind, content, start, end, context, mentions(content), inline_fields(content), hashtags(content),
                  confidence, span[0] if span else None, span[1] if span else None)  # (positional: ~10^5 of them)


def _add_lines(out: ParsedFile, lines: list[str], start: int, end: int, context: str, base_kind: str) -> None:
    """A record for raw file lines [start, end) (0-based), trimmed of blank edges."""
    while start < end and start < len(lines) and not lines[start].strip():
        start += 1
    end = min(end, len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    if end <= start:
        return
    text = "\n".join(lines[start:end])
    for a, b, piece in _cut(text, start + 1):
        out.records.append(_record(base_kind, piece, a, b, context))


def _cut(content: str, first_line: int) -> list[tuple[int, int, str]]:
    """Split long content into pieces of whole lines (a very long line into word-bounded parts)."""
    if len(content) <= MAX_UNIT_CHARS:
        return [(first_line, first_line + content.count("\n"), content)]
    pieces: list[tuple[int, int, str]] = []
    buf: list[str] = []
    buf_start = first_line
    size = 0
    for offset, line in enumerate(content.split("\n")):
        n = first_line + offset
        if len(line) > MAX_UNIT_CHARS:
            if buf:
                pieces.append((buf_start, n - 1, "\n".join(buf)))
                buf, size = [], 0
            for part in _split_line(line):
                pieces.append((n, n, part))
            buf_start = n + 1
            continue
        if buf and size + len(line) > MAX_UNIT_CHARS:
            pieces.append((buf_start, n - 1, "\n".join(buf)))
            buf, size = [], 0
        if not buf:
            buf_start = n
        buf.append(line)
        size += len(line) + 1
    if buf:
        pieces.append((buf_start, buf_start + len(buf) - 1, "\n".join(buf)))
    return [p for p in pieces if p[2].strip()]


def _split_line(line: str) -> list[str]:
    parts = []
    while len(line) > MAX_UNIT_CHARS:
        cut = line.rfind(" ", MAX_UNIT_CHARS // 2, MAX_UNIT_CHARS)
        if cut <= 0:
            cut = MAX_UNIT_CHARS
        parts.append(line[:cut].strip())
        line = line[cut:]
    parts.append(line.strip())
    return [p for p in parts if p]
