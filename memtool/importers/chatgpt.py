"""A ChatGPT data export: every conversation becomes speaker turns in the daily logs of the days it
happened on. Pure.

`conversations.json` (or its parts `conversations-000.json`, …) is a list of conversations; each
holds its messages as a tree (`mapping`: node id → `{message, parent, children}`), and the thread
the user saw is the path from `current_node` up to the root. A message has `author.role`
(user, assistant, system, tool), `create_time` (Unix seconds) and `content` (`content_type`
"text" with `parts`, among others). User and assistant text is kept, dated by the message's own
time in the given time zone; system prompts, tool calls and results, hidden messages and
non-text parts are left out and counted.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from memtool.blocks import fenced
from memtool.errors import UsageError
from memtool.importers import Item, Plan, Source, key

EXPECTS = "a ChatGPT data export (its conversations.json, the folder holding it, or the export's .zip)"
_FILE = re.compile(r"(?:^|/)conversations(?:-\d+)?\.json$")
SPEAKERS = {"user": "User", "assistant": "ChatGPT"}
_TEXT_TYPES = ("text", "multimodal_text", "code")


def wants(rel: str) -> bool:
    return bool(_FILE.search(rel))


def enters(rel: str) -> bool:
    """Only the export's top folder (conversations files sit there; the rest is images and files)."""
    return False


def conversations(source: Source) -> list[dict]:
    """Every conversation of the export's conversations file(s); a UsageError when there is none."""
    found = sorted(rel for rel in source.files if wants(rel))
    if not found:
        raise UsageError(f"no conversations.json in {source.label}",
                         "give the folder of an unpacked ChatGPT export, its conversations.json, or the .zip")
    out = []
    for rel in found:
        try:
            data = json.loads(source.files[rel].decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"{rel} is not valid JSON ({exc})",
                             "use the conversations.json from ChatGPT's 'Export data' as downloaded") from None
        if not isinstance(data, list):
            raise UsageError(f"{rel} is not a list of conversations",
                             "use the conversations.json from ChatGPT's 'Export data' as downloaded")
        out += [c for c in data if isinstance(c, dict)]
    return out


def thread(conv: dict) -> list[dict]:
    """The messages of the thread the user saw, oldest first (edited-away branches left out)."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        return []
    node = conv.get("current_node")
    if not isinstance(node, str) or node not in mapping:  # no current node: follow the last child from the root
        node, seen = next((k for k, v in mapping.items() if isinstance(v, dict) and not v.get("parent")), None), set()
        while node in mapping and node not in seen and isinstance(children := _dict(mapping[node]).get("children"), list) \
                and children and isinstance(children[-1], str):
            seen.add(node)
            node = children[-1]
    path, seen = [], set()
    while isinstance(node, str) and node in mapping and node not in seen:
        seen.add(node)
        entry = _dict(mapping[node])
        if isinstance(entry.get("message"), dict):
            path.append(entry["message"])
        node = entry.get("parent")
    return path[::-1]


def _dict(value) -> dict:
    """`value` when the export has an object there, else empty (the export is untrusted input)."""
    return value if isinstance(value, dict) else {}


def text_of(message: dict) -> tuple[str, int]:
    """A message's visible text, and how many non-text parts (images, files) were left out."""
    content = _dict(message.get("content"))
    if content.get("content_type") not in _TEXT_TYPES:
        return "", 0
    if content.get("content_type") == "code":
        return str(content.get("text") or "").strip(), 0
    texts, other = [], 0
    for part in content.get("parts") or []:
        if isinstance(part, str):
            texts.append(part)
        else:
            other += 1
    return "\n\n".join(t for t in texts if t.strip()).strip(), other


