"""How `mem mcp` answers: one compact JSON text per result (said once: no structured copy of the same
bytes), and errors in the tool's own terms (parameter names and plain words: no CLI flags, no
validator jargon or links). Pure, apart from building the SDK's result types."""

from __future__ import annotations

import json
import re
from typing import Any

_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)")
_COMMAND = re.compile(r"('mem [^']*')")  # a command for the user to run, quoted: said as written
_MAX_SHOWN = 40  # characters of a rejected value quoted back


def compact(data: Any) -> str:
    """The answer as an agent reads it: JSON without indentation or spaces after separators."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def result(data: Any):
    """A tool result holding `data` once, as compact JSON text."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=compact(data))])


def in_tool_terms(text: str) -> str:
    """A library message as a tool caller reads it: `--as-of` becomes `as_of`, except inside a
    quoted command the user is to run ('mem index --rebuild')."""
    parts = _COMMAND.split(text)  # odd indexes: the quoted commands
    return "".join(part if n % 2 else _FLAG.sub(lambda m: m.group(1).replace("-", "_"), part)
                   for n, part in enumerate(parts))


def error_text(message: str, hint: str | None) -> str:
    return in_tool_terms(message + (f" (hint: {hint})" if hint else ""))


def invalid_arguments(errors: list[dict]) -> str:
    """Pydantic's errors (`ValidationError.errors()`) as one plain sentence per parameter."""
    return "; ".join(_one(e) for e in errors)


def unknown_arguments(given: dict, takes: dict) -> str | None:
    """The arguments a tool does not take (a misspelt name would otherwise be dropped unseen), or None."""
    unknown = [name for name in given if name not in takes]
    if not unknown:
        return None
    return (f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(takes) or 'none'}")


def _one(error: dict) -> str:
    name = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
    ctx, kind = error.get("ctx") or {}, error.get("type", "")
    said = {
        "missing": "is required",
        "int_parsing": "must be a whole number", "int_type": "must be a whole number",
        "int_from_float": "must be a whole number",
        "float_parsing": "must be a number", "float_type": "must be a number",
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "literal_error": f"must be one of {ctx.get('expected')}",
        "string_type": "must be text", "bool_parsing": "must be true or false", "bool_type": "must be true or false",
    }.get(kind)
    if said is None:
        said = str(error.get("msg", "is not valid")).replace("Input should be", "should be")
    given = error.get("input")
    if kind != "missing" and isinstance(given, (str, int, float, bool)):
        shown = repr(given if not isinstance(given, str) else given[:_MAX_SHOWN])
        said += f", not {shown}"
    return f"{name} {said}"
