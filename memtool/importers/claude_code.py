"""Claude Code's memory files, as pages under bank/claude-code/<project>/. Pure.

Claude Code reads memory from Markdown files (see its memory documentation):

    CLAUDE.md, .claude/CLAUDE.md       project memory (and CLAUDE.md in subfolders, read on demand)
    CLAUDE.local.md                    personal project memory (older releases)
    .claude/rules/**/*.md              modular rules (front matter `paths:` scopes them)
    ~/.claude/CLAUDE.md, ~/.claude/rules/**/*.md          user memory, for every project
    ~/.claude/projects/<project>/memory/*.md              auto memory: MEMORY.md and topic files

Import a project folder for its project memory, or `~/.claude` for user memory and every
project's auto memory. Files are copied as written (front matter and `@path` imports stay);
nothing else in the folder is read.
"""

from __future__ import annotations

import re

from memtool.importers import Item, Plan, Source, bank_path, key

EXPECTS = "Claude Code memory files (a project with CLAUDE.md or .claude/, or your ~/.claude folder)"
_MEMORY = re.compile(r"(?:^|/)(?:CLAUDE|CLAUDE\.local)\.md$")
_CLAUDE_DIR = re.compile(r"(?:^|/)\.claude/(?:CLAUDE\.md|rules/.+\.md)$")
_USER_DIR = re.compile(r"^(?:CLAUDE\.md|rules/.+\.md|projects/[^/]+/memory/.+\.md)$")
# Folders that hold dependencies or build output, never memory.
_NEVER = {"node_modules", "vendor", "target", "dist", "build", "__pycache__", "venv", "site-packages"}


def wants(rel: str) -> bool:
    return bool(_MEMORY.search(rel) or _CLAUDE_DIR.search(rel) or _USER_DIR.match(rel)) and \
        not any(part in _NEVER for part in rel.split("/"))


def enters(rel: str) -> bool:
    """Folders read: all but hidden ones (except `.claude`) and dependency or build folders."""
    name = rel.rsplit("/", 1)[-1]
    return name == ".claude" or not name.startswith(".") and name not in _NEVER


def plan(source: Source, tz=None) -> Plan:
    out = Plan()
    user = source.label in (".claude", "claude")  # ~/.claude itself
    label = "user" if user else source.label
    for rel in sorted(source.files):
        if not (_MEMORY.search(rel) or _CLAUDE_DIR.search(rel) or user and _USER_DIR.match(rel)):
            continue  # rules/ or projects/ of a project folder: not Claude Code's
        text = out.text_of(rel, source.files[rel])
        if text is None:
            continue
        out.items.append(Item(rel, key("claude-code", label, rel), text, target=bank_path("claude-code", label, rel)))
    return out
