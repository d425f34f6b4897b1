"""A basic-memory project: each note becomes an entity page, `bank/entities/<Title>.md`. Pure.

basic-memory notes hold front matter (`title`, `type`, `permalink`, `tags`), free text, and two
kinds of semantic lines anywhere in the body (conventionally under `## Observations` and
`## Relations`):

    - [method] Pour over gives more clarity #brewing (tried in May)
    - relates_to [[Coffee Bean Origins]]

Observations become typed Retain bullets (the category chooses the type and is kept as a
`[category:: …]` field; `#tags` and the context stay in the text); relations become `W` bullets
that keep the relation type and the `[[link]]`. Everything else is copied as written; the page is
named after the note's title, so `[[Title]]` links and `mem about "Title"` find it (when the title
holds characters a file name cannot, the front matter gains `aliases:` with the title).
"""

from __future__ import annotations

import re

from memtool import frontmatter
from memtool.importers import Item, Plan, Source, key

EXPECTS = "a basic-memory project (a folder of Markdown notes with front matter, observations and relations)"
# `- [category] text`, but not a task (`- [ ]`, `- [x]`) and not a link (`- [text](url)`).
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[(?![ xX]\])([^\[\]\n]+)\](?!\()\s+(\S.*)$")
_RELATION = re.compile(r"^\s*[-*]\s+([A-Za-z_][\w\-]*)\s+(\[\[[^\[\]\n]+\]\].*)$")
_SEMANTIC_HEADING = re.compile(r"^#{1,6}\s+(observations|relations)\s*#*\s*$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")
# Category → Retain type letter (everything else is a world fact, W).
_TYPES = {**dict.fromkeys(("preference", "opinion", "belief", "feeling", "taste", "like", "dislike", "view"), "O"),
          **dict.fromkeys(("decision", "action", "experience", "event", "done", "outcome", "lesson"), "B"),
          **dict.fromkeys(("summary", "insight", "observation", "pattern"), "S")}


def wants(rel: str) -> bool:
    return rel.endswith(".md")


def enters(rel: str) -> bool:
    return not rel.rsplit("/", 1)[-1].startswith(".")


def page_name(title: str) -> str:
    """The entity page's file name (without .md) for a title: the title itself, so that `[[Title]]`
    links reach it by name (Obsidian's rule too), with characters no file name may hold replaced."""
    return re.sub(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f]+', "-", title).strip(" .-") or "note"


def plan(source: Source, tz=None) -> Plan:
    out = Plan()
    taken: dict[str, str] = {}
    for rel in sorted(source.files):
        text = out.text_of(rel, source.files[rel])
        if text is None:
            continue
        lines = text.split("\n")
        meta, end, _ = frontmatter.split(lines, rel)
        title = str(meta.get("title") or rel.rsplit("/", 1)[-1][:-3]).strip()
        name = page_name(title)
        if name.casefold() in taken:
            other = page_name(str(meta.get("permalink") or rel[:-3]).replace("/", "-"))
            if other.casefold() in taken:
                out.skip(rel, f"its title names the same entity page as {taken[name.casefold()]}")
                continue
            name = other
        taken[name.casefold()] = rel
        page = render(lines, end, title, name)
        out.items.append(Item(rel, key("basic-memory", source.label, str(meta.get("permalink") or rel)), page,
                              target=f"bank/entities/{name}.md"))
    for rel in source.others:
        out.skip(rel, "a hidden folder (basic-memory's own state)" if rel.endswith("/") else "not a Markdown note")
    return out


def render(lines: list[str], end: int, title: str, name: str) -> str:
    """The page for one note: its front matter (plus aliases), its text, and a Retain section with
    its observations and relations as typed bullets."""
    head = lines[:end]
    if title != name and not any(re.match(r"^aliases\s*:", h, re.I) for h in head):
        alias = title.replace('"', "'")
        head = head[:-1] + [f'aliases: ["{alias}"]', head[-1]] if head else ["---", f'aliases: ["{alias}"]', "---"]
    body, bullets = [], []
    fenced = False
    for line in lines[end:]:
        if _FENCE.match(line):
            fenced = not fenced
        obs = None if fenced else _OBSERVATION.match(line)
        rel = None if fenced or obs else _RELATION.match(line)
        if obs:
            category, rest = obs.group(1).strip(), obs.group(2).strip()
            bullets.append(f"- {_TYPES.get(category.casefold(), 'W')}: {rest} [category:: {category}]")
        elif rel:
            bullets.append(f"- W: {rel.group(1)} {rel.group(2).strip()}")
        else:
            body.append(line)
    body = _drop_empty_sections(body)
    while body and not body[-1].strip():
        body.pop()
    parts = ["\n".join(head)] if head else []
    if any(b.strip() for b in body):
        parts.append("\n".join(body).strip("\n"))
    if bullets:
        parts.append("## Retain\n" + "\n".join(bullets))
    return "\n\n".join(parts) + "\n"


def _drop_empty_sections(body: list[str]) -> list[str]:
    """Remove `## Observations` / `## Relations` headings left with nothing under them."""
    out = []
    for n, line in enumerate(body):
        if _SEMANTIC_HEADING.match(line):
            rest = next((b for b in body[n + 1:] if b.strip()), "")
            if not rest or rest.lstrip().startswith("#"):
                continue
        out.append(line)
    return out
