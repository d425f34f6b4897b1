"""`mem forget`: find the lines to remove (by text or by citation), then remove them from the Markdown.

Planning is pure (`parse_target`, `matching_lines`, `strip_lines`); `plan` reads the workspace and
`remove` writes it (atomic, locked, re-checked against the plan). Purging every derived copy of the
text (index, local state, backups, logs) is `memtool.purge`'s job; the remote's is `memtool.sync.gc`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field

from memtool import blocks
from memtool.errors import UsageError, WorkspaceError
from memtool.reading import lines_hint
from memtool.retain import BulletError, looks_like_bullet, parse_bullet
from memtool.safe_writes import FileChanged
from memtool.sections import lines_keepends
from memtool.workspace import Workspace

MIN_TEXT = 3  # characters a text to forget needs: shorter ones match too much to be meant
MAX_LINES = 200  # lines one forget removes at most: more is a query that was not meant
MIN_COPY = 12  # characters a cited line needs before its copies elsewhere (generated blocks) are removed too
_QUOTE = re.compile(r'"([^"]{%d,}?)…"' % MIN_COPY)  # how reflect's journal quotes the start of a fact
_CITATION = re.compile(r"(?P<path>[^#\s]+\.md)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"#{1,6}(?:\s|$)")  # an ATX heading, as `bare` leaves it
_BLOCK_BEGIN = re.compile(r"^<!-- memtool:begin (\S+)(?: sha=[0-9a-f]+)? -->")


@dataclass(frozen=True)
class Target:
    """What to forget: a text (every line holding it, any case) or a citation (`path#Lx[-Ly]`)."""

    text: str | None = None
    path: str | None = None
    start: int = 0
    end: int = 0


@dataclass
class FilePlan:
    path: str
    lines: list[int]  # 1-based, ascending
    texts: list[str]
    digest: str  # the file's bytes the plan was made from (sha256), re-checked before writing
    markers: dict[int, str] = field(default_factory=dict)  # removed lines that leave their block's marker
    size: int = 0  # how many bytes the plan was made from (a file that only grew since still holds them)


@dataclass
class Plan:
    target: Target
    files: list[FilePlan] = field(default_factory=list)
    needles: list[str] = field(default_factory=list)  # what purge looks for in derived copies

    @property
    def count(self) -> int:
        return sum(len(f.lines) for f in self.files)

    def matches(self) -> list[dict]:
        return [{"source": f"{f.path}#L{n}", "text": t, **({"keeps": f.markers[n]} if n in f.markers else {})}
                for f in self.files for n, t in zip(f.lines, f.texts)]

    def fingerprint(self) -> str:
        """The lines this plan removes, where they are and what they say, as a short hex string: a
        removal confirmed for a plan shown earlier applies only while the same lines are planned (an
        editor's line inserted above a cited one would otherwise shift the citation to its neighbour)."""
        lines = [(f.path, n, t) for f in self.files for n, t in zip(f.lines, f.texts)]
        return digest(repr(lines).encode("utf-8"))[:16]


def parse_target(spec: str) -> Target:
    """A citation `path#L3` / `path#L3-L5`, else text to find (at least `MIN_TEXT` characters)."""
    spec = (spec or "").strip()
    m = _CITATION.fullmatch(spec)
    if m:
        start = int(m["start"])
        end = int(m["end"] or start)
        if start < 1 or end < start:
            raise UsageError(f"{spec!r} is not a line range", "cite lines as path#L3 or path#L3-L5")
        return Target(path=m["path"], start=start, end=end)
    if len(spec) < MIN_TEXT:
        raise UsageError("the text to forget is empty or shorter than 3 characters",
                         "give the exact text (e.g. a phone number) or a citation such as memory/2026-11-27.md#L9")
    if "\n" in spec or "\r" in spec:
        raise UsageError("the text to forget is one line", "forget each line, or cite a range: path#L3-L5")
    return Target(text=spec)


def bare(line: str) -> str:
    """A line's text without its ending and list marker."""
    return _MARKER.sub("", line.rstrip("\r\n")).strip()


def _fold(text: str) -> str:
    """`text` as forget compares it: case-folded, composed (NFC), so `Müller` typed with a combining
    diaeresis (as some programs save it) is the `Müller` a person types."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def spellings(texts: list[str]) -> list[str]:
    """Each text as given, composed (NFC) and decomposed (NFD): the forms its copies may be stored in."""
    return list(dict.fromkeys(form for t in texts for form in (t, unicodedata.normalize("NFC", t),
                                                                unicodedata.normalize("NFD", t))))


def matching_lines(lines: list[str], needles: list[str], quoted: bool = False) -> list[int]:
    """1-based numbers of the lines holding any of `needles` (case-insensitive, composed or not);
    `quoted`: also those quoting (cut with …, as reflect's journal quotes facts) a start of one."""
    folded = [_fold(n) for n in needles if n]
    whole = [" ".join(n.split()) for n in folded] if quoted else []
    return [i for i, line in enumerate(lines, start=1)
            if any(n in _fold(line) for n in folded) or whole and _quotes(_fold(line), whole)]


def _quotes(line: str, whole: list[str]) -> bool:
    """Whether `line` holds a quote cut with `…` that ends in the start (at least MIN_COPY characters)
    of one of `whole`: the journal quotes a fact's start, which is a cited line's start or, for a text
    to forget, may end part way into it."""
    return any(any(q.endswith(n[:k]) for n in whole for k in range(MIN_COPY, min(len(n), len(q)) + 1))
               for q in (m.group(1) for m in _QUOTE.finditer(line)))


def copies_of(cited: list[str]) -> list[str]:
    """The texts of cited lines as generated pages and the journal show them: as written, and a typed
    bullet's text without its type letter (`W @Peter: …` is listed as `@Peter: …`)."""
    out = []
    for c in cited:
        out.append(c)
        if looks_like_bullet(c):
            try:
                out.append(parse_bullet(c).text)
            except BulletError:
                pass
    return out


def strip_lines(text: str, drop: set[int], markers: dict[int, str] | None = None, reseal: bool = True) -> str:
    """`text` without the lines `drop` names (a line in `markers` is left as that marker alone); every
    other byte stays. A generated block that was exactly as memtool wrote it is resealed (its hash
    updated, its body rendered again), so reflect still owns it; `reseal=False`: line for line."""
    lines = lines_keepends(text)
    sealed = _sealed_blocks(text) if reseal else []
    markers = markers or {}

    def left(i: int, line: str) -> str:
        if i not in drop:
            return line
        return markers[i] + line[len(line.rstrip("\r\n")):] if i in markers else ""

    kept = "".join(left(i, line) for i, line in enumerate(lines, start=1))
    for name in sealed:
        block = blocks.find(kept, name)
        if block is not None:
            kept = kept[:block.start] + blocks.render(name, block.body) + kept[block.end:]
    return kept


def reread(text: str, drop: set[int], markers: dict[int, str] | None = None) -> list[int]:
    """Lines (1-based, as numbered in `text`) that Markdown would read otherwise without `drop` (a
    line in `markers` left as its marker): text a comment or code fence would now swallow or give up,
    or that would turn from code to text; the last removed line when a comment or fence is left open
    to the end of the file with nothing after it yet (the next retain could not add a line)."""
    from memtool.document import Reading

    lines = lines_keepends(text)
    markers = markers or {}
    before, after = Reading(text), Reading(strip_lines(text, drop, markers, reseal=False))
    kept = [n for n in range(1, len(lines) + 1) if n not in drop or n in markers]
    moved = [old for new, old in enumerate(kept, start=1)
             if lines[old - 1].strip() and before.of(old - 1) != after.of(new - 1)]
    if after.left_open > before.left_open and not moved:
        moved = [max(drop)]
    return moved


def keep_blocks(path: str, text: str, drop: set[int]) -> dict[int, str]:
    """Markers to leave where removed lines opened or closed a comment or code fence (as Markdown
    reads it), so that every other line is read as before; a `WorkspaceError` when that cannot be done."""
    from memtool.document import Reading

    markers: dict[int, str] = {}
    if reread(text, drop):
        lines, marks = lines_keepends(text), Reading(text).marks
        markers = {n: marks[n - 1] for n in drop
                   if n - 1 in marks and marks[n - 1].strip() != lines[n - 1].strip()}
    moved = reread(text, drop, markers)
    if moved:
        where = f"L{moved[0]}" + (f"-L{moved[-1]}" if len(moved) > 1 else "")
        raise WorkspaceError(f"removing lines of {path} would change how Markdown reads {path}#{where} "
                             "(a comment or code fence would swallow or give up the lines around them)",
                             "in an editor, put the comment's '<!--' / '-->' or the fence on a line of its own "
                             "(or cite the whole comment), then run mem forget again")
    return markers


def _sealed_blocks(text: str) -> list[str]:
    names = [m.group(1) for line in lines_keepends(text) if (m := _BLOCK_BEGIN.match(line))]
    return [n for n in names if (b := blocks.find(text, n)) is not None and not b.edited]


def _still_planned(raw: bytes, f: FilePlan, needles: list[str]) -> bool:
    """Whether a file still begins with the bytes its plan was made from, and what was appended
    after them is whole new lines of UTF-8 holding none of the text being forgotten (else the plan
    would leave a copy behind). Bytes appended to a last line without its line break, not starting
    with one, join that line: removing it would take them too, so such a file has changed."""
    if len(raw) < f.size or digest(raw[:f.size] if len(raw) > f.size else raw) != f.digest:
        return False
    if len(raw) == f.size:
        return True
    if f.size and raw[f.size - 1:f.size] not in (b"\n", b"\r") and raw[f.size:f.size + 1] not in (b"\n", b"\r"):
        return False  # joined to the last line (`mem retain` breaks the line first)
    try:
        added = raw[f.size:].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not matching_lines(added.splitlines(), needles)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- reading and writing the workspace ------------------------------------------------------------


def plan(ws: Workspace, target: Target) -> Plan:
    """The lines `target` names in the workspace's Markdown (nothing is changed)."""
    result = Plan(target)
    files = sorted(ws.scan())
    if target.path is not None:
        rel = ws.relative(ws.resolve(target.path))
        if rel not in files:
            raise UsageError(f"{target.path} is not a Markdown file memtool reads",
                             "cite a file under memory/ or bank/, or memory.md, e.g. memory/2026-11-27.md#L9")
        lines = lines_keepends(ws.read_text(rel))
        if target.end > len(lines):
            raise UsageError(f"lines {target.start}-{target.end} are outside {rel} (1-{len(lines)})", lines_hint(rel, len(lines)))
        cited = [bare(lines[n - 1]) for n in range(target.start, target.end + 1)]
        result.needles = spellings([c for c in cited if len(c) >= MIN_TEXT])
        # generated blocks, the journal: copies of a fact's text (a heading is none: `# 2026-12-02` is
        # also the start of every journal heading written that day)
        copies = spellings(copies_of([c for c in cited if len(c) >= MIN_COPY and not _HEADING.match(c)]))
        result.needles = list(dict.fromkeys(result.needles + copies))
        _add(result, ws, rel, list(range(target.start, target.end + 1)))
        files = [f for f in files if f != rel]
    else:
        result.needles = copies = spellings([target.text])
    for rel in files if copies else ():
        _add(result, ws, rel, matching_lines(lines_keepends(ws.read_text(rel)), copies, quoted=True))
    if result.count > MAX_LINES:
        raise UsageError(f"{result.count} lines hold that text; forget removes at most {MAX_LINES} at once",
                         "give a longer, more exact text, or cite the lines (path#L3-L5)")
    return result


def _add(result: Plan, ws: Workspace, rel: str, numbers: list[int]) -> None:
    if not numbers:
        return
    raw = ws.read_bytes(rel)
    text = raw.decode("utf-8")
    lines = lines_keepends(text)
    result.files.append(FilePlan(rel, numbers, [lines[n - 1].rstrip("\r\n") for n in numbers], digest(raw),
                                 keep_blocks(rel, text, set(numbers)), len(raw)))


def remove(ws: Workspace, plan_: Plan) -> None:
    """Remove the planned lines, file by file (locked, atomic). A file saved since the plan was made
    is refused before anything is written: the plan shown is the plan applied. One that only grew at
    its end (`mem retain` appended meanwhile) still holds every planned line where it was."""
    for f in plan_.files:
        if not _still_planned(ws.read_bytes(f.path), f, plan_.needles):
            raise FileChanged(f.path)
    for f in plan_.files:
        with ws.lock(f.path):
            raw = ws.read_bytes(f.path)
            if not _still_planned(raw, f, plan_.needles):
                raise FileChanged(f.path)
            ws.write_atomic(f.path, strip_lines(raw.decode("utf-8"), set(f.lines), f.markers), expect=raw)
