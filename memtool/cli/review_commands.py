"""`mem review list|show|decide`: the consolidation queue from the shell (and how it is drawn)."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import typer

from memtool.cli import render
from memtool.cli.call import memory
from memtool.cli.common import JsonOpt

review_app = typer.Typer(help="The review queue: what mem reflect could not settle (near-duplicates, unclear "
                              "contradictions, suggested connections) and a model's proposals (typed facts, a "
                              "week's observation); decisions are written to bank/decisions.md.",
                         no_args_is_help=True)


@review_app.command("list")
def review_list(
    status: str = typer.Option("open", "--status", help="open, decided or all."),
    json_: bool = JsonOpt,
) -> None:
    """List review items with their ids, open ones first.

    Example: mem review list --status all
    """
    data = memory("none").review_list(status)
    for w in data["warnings"]:
        render.warn(w)
    if json_:
        render.emit_json(data)
        return
    if not data["items"]:
        render.err.print(f"no {'' if status == 'all' else status + ' '}review items ({data['open']} open, {data['decided']} decided)")
    for item in data["items"]:
        render.out.print(_one_line(item))


@review_app.command("show")
def review_show(item: str = typer.Argument(..., help="An item id from mem review list (a unique prefix works)."),
                json_: bool = JsonOpt) -> None:
    """Show one review item with its evidence side by side and the actions it allows.

    Example: mem review show r-3f2a
    """
    data = memory("none").review_show(item)
    if json_:
        render.emit_json(data)
        return
    render.out.print(_one_line(data))
    for label, side in (("A", data["a"]), ("B", data["b"])):
        text = side.get("content") or side.get("name") or side.get("key")
        where = f"  ({side['source']})" if side.get("source") else ""
        render.out.print(f"  {label}: {render.escape(text)}{render.escape(where)}")
    for f in data.get("evidence", []):
        render.out.print(f"  - {render.escape(f['content'])}  ({f['source']})")
    render.out.print(f"  actions: {', '.join(data['actions'])}")


@review_app.command("decide")
def review_decide(
    item: str = typer.Argument(..., help="An item id (a unique prefix works)."),
    action: str = typer.Argument(..., help="fold, keep, supersede, dismiss (pairs); link, dismiss (connections); "
                                             "accept, dismiss (proposals)."),
    note: str = typer.Option("", "--note", help="Why (one line, kept in the decision)."),
    text: str = typer.Option(None, "--text", help="accept only: the typed line to write instead of the proposed one."),
    json_: bool = JsonOpt,
) -> None:
    """Decide a review item: one line appended to bank/decisions.md, honoured by recall and mem reflect.
    Accepting a proposal also appends its typed line to the daily log it came from.

    Example: mem review decide r-3f2a fold --note "same trip"
    """
    data = memory("none").review_decide(item, action, note, text)
    if json_:
        render.emit_json(data)
        return
    if data.get("written"):
        render.out.print(render.escape(f"wrote {data['written']['source']}: {data['written']['text']}"))
    render.out.print(f"{data['action']} {data['item']} → {data['source']}")


def _one_line(item: dict) -> str:
    def side(s: dict) -> str:
        return s.get("source") or s.get("name") or s.get("key", "?")[:8]

    status = item["status"] if item["status"] == "open" else f"decided: {item['status']}"
    if item["kind"] in ("typed-fact", "observation"):  # a model's proposal: its source, and the line it would write
        return render.escape(f"{item['id']}  {item['kind']:<14} {side(item['a'])} → "
                             f"{item['b'].get('content') or side(item['b'])}  [{status}]")
    return render.escape(f"{item['id']}  {item['kind']:<14} {side(item['a'])} ~ {side(item['b'])}  [{status}]")
