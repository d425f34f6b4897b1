"""The tools `mem mcp` serves (on the official `mcp` SDK), and their server.

Every tool calls the same `Memory` facade method as the CLI command of the same name; its answer
is that command's `--json` document as one compact JSON text (`memtool.mcp_answers`). `episodes`,
`about` and `recent` answer within a token budget by default. Errors come back as tool errors in
the tool's own terms, with a hint.
"""

import threading
import time
from collections import deque
from contextlib import asynccontextmanager, contextmanager
from datetime import date as _date
from typing import Annotated, Any, Literal, Optional

from pydantic import Field

from memtool import __version__
from memtool.budget import DEFAULT as BUDGET_DEFAULT
from memtool.budget import MAX as BUDGET_MAX
from memtool.budget import MIN as BUDGET_MIN
from memtool.dates import parse_day
from memtool.errors import MemError, StorageError
from memtool.mcp_answers import error_text, invalid_arguments, result, unknown_arguments

INSTRUCTIONS = """\
Long-term memory over the user's Markdown notes: daily logs (memory/YYYY-MM-DD.md), core memory
(memory.md) and curated bank/ pages. Every answer cites its source as path#Lx-Ly.
The loop: at the start, read core memory (resource memory://core) and `recent`; before answering
anything about people, projects, past decisions or preferences, `recall` (or `about` for one entity,
`episodes` for "what happened"); cite the sources you use. After learning something worth keeping,
`note` it (free text) or `retain` it (a typed fact); stable preferences go to core memory.
`forget` removes text everywhere (preview first, then confirm); `reflect` consolidates.
"""

QUERY_HELP = (
    "Plain words in any language (German and English are stemmed and folded: Strasse finds Straße); words and "
    "meaning are searched together, so paraphrases work. No operators: quotes, AND/OR/NOT, * and - are "
    "treated as ordinary text."
)
Kind = Literal["world", "experience", "opinion", "observation", "log", "page"]
DATE_FORMS = "'30d', '2w', '6m', '1y', '2025-11-01', '2025-11' or '2025'"
K = Annotated[int, Field(ge=1, le=1000, description="How many results at most (1-1000).")]
BUDGET = Annotated[int, Field(ge=BUDGET_MIN, le=BUDGET_MAX, description=(
    f"Tokens the answer may take ({BUDGET_MIN}-{BUDGET_MAX}, ~4 characters each); what does not fit is counted, "
    "not cut mid-line."))]
ENTITY = Annotated[str, Field(description="An entity's name, @slug or alias (e.g. 'Peter', '@warelay').")]
OPT_ENTITY = Annotated[Optional[str], Field(description="Only facts about this entity: a name, @slug or alias.")]
AgainArg = Annotated[bool, Field(description=(
    "true: write it even when the same text was just written through MCP (on purpose, not a retry)."))]


