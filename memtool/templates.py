"""Starter files written by `mem init` (only where no file exists yet).

Guidance for the reader lives in HTML comments, which are never indexed: starter text must never
answer a question, and no empty bullet waits for `mem core append` to write below it.
"""

TEMPLATES: dict[str, str] = {
    "memory.md": """# Core memory

<!-- Small, durable facts and preferences that belong in every conversation. Keep it short.
     Add lines in any editor or with: mem core append "- Prefers tea." -->

""",
    "SOUL.md": """# Soul

<!-- How the assistant should think and speak (optional persona text). -->
""",
    "bank/world.md": "# World\n\n<!-- Curated objective facts. -->\n",
    "bank/experience.md": "# Experience\n\n<!-- What was done and learned, first person. -->\n",
    "bank/opinions.md": "# Opinions\n\n<!-- Preferences and judgements with a confidence. -->\n",
    "memtool.toml": """# memtool settings for this workspace (all optional)

[index]
# Files larger than this are reported by `mem check` and not indexed.
max_file_bytes = 5_000_000
""",
    ".gitignore": ".memory/\n",
}

FOLDERS = ("memory", "bank/entities")

DAILY_EXAMPLE = """# {day}

<!-- Today's log. Write freely: every paragraph and list item is recallable.
     `mem retain "W @Peter: Moved to Lisbon."` appends a typed fact at the end of the day's log. -->
"""
