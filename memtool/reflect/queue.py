"""The review queue (`mem review`, `mem serve`'s review page, the MCP tool `review`): what
consolidation could not settle, with its evidence, and a person's decisions.

Open items come from the machine-local state (each reflect run adds what it found); decisions are
lines in `bank/decisions.md` (see `decisions`), so they survive a rebuild and reach other machines
through sync. `honour` puts the standing decisions into the local state recall reads (folds and
supersessions); reflect calls it on every run, `decide` right away.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Callable

from memtool import control_chars, retain_log
from memtool.errors import UsageError
from memtool.reflect import decisions
from memtool.reflect.decisions import Decision
from memtool.store.local import LocalState
from memtool.workspace import Workspace

CONNECTIONS = "review_connections"  # local meta key: connections suggested and not yet decided
PROPOSALS = "review_proposals"  # local meta key: a model's typed-fact and observation proposals, not yet decided


def standing(ws: Workspace) -> tuple[dict[str, Decision], list]:
    """item → the decision that stands, and diagnostics for lines that do not parse."""
    found, problems = decisions.parse(ws.read_text(decisions.PAGE))
    return decisions.latest(found), problems


def items(ws: Workspace, local: LocalState, facts_by_key: Callable[[], dict]) -> list[dict]:
    """Every item: open ones first (contradictions, near-duplicates, connections), then decided ones.

    `facts_by_key()` is asked only for items recorded without their evidence (by an older memtool)."""
    decided, _ = standing(ws)
    out: dict[str, dict] = {}
    lookup: dict | None = None
    for kind, a, b, status, reason, detail in local.reviews():
        sides = json.loads(detail) if detail else None
        if sides is None:
            lookup = facts_by_key() if lookup is None else lookup
            if a not in lookup or b not in lookup:
                continue
            sides = {"a": _side(lookup[a]), "b": _side(lookup[b])}
        item = _item(kind, a, b, sides, status if status != "open" else None, reason)
        out[item["id"]] = item
    for c in connections(local):
        item = _item("connection", c["a"], c["b"], {"a": {"name": c["a"]}, "b": {"name": c["b"]}, "facts": c["facts"]})
        out.setdefault(item["id"], item)
    for p in proposals(local):
        item = _item(p["kind"], p["a"]["key"], p["b"]["key"], p)
        out.setdefault(item["id"], item)
    for item_id, d in decided.items():
        b = {"key": d.b, "source": d.b} if d.kind in decisions.PROPOSALS else {"key": d.b}  # b: the daily log
        item = out.get(item_id) or _item(d.kind, d.a, d.b, {"a": {"key": d.a}, "b": b})
        item["status"], item["decision"] = d.action, {"action": d.action, "day": d.day, "note": d.note,
                                                      "line": d.line, "by": "person"}
        out[item_id] = item
    order = {"contradiction": 0, "near-duplicate": 1, "connection": 2, "typed-fact": 3, "observation": 4}
    return sorted(out.values(), key=lambda i: (i["status"] != "open", order[i["kind"]], i["id"]))


def find(all_items: list[dict], item_id: str) -> dict:
    """One item by its id (a unique prefix is enough); a UsageError names what exists."""
    wanted = item_id.strip().lower()
    hits = [i for i in all_items if i["id"] == wanted] or [i for i in all_items if i["id"].startswith(wanted)]
    if len(hits) != 1:
        why = "matches several items" if hits else "is not in the review queue"
        raise UsageError(f"review item '{item_id}' {why}", "mem review list shows the items and their ids")
    return hits[0]


def decide(ws: Workspace, local: LocalState, item: dict, action: str, note: str = "",
           today: date | None = None, text: str | None = None, max_bytes: int | None = None) -> dict:
    """Write a person's decision about `item` to bank/decisions.md (appended under a lock) and put it
    into the local state; returns the decision line and where it landed. Accepting a proposal first
    appends its typed line (or `text`, the person's edit of it) to the daily log it names. A line that
    would push its file past `max_bytes` ([index] max_file_bytes) is refused, nothing written."""
    allowed = decisions.ACTIONS[item["kind"]]
    if action not in allowed:
        raise UsageError(f"'{action}' is not an action for a {item['kind']}", f"choose one of: {', '.join(allowed)}")
    if any(c in note for c in "\r\n\x00"):
        raise UsageError("the note must be one line", "leave out line breaks")
    control_chars.refuse(note, "the note")  # an escape sequence would reach whoever reads bank/decisions.md
    if text is not None and action != "accept":
        raise UsageError("an edited text goes only with accept", "leave out the text, or accept the proposal")
    if item["kind"] in decisions.PROPOSALS:
        return _decide_proposal(ws, local, item, action, note, today or date.today(), text, max_bytes)
    a, b = item["a"], item["b"]
    if action == "supersede" and (b.get("day") or "", b.get("source") or "") < (a.get("day") or "", a.get("source") or ""):
        a, b = b, a  # the older is superseded by the newer
    key = "name" if item["kind"] == "connection" else "key"
    d = Decision((today or date.today()).isoformat(), action, item["kind"], a[key], b[key], note.strip())
    line = decisions.render(d, a.get("source") or a.get("name") or a[key], b.get("source") or b.get("name") or b[key])
    source = _append_decision(ws, line, max_bytes)
    with local.transaction():
        honour(local, {d.item: d}, {a[key]: a, b[key]: b} if key == "key" else {})
    return {"item": d.item, "action": action, "kind": d.kind, "line": line.rstrip("\n"), "source": source}


def _decide_proposal(ws: Workspace, local: LocalState, item: dict, action: str, note: str, today: date,
                     text: str | None, max_bytes: int | None) -> dict:
    """Accept (the typed line appended to its daily log, like `mem retain`) or dismiss a model's proposal."""
    from memtool.reflect import proposals as proposing  # here: `proposals` imports this module

    a, b = item["a"], item["b"]
    d = Decision(today.isoformat(), action, item["kind"], a["key"], b["key"], note.strip())
    written = None
    if action == "accept":
        line, kind = proposing.line_to_write(text if text is not None else b["content"], item)
        if max_bytes is not None:  # the decision must fit as well, before the daily log is written
            _check_decision_fits(ws, decisions.render(d, a.get("source") or a["key"], f"{b['key']}#L{'9' * 9}"),
                                 max_bytes)
        at = retain_log.write(ws, b["key"], line, kind, b.get("day") or today.isoformat(), by="review decide",
                              max_bytes=max_bytes)
        written = {"source": f"{b['key']}#L{at}", "text": line, "kind": kind}
    entry = decisions.render(d, a.get("source") or a["key"], written["source"] if written else b["key"])
    source = _append_decision(ws, entry, max_bytes)
    with local.transaction():
        keep_proposals(local, [], {d.item: d})
    return {"item": d.item, "action": action, "kind": d.kind, "line": entry.rstrip("\n"), "source": source,
            "written": written}


def _check_decision_fits(ws: Workspace, line: str, max_bytes: int) -> None:
    """Refuse (nothing written) a decision line that would push the page past `max_bytes`."""
    try:
        current = ws.read_bytes(decisions.PAGE)
    except FileNotFoundError:
        current = b""
    retain_log.check_file_size(decisions.PAGE, len(current), len(_with_header(current, line)), max_bytes)


def _append_decision(ws: Workspace, line: str, max_bytes: int | None = None) -> str:
    """Append one decision line to the page under its lock; returns `bank/decisions.md#Ln`. `max_bytes`:
    [index] max_file_bytes, which the page may not pass (refused, nothing written)."""
    def plan(current: bytes) -> bytes:
        data = _with_header(current, line)
        if max_bytes is not None:
            retain_log.check_file_size(decisions.PAGE, len(current), len(data), max_bytes)
        return data

    with ws.lock(decisions.PAGE):
        before, _ = ws.append(decisions.PAGE, plan)
    at = (before.count(b"\n") + 1 + (not before.endswith(b"\n"))) if before.strip() else decisions.HEADER.count("\n") + 2
    return f"{decisions.PAGE}#L{at}"


def _with_header(current: bytes, line: str) -> bytes:
    if not current.strip():
        return (decisions.HEADER + "\n" + line).encode()
    return (("" if current.endswith(b"\n") else "\n") + line).encode()


def honour(local: LocalState, decided: dict[str, Decision], by_key: dict) -> None:
    """Put decisions into the local state: a fold folds, a supersession supersedes, keep and dismiss
    undo what rules decided about the pair. Facts no longer in `by_key` are left alone (their text
    changed: a new fact, a new question). Callers hold a transaction."""
    for d in decided.values():
        if d.kind in decisions.PROPOSALS:  # honoured by reflect: never proposed again (see `proposals`)
            continue
        if d.kind == "connection":
            local.decide_pair(d.a, d.b, d.kind, d.action, "person")
            continue
        if d.a not in by_key or d.b not in by_key:
            continue
        local.clear_pair(d.a, d.b)
        if d.action == "fold":
            local.put_folds([(d.b, d.a, None, 0.0, "person")])
        elif d.action == "supersede":
            old, new = by_key[d.a], by_key[d.b]
            local.put_supersede([(d.a, d.b, new.get("day"), "person", d.note or "decided in review",
                                  old.get("source"), old.get("content"), new.get("source"))])
        local.decide_pair(d.a, d.b, d.kind, d.action, "person")


def connections(local: LocalState) -> list[dict]:
    """The connections suggested by reflect runs and not decided yet ({a, b, facts})."""
    return json.loads(local.meta(CONNECTIONS, "[]") or "[]")


def keep_connections(local: LocalState, found: list[dict], decided: dict[str, Decision]) -> None:
    """Remember this run's suggested connections with earlier ones, minus decided ones."""
    merged = {decisions.item_id("connection", c["a"], c["b"]): c for c in connections(local) + found}
    local.set_meta(CONNECTIONS, json.dumps([c for i, c in merged.items() if i not in decided]))


def proposals(local: LocalState) -> list[dict]:
    """A model's proposals waiting for a decision ({kind, a, b}: a the source, b the line to write)."""
    return json.loads(local.meta(PROPOSALS, "[]") or "[]")


def keep_proposals(local: LocalState, found: list[dict], decided: dict[str, Decision],
                   live: set[str] | None = None) -> None:
    """Remember new proposals with earlier ones, minus decided ones (and, given `live`, those whose
    source line is gone: its text changed or it was deleted)."""
    merged = {decisions.item_id(p["kind"], p["a"]["key"], p["b"]["key"]): p for p in proposals(local) + found}
    local.set_meta(PROPOSALS, json.dumps([p for i, p in merged.items() if i not in decided
                                          and (live is None or p["kind"] != "typed-fact" or p["a"]["key"] in live)],
                                         ensure_ascii=False))


def undecided(kind: str, pairs: list, decided: dict[str, Decision]) -> list:
    """The pairs (a, b, …) no person has decided about."""
    return [p for p in pairs if decisions.item_id(kind, p[0], p[1]) not in decided]


def detail(fa: dict, fb: dict, cos: float | None = None, words: float | None = None) -> str:
    """What a review row keeps of its two facts, so the queue shows the evidence without a scan."""
    return json.dumps({"a": _side(fa), "b": _side(fb), "cosine": None if cos is None else round(cos, 3),
                       "words": None if words is None else round(words, 2)}, ensure_ascii=False)


def _side(f: dict) -> dict:
    return {"key": f["key"], "source": f["source"], "content": f["content"], "day": f.get("day"),
            "entities": f.get("entities", [])}


def _item(kind: str, a: str, b: str, sides: dict, status: str | None = None, reason: str | None = None) -> dict:
    item = {"id": decisions.item_id(kind, a, b), "kind": kind, "status": status or "open",
            "actions": list(decisions.ACTIONS[kind]), "a": sides["a"], "b": sides["b"], "decision": None}
    for k in ("cosine", "words", "facts", "model"):
        if sides.get(k) is not None:
            item[k] = sides[k]
    if status and status != "open":  # decided before, by the model (a person's line replaces this below)
        item["decision"] = {"action": status, "by": "model", "note": reason or ""}
    return item
