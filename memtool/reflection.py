"""Running `mem reflect` and building opinion threads against a `Memory`: the effects around the
pure planning in `reflect.py` and `opinions.py` (reads through the facade, a lock, atomic writes,
backups, the journal, and the machine-local state of the last run)."""

from __future__ import annotations

import time



def opinion_threads(mem, entity: str | None = None):
    """Every opinion thread (see `memtool.opinions`), optionally only those about one entity."""
    from memtool import opinions
    from memtool.analyzer import STOPWORDS, index_terms

    def terms(text: str) -> set[str]:
        return {t for t in index_terms(text).split() if t not in STOPWORDS and not t.isdigit()}

    mem.refresh()
    ops = mem.list_facts(kinds=["opinion"], entities=[entity] if entity else [])
    for f in ops:
        f["entity"] = f["entities"][0] if f["entities"] else "general"
    ops.reverse()  # oldest first
    others = []
    for name in sorted({f["entity"] for f in ops if f["entity"] != "general"}):
        for f in mem.list_facts(entities=[name]):
            if f["kind"] != "opinion" and not f["source"].startswith("bank/"):
                others.append(f | {"entity": name})
    return opinions.build(ops, others, terms)


def run(mem, dry_run: bool = False, force: bool = False, since: str | None = None) -> dict:
    """Write entity pages (generated blocks only), opinions and a journal entry; `dry_run` writes nothing.

    `since` limits the run to entities with facts from that time on (their pages still list everything).
    """
    from memtool import reflect

    started = time.perf_counter()
    with mem.ws.lock("reflect", busy="another mem reflect is running in this workspace"):
        mem.refresh()
        plan = reflect.Plan()
        threads = opinion_threads(mem)
        confidences = {src: o.confidence for o in threads for src in [o.source, *o.history]}
        recent = None
        if since:
            recent = {e for f in mem.list_facts(since=since) for e in f["entities"]}
        for name, _count in mem.store.entity_counts(reflect.MIN_FACTS):
            if recent is not None and name not in recent:
                continue
            page = mem.store.entity_page(name)
            path = page["path"] if page else f"bank/entities/{reflect.slug_for(name)}.md"
            entity = page["entity"] if page else name
            facts = [f for f in mem.list_facts(entities=[name], k=500)
                     if f["source"].split("#")[0] not in (path, "bank/journal.md")]
            if len(facts) < reflect.MIN_FACTS:
                continue
            plan.facts += len(facts)
            current = mem.ws.read_text(path) if (mem.ws.root / path).exists() else None
            plan.pages.append(reflect.plan_page(entity, path, current,
                                                reflect.page_body(entity, facts, confidences), force))
        state = _load_state(mem)
        moves = reflect.opinion_moves(threads, state.get("opinions", {}))
        current = mem.ws.read_text("bank/opinions.md") if (mem.ws.root / "bank/opinions.md").exists() else None
        plan.pages.append(reflect.plan_page("Opinions", "bank/opinions.md", current, reflect.opinions_body(threads),
                                            force, block=reflect.OPINIONS_BLOCK))
        plan.moves = moves
        world = mem.list_facts(kinds=["world"])
        plan.suggestions = reflect.core_suggestions(threads, world, mem.ws.read_text("memory.md"))
        seconds = time.perf_counter() - started
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        entry = reflect.journal_entry(plan, stamp, seconds, dry_run)
        changed = [p for p in plan.pages if p.action in ("create", "update")]
        if not dry_run and (changed or moves):
            _save_state(mem, {"opinions": {o.key: round(o.confidence, 3) for o in threads}})
        if not dry_run and changed:
            for p in changed:
                if p.action == "update":
                    mem.ws.backup(p.path)
                mem.ws.write_atomic(p.path, p.text)
            with mem.ws.lock("bank/journal.md"):
                journal = mem.ws.read_text("bank/journal.md") or "# Journal\n\nWhat each `mem reflect` run found and did.\n"
                sep = "\n" if journal.endswith("\n") else "\n\n"
                mem.ws.write_atomic("bank/journal.md", journal + sep + entry)
    return {"dry_run": dry_run, "changed": bool(changed), "entry": entry, "opinion_moves": moves,
            "suggestions": plan.suggestions,
            "pages": [{"entity": p.entity, "path": p.path, "action": p.action, "reason": p.reason}
                      for p in plan.pages],
            "seconds": round(time.perf_counter() - started, 3)}

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