def build_server(mem):
    """An MCPServer whose tools call `mem` (a `memtool.memory.Memory`)."""
    turns = Turns(mem.config.mcp_wait)
    mem.model_wait = turns.aside  # summarize and reflect let other calls run while a model answers
    server = _server_class(turns)(name="memtool", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    call, ann = _caller(), _annotations()
    # Registered in this order: clients list the tools as registered (reads first, then writes).
    _add_search_tools(server, mem, call, ann)
    _add_lookup_tools(server, mem, call, ann)
    _add_write_tools(server, mem, call, ann)
    _add_core_tools(server, mem, call, ann)
    _add_upkeep_tools(server, mem, call, ann)
    _add_model_tools(server, mem, call, ann)
    _add_resources(server, mem)
    return server


class Turns:
    """One tool call at a time (one `Memory`: one SQLite connection, one index lock), in the order they
    came. A call waits at most `wait` seconds for its turn, then is refused as busy, naming what runs;
    a call whose client gave up while it waited (a cancellation) never runs, so a retry cannot follow
    a late first try. A call waiting on a language model gives its turn up meanwhile (`aside`)."""

    def __init__(self, wait: float):
        self.wait = wait
        self.running: tuple[str, float] | None = None  # the call that has its turn, and since when
        self._free = None  # an anyio.Semaphore(1), made in the server's event loop (no owner: the turn is handed on)
        self._back: deque[threading.Event] = deque()  # calls back from a model's answer, served before the queue

    @asynccontextmanager
    async def turn(self, what: str, refused: type[Exception]):
        import anyio

        if self._free is None:
            self._free = anyio.Semaphore(1)
        try:
            self._free.acquire_nowait()  # free: no wait, even with wait_seconds = 0
        except anyio.WouldBlock:
            got = False
            with anyio.move_on_after(self.wait):
                await self._free.acquire()
                got = True
            if not got:
                raise refused(self.busy()) from None
        self.running = (what, time.monotonic())
        try:
            yield
        finally:
            self.running = None
            self._pass_on()

    @contextmanager
    def aside(self):
        """Give the turn up while the calling worker thread waits on something outside the workspace and
        index (a model's answer), and take it back after, before the calls still queued (it has work in
        hand; it waits for the one that runs). What the caller read before may have changed when it has
        its turn back: it checks before it writes. Outside a turn it does nothing.

        The thread waits on its own event, not in the event loop: a loop that is ending (the client
        went away) keeps no call from finishing."""
        from anyio import RunFinishedError, from_thread

        held, self.running = self.running, None
        if held is None:
            yield
            return
        from_thread.run_sync(self._pass_on)
        try:
            yield
        finally:
            back = threading.Event()
            try:
                from_thread.run_sync(self._claim, back)
            except RunFinishedError:  # the server has stopped: no other call runs
                back.set()
            back.wait()
            self.running = held

    def _pass_on(self) -> None:
        """(In the event loop.) The turn to the first call back from a model, else to the queue."""
        if self._back:
            self._back.popleft().set()
        else:
            self._free.release()

    def _claim(self, back: threading.Event) -> None:
        """(In the event loop.) The turn for a call back from a model: now if free, else next."""
        import anyio

        try:
            self._free.acquire_nowait()
            back.set()
        except anyio.WouldBlock:
            self._back.append(back)

    def busy(self) -> str:
        what, since = self.running or ("another call", time.monotonic())
        return error_text(f"busy: {what} is running (for {time.monotonic() - since:.0f} s; calls are answered one at "
                          "a time), retry in a moment",
                          f"a call waits up to {self.wait:g} s for the one before it ([mcp] wait_seconds in memtool.toml)")


# Resources read without waiting for a turn: a plain read of one file (no SQLite) that edits replace
# atomically (a rename), so a read sees the old text or the new, never half of one.
UNQUEUED = frozenset({"memory://core"})


def _server_class(turns: Turns):
    """MCPServer, with argument errors said in plain words (the SDK passes the validator's text on),
    and each tool call and resource read in its turn (`turns`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from pydantic import ValidationError

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
            tool = next((t for t in await self.list_tools() if t.name == name), None)
            unknown = tool and unknown_arguments(arguments or {}, tool.input_schema.get("properties", {}))
            if unknown:
                raise ToolError(f"{name}: {unknown}")
            try:
                async with turns.turn(name, ToolError):
                    return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(f"{name}: {invalid_arguments(exc.__cause__.errors())}") from None
                raise

        async def read_resource(self, uri, context=None):
            if str(uri) in UNQUEUED:
                return await super().read_resource(uri, context)
            async with turns.turn(f"reading {uri}", ResourceError):
                return await super().read_resource(uri, context)

    return Server


def _caller():
    """`call(fn, …)`: run a `Memory` method; its answer as one compact JSON text, a MemError (or an
    OSError, said as the CLI says it) as a tool error in the tool's terms.

    The SDK runs each tool call in a worker thread, and clients send calls in parallel; `Turns` lets
    one `Memory` serve them one at a time."""
    from mcp.server.mcpserver.exceptions import ToolError

    def call(fn, *args, **kwargs):
        try:
            data = fn(*args, **kwargs)
        except OSError as exc:  # e.g. a path too long for the file system, a full disk
            refused = StorageError.from_os(exc)
            raise ToolError(error_text(refused.message, refused.hint)) from None
        except MemError as exc:
            raise ToolError(error_text(exc.message, exc.hint)) from None
        except Exception as exc:  # a damaged index, a read-only or full disk, said as the CLI says them
            from memtool.store.driver import as_mem_error

            known = as_mem_error(exc)
            if known is None:
                raise
            raise ToolError(error_text(known.message, known.hint)) from None
        return result(data)

    return call


def _annotations() -> dict:
    """The hints a client sees for each kind of tool: reads, appends, rewrites, removals, asking a model."""
    from mcp.types import ToolAnnotations

    def hints(read_only: bool, destructive: bool, idempotent: bool, open_world: bool = False) -> ToolAnnotations:
        return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent,
                               open_world_hint=open_world)

    return {"read_only": hints(True, False, True), "appends": hints(False, False, False),
            "rewrites": hints(False, True, False), "removes": hints(False, True, True),
            "consolidates": hints(False, False, True), "asks_model": hints(True, False, False, open_world=True)}


def _add_search_tools(server, mem, call, ann) -> None:
    """Read tools over the facts: `recall` and `episodes`."""
    from mcp.types import CallToolResult

    @server.tool(annotations=ann["read_only"], description=(
        "Use before answering anything about the user, people, projects, past decisions or preferences: ranked "
        "facts from memory, each citing path#Lline (cite the ones you use). " + QUERY_HELP + " Leave query empty "
        "to list facts newest first by the filters alone. A result replaced by a newer fact says 'superseded_by'; "
        "the newer one lists 'previously'. Scores are comparable across queries: the first result's score is the "
        "calibrated chance (0-1) that memory holds something on the topic; under min_score (default 0.3) the "
        "answer is 'nothing relevant' (no results, with best_score and below_floor): treat that as 'I do not "
        "know'. An opinion carries its current 'confidence' (moved by later evidence), 'trend' and 'evidence'. "
        "Dates in the query ('last week', 'im Oktober') rank facts from then first; 'since Monday' filters. "
        "If the embedding model is unavailable the answer is lexical and 'degraded' says why."))
    def recall(
        query: Annotated[str, Field(description="What to look for. Empty: list facts by the filters, newest first.")] = "",
        k: K = 10,
        since: Annotated[Optional[str], Field(description=f"Only facts from this time on: {DATE_FORMS}.")] = None,
        kind: Annotated[Optional[Kind], Field(description="Only this kind of fact.")] = None,
        entity: OPT_ENTITY = None,
        as_of: Annotated[Optional[str], Field(description=(
            "Answer as of this day ('what was true then'): facts written by then, minus those superseded by then. "
            "Same forms as since; a relative since (30d) and dates in the query count back from it."))] = None,
        field: Annotated[Optional[str], Field(description=(
            "Only facts with this [key:: value] field: 'outcome=fixed', or 'cost' for any value."))] = None,
        tag: Annotated[Optional[str], Field(description="Only facts with this #tag ('project' also matches 'project/alpha').")] = None,
        min_score: Annotated[Optional[float], Field(ge=0, le=1, description=(
            "Answer 'nothing relevant' when the best result's calibrated score is below this (default 0.3; "
            "0 shows anything)."))] = None,
    ) -> CallToolResult:
        return call(lambda: mem.recall(query, k=k, since=since, as_of=as_of, kinds=[kind] if kind else [],
                                       entities=[entity] if entity else [], fields=[field] if field else [],
                                       tags=[tag] if tag else [], min_score=min_score).to_dict())

    @server.tool(annotations=ann["read_only"], description=(
        "What happened, day by day: recall hits grouped by day with the surrounding lines of that day's log, each "
        "line said once ('›' marks a hit; cite as path#Lline), newest day first; 'timeline' sums it up in one "
        "line. Fits 'budget' tokens; days that do not fit are counted in 'omitted_days'. " + QUERY_HELP))
    def episodes(
        query: Annotated[str, Field(description="What to look for (a topic, a name, an event).")],
        k: Annotated[int, Field(ge=1, le=1000, description="How many hits to group (1-1000).")] = 30,
        since: Annotated[Optional[str], Field(description=f"Only days from this time on: {DATE_FORMS}.")] = None,
        until: Annotated[Optional[str], Field(description="Only days up to this one (same forms as since).")] = None,
        budget: BUDGET = BUDGET_DEFAULT,
    ) -> CallToolResult:
        return call(mem.episodes, query, k=k, since=since, until=until, budget=budget)


def _add_lookup_tools(server, mem, call, ann) -> None:
    """Read tools: `about`, `entities`, `recent`, `get`, `opinions`, `status`."""
    from mcp.types import CallToolResult

    @server.tool(annotations=ann["read_only"], description=(
        "Everything about one entity (person, project, place): the text of its page in bank/entities/ (without "
        "the generated lists), its aliases, and the facts that mention it, newest first, within 'budget' tokens."))
    def about(entity: ENTITY, k: Annotated[int, Field(ge=1, le=1000, description="How many facts at most (1-1000).")] = 20,
              budget: BUDGET = BUDGET_DEFAULT) -> CallToolResult:
        return call(mem.about, entity, k=k, budget=budget)

    @server.tool(annotations=ann["read_only"], description=(
        "The entities memory knows (people, projects, places): name, aliases, how many facts mention each, and "
        "its page, most mentioned first. Use it to find the right name before about or recall(entity=…)."))
    def entities(
        query: Annotated[Optional[str], Field(description="Only entities whose name or an alias contains this (any case). Empty: all.")] = None,
        k: Annotated[int, Field(ge=1, le=1000, description="How many entities at most (1-1000).")] = 100,
    ) -> CallToolResult:
        return call(mem.entities, query or None, k=k)

    @server.tool(annotations=ann["read_only"], description=(
        "What was added or changed lately: the facts of each day's log grouped by day and file (cited), newest "
        "first, then the other files saved in that time. Good at the start of a session."))
    def recent(days: Annotated[int, Field(ge=1, le=3650, description="How many days back, today included (1-3650).")] = 7,
               budget: BUDGET = BUDGET_DEFAULT) -> CallToolResult:
        return call(mem.recent, days=days, budget=budget)

    @server.tool(annotations=ann["read_only"], description=(
        "Read lines of a workspace file, e.g. to check a citation: 'memory/2025-11-27.md#L10-L20', 'memory.md' or "
        "'bank/entities/Peter.md#L3'. Paths outside the workspace are refused; 'truncated' says when lines were left out."))
    def get(ref: Annotated[str, Field(description="path, path#L12 or path#L12-L20, relative to the workspace.")],
            max_lines: Annotated[int, Field(ge=1, le=5000, description="Lines to return at most (1-5000).")] = 200) -> CallToolResult:
        return call(mem.get, ref, max_lines=max_lines)

    @server.tool(annotations=ann["read_only"], description=(
        "Opinions with their confidence (the newest explicit c=…, moved by later supporting or contradicting "
        "notes), trend and evidence sources, newest first."))
    def opinions(entity: OPT_ENTITY = None,
                 k: Annotated[int, Field(ge=1, le=1000, description="How many opinions at most (1-1000).")] = 50) -> CallToolResult:
        return call(mem.opinions, entity=entity, k=k)

    @server.tool(annotations=ann["read_only"], description=(
        "Health of the memory: counts, index freshness, embedding coverage, which providers answer, versions."))
    def status() -> CallToolResult:
        return call(mem.status)


REPEAT_NOTE = ("The same text sent through this tool again within [mcp] repeat_seconds (default 120 s) and still there is "
               "taken for a retry and not written twice: the answer says 'repeated' and where it is; to write it "
               "once more on purpose, call with again=true.")


def _repeat(mem, again: bool) -> float:
    """The seconds within which an MCP write of the same text is a retry (0 with `again`: written anyway)."""
    return 0.0 if again else mem.config.mcp_repeat


def _add_write_tools(server, mem, call, ann) -> None:
    """Write tools for the daily log and bank pages: `note` and `retain` (both only append)."""
    from mcp.types import CallToolResult

    @server.tool(annotations=ann["appends"], description=(
        "Write down something worth remembering, in free words (no format): appended as one line to today's "
        "log, or to the end of a bank page. Make it self-contained, e.g. 'Jonas prefers calls to messages; he "
        "reads mail only on Mondays.' Returns where it landed (path#Lline). " + REPEAT_NOTE))
    def note(text: Annotated[str, Field(description="One line of text. Control characters are refused.")],
             page: Annotated[Optional[str], Field(description=(
                 "A bank page instead of today's log: 'bank/world.md', or an entity's name (its page in "
                 "bank/entities/, created if missing)."))] = None,
             again: AgainArg = False) -> CallToolResult:
        return call(mem.note, text, page=page, repeat=_repeat(mem, again))

    @server.tool(annotations=ann["appends"], description=(
        "Store one typed fact under '## Retain' in today's log: 'W|B|O|S[(c=0..1)] [@Entity ...]: text' — W world "
        "fact, B experience (first person), O opinion with optional confidence, S observation. Example: "
        "'O(c=0.8) @Peter: Prefers short WhatsApp messages.' Explain the mechanism, not just the event. "
        "For free text use note. Returns where it was written. " + REPEAT_NOTE))
    def retain(bullet: Annotated[str, Field(description="The fact, in the format above, one line.")],
               date: Annotated[Optional[str], Field(description="The day's log to write to: YYYY-MM-DD, today or yesterday.")] = None,
               again: AgainArg = False) -> CallToolResult:
        return call(lambda: mem.retain(bullet, parse_day(date, _date.today()) if date else None,
                                       repeat=_repeat(mem, again)))


def _add_core_tools(server, mem, call, ann) -> None:
    """Write tools for core memory (memory.md, or OpenClaw's MEMORY.md: named as the workspace has it):
    `core_append`, `core_replace`, `core_insert`."""
    from mcp.types import CallToolResult

    core = mem.ws.core_path

    @server.tool(annotations=ann["appends"], description=(
        f"Append to core memory ({core}: small, durable facts and preferences for every conversation). Fails "
        f"without changing anything if {core} would exceed its size limit. " + REPEAT_NOTE))
    def core_append(text: Annotated[str, Field(description="One or more lines, e.g. '- Prefers tea.'")],
                    again: AgainArg = False) -> CallToolResult:
        return call(mem.core_append, text, repeat=_repeat(mem, again))

    @server.tool(annotations=ann["rewrites"], description=(
        f"Replace text in core memory ({core}). The previous version is backed up under .memory/backups/."))
    def core_replace(old: Annotated[str, Field(description=f"Text that occurs exactly once in {core} (copy it exactly).")],
                     new: Annotated[str, Field(description="The replacement; empty to delete.")]) -> CallToolResult:
        return call(mem.core_replace, old, new)

    @server.tool(annotations=ann["appends"], description=(
        f"Insert text into core memory ({core}) before a line. " + REPEAT_NOTE))
    def core_insert(line: Annotated[int, Field(ge=1, description="1-based line to insert before (the number of lines + 1 appends).")],
                    text: Annotated[str, Field(description="One or more lines.")],
                    again: AgainArg = False) -> CallToolResult:
        return call(mem.core_insert, line, text, repeat=_repeat(mem, again))


def _add_upkeep_tools(server, mem, call, ann) -> None:
    """`forget` (removes text everywhere), `reflect` (consolidation) and `review` (what it could not settle)."""
    from mcp.types import CallToolResult

    @server.tool(annotations=ann["removes"], description=(
        "Remove text from memory for good, e.g. when the user asks to forget a phone number: every line holding "
        "the text (any case), or the cited lines, are removed from the Markdown and purged from the index, "
        "backups and logs. Without confirm=true it only lists the lines it would remove, with a 'plan': show them "
        "to the user, then call again with confirm=true and that plan (refused, nothing removed, if the lines "
        "changed meanwhile)."))
    def forget(target: Annotated[str, Field(description=(
                   "The exact text (3+ characters; every line holding it), or a citation: 'memory/2026-11-27.md#L9' "
                   "or 'bank/entities/Jonas.md#L4-L6'."))],
               confirm: Annotated[bool, Field(description="true: remove now. false (default): only list what would go.")] = False,
               plan: Annotated[str | None, Field(description=(
                   "The 'plan' the listing answered: the removal applies only to the lines listed."))] = None) -> CallToolResult:
        return call(mem.forget, target, confirm=confirm, plan=plan, wait=False)

    @server.tool(annotations=ann["consolidates"], description=(
        "Consolidate memory now: fold duplicates, mark superseded facts, update entity pages and opinions, write "
        "the journal. It waits for its gates (hours since the last run, new facts) and says so in 'gated', "
        "unless force=true. Answers with a summary."))
    def reflect(force: Annotated[bool, Field(description="Run even when the gates say it is too early.")] = False,
                dry_run: Annotated[bool, Field(description="Plan only; write nothing.")] = False) -> CallToolResult:
        return call(lambda: reflect_summary(mem.reflect(dry_run=dry_run, force=force)))

    @server.tool(annotations=ann["appends"], description=(
        "The review queue of what consolidation could not settle: near-duplicates, unclear contradictions, "
        "suggested connections, and a local model's proposals (typed facts, a week's observation), each with its "
        "evidence. action 'list' (by status), 'show' (one item), or 'decide' (an item and a decision: fold, keep, "
        "supersede or dismiss for pairs; link or dismiss for connections; accept or dismiss for proposals, accept "
        "with an optional edited text; an optional note). A decision is appended to bank/decisions.md and honoured "
        "by recall and reflect on every machine; accepting a proposal writes its typed line to the daily log. "
        "Ask the user before deciding."))
    def review(action: Annotated[Literal["list", "show", "decide"], Field(description="What to do.")] = "list",
               item: Annotated[Optional[str], Field(description="The item id from list (show, decide).")] = None,
               decision: Annotated[Optional[Literal["fold", "keep", "supersede", "dismiss", "link", "accept"]], Field(
                   description="The decision (decide only).")] = None,
               note: Annotated[str, Field(description="Why, in a few words (decide only).")] = "",
               text: Annotated[Optional[str], Field(description=(
                   "accept only: the typed line to write instead of the proposed one, e.g. 'W @Peter: Moved to "
                   "Lisbon.'"))] = None,
               status: Annotated[Literal["open", "decided", "all"], Field(description="Which items list shows.")] = "open",
               ) -> CallToolResult:
        from memtool.errors import UsageError

        def run() -> dict:
            if action == "list":
                return mem.review_list(status)
            if not item or (action == "decide" and not decision):
                raise UsageError(f"review with action '{action}' needs item" + (" and decision" if action == "decide" else ""),
                                 "list first: review with action 'list' gives the item ids")
            return mem.review_show(item) if action == "show" else mem.review_decide(item, decision, note, text)

        return call(run)


def reflect_summary(report: dict) -> dict:
    """A reflect report as an agent needs it: whether it ran, what changed, counts (no journal prose);
    the pages not written because they were saved meanwhile, and the files written while a model answered."""
    from memtool.reflect.pages import CHANGED

    found = report.get("consolidation") or {}
    return {"changed": report["changed"], "dry_run": report["dry_run"],
            **({"gated": report["gated"]} if report.get("gated") else {}),
            "pages": [p for p in report["pages"] if p["action"] in ("create", "update")],
            **({"not_written": [p for p in report["pages"] if p["reason"] == CHANGED]}
               if any(p["reason"] == CHANGED for p in report["pages"]) else {}),
            **({"written_meanwhile": report["written_meanwhile"]} if report.get("written_meanwhile") else {}),
            "consolidation": {k: len(v) if isinstance(v, (list, dict)) else v for k, v in found.items()},
            "opinion_moves": len(report["opinion_moves"]), "suggestions": report["suggestions"],
            "seconds": report["seconds"]}


def _add_model_tools(server, mem, call, ann) -> None:
    """Tools that ask a local language model: `summarize`."""
    from mcp.types import CallToolResult

    @server.tool(annotations=ann["asks_model"], description=(
        "A 3-5 sentence recap by a local language model (Ollama) of one day or of what memory holds about a "
        "query, citing the days used. Fails with a hint when no Ollama is reachable; text marked trust: legal is "
        "never sent."))
    def summarize(target: Annotated[str, Field(description="A day ('2025-11-27', 'today', 'yesterday') or a query.")],
                  lang: Annotated[Literal["auto", "de", "en"], Field(description="Language of the recap.")] = "auto") -> CallToolResult:
        return call(mem.summarize, target, lang=lang)


def _add_resources(server, mem) -> None:
    """Resources: `memory://core`."""
    from mcp.server.mcpserver.exceptions import ResourceError

    @server.resource("memory://core", name="core memory", mime_type="text/markdown",
                     description=f"{mem.ws.core_path}: the small, durable facts and preferences for every conversation.")
    def core_memory() -> str:
        try:
            return mem.core_read()["text"]
        except MemError as exc:  # e.g. memory.md is not UTF-8: the reason, not "Error reading resource"
            raise ResourceError(error_text(exc.message, exc.hint)) from None
