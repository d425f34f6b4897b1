"""After `mem forget`: remove the forgotten text from the machine-local files under `.memory/` that are
not databases (backups, the retain log, sync's conflict bases, state JSON, swept temp files), and
write the forget log, which keeps hashes and citations, never text.

The databases purge themselves (`Store.compact`, `LocalState.purge`); the remote is `sync.gc`'s.
`scrub_text` and `scrub_json` are pure."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from memtool import retain_log
from memtool.safe_writes import replace_atomically
from memtool.workspace import Workspace

FORGET_LOG = "forgotten.jsonl"  # under .memory/
DATABASES = ("index.sqlite", "local.sqlite")  # purged in place by the store
SKIP_DIRS = ("locks",)


def forms(needles: list[str]) -> list[str]:
    """Each needle as written and as JSON writes it (escaped), case-folded."""
    out = set()
    for n in needles:
        out.add(n.casefold())
        out.add(json.dumps(n)[1:-1].casefold())
    return sorted(out)


def holds(text: str, folded: list[str]) -> bool:
    low = text.casefold()
    return any(f in low for f in folded)


def scrub_text(text: str, folded: list[str]) -> str:
    """`text` without the lines holding a needle (any form)."""
    return "".join(line for line in text.splitlines(keepends=True) if not holds(line, folded))


def scrub_json(value, folded: list[str]):
    """A JSON value without the strings, list items and object entries that hold a needle."""
    if isinstance(value, dict):
        return {k: scrub_json(v, folded) for k, v in value.items()
                if not holds(k, folded) and not (isinstance(v, str) and holds(v, folded))}
    if isinstance(value, list):
        return [scrub_json(v, folded) for v in value if not (isinstance(v, str) and holds(v, folded))]
    return value


def state_files(ws: Workspace, needles: list[str]) -> dict:
    """Scrub every non-database file under `.memory/` holding a needle; delete set-aside index copies
    holding one (derived data). Returns the relative paths scrubbed, deleted and left (unreadable)."""
    folded = forms(needles)
    raw_forms = [n.encode("utf-8") for n in needles]
    done: dict[str, list[str]] = {"scrubbed": [], "deleted": [], "left": []}
    root = ws.state_dir
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) == root and d in SKIP_DIRS)]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(ws.root).as_posix()
            if Path(dirpath) == root and name.startswith(DATABASES) and not _set_aside(name):
                continue
            _scrub_file(ws, path, rel, folded, raw_forms, done)
    return done


def _set_aside(name: str) -> bool:
    """An index copy moved aside when damaged or newer (`index.sqlite.corrupt-…`): derived, deletable."""
    return name.startswith("index.sqlite.")


def _scrub_file(ws: Workspace, path: Path, rel: str, folded: list[str], raw_forms: list[bytes], done: dict) -> None:
    try:
        raw = path.read_bytes()
    except OSError:
        done["left"].append(rel)
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        if any(r.lower() in raw.lower() for r in raw_forms):
            if _set_aside(path.name):
                path.unlink()
                done["deleted"].append(rel)
            else:
                done["left"].append(rel)
        return
    if not holds(text, folded):
        return
    if rel == retain_log.LOG:
        retain_log.rewrite(ws, lambda current: scrub_text(current, folded))
    elif path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            replace_atomically(path, scrub_text(text, folded).encode("utf-8"))
        else:
            scrubbed = json.dumps(scrub_json(data, folded), indent=1, sort_keys=True, ensure_ascii=False)
            replace_atomically(path, scrubbed.encode("utf-8"))
    else:
        replace_atomically(path, scrub_text(text, folded).encode("utf-8"))
    done["scrubbed"].append(rel)


def log(ws: Workspace, sources: list[str], texts: list[str]) -> None:
    """Append to `.memory/forgotten.jsonl`: when, which lines, and a SHA-256 of each line's text."""
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "sources": sources,
             "sha256": [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]}
    data = (json.dumps(entry) + "\n").encode("utf-8")
    with ws.lock("forgotten"):
        ws.append(f".memory/{FORGET_LOG}", lambda before: data)
