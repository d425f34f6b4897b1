"""Proposals of `mem reflect` (`[reflect] propose_typed`): a local model suggests a typed fact
(W/B/O/S) for untyped log lines, and once a week an `S` observation over the week's notes. Each
proposal waits in the review queue; nothing reaches the Markdown until a person accepts it there
(`queue.decide` writes the line, like `mem retain`, and the decision to bank/decisions.md).

Behind the trust gate, failing closed: legal lines are never candidates, a line goes to the model
only when its tier allows the model's host (private text: loopback only), and a week's observation
draws only on notes the daily log it is written to may hold. Each run sends at most
`[reflect] propose_lines` lines it has not examined before (the examined keys are machine-local);
a line or week a person decided about is never proposed again.
"""

from __future__ import annotations

import json
from datetime import date, timedelta

from memtool import control_chars, trust
from memtool.errors import ProviderUnavailable, UsageError
from memtool.llm import json_object
from memtool.reflect import decisions, queue
from memtool.reflect.decisions import Decision
from memtool.reflect.deadline import Deadline
from memtool.reflect.sources import Sources
from memtool.retain import BulletError, parse_line

EXAMINED = "proposals_examined"  # local meta key: log lines (keys) and weeks (week:2026-W48) already asked about
MIN_WORDS = 3  # shorter log lines ("ok", "call Anna") hold no fact worth a prompt
MAX_CHARS = 400  # a proposed line longer than this is not one fact
WEEK_NOTES = 40  # notes of a week sent for its observation at most
TYPED_SYSTEM = (
    "You read one note from a personal log and turn it into one typed fact, or none. Types: W (world: an "
    "objective fact), B (experience: something the writer did, first person), O (opinion: a preference or "
    "judgement; write O(c=0.7) with a confidence from 0 to 1), S (observation). Format: 'TYPE @Entity: text', "
    "e.g. 'W @Peter: Moved to Lisbon in May.' (the @Entity part is optional). Answer with one JSON object only: "
    "{\"fact\": \"W @Peter: Moved to Lisbon in May.\"}, or {\"fact\": null} when the note holds no fact worth keeping.")
WEEK_SYSTEM = (
    "You read the notes of one week from a personal log and write one short observation about the week "
    "(one sentence, at most 40 words, only what the notes say). Answer with one JSON object only: "
    "{\"observation\": \"S: Three sessions this week were about the sync protocol.\"}")


# --- pure -------------------------------------------------------------------------------------


def parse_typed(answer: str) -> str | None:
    """The model's answer to a typed-fact prompt: a typed line, "" for 'no fact', None when the
    answer is not exactly what was asked for."""
    data = json_object(answer)
    if data is None or "fact" not in data:
        return None
    return "" if data["fact"] is None else _typed_line(data["fact"])


def parse_observation(answer: str) -> str | None:
    """The model's `S:` line for a week, or None when the answer is not one."""
    data = json_object(answer)
    line = _typed_line(data.get("observation")) if data else None
    return line if line and parse_line(line).kind == "observation" else None


def _typed_line(value) -> str | None:
    """`value` as one valid typed Retain line (W/B/O/S), else None."""
    if not isinstance(value, str):
        return None
    line = value.strip()
    line = line[2:].strip() if line.startswith(("- ", "* ")) else line
    if not line or len(line) > MAX_CHARS:
        return None
    try:
        control_chars.refuse(line)  # line breaks too
        return line if parse_line(line).kind != "log" else None
    except (BulletError, UsageError):
        return None


def line_to_write(text: str, item: dict) -> tuple[str, str]:
    """The line accepting `item` writes: `text` (the proposal, or a person's edit of it) checked as a
    typed Retain line, citing its source; (line, kind). A UsageError says what is wrong."""
    line = text.strip()
    line = line[2:].strip() if line.startswith(("- ", "* ")) else line
    if not line or "\n" in line or "\r" in line:
        raise UsageError("the accepted text must be one non-empty line", "e.g. W @Peter: Moved to Lisbon in May.")
    control_chars.refuse(line, "the accepted text")
    try:
        parsed = parse_line(line)
    except BulletError as exc:
        raise UsageError(f"not a valid typed line: {exc}", 'format: "W|B|O|S[(c=0..1)] [@Entity…]: text"') from None
    if parsed.kind == "log":
        raise UsageError("an accepted proposal is a typed fact", "start it with W, B, O or S, e.g. 'W @Peter: …'")
    cite = ("from", item["a"].get("source") or item["a"]["key"]) if item["kind"] == "typed-fact" \
        else ("week", item["a"]["key"])
    if f"[{cite[0]}::" not in line:
        line += f" [{cite[0]}:: {cite[1]}]"
    return line, parsed.kind


def week_before(today: date) -> tuple[str, date, date]:
    """The last complete ISO week before `today`'s: (label like 2026-W48, Monday, Sunday)."""
    monday = today - timedelta(days=today.weekday() + 7)
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}", monday, monday + timedelta(days=6)


def candidates(facts: list[dict], examined: set[str], decided: dict[str, Decision], pending: set[str]) -> list[dict]:
    """Untyped lines of daily logs worth a proposal, newest first: not legal, not asked about before
    on this machine, not waiting in the queue, and no person decided about them."""
    out = [f for f in facts if f["kind"] == "log" and f["day"] and f["path"].startswith("memory/")
           and f["trust"] != trust.LEGAL
           and len(f["content"].split()) >= MIN_WORDS and f["key"] not in examined
           and decisions.item_id("typed-fact", f["key"], f["path"]) not in decided
           and decisions.item_id("typed-fact", f["key"], f["path"]) not in pending]
    return sorted(out, key=lambda f: (f["day"], f["source"]), reverse=True)


