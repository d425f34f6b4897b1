"""The optional model review of `mem reflect --review`: what the consolidation rules could not decide
(near-duplicates, possible contradictions) goes to a local model, one pair per prompt, behind the
trust gate (legal text never, private text only to a loopback server). A decision is applied to the
machine-local state; a malformed answer is rejected and counted, an unreachable model leaves the
rule-based results standing."""

from __future__ import annotations

from memtool import control_chars, trust
from memtool.errors import ProviderUnavailable
from memtool.llm import OllamaChat, json_object
from memtool.reflect.deadline import Deadline
from memtool.reflect.sources import Sources
from memtool.store.local import LocalState

LLM_ITEMS = 20  # review items sent to the model per run at most
SYSTEM = ("You review a personal memory. For two notes, decide: 'merge' (they state the same fact), "
          "'supersede' (the newer note replaces the older: the fact changed), or 'keep_both' (different facts). "
          "Answer with one JSON object only: {\"decision\": \"merge|supersede|keep_both\", "
          "\"reason\": \"one line\", \"narrative\": \"one sentence for a journal\"}.")
DECISIONS = ("merge", "supersede", "keep_both")


def parse_decision(text: str) -> dict | None:
    """The model's JSON answer, validated; None when it is not exactly what was asked for."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").split("\n", 1)[-1] if "\n" in body else ""
    data = json_object(body)
    if data is None or data.get("decision") not in DECISIONS or not isinstance(data.get("reason"), str):
        return None
    narrative = data.get("narrative")
    return {"decision": data["decision"], "reason": _one_line(data["reason"])[:300],
            "narrative": _one_line(narrative)[:400] if isinstance(narrative, str) else ""}


def _one_line(text: str) -> str:
    """A model's text as one journal line: line breaks folded (a note the model read could have it write
    headings and bullets into bank/journal.md), control characters shown as escapes."""
    return control_chars.visible(" ".join(text.split()))


def ask(src: Sources, by_key: dict, near: list, unclear: list, deadline: Deadline) -> tuple[dict, list]:
    """Send this run's open items (and those left open by earlier runs) to the local model; returns the
    report of the review and its decisions (kind, older key, newer key, decision, reason)."""
    cfg = src.config
    llm = OllamaChat(cfg.llm_model, timeout=cfg.llm_timeout, work_providers=cfg.work_providers, waiting=src.model_wait)
    tier_of = src.tier_lookup()
    out = {"model": llm.model, "host": trust.shown(llm.host), "local": llm.local, "asked": 0, "decided": [], "rejected": 0,
           "withheld": 0, "warning": None}
    decisions = []
    items = [("near-duplicate", a, b) for a, b, *_ in near] + [("contradiction", o, n) for o, n in unclear]
    for kind, a, b in src.local.open_reviews():
        if a in by_key and b in by_key and (kind, a, b) not in items:
            items.append((kind, a, b))
    for kind, a, b in items[:LLM_ITEMS]:
        fa, fb = by_key[a], by_key[b]
        older, newer = sorted((fa, fb), key=lambda f: (f["day"] or "", f["source"]))
        prompt = (f"Older note ({older['day'] or 'undated'}, {older['source']}): {older['content']}\n"
                  f"Newer note ({newer['day'] or 'undated'}, {newer['source']}): {newer['content']}\n"
                  f"Rules flagged them as a possible {kind}.")
        tier = trust.text_tier(trust.strictest((fa["trust"], fb["trust"])), prompt, tier_of)
        if not llm.destination.allows(tier):
            out["withheld"] += 1
            continue
        if deadline.passed("review"):
            break
        out["asked"] += 1
        try:
            answer = llm.chat(SYSTEM, prompt, tier=tier)
        except ProviderUnavailable as exc:
            out["warning"] = f"{exc.message}; the rule-based results stand"
            break
        parsed = parse_decision(answer)
        if parsed is None:
            out["rejected"] += 1
            continue
        decisions.append((kind, older["key"], newer["key"], parsed["decision"], parsed["reason"]))
        out["decided"].append({"kind": kind, "old": older["source"], "new": newer["source"], **parsed})
    return out, decisions


def apply_decision(local: LocalState, by_key: dict, kind: str, older: str, newer: str, decision: str,
                   reason: str) -> None:
    """Record the model's decision about one pair (a merge folds, a supersede replaces)."""
    if decision == "merge":
        local.put_folds([(newer, older, None, 0.0, "model")])
    elif decision == "supersede":
        n = by_key[newer]
        local.put_supersede([(older, newer, n["day"], "model", reason, by_key[older]["source"],
                              by_key[older]["content"], n["source"])])
    local.decide_review(older, newer, kind, decision, reason)
