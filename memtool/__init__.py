"""memtool: local-first, Markdown-first long-term memory (the `mem` command).

The Python API is the facade the CLI and the MCP server call: `from memtool import Memory`
(docs/agents.md#python-api)."""

import os

__version__ = "0.1.0"

# `typing.TYPE_CHECKING` without importing `typing` (~10 M instructions of a one-shot `mem recall`,
# docs/benchmarks-history.md): type checkers take any name TYPE_CHECKING as true. The modules a
# recall loads import it from here.
TYPE_CHECKING = False

# numpy's OpenBLAS keeps its worker threads spinning after each call, and they then compete with the
# embedding model's own threads for the cores: one BLAS thread made hybrid recall 25 % faster (p95
# 138 → 76 ms at 10^5, docs/benchmarks.md), and vector search is memory-bound anyway. Only takes
# effect when memtool is imported before numpy; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["Memory", "__version__"]


def __getattr__(name: str):
    """`memtool.Memory`, imported on first use (the whole library: not for `mem --help`)."""
    if name == "Memory":
        from memtool.memory import Memory

        return Memory
    raise AttributeError(f"module 'memtool' has no attribute {name!r}")
