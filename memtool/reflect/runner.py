"""Running `mem reflect` and building opinion threads against a `Memory`: the effects around the
pure planning in `reflect.py` and `opinions.py` (reads through the facade, a lock, atomic writes,
backups, the journal, and the machine-local state of the last run)."""

from __future__ import annotations

import json
import time



def opinion_threads(mem, entity: str | None = None):
    """Every opinion thread (see `memtool.opinions`), optionally only those about one entity.

    Every opinion counts; evidence is read from the newest MAX_K facts about each entity. Rows come
    straight from the index, with the terms it analysed when indexing."""
    from memtool.reflect import opinions
    from memtool.analyzer import STOPWORDS
    from memtool.recall import MAX_K, source, timestamp
    from memtool.store import Filters

    stored: dict[str, str] = {}

    def light(row: dict, name: str | None = None) -> dict:
        stored[row["content"]] = row["terms"] or ""
        return {"kind": row["kind"], "content": row["content"], "timestamp": timestamp(row),
                "source": source(row["path"], row["line_start"], row["line_end"]), "confidence": row["confidence"],
                "entity": name, "mentions": json.loads(row["entities"] or "[]")}

    def terms(text: str) -> set[str]:
        return {t for t in stored[text].split() if t not in STOPWORDS and not t.isdigit()}

    mem.refresh()
    store = mem.store
    rows = store.opinion_rows(Filters(entities=[store.entity_match(entity)] if entity else []))
    ops = [light(r) for r in rows]
    canonical = store.canonical_names({f["mentions"][0] for f in ops if f["mentions"]})
    for f in ops:
        f["entity"] = canonical.get(f["mentions"][0], f["mentions"][0]) if f["mentions"] else "general"
    ops.reverse()  # oldest first
    names = sorted({f["entity"] for f in ops if f["entity"] != "general"})
    others = [light(r, r["name"]) for r in store.evidence_rows({n: store.entity_keys(n) for n in names}, MAX_K)]
    return opinions.build(ops, others, terms)


