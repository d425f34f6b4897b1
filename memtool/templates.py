"""Starter files written by `mem init` (only where no file exists yet)."""

TEMPLATES: dict[str, str] = {
    "memory.md": """# Core memory

Small, durable facts and preferences that belong in every conversation. Keep it short.

## About me
- 

## Preferences
- 
""",
    "SOUL.md": """# Soul

How the assistant should think and speak (optional persona text).
""",
    "bank/world.md": "# World\n\nCurated objective facts.\n",
    "bank/experience.md": "# Experience\n\nWhat was done and learned, first person.\n",
    "bank/opinions.md": "# Opinions\n\nPreferences and judgements with a confidence.\n",
    "memtool.toml": """# memtool settings for this workspace (all optional)

[index]
# Files larger than this are reported by `mem check` and not indexed.
max_file_bytes = 5_000_000
""",
    ".gitignore": ".memory/\n",
}

FOLDERS = ("memory", "bank/entities")

DAILY_EXAMPLE = """# {day}

## Notes
- Started using memtool. Daily logs live in memory/YYYY-MM-DD.md; write freely.

## Retain
- S: Set up this memory workspace with `mem init`.
"""
