"""An Obsidian vault: daily notes become daily logs, every other note a page under bank/<vault>/.
Pure.

Daily notes are found where the vault's settings put them: `.obsidian/daily-notes.json` (core
plugin: `folder`, `format` as a moment.js date format, `template`), else the Periodic Notes plugin's
`daily` settings, else Obsidian's defaults (vault root, `YYYY-MM-DD`). Notes are copied as written:
`[[links]]`, embeds, `#tags` and front matter stay (memtool reads links as entity mentions and tags
as tags). Templates, attachments and Obsidian's own folders are skipped, and said so.
"""

from __future__ import annotations

import json
import re
from datetime import date

from memtool import trust
from memtool.importers import Item, Plan, Source, bank_path, decode, key

EXPECTS = "an Obsidian vault (a folder of Markdown notes, usually with a .obsidian/ settings folder)"
SETTINGS = (".obsidian/daily-notes.json", ".obsidian/templates.json", ".obsidian/plugins/periodic-notes/data.json")
DEFAULT_FORMAT = "YYYY-MM-DD"
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
# moment.js tokens, longest first; `[text]` is literal text.
_TOKENS = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|Mo|M|Do|DD|D|dddd|ddd|dd|d|gggg|GGGG|ww|WW|w|W|.", re.S)
_PATTERNS = {"YYYY": r"(\d{4})", "YY": r"(\d{2})", "MMMM": r"([^\W\d_]+)", "MMM": r"([^\W\d_]{3})",
             "MM": r"(\d{2})", "M": r"(\d{1,2})", "Mo": r"(\d{1,2})(?:st|nd|rd|th)", "DD": r"(\d{2})",
             "D": r"(\d{1,2})", "Do": r"(\d{1,2})(?:st|nd|rd|th)", "dddd": r"[^\W\d_]+", "ddd": r"[^\W\d_]+",
             "dd": r"[^\W\d_]+", "d": r"\d", "gggg": r"\d{4}", "GGGG": r"\d{4}", "ww": r"\d{2}", "WW": r"\d{2}",
             "w": r"\d{1,2}", "W": r"\d{1,2}"}


def wants(rel: str) -> bool:
    return rel.endswith(".md") or rel in SETTINGS


def enters(rel: str) -> bool:
    """Folders read: every one but hidden folders, of which only Obsidian's settings (for the daily
    notes and templates settings)."""
    return not rel.rsplit("/", 1)[-1].startswith(".") or \
        rel in (".obsidian", ".obsidian/plugins", ".obsidian/plugins/periodic-notes")


def daily_settings(files: dict[str, bytes], plan: Plan) -> tuple[str, str, str]:
    """(folder, moment format, template path) of the vault's daily notes."""
    core = _json(files, ".obsidian/daily-notes.json", plan)
    periodic = _json(files, ".obsidian/plugins/periodic-notes/data.json", plan).get("daily")
    settings = core if core or not isinstance(periodic, dict) or not periodic.get("enabled", True) else periodic
    folder = str(settings.get("folder") or "").strip().strip("/")
    fmt = str(settings.get("format") or "").strip() or DEFAULT_FORMAT
    template = str(settings.get("template") or "").strip().strip("/")
    return folder, fmt, template


def _json(files: dict[str, bytes], rel: str, plan: Plan) -> dict:
    if rel not in files:
        return {}
    try:
        data = json.loads(files[rel].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        plan.skip(rel, "not valid JSON; Obsidian's defaults were used instead")
        return {}
    return data if isinstance(data, dict) else {}


def date_pattern(fmt: str) -> tuple[re.Pattern, list[str]]:
    """A regular expression for file names written with moment.js format `fmt`, and which token each
    capturing group holds."""
    parts, groups = [], []
    for token in _TOKENS.findall(fmt):
        if token.startswith("[") and token.endswith("]") and len(token) > 1:
            parts.append(re.escape(token[1:-1]))
        elif token in _PATTERNS:
            parts.append(_PATTERNS[token])
            groups += [token] * re.compile(_PATTERNS[token]).groups
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts), re.I), groups