def run(mem, dry_run: bool = False, force: bool = False, since: str | None = None,
        overwrite_edits: bool = False, review: bool | None = None, time_limit: float | None = None) -> dict:
    """One reflect run: consolidation phases, then entity pages (generated blocks only), opinions and a
    journal entry; `dry_run` writes nothing.

    Gates: unless `force`, a run does work only if `[reflect] min_hours` passed since the last one and
    at least `min_new_facts` new facts arrived. `since` limits pages to entities with facts from then on.
    """
    from memtool import trust
    from memtool.reflect import consolidation as sleep, pages as reflect

    started = time.perf_counter()
    cfg = mem.config
    tier_of = mem.tier_lookup()

    def fits(page: str):
        """Whether a source may be shown on `page`: derived text never holds a stricter tier than its page."""
        limit = trust.rank(tier_of(page))
        return lambda source: trust.rank(tier_of(source.split("#")[0])) <= limit

    deadline = sleep.Deadline(cfg.reflect_time_limit if time_limit is None else time_limit)
    with mem.ws.lock("reflect", busy="another mem reflect is running in this workspace"):
        mem.refresh()
        state = _load_state(mem)
        gate = None if force else _gate(mem, state, cfg)
        if gate:
            return {"dry_run": dry_run, "changed": False, "gated": gate, "entry": None, "opinion_moves": [],
                    "suggestions": [], "pages": [], "seconds": round(time.perf_counter() - started, 3)}
        consolidation = sleep.run(mem, deadline=deadline, dry_run=dry_run,
                                  review=cfg.reflect_review if review is None else review)
        plan = reflect.Plan(sleep=consolidation)
        threads = opinion_threads(mem)
        confidences = {o.source: o.confidence for o in threads}  # an older bullet keeps its own written c
        recent = None
        if since:
            recent = {e for f in mem.list_facts(since=since) for e in f["entities"]}
        for name, _count in mem.store.entity_counts(reflect.MIN_FACTS):
            if recent is not None and name not in recent:
                continue
            if deadline.passed("entity pages"):
                break
            page = mem.store.entity_page(name)
            path = page["path"] if page else f"bank/entities/{reflect.slug_for(name)}.md"
            entity = page["entity"] if page else name
            if tier_of(path) == "legal":
                plan.pages.append(reflect.PagePlan(entity, path, "skipped", reason="trust: legal (never modified)"))
                continue
            facts = [f for f in mem.list_facts(entities=[name], k=500)
                     if f["source"].split("#")[0] not in (path, "bank/journal.md")]
            visible = fits(path)
            shown = [f for f in facts if visible(f["source"])]
            plan.held_back += len(facts) - len(shown)
            facts = shown
            if len(facts) < reflect.MIN_FACTS:
                continue
            plan.facts += len(facts)
            current = mem.ws.read_text(path) if (mem.ws.root / path).exists() else None
            plan.pages.append(reflect.plan_page(entity, path, current,
                                                reflect.page_body(entity, facts, confidences, path), overwrite_edits))
        moves = reflect.opinion_moves(threads, state.get("opinions", {}))
        current = mem.ws.read_text("bank/opinions.md") if (mem.ws.root / "bank/opinions.md").exists() else None
        body = reflect.opinions_body(threads, fits("bank/opinions.md"))
        plan.pages.append(reflect.plan_page("Opinions", "bank/opinions.md", current, body, overwrite_edits,
                                            block=reflect.OPINIONS_BLOCK))
        plan.moves = moves
        world = mem.list_facts(kinds=["world"])
        plan.suggestions = reflect.core_suggestions(threads, world, mem.ws.read_text("memory.md"))
        plan.suggested_before = set(state.get("suggested", []))
        seconds = time.perf_counter() - started
        stamp = time.strftime("%Y-%m-%d %H:%M %Z (UTC%z)")  # local time, the zone said
        entry = reflect.journal_entry(plan, stamp, seconds, dry_run, fits("bank/journal.md"))
        changed = [p for p in plan.pages if p.action in ("create", "update")]
        found = any(consolidation[k] for k in ("folded", "superseded", "review", "unclear", "connections",
                                                "strengthened")) or consolidation["faded"]
        if not dry_run:
            _save_state(mem, {"opinions": {o.key: round(o.confidence, 3) for o in threads}, "last_run": time.time(),
                              "suggested": sorted(plan.suggested_before | {x["source"] for x in plan.suggestions})})
        if not dry_run and (changed or found):
            for p in changed:
                if p.action == "update":
                    mem.ws.backup(p.path)
                mem.ws.write_atomic(p.path, p.text)
            with mem.ws.lock("bank/journal.md"):
                journal = mem.ws.read_text("bank/journal.md") or "# Journal\n\nWhat each `mem reflect` run found and did.\n"
                sep = "\n" if journal.endswith("\n") else "\n\n"
                mem.ws.write_atomic("bank/journal.md", journal + sep + entry)
    return {"dry_run": dry_run, "changed": bool(changed or found), "entry": entry, "opinion_moves": moves,
            "suggestions": plan.suggestions, "consolidation": consolidation,
            "pages": [{"entity": p.entity, "path": p.path, "action": p.action, "reason": p.reason}
                      for p in plan.pages],
            "seconds": round(time.perf_counter() - started, 3)}


def _gate(mem, state: dict, cfg) -> str | None:
    """Why this run should not do work yet (None: it should)."""
    last = state.get("last_run")
    if last is not None:
        hours = (time.time() - last) / 3600
        if hours < cfg.reflect_min_hours:
            return f"the last run was {hours:.1f} h ago (runs need {cfg.reflect_min_hours:g} h between them)"
    if cfg.reflect_min_new:
        from memtool.store.local import fact_key

        new = len(mem.local.unseen([fact_key(path, content) for path, content in mem.store.fact_texts()]))
        if new < cfg.reflect_min_new and last is not None:
            return f"{new} new fact(s) since the last run (runs need {cfg.reflect_min_new})"
    return None


def _load_state(mem) -> dict:
    """What the last reflect run saw (machine-local, under .memory/; losing it only loses 'from' values)."""
    import json

    try:
        return json.loads((mem.ws.state_dir / "reflect-state.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}

def _save_state(mem, state: dict) -> None:
    import json

    mem.ws.write_atomic(".memory/reflect-state.json", json.dumps(state, indent=1, sort_keys=True))
