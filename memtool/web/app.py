"""The `mem serve` application: Starlette routes over the `Memory` facade, pages from Jinja2
templates, htmx for search-as-you-type and review actions, uPlot for the confidence chart (both
vendored under static/). Handlers run on the event loop's thread, one at a time: the facade's SQLite
connections stay on the thread that opened them, and a local single-user view needs no more."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memtool.errors import MemError, StorageError, UsageError, WorkspaceError
from memtool.recall.query import MAX_QUERY_CHARS
from memtool.reflect import opinions
from memtool.store import entity_key
from memtool.web import guard, views

STATIC = Path(__file__).with_name("static")
OPINIONS_SHOWN = 20  # an entity page lists its newest opinion threads (`mem opinions --entity` lists all)
NAV = (("/", "Search"), ("/timeline", "Timeline"), ("/entities", "Entities"), ("/review", "Review"),
       ("/journal", "Journal"), ("/status", "Status"))


def build_app(mem, token: str, port: int) -> Starlette:
    """The web app over `mem` (a `memtool.memory.Memory`), guarded by `token` for 127.0.0.1:`port`."""
    memo = Memo(mem)
    env = Environment(loader=PackageLoader("memtool.web", "templates"), autoescape=select_autoescape(["html"]))
    env.globals.update(nav=NAV, kinds=views.KINDS, citation=views.citation)

    def page(request: Request, name: str, code: int = 200, **data) -> HTMLResponse:
        partial = request.headers.get("HX-Request") == "true"
        html = env.get_template(name).render(request=request, path=request.url.path, partial=partial, **data)
        return HTMLResponse(html, status_code=code)

    def handler(fn):
        async def run(request: Request) -> Response:
            try:
                return fn(request)
            except OSError as exc:  # e.g. a path too long for the file system: said as the CLI says it
                refused = StorageError.from_os(exc)
                return page(request, "error.html", 500, error=refused.message, hint=refused.hint)
            except MemError as exc:  # the library's refusal: shown like the CLI's error and hint
                return page(request, "error.html", _status(exc), error=exc.message, hint=exc.hint)
        return run

    def search(request: Request) -> HTMLResponse:
        q = request.query_params
        form = {k: q.get(k, "").strip() for k in ("q", "since", "kind", "entity", "as_of")}
        result, hint = None, None
        if len(form["q"]) > MAX_QUERY_CHARS:  # embedding it all would hold the one-at-a-time server for seconds
            raise UsageError(f"the query is {len(form['q']):,} characters long; the search takes at most "
                             f"{MAX_QUERY_CHARS:,}", "search for the few words that matter (mem recall cuts a longer "
                             f"query to its first {MAX_QUERY_CHARS:,} characters)")
        if form["q"] or form["entity"] or form["as_of"] or form["kind"] or form["since"]:
            result = mem.recall(form["q"], k=20, since=form["since"] or None, as_of=form["as_of"] or None,
                                kinds=[form["kind"]] if form["kind"] else [],
                                entities=[form["entity"]] if form["entity"] else []).to_dict()
        else:
            hint = "Type to search: words in any language, or pick a filter."
        name = "_results.html" if request.headers.get("HX-Request") == "true" else "search.html"
        return page(request, name, form=form, result=result, hint=hint)

    def file_view(request: Request) -> HTMLResponse:
        path = request.query_params.get("path", "")
        span = views.line_span(request.query_params.get("lines"))
        data = mem.get(path, max_lines=1_000_000, follow=False)
        if span and data["truncated"] and span[0] > data["end"]:  # a long file: show the cited lines
            data = mem.get(f"{data['path']}#L{views.window_start(span[0])}-L{data['total_lines']}", max_lines=1_000_000,
                           follow=False)
        return page(request, "file.html", file=data["path"], span=span, shown=data,
                    html=views.render_markdown(data["text"], data["path"], span, start=data["start"]),
                    editors=views.editor_links(str(mem.ws.root), data["path"], span[0] if span else None))

    def timeline(request: Request) -> HTMLResponse:
        mem.refresh()
        heat = views.heat_map(memo.get("days", mem.store.day_kind_counts), _day_param(request, "until"), today=date.today().isoformat())
        as_of = _day_param(request, "as_of") or heat["until"]
        return page(request, "timeline.html", heat=heat, as_of=as_of, ordinal=_ordinal, daily=_daily_paths(mem, heat))

    def timeline_as_of(request: Request) -> HTMLResponse:
        raw = request.query_params.get("day", "")
        if not raw.isdigit() or not 1 <= int(raw) <= date.max.toordinal():
            raise UsageError(f"day must be a day number (the slider's value), not {raw!r}", "use the slider")
        day = date.fromordinal(int(raw)).isoformat()
        return page(request, "_as_of.html", as_of=day, facts=_as_of_facts(mem, day))

    def entities(request: Request) -> HTMLResponse:
        mem.refresh()
        counts = memo.get("entities", lambda: mem.store.entity_counts(1))
        names = {k: n for n, _ in counts for k in (n, entity_key(n))}
        standing, _ = mem.review_standing()
        linked = {frozenset((_node(d.a, names), _node(d.b, names))) for d in standing.values()
                  if d.kind == "connection" and d.action == "link"}
        return page(request, "entities.html", counts=counts[:500], more=max(0, len(counts) - 500),
                    aliases=mem.store.aliases(), graph=views.graph(memo.get("pairs", lambda: mem.store.co_mentions(60)), names, linked))

    def entity(request: Request) -> HTMLResponse:
        name = request.path_params["name"]
        about = mem.about(name, k=60)
        threads = memo.get(("threads", name), lambda: mem.opinion_threads(name, newest=OPINIONS_SHOWN))
        written = {f["source"]: f.get("confidence") for f in mem.list_facts(kinds=["opinion"], entities=[name], k=500)}
        charted = [{"label": views.quote_label(o.statement), "statement": o.statement, "confidence": round(o.confidence, 2),
                    "anchor": o.anchor, "source": o.source, "points": opinions.series(o, written)} for o in threads]
        return page(request, "entity.html", about=about, threads=charted,
                    chart=views.confidence_chart(charted[:views.CHART_SERIES]))

    def review(request: Request) -> HTMLResponse:
        queue = mem.review_list("all")
        return page(request, "review.html", queue=queue, counts=views.review_counts(queue["items"]))

    async def decide(request: Request) -> Response:
        form = await request.form()
        try:
            if any(not isinstance(v, str) for _, v in form.multi_items()):
                raise UsageError("a review decision takes text fields only, not a file", "use the Review page's buttons")
            text = form.get("text") if form.get("action") == "accept" else None
            done = mem.review_decide(request.path_params["item"], str(form.get("action", "")), str(form.get("note", "")),
                                     None if text is None else str(text))
        except MemError as exc:
            return page(request, "error.html", 400, error=exc.message, hint=exc.hint)
        if request.headers.get("HX-Request") != "true":
            return RedirectResponse("/review", status_code=303)
        queue = mem.review_list("all")  # the header's counts travel with the item (hx-swap-oob)
        item = next(i for i in queue["items"] if i["id"] == done["item"])
        return page(request, "_review_item.html", item=item, done=done, queue=queue,
                    counts=views.review_counts(queue["items"]))

    def journal(request: Request) -> HTMLResponse:
        text = mem.ws.read_text("bank/journal.md")
        return page(request, "journal.html", html=views.render_markdown(text, "bank/journal.md") if text else None)

    def status(request: Request) -> HTMLResponse:
        probe = request.query_params.get("probe") == "1"
        return page(request, "status.html", status=mem.status(probe=probe), probe=probe)

    routes = [Route("/", handler(search)), Route("/search", handler(search)), Route("/file", handler(file_view)),
              Route("/timeline", handler(timeline)), Route("/timeline/as-of", handler(timeline_as_of)),
              Route("/entities", handler(entities)), Route("/entity/{name:path}", handler(entity)),
              Route("/review", handler(review)), Route("/review/{item}", decide, methods=["POST"]),
              Route("/journal", handler(journal)), Route("/status", handler(status)),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes)
    return Guarded(app, token, port)


def _status(exc: MemError) -> int:
    """The HTTP status of a refusal: bad input 400; a file memtool neither reads nor changes (not
    UTF-8, not a regular file, a NUL byte) 422; the system, the index or a provider failing 500."""
    if isinstance(exc, UsageError):
        return 400
    if isinstance(exc, WorkspaceError) and not isinstance(exc, StorageError):
        return 422
    return 500


def _node(name: str, names: dict[str, str]) -> str:
    """The graph's name for an entity a decision names (its page slug where it has one)."""
    return names.get(name) or names.get(entity_key(name)) or entity_key(name)