def plan(source: Source, tz=None) -> Plan:
    """One item per conversation and day: that day's turns, under the conversation's title."""
    tz = tz or timezone.utc
    out = Plan()
    left_out: dict[str, int] = {}
    for conv in conversations(source):
        conv_id = str(conv.get("conversation_id") or conv.get("id") or "")
        title = _one_line(str(conv.get("title") or "")) or "Untitled conversation"
        origin = f"conversation {title!r}"
        if not conv_id:
            out.skip(origin, "has no id, so a second import could not recognise it")
            continue
        days: dict = {}
        for message in thread(conv):
            role = _dict(message.get("author")).get("role")
            if not isinstance(role, str) or role not in SPEAKERS:
                what = f"{_one_line(role) if isinstance(role, str) and role.strip() else 'unknown'} messages"
                left_out[what] = left_out.get(what, 0) + 1
                continue
            if message.get("recipient") not in (None, "all"):  # a call to a tool (code, browsing)
                left_out["tool calls"] = left_out.get("tool calls", 0) + 1
                continue
            if _dict(message.get("metadata")).get("is_visually_hidden_from_conversation"):
                left_out["hidden messages"] = left_out.get("hidden messages", 0) + 1
                continue
            text, other = text_of(message)
            if other:
                left_out["images and files"] = left_out.get("images and files", 0) + other
            when = message.get("create_time") or conv.get("create_time")
            if not text:
                continue
            moment = _moment(when, tz)
            if moment is None:
                left_out["messages without a time"] = left_out.get("messages without a time", 0) + 1
                continue
            days.setdefault(moment.date(), []).append(_turn(SPEAKERS[role], moment, text))
        if not days:
            out.skip(origin, "no user or assistant text")
            continue
        for day, turns in sorted(days.items()):
            section = f"## ChatGPT: {title}\n\n" + "\n".join(turns)
            out.items.append(Item(f"{origin} on {day.isoformat()}", key("chatgpt", conv_id, day.isoformat()),
                                  f"# {day.isoformat()}\n\n{section}", day=day, section=section))
    for what, count in sorted(left_out.items()):
        out.skip(what, f"{count} left out (only user and assistant text is imported)")
    return out


def _moment(when, tz) -> datetime | None:
    """A message's time (Unix seconds), or None when it has none a date can hold."""
    if not isinstance(when, (int, float)) or isinstance(when, bool):
        return None
    try:
        return datetime.fromtimestamp(when, tz)
    except (OverflowError, ValueError, OSError):  # NaN, or beyond the years a date holds
        return None


_BLOCK_START = re.compile(r"^\s*(?:```|~~~|#|>|\||[-*+]\s|\d{1,9}[.)]\s)")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0 but tab and line ends, DEL, C1


_RETAIN_ATX = re.compile(r"^(\s{0,3})(#{1,6}[ \t]+retain[ \t]*#*[ \t]*)$", re.I)
_UNDERLINE = re.compile(r"^(\s{0,3})([=-]+[ \t]*)$")


def _unretained(lines: list[str]) -> list[str]:
    """`lines` with every `Retain` heading escaped (`\\## Retain`, an underline `\\---`): a turn is what
    was said, never a typed fact (what a model wrote could otherwise retain `O(c=1.0) @Peter: …`)."""
    out, code = [], fenced(lines)  # in a code fence it is code, shown as written
    for n, line in enumerate(lines):
        m = None if code[n] else _RETAIN_ATX.match(line)
        if not m and n and not code[n] and lines[n - 1].strip().lower() == "retain":
            m = _UNDERLINE.match(line)
        out.append(f"{m.group(1)}\\{m.group(2)}" if m else line)
    return out


def _turn(speaker: str, moment: datetime, text: str) -> str:
    """`- **User** (14:03): first line`, later lines indented under it (all of them when the first
    starts a block of its own: a code fence, a heading, a list); `Retain` headings escaped."""
    lines = _unretained(_CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).split("\n"))
    first = "" if _BLOCK_START.match(lines[0]) else lines[0]
    rest = "".join(f"\n  {line}" if line.strip() else "\n" for line in (lines[1:] if first else lines))
    return f"- **{speaker}** ({moment:%H:%M}):{' ' + first if first else ''}{rest}"


def _one_line(text: str) -> str:
    return " ".join(_CONTROL.sub("", text).split())
