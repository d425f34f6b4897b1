"""`mem mcp`: the Model Context Protocol server (stdio), built on the official `mcp` SDK.

Every tool calls the same `Memory` facade method as the CLI command of the same name and returns
the same document as that command's `--json`. Errors come back as tool errors with the reason and
a hint.
"""

from __future__ import annotations

from datetime import date as _date
from typing import Any

from memtool import __version__
from memtool.dates import parse_day
from memtool.errors import MemError

INSTRUCTIONS = """\
Long-term memory over the user's Markdown notes (daily logs memory/YYYY-MM-DD.md, core memory memory.md,
curated bank/ pages). Every result cites its source as path#Lx-Ly.
Start of a session: read core memory (resource memory://core or get "memory.md"), then recall or episodes
on the topic at hand. End of a session: retain 2-5 self-contained facts that explain the mechanism, not just
the event, e.g. "B @warelay: Fixed the reconnect loop by wrapping connection.update handlers in try/catch."
"""

QUERY_HELP = (
    "Plain words in any language (German and English are stemmed and folded: Strasse finds Straße); words and "
    "meaning are searched together, so paraphrases work. No operators: quotes, AND/OR/NOT, * and - are "
    "treated as ordinary text."
)


def build_server(mem):
    """An MCPServer whose tools call `mem` (a `memtool.memory.Memory`)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="memtool", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    call, ann = _caller(), _annotations()
    # Registered in this order: clients list the tools as registered.
    _add_search_tools(server, mem, call, ann)
    _add_retain_tool(server, mem, call, ann)
    _add_lookup_tools(server, mem, call, ann)
    _add_core_tools(server, mem, call, ann)
    _add_model_tools(server, mem, call, ann)
    _add_review_tool(server, mem, call, ann)
    _add_resources(server, mem)
    return server


def _caller():
    """`call(fn, …)`: run a `Memory` method, turning a MemError into a tool error with its hint."""
    from mcp.server.mcpserver.exceptions import ToolError

    def call(fn, *args, **kwargs) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except MemError as exc:
            raise ToolError(f"{exc.message}" + (f" (hint: {exc.hint})" if exc.hint else "")) from None

    return call


def _annotations() -> dict:
    """The hints a client sees for each kind of tool: reads, appends, rewrites, asking a model."""
    from mcp.types import ToolAnnotations

    return {
        "read_only": ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                     open_world_hint=False),
        "appends": ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                   open_world_hint=False),
        "rewrites": ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                    open_world_hint=False),
        "asks_model": ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False,
                                      open_world_hint=True),
    }


def _add_search_tools(server, mem, call, ann) -> None:
    """Read tools over the facts: `recall` and `episodes`."""

    @server.tool(annotations=ann["read_only"], description=(
        "Ranked facts from memory for a query, each citing path#Lline. " + QUERY_HELP +
        " since: '30d', '2w', '6m', '2025-11-01' or '2025-11'. kind: world, experience, opinion, observation, "
        "log or page. entity: a name, @slug or alias (resolved). as_of: answer as of that day ('what was true "
        "then': facts superseded by then are left out). field: only facts with that [key:: value] field, "
        "'outcome=fixed', or just 'cost' for any value. tag: only facts with that #tag ('project' also "
        "matches 'project/alpha'). A result replaced by a newer fact says 'superseded_by'; "
        "the newer one lists 'previously'. "
        "If the embedding model is unavailable the answer is lexical and 'degraded' says why."))
    def recall(query: str, k: int = 10, since: str | None = None, kind: str | None = None,
               entity: str | None = None, as_of: str | None = None, field: str | None = None,
               tag: str | None = None) -> dict[str, Any]:
        return call(lambda: mem.recall(query, k=k, since=since, as_of=as_of, kinds=[kind] if kind else [],
                                       entities=[entity] if entity else [], fields=[field] if field else [],
                                       tags=[tag] if tag else []).to_dict())

    @server.tool(annotations=ann["read_only"], description=(
        "Recall grouped by day: for each day with hits, the hits bucketed by kind and the surrounding "
        "section(s) of that day's log with line numbers, newest day first; 'timeline' summarises it in one "
        "line. " + QUERY_HELP))
    def episodes(query: str, k: int = 30, since: str | None = None, until: str | None = None) -> dict[str, Any]:
        return call(mem.episodes, query, k=k, since=since, until=until)


def _add_retain_tool(server, mem, call, ann) -> None:
    """The write tool for the daily log: `retain`."""

    @server.tool(annotations=ann["appends"], description=(
        "Store one fact at the end of today's daily log under '## Retain' (or on 'date', YYYY-MM-DD). Format: "
        "'W|B|O|S[(c=0..1)] [@Entity ...]: text' — W world fact, B experience (first person), O opinion with "
        "optional confidence, S observation. Example: 'O(c=0.8) @Peter: Prefers short WhatsApp messages.' "
        "One line without a type letter is kept as a plain log line. Control characters are refused. "
        "Returns where it was written."))
    def retain(bullet: str, date: str | None = None) -> dict[str, Any]:
        return call(lambda: mem.retain(bullet, parse_day(date, _date.today()) if date else None))


def _add_lookup_tools(server, mem, call, ann) -> None:
    """Read tools for one file, entity, the opinions and health: `get`, `about`, `opinions`, `status`."""

    @server.tool(annotations=ann["read_only"], description=(
        "Read lines of a workspace file: 'memory/2025-11-27.md#L10-L20', 'memory.md' or 'bank/entities/Peter.md#L3'. "
        "Paths outside the workspace are refused. At most max_lines lines are returned ('truncated' says so)."))
    def get(ref: str, max_lines: int = 200) -> dict[str, Any]:
        return call(mem.get, ref, max_lines=max_lines)

    @server.tool(annotations=ann["read_only"], description=(
        "Everything about one entity (person, project, place): its page in bank/entities/ if any, its aliases, "
        "and the facts that mention it, newest first. entity: a name, @slug or alias."))
    def about(entity: str, k: int = 20) -> dict[str, Any]:
        return call(mem.about, entity, k=k)

    @server.tool(annotations=ann["read_only"], description=(
        "Opinions with their confidence (the newest explicit c=…, moved by later supporting or contradicting "
        "notes), trend and evidence sources, newest first; optionally only those about one entity."))
    def opinions(entity: str | None = None, k: int = 50) -> dict[str, Any]:
        return call(mem.opinions, entity=entity, k=k)

    @server.tool(annotations=ann["read_only"], description=(
        "Health of the memory: counts, index freshness, embedding coverage, which providers answer, versions."))
    def status() -> dict[str, Any]:
        return call(mem.status)


def _add_core_tools(server, mem, call, ann) -> None:
    """Write tools for core memory (memory.md): `core_append`, `core_replace`, `core_insert`."""

    @server.tool(annotations=ann["appends"], description=(
        "Append text (one or more lines, e.g. '- Prefers tea.') to the end of core memory (memory.md). Fails "
        "without changing anything if memory.md would exceed its size limit."))
    def core_append(text: str) -> dict[str, Any]:
        return call(mem.core_append, text)

    @server.tool(annotations=ann["rewrites"], description=(
        "Replace text in core memory (memory.md): 'old' must occur exactly once (copy it exactly); 'new' may "
        "be empty to delete. The previous version is backed up under .memory/backups/."))
    def core_replace(old: str, new: str) -> dict[str, Any]:
        return call(mem.core_replace, old, new)

    @server.tool(annotations=ann["appends"], description=(
        "Insert text into core memory (memory.md) before 1-based line 'line' (the number of lines + 1 appends)."))
    def core_insert(line: int, text: str) -> dict[str, Any]:
        return call(mem.core_insert, line, text)


def _add_model_tools(server, mem, call, ann) -> None:
    """Tools that ask a local language model: `summarize`."""

    @server.tool(annotations=ann["asks_model"], description=(
        "A 3-5 sentence recap by a local language model (Ollama) of one day ('2025-11-27', 'today', "
        "'yesterday') or of what memory holds about a query, citing the days used. lang: de, en or auto. "
        "Fails with a hint when no Ollama is reachable; text marked trust: legal is never sent."))
    def summarize(target: str, lang: str = "auto") -> dict[str, Any]:
        return call(mem.summarize, target, lang=lang)


def _add_review_tool(server, mem, call, ann) -> None:
    """The review queue: `review` (list, show or decide; a decision is a line in bank/decisions.md)."""

    @server.tool(annotations=ann["appends"], description=(
        "The review queue of what consolidation could not settle: near-duplicates, unclear contradictions, "
        "suggested connections. action 'list' (status: open, decided or all), 'show' (item), or 'decide' "
        "(item, decision: fold, keep, supersede or dismiss for pairs; link or dismiss for connections; optional "
        "note). A decision is appended to bank/decisions.md and honoured by recall and reflect."))
    def review(action: str = "list", item: str | None = None, decision: str | None = None, note: str = "",
               status: str = "open") -> dict[str, Any]:
        def run() -> dict[str, Any]:
            if action == "list":
                return mem.review_list(status)
            if action not in ("show", "decide") or not item or (action == "decide" and not decision):
                from memtool.errors import UsageError

                raise UsageError("review needs action list, show ITEM or decide ITEM DECISION",
                                 "list first: review(action='list') gives the item ids")
            return mem.review_show(item) if action == "show" else mem.review_decide(item, decision, note)

        return call(run)


def _add_resources(server, mem) -> None:
    """Resources: `memory://core`."""

    @server.resource("memory://core", name="core memory", mime_type="text/markdown",
                     description="memory.md: the small, durable facts and preferences for every conversation.")
    def core_memory() -> str:
        return mem.core_read()["text"]


def serve(mem) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    build_server(mem).run("stdio")
