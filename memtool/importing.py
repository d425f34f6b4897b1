"""`mem import`: read another tool's memory without ever writing to it, plan what to add with
`memtool.importers` (pure), then add it through the workspace's safe writes. A page is created only
where no file is (never replacing one); a day's section is appended to its log under the log's lock
(never moving a line). Each item written ends or starts with its import marker, which is how a
second import knows to add nothing."""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from memtool import trust
from memtool.errors import MemError, UsageError, WorkspaceError
from memtool.control_chars import escape
from memtool.importers import FORMATS, Item, Plan, Skipped, Source, control_char, format_module, imported
from memtool.workspace import Workspace, home_path

CREATE_BATCH = 200  # pages created per flush (create_new syncs once per batch)


@dataclass
class ImportReport:
    format: str
    source: str
    dry_run: bool
    written: list[dict] = field(default_factory=list)  # {item, path, action: created | appended}
    unchanged: list[dict] = field(default_factory=list)  # {item, path}: imported before, nothing to add
    skipped: list[dict] = field(default_factory=list)  # {item, reason}

    def to_dict(self) -> dict:
        return {"format": self.format, "source": self.source, "dry_run": self.dry_run, "written": self.written,
                "unchanged": self.unchanged, "skipped": self.skipped,
                "counts": {"written": len(self.written), "unchanged": len(self.unchanged),
                           "skipped": len(self.skipped)}}


class _Refused(Exception):
    """An item that cannot be added where it belongs (the reason is the message)."""