def note_date(name: str, pattern: re.Pattern, groups: list[str]) -> date | None:
    """The date a daily note's path (relative to the daily folder, without .md) names, if it fits."""
    m = pattern.fullmatch(name)
    if not m:
        return None
    found: dict[str, set[int]] = {"y": set(), "m": set(), "d": set()}
    for token, value in zip(groups, m.groups()):
        if token == "YYYY":
            found["y"].add(int(value))
        elif token == "YY":
            found["y"].add(2000 + int(value))
        elif token in ("MMMM", "MMM"):
            month = next((i for i, name in enumerate(_MONTHS, 1) if name.startswith(value.lower())
                          and (token == "MMM" or name == value.lower())), None)
            if month is None:
                return None
            found["m"].add(month)
        elif token in ("MM", "M", "Mo"):
            found["m"].add(int(value))
        else:
            found["d"].add(int(value))
    if any(len(values) != 1 for values in found.values()):
        return None
    try:
        return date(found["y"].pop(), found["m"].pop(), found["d"].pop())
    except ValueError:
        return None


def plan(source: Source, tz=None) -> Plan:
    """Daily notes to daily logs, other notes to bank/<vault>/<path>; what is left out, and why."""
    out = Plan()
    folder, fmt, template = daily_settings(source.files, out)
    pattern, groups = date_pattern(fmt)
    templates = _templates_folder(source.files, out)
    prefix = folder + "/" if folder else ""
    for rel in sorted(source.files):
        if rel in SETTINGS:
            continue
        text = decode(source.files[rel])
        if text is None:
            out.skip(rel, "not UTF-8 text")
            continue
        if template and rel in (template, template + ".md") or templates and rel.startswith(templates + "/"):
            out.skip(rel, "a template, not a note")
            continue
        if not text.strip():
            out.skip(rel, "empty")
            continue
        day = note_date(rel[len(prefix):-3], pattern, groups) if rel.startswith(prefix) else None
        if day is not None:
            out.items.append(Item(rel, key("obsidian", source.label, rel), text, day=day, section=_section(text),
                                  tier=trust.declared(text.split("\n"), 0)[0]))
        else:
            out.items.append(Item(rel, key("obsidian", source.label, rel), text,
                                  target=bank_path(source.label, rel)))
    for rel in source.others:
        if rel.startswith(".obsidian/"):
            continue  # Obsidian's settings: read for the daily notes, never notes themselves
        out.skip(rel, "Obsidian's trash (deleted notes)" if rel == ".trash/" else "a hidden folder" if rel.endswith("/")
                 else "an Obsidian canvas, not a note" if rel.endswith(".canvas")
                 else "not a Markdown note (an attachment?)")
    return out


def _templates_folder(files: dict[str, bytes], plan: Plan) -> str:
    return str(_json(files, ".obsidian/templates.json", plan).get("folder") or "").strip().strip("/")


def _section(text: str) -> str:
    """A daily note to append to an existing log: its front matter becomes a line of `#tags`."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return text
    end = next((n for n in range(1, len(lines)) if lines[n].strip() in ("---", "...")), None)
    if end is None:
        return text
    tags = []
    for n in range(1, end):
        m = re.match(r"^\s*(?:tags\s*:\s*\[?(.*?)\]?|-\s+(.*))\s*$", lines[n])
        if m and (m.group(1) or m.group(2)) and (m.group(1) is not None or _in_tags(lines, n)):
            tags += [t.strip().strip("'\"").lstrip("#") for t in re.split(r"[,\s]+", m.group(1) or m.group(2))]
    head = ["Tags: " + " ".join("#" + t for t in tags if t), ""] if any(tags) else []
    return "\n".join(head + lines[end + 1:]).strip("\n") + "\n"


def _in_tags(lines: list[str], n: int) -> bool:
    """Whether the block-list item on line `n` belongs to a `tags:` key."""
    for k in range(n - 1, 0, -1):
        if not re.match(r"^\s*-\s", lines[k]):
            return re.match(r"^\s*tags\s*:\s*$", lines[k]) is not None
    return False