# --- a run ------------------------------------------------------------------------------------


def run(src: Sources, facts: list[dict], decided: dict[str, Decision], deadline: Deadline,
        today: date | None = None) -> dict:
    """Ask the model for this run's proposals and keep them in the queue; returns the report
    (model, asked, proposed, observation, rejected, withheld, warning)."""
    from memtool.llm import OllamaChat

    cfg, local = src.config, src.local
    llm = OllamaChat(cfg.llm_model, timeout=cfg.llm_timeout, work_providers=cfg.work_providers, waiting=src.model_wait)
    report = {"model": llm.model, "host": trust.shown(llm.host), "local": llm.local, "asked": 0, "proposed": 0,
              "observation": None, "rejected": 0, "withheld": 0, "warning": None}
    examined = set(json.loads(local.meta(EXAMINED, "[]") or "[]"))
    pending = {decisions.item_id(p["kind"], p["a"]["key"], p["b"]["key"]) for p in queue.proposals(local)}
    tier_of = src.tier_lookup()
    found: list[dict] = []
    for f in candidates(facts, examined, decided, pending):
        if report["asked"] >= cfg.reflect_propose_lines or report["warning"] or deadline.passed("proposals"):
            break
        tier = trust.text_tier(f["trust"], f["content"], tier_of)
        if not llm.destination.allows(tier):
            report["withheld"] += 1
            continue
        answer = _ask(llm, report, TYPED_SYSTEM, f"Note ({f['day']}): {f['content']}", tier)
        if answer is None:
            break
        parsed = parse_typed(answer)
        examined.add(f["key"])  # a malformed answer is not asked again either: the next run moves on
        if parsed is None:
            report["rejected"] += 1
        elif parsed:
            found.append(_typed_fact(f, parsed, llm.model))
    if not report["warning"] and not deadline.passed("proposals"):
        weeks = {d.a for d in decided.values() if d.kind == "observation"} \
            | {p["a"]["key"] for p in queue.proposals(local) if p["kind"] == "observation"}
        found += _observation(llm, report, facts, examined, weeks, tier_of, today or date.today())
    report["proposed"] = len(found)
    live = {f["key"] for f in facts}
    with local.transaction():
        queue.keep_proposals(local, found, decided, live)
        local.set_meta(EXAMINED, json.dumps(sorted(k for k in examined if k in live or k.startswith("week:"))))
    return report


def _ask(llm, report: dict, system: str, prompt: str, tier: str) -> str | None:
    """The model's answer, or None (and the report's warning) when it cannot give one."""
    report["asked"] += 1
    try:
        return llm.chat(system, prompt, tier=tier)
    except ProviderUnavailable as exc:
        report["asked"] -= 1
        report["warning"] = f"proposals: {exc.message}; nothing was proposed for the rest"
        return None


def _typed_fact(f: dict, line: str, model: str) -> dict:
    return {"kind": "typed-fact", "model": model,
            "a": {"key": f["key"], "source": f["source"], "content": f["content"], "day": f["day"]},
            "b": {"key": f["path"], "source": f["path"], "content": line, "day": f["day"]}}


def _observation(llm, report: dict, facts: list[dict], examined: set[str], settled: set[str], tier_of,
                 today: date) -> list[dict]:
    """At most one proposal: the `S` observation of the last complete week, asked for once."""
    label, monday, sunday = week_before(today)
    week = sorted((f for f in facts if f["day"] and monday.isoformat() <= f["day"] <= sunday.isoformat()
                   and f["path"].startswith("memory/") and f["trust"] != trust.LEGAL),
                  key=lambda f: (f["day"], f["source"]))
    if not week or f"week:{label}" in examined or label in settled:  # asked here, decided, or waiting
        return []
    target = week[-1]  # the week's last daily log holds its observation
    limit = trust.rank(tier_of(target["path"]))
    notes = []  # (fact, its tier): only what the target log may hold and the model's host may receive
    for f in week:
        tier = trust.text_tier(f["trust"], f["content"], tier_of)
        if trust.rank(tier) <= limit and llm.destination.allows(tier):
            notes.append((f, tier))
        else:
            report["withheld"] += 1
    if not notes:
        return []
    tier = trust.strictest(t for _, t in notes[-WEEK_NOTES:])
    notes = [f for f, _ in notes[-WEEK_NOTES:]]
    prompt = "\n".join(f"- ({f['day']}, {f['kind']}) {' '.join(f['content'].split())}" for f in notes)
    answer = _ask(llm, report, WEEK_SYSTEM, f"The notes of {label} ({monday} to {sunday}):\n{prompt}", tier)
    if answer is None:
        return []
    examined.add(f"week:{label}")
    line = parse_observation(answer)
    if line is None:
        report["rejected"] += 1
        return []
    report["observation"] = label
    return [{"kind": "observation", "model": llm.model,
             "a": {"key": label, "content": f"{len(notes)} notes from {monday} to {sunday}", "day": sunday.isoformat(),
                   "sources": [f["source"] for f in notes]},
             "b": {"key": target["path"], "source": target["path"], "content": line, "day": target["day"]}}]