def _day_param(request: Request, name: str) -> str | None:
    """A YYYY-MM-DD query parameter, or None; anything else is a usage error."""
    value = request.query_params.get(name) or None
    if value is not None:
        try:
            date.fromisoformat(value)
        except ValueError:
            raise UsageError(f"{name} must be a day (YYYY-MM-DD), not {value!r}", "e.g. 2026-11-02") from None
    return value


def _ordinal(day: str) -> int:
    return date.fromisoformat(day).toordinal()


def _daily_paths(mem, heat: dict) -> set[str]:
    """The days of the heat map that have a daily log (a cell opens it)."""
    return {d for d in heat["days"] if (mem.ws.root / mem.ws.daily_path(date.fromisoformat(d))).exists()}


def _as_of_facts(mem, day: str | None) -> list[dict]:
    return mem.recall("", as_of=day, k=30).results if day else []


def _moving_on(target: str) -> str:
    """A page that goes on to `target` (same-site) at once, with a link in case it does not."""
    from html import escape

    return (f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={escape(target)}">'
            f'<title>mem serve</title><p><a href="{escape(target)}">Open your memory</a></p>\n')


class Memo:
    """Answers computed from the index, kept while the index stays the same (its state version):
    entity counts and co-mentions (a pass over every mention) and an entity's newest opinion
    threads. Callers refresh the index first, so a change on disk is seen."""

    def __init__(self, mem):
        self.mem, self.version, self.values = mem, None, {}

    def get(self, key, compute):
        version = self.mem.store.state_version()
        if version != self.version:
            self.version, self.values = version, {}
        if key not in self.values:
            self.values[key] = compute()
        return self.values[key]


