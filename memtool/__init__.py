"""memtool: local-first, Markdown-first long-term memory (the `mem` command)."""

__version__ = "0.1.0"