def run(ws: Workspace, fmt: str, source: str | os.PathLike, *, tz, max_bytes: int, dry_run: bool = False,
        progress=None) -> ImportReport:
    """Import `source` (of format `fmt`) into `ws`; with `dry_run`, only say what would be written."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    module = format_module(fmt)
    path = home_path(source)
    if not path.exists():
        raise UsageError(f"{source} does not exist", f"give the path of {module.EXPECTS}")
    path = path.resolve()
    if path == ws.root or path in ws.root.parents:
        raise UsageError(f"the workspace {ws.root} is inside {path}: importing would write into the source",
                         "import into a workspace outside the folder you import from")
    inside = path.relative_to(ws.root).parts if path.is_relative_to(ws.root) else ()
    if inside and (inside[0] in ("memory", "bank", ".memory") or (len(inside) == 1 and path.suffix.lower() == ".md")):
        raise UsageError(f"{path} is inside the workspace {ws.root}'s notes: they are read there already, "
                         "importing would copy them", "import from a folder outside memory/ and bank/")
    src, problems = read_source(module, path, max_bytes)
    _refuse_control(src, path)
    plan = module.plan(src, tz)
    plan.skipped[:0] = problems
    if not plan.items and not plan.skipped:
        raise UsageError(f"nothing to import from {path}", f"expected {module.EXPECTS}")
    report = ImportReport(fmt, str(path), dry_run, skipped=[{"item": s.origin, "reason": s.reason}
                                                            for s in plan.skipped])
    apply(ws, plan, report, progress)
    return report


# --- reading the source (never written) --------------------------------------------------------


def _refuse_control(src: Source, path: Path) -> None:
    """Refuse the whole import, before anything is written, when a source file holds a control
    character that `mem note` refuses (a NUL byte, an escape sequence)."""
    found = control_char(src)
    if found:
        rel, line, column, char = found
        where = str(path) if path.name == rel and not path.is_dir() else f"{rel} in {path}"
        raise UsageError(f"{where} holds the control character {escape(char)} at line {line}, column {column}; "
                         "nothing was imported",
                         "remove it from the source (a UTF-16 file: save it as UTF-8), then import again")


def read_source(module, path: Path, max_bytes: int) -> tuple[Source, list]:
    """The files `module` wants from a folder, a zip file or a single file, and what could not be read."""
    problems: list[Skipped] = []
    if path.is_file() and zipfile.is_zipfile(path):
        return _read_zip(module, path, max_bytes, problems), problems
    if path.is_file():
        if not module.wants(path.name):
            raise UsageError(f"{path} is not {module.EXPECTS}", "give the folder it is in")
        files = {}
        _read_one(path, path.name, files, max_bytes, problems, big_ok=path.suffix == ".json")
        return Source(path.parent.name, files), problems
    if not path.is_dir():  # a device or pipe: os.walk said only "cannot be read (Not a directory)"
        raise UsageError(f"{path} is neither a folder nor a file", f"give the path of {module.EXPECTS}")
    files, others = {}, []
    for here, dirs, names in os.walk(path, onerror=lambda exc: problems.append(
            Skipped(_rel(path, Path(exc.filename or path)), f"cannot be read ({exc.strerror})"))):
        base = _rel(path, Path(here))
        kept = []
        for d in sorted(dirs):
            rel = f"{base}/{d}" if base else d
            if module.enters(rel) and not os.path.islink(os.path.join(here, d)):
                kept.append(d)
            elif d.startswith("."):
                others.append(rel + "/")
        dirs[:] = kept
        for name in sorted(names):
            rel = f"{base}/{name}" if base else name
            if not module.wants(rel):
                others.append(rel)
                continue
            full = Path(here) / name
            if full.is_symlink() and path not in Path(os.path.realpath(full)).parents:  # a loop: read says so
                problems.append(Skipped(rel, "a symbolic link to outside the source; not followed"))
                continue
            _read_one(full, rel, files, max_bytes, problems, big_ok=rel.endswith(".json"))
    return Source(path.name, files, tuple(others)), problems


def _read_one(full: Path, rel: str, files: dict, max_bytes: int, problems: list, big_ok: bool) -> None:
    try:
        # read-only: the source is never written; non-blocking, so a pipe named like a note cannot stall the import
        with open(os.open(full, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            status = os.fstat(fh.fileno())
            if not stat.S_ISREG(status.st_mode):
                problems.append(Skipped(rel, "not a regular file (a pipe, socket or device); not read"))
                return
            if status.st_size > max_bytes and not big_ok:
                problems.append(Skipped(rel, f"{status.st_size:,} bytes, over the limit of {max_bytes:,} "
                                             "(index.max_file_bytes)"))
                return
            files[rel] = fh.read()
    except OSError as exc:
        problems.append(Skipped(rel, f"cannot be read ({exc.strerror or type(exc).__name__})"))


def _read_zip(module, path: Path, max_bytes: int, problems: list) -> Source:
    """The files `module` wants from a zip; a member that cannot be unpacked (damaged, encrypted, a
    compression method Python lacks) is a UsageError naming it, never a traceback."""
    import zlib

    files = {}
    rel = None
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                rel = info.filename
                if info.is_dir() or not module.wants(rel):
                    continue
                if info.file_size > max_bytes and not rel.endswith(".json"):
                    problems.append(Skipped(rel, f"{info.file_size:,} bytes, over the limit of {max_bytes:,}"))
                    continue
                files[rel] = zf.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
        what = f"{rel} in {path.name}" if rel else path.name
        reason = "it is encrypted" if "encrypted" in str(exc) else str(exc) or type(exc).__name__
        raise UsageError(f"{what} cannot be unpacked ({reason})",
                         "download the export again, or unpack it with another tool and import the folder") from None
    return Source(path.stem, files)


def _rel(root: Path, path: Path) -> str:
    return "" if path == root else path.relative_to(root).as_posix()


# --- applying the plan (through the workspace's safe writes) ------------------------------------


def apply(ws: Workspace, plan: Plan, report: ImportReport, progress=None) -> None:
    total, done = len(plan.items), 0
    pages = [item for item in plan.items if item.day is None]
    for start in range(0, len(pages), CREATE_BATCH):
        _create_pages(ws, pages[start:start + CREATE_BATCH], report)
        done += len(pages[start:start + CREATE_BATCH])
        if progress:
            progress(done, total)
    planned: dict[str, bytes] = {}  # a dry run's logs as they would be after the items before
    for item in plan.items:
        if item.day is None:
            continue
        rel = ws.daily_path(item.day)
        try:
            action = _add_to_day(ws, rel, item, planned if report.dry_run else None)
        except (_Refused, MemError) as exc:
            report.skipped.append({"item": item.origin, "reason": exc.message if isinstance(exc, MemError) else str(exc)})
        else:
            if action:
                report.written.append({"item": item.origin, "path": rel, "action": action})
            else:
                report.unchanged.append({"item": item.origin, "path": rel})
        done += 1
        if progress:
            progress(done, total)


NAME_BYTES = 200  # a page's file name, so that its temp file and backup names stay within 255 bytes (as reflect's)


def fits(target: str) -> bool:
    """Whether a page at `target` can be created on common file systems (each name ≤ 255 bytes, the
    file's ≤ NAME_BYTES)."""
    *folders, name = target.split("/")
    return len(name.encode("utf-8")) <= NAME_BYTES and all(len(f.encode("utf-8")) <= 255 for f in folders)


def _create_pages(ws: Workspace, items: list[Item], report: ImportReport) -> None:
    todo: dict[str, Item] = {}
    for item in items:
        if not fits(item.target):
            report.skipped.append({"item": item.origin, "reason": f"its page name is too long for a file name (over "
                                   f"{NAME_BYTES} bytes); shorten its title or file name in the source"})
            continue
        try:
            current = _current(ws, item.target)
        except MemError as exc:
            report.skipped.append({"item": item.origin, "reason": exc.message})
            continue
        if current is None and item.target not in todo:
            todo[item.target] = item
        elif current is not None and item.key in imported(current):
            _seen_before(report, item, item.target, imported(current)[item.key])
        else:
            report.skipped.append({"item": item.origin, "reason": f"{item.target} already exists and was not imported "
                                   "from this item; left alone (move it away to import this item)"})
    if not report.dry_run and todo:
        data = {rel: _whole(item).encode("utf-8") for rel, item in todo.items()}
        created = set(ws.create_new(data))
    else:
        created = set(todo)
    for rel, item in todo.items():
        if rel in created:
            report.written.append({"item": item.origin, "path": rel, "action": "created"})
        else:
            report.skipped.append({"item": item.origin, "reason": f"{rel} appeared while importing; left alone"})


def _add_to_day(ws: Workspace, rel: str, item: Item, planned: dict | None) -> str | None:
    """Add a day's item to its log: 'created', 'appended', or None when it is there already. With
    `planned` (a dry run), nothing is written: the log's would-be content is kept there instead."""
    outcome: list[str | None] = [None]

    def plan(raw: bytes) -> bytes:
        text = _decode(raw, rel)
        marks = imported(text)
        if item.key in marks:
            if marks[item.key] != item.digest:
                raise _Refused(_changed(rel))
            outcome[0] = None
            return b""
        if not text.strip():
            outcome[0] = "created"
            return _whole(item).encode("utf-8")
        if trust.rank(item.tier) > trust.rank(trust.declared(text.split("\n"), 0)[0]):
            raise _Refused(f"declares trust: {item.tier}, and appending it to {rel} (less strict) would lose that "
                           f"tier; add 'trust: {item.tier}' to that log's front matter and import again")
        outcome[0] = "appended"
        suffix = ("" if text.endswith("\n") else "\n") + "\n" + item.marker() + "\n\n" + item.section.rstrip("\n") + "\n"
        _check_lands(rel, text, suffix, item.section)
        return suffix.encode("utf-8")

    if planned is not None:
        before = planned[rel] if rel in planned else _read(ws, rel) or b""
        planned[rel] = before + plan(before)
        return outcome[0]
    with ws.lock(rel):
        ws.append(rel, plan)
    return outcome[0]


def _seen_before(report: ImportReport, item: Item, rel: str, digest: str) -> None:
    if digest == item.digest:
        report.unchanged.append({"item": item.origin, "path": rel})
    else:
        report.skipped.append({"item": item.origin, "reason": _changed(rel)})


def _changed(rel: str) -> str:
    return (f"changed in the source since it was imported to {rel}; the imported copy is kept (remove it there, "
            "marker line included, to import the new version)")


def _whole(item: Item) -> str:
    """A new file: the item's text, its marker at the end."""
    return item.text.rstrip("\n") + "\n\n" + item.marker() + "\n"


def _check_lands(rel: str, text: str, suffix: str, section: str) -> None:
    """Refuse when the log's end would swallow the section (an unclosed code fence or HTML block)."""
    from memtool.document import parse

    before = len(text.split("\n")) - (1 if text.endswith("\n") else 0)
    landed = [r.content for r in parse(rel, text + suffix).records if r.line_start > before]
    alone = [r.content for r in parse(rel, section).records]
    if landed != alone:
        raise _Refused(f"{rel} ends inside a block (an unclosed code fence or HTML comment?) that would swallow "
                       "the imported text; close it in an editor (mem check shows the file), then import again")


def _read(ws: Workspace, rel: str) -> bytes | None:
    try:
        return ws.read_bytes(rel)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _current(ws: Workspace, rel: str) -> str | None:
    raw = _read(ws, rel)
    return None if raw is None else _decode(raw, rel)


def _decode(raw: bytes, rel: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkspaceError(f"{rel} exists and is not UTF-8 text; nothing was added to it") from None