class Guarded:
    """ASGI middleware: every HTTP request passes `guard.decide` first; security headers on every answer."""

    HEADERS = [(b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"), (b"x-content-type-options", b"nosniff"),
               (b"cache-control", b"no-store"),
               (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                             b"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
                                             b"form-action 'self'; base-uri 'none'")]

    def __init__(self, app, token: str, port: int):
        self.app, self.token, self.port = app, token, port
        self.cookie = guard.cookie_name(port)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        verdict = guard.decide(scope["method"], request.headers.get("host"), request.headers.get("origin"),
                               request.query_params.get("token"), request.cookies.get(self.cookie), self.token, self.port)
        if verdict.status == 303:
            rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
            target = request.url.path + (f"?{rest}" if rest else "")
            if request.headers.get("sec-fetch-site") == "cross-site":
                # Opened from a file (`mem serve --open`) or another site: the browser would not send the strict
                # cookie on a redirect of that navigation (401); a page that moves on by itself is same-site.
                response: Response = HTMLResponse(_moving_on(target), headers={k.decode(): v.decode() for k, v in self.HEADERS})
            else:
                response = RedirectResponse(target, status_code=303)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
        elif verdict.status != 200:
            response = PlainTextResponse(f"refused: {verdict.reason}\n", status_code=verdict.status)
        else:
            async def secured(message):
                if message["type"] == "http.response.start":
                    message["headers"] = list(message.get("headers", [])) + self.HEADERS
                await send(message)
            return await self.app(scope, receive, secured)
        await response(scope, receive, send)
