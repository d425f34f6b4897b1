"""The journal of `mem reflect`: one readable entry per run for `bank/journal.md`, saying what the
run found and did (pages, opinions that moved, suggestions for memory.md, each consolidation phase).
Pure. Sources of a stricter trust tier than the journal's are counted, never quoted or cited.
"""

from __future__ import annotations

from memtool.reflect.pages import BROKEN, CHANGED, MAX_NAME_BYTES, NAME_TAKEN, TOO_LONG, Plan, everything, one_line


def quote(text: str, limit: int) -> str:
    """One line of at most about `limit` characters, cut after a whole word (with …)."""
    line = one_line(text)
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return line[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + "…"


def entry(plan: Plan, stamp: str, seconds: float, dry_run: bool, visible=everything) -> str:
    """A readable record of one run, for `bank/journal.md`; facts whose source is not `visible` (a
    stricter trust tier than the journal's) are counted, never quoted or cited."""
    hidden = 0

    def shown(items: list, *keys: str) -> list:  # a key holds one source or a list of files
        nonlocal hidden
        kept = [x for x in items if all(visible(c) for k in keys for c in ([x[k]] if isinstance(x[k], str) else x[k]))]
        hidden += len(items) - len(kept)
        return kept

    head = f"## {stamp} — reflect" + (" [DRY RUN]" if dry_run else "")
    lines = [head, ""]
    for action, label in (("create", "Created"), ("update", "Updated")):
        pages = [p for p in plan.count(action) if p.path != "bank/opinions.md"]
        entity_pages = [p for p in pages if p.path.startswith("bank/entities/")]
        if entity_pages:
            # plain names: a [[link]] here would make the journal itself a fact about each entity
            lines.append(f"- {label} {len(entity_pages)} entity page(s): " + ", ".join(p.entity for p in entity_pages))
        kinds = [p for p in pages if p not in entity_pages]  # bank/world.md, bank/experience.md: the typed lists
        if kinds:
            lines.append(f"- {label} the generated list in " + ", ".join(f"`{p.path}`" for p in kinds) + ".")
    if any(p.path == "bank/opinions.md" and p.action in ("create", "update") for p in plan.pages):
        lines.append("- Rewrote the generated opinions in `bank/opinions.md`.")
    legal = [p for p in plan.count("skipped") if p.reason.startswith("trust: legal")]
    long_names = [p for p in plan.count("skipped") if p.reason == TOO_LONG]
    broken = [p for p in plan.count("skipped") if p.reason.startswith(BROKEN)]
    changed = [p for p in plan.count("skipped") if p.reason == CHANGED]
    taken = [p for p in plan.count("skipped") if p.reason.startswith(NAME_TAKEN)]
    edited = [p for p in plan.count("skipped") if p not in legal and p not in long_names and p not in broken
              and p not in changed and p not in taken]
    if long_names:
        lines.append(f"- Made no page for {len(long_names)} entit{'y' if len(long_names) == 1 else 'ies'} whose name is "
                     f"too long for a file name (over {MAX_NAME_BYTES} bytes): "
                     + ", ".join(quote(p.entity, 60) for p in long_names))
    if edited:
        lines.append(f"- Left {len(edited)} page(s) alone because their generated block was edited by hand "
                     "(run `mem reflect --overwrite-edits` to regenerate): " + ", ".join(f"`{p.path}`" for p in edited))
    if broken:
        lines.append(f"- Left {len(broken)} page(s) alone because memtool cannot place their generated block (a "
                     "`<!-- memtool:begin/end … -->` line missing or doubled, or the page ends inside an unclosed "
                     "code fence; fix it by hand and the next run writes the block): "
                     + ", ".join(f"`{p.path}`" for p in broken))
    if taken:
        lines.append(f"- Made no page for {len(taken)} entit{'y' if len(taken) == 1 else 'ies'} whose file name another "
                     "entity's page has: " + ", ".join(f"{quote(p.entity, 60)} (`{p.path}`)" for p in taken))
    if changed:
        lines.append(f"- Left {len(changed)} page(s) alone because they were saved while this run went on "
                     "(the next run updates them): " + ", ".join(f"`{p.path}`" for p in changed))
    if legal:
        lines.append(f"- Left {len(legal)} legal page(s) alone, as always (`trust: legal` pages are never modified): "
                     + ", ".join(f"`{p.path}`" for p in legal))
    unchanged = plan.count("unchanged")
    if unchanged:
        lines.append(f"- {len(unchanged)} page(s) already up to date.")
    for m in shown(plan.moves, "source"):
        why = ", ".join(x for x in (f"{m['supporting']} supporting" if m["supporting"] else "",
                                    f"{m['contradicting']} contradicting" if m["contradicting"] else "") if x)
        lines.append(f"- Opinion about {m['entity']} moved {m['from']:.2f} → {m['to']:.2f} ({why or 'new anchor'}): "
                     f"\"{one_line(m['statement'])}\" `{m['source']}`")
    suggestions = shown([x for x in plan.suggestions if x["source"] not in plan.suggested_before], "source")
    still = sum(1 for x in plan.suggestions if x["source"] in plan.suggested_before)
    if still:
        lines.append(f"- {still} earlier suggestion(s) for {plan.core} still apply (`mem reflect --dry-run -v` lists them all).")
    if suggestions:
        lines.append(f"- Suggested for {plan.core} (not written; add them with `mem core append` if they belong there):")
        lines += [f"  - {one_line(s['statement'])} ("
                  + (f"c={s['confidence']:.2f}, " if s["confidence"] is not None else "stated in several notes, ")
                  + f"`{s['source']}`)" for s in suggestions]
    lines += _consolidation_lines(plan.consolidation, shown)
    if plan.held_back:
        lines.append(f"- Kept {plan.held_back} fact(s) off entity pages of a less strict trust tier than their "
                     "source (give a page `trust: private` in its front matter to show private facts there).")
    if hidden:
        lines.append(f"- Left {hidden} item(s) from sources of a stricter trust tier out of this journal.")
    lines.append(f"- Entity pages drew on {plan.facts} facts; the run took {seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def _consolidation_lines(s: dict, shown=lambda items, *keys: items) -> list[str]:
    """The consolidation part of a journal entry (see consolidation.run); `shown(items, *source keys)`
    drops items the journal may not quote."""
    if not s:
        return []
    s = dict(s, strengthened=shown(s["strengthened"], "source"), folded=shown(s["folded"], "kept", "other"),
             superseded=shown(s["superseded"], "old", "new"), review=shown(s["review"], "kept", "other"),
             unclear=shown(s["unclear"], "old", "new"), connections=shown(s["connections"], "files"))
    if s.get("llm"):
        s["llm"] = dict(s["llm"], decided=shown(s["llm"]["decided"], "old", "new"))
    o = s["orient"]
    kinds = ", ".join(f"{n} {k}" for k, n in o["kinds"].items())
    lines = [f"- The memory holds {o['facts']} facts ({kinds}); {o['new']} are new since the last run. "
             f"{s['examined']} were compared for duplicates and contradictions. {o['embedded']} have a vector"
             + (f", {o['not_embedded']} wait for one" if o["not_embedded"] else "")
             + (f". A fact is kept for about {o['average_stability_days']:.0f} days on average before it fades"
                " from ranking (recalling it extends that)." if o["average_stability_days"] is not None else ".")]
    if s["connections"]:
        lines.append("- Connections discovered (suggested, not linked): " + "; ".join(
            f"{c['a']} ↔ {c['b']} ({c['facts']} facts together)" for c in s["connections"][:5]))
    if s["strengthened"]:
        lines.append(f"- Strengthened {len(s['strengthened'])} fact(s) recalled since the last run: " + "; ".join(
            f"\"{quote(x['content'], 60)}\" (now kept for about {x['stability']:.0f} days before it fades) `{x['source']}`"
            for x in s["strengthened"][:5]))
    if s["faded"]:
        lines.append(f"- {s['faded']} fact(s) not recalled since the last run faded a little (never below "
                     "the 14-day floor).")
    if s["folded"]:
        lines.append(f"- Cleaned up: folded {len(s['folded'])} duplicate(s) (recall shows each once, citing every source):")
        lines += [f"  - \"{quote(f['content'], 70)}\" `{f['kept']}` = `{f['other']}`" for f in s["folded"][:10]]
    if s["superseded"]:
        lines.append(f"- Contradictions resolved: {len(s['superseded'])} older fact(s) superseded (still answer --as-of):")
        lines += [f"  - \"{quote(x['old_content'], 60)}\" → \"{quote(x['new_content'], 60)}\" since "
                  f"{x['until']} ({x['why']}) `{x['old']}` → `{x['new']}`" for x in s["superseded"][:10]]
    if s["review"] or s["unclear"]:
        lines.append(f"- For review: {len(s['review'])} near-duplicate pair(s) in {len(s.get('clusters', []))} "
                     f"cluster(s), {len(s['unclear'])} possible contradiction(s):")
        lines += [f"  - `{r['kept']}` ~ `{r['other']}`" for r in s["review"][:5]]
        lines += [f"  - `{u['old']}` vs `{u['new']}`" for u in s["unclear"][:5]]
    llm = s.get("llm")
    if llm:
        lines.append(f"- Model review ({llm['model']}): {llm['asked']} asked, {len(llm['decided'])} decided, "
                     f"{llm['rejected']} malformed answer(s) rejected, {llm['withheld']} withheld by trust tier.")
        lines += [f"  - {d['decision']}: {d['narrative'] or d['reason']} (`{d['old']}`, `{d['new']}`)"
                  for d in llm["decided"][:10]]
        if llm["warning"]:
            lines.append(f"  - {llm['warning']}")
    p = s.get("proposals")
    if p:  # counts only: the proposed text waits in the review queue, never in the journal
        lines.append(f"- Proposals ({p['model']}): {p['proposed']} wait in the review queue (mem review)"
                     + (f", among them the observation of {p['observation']}" if p["observation"] else "")
                     + f"; {p['asked']} asked, {p['rejected']} malformed answer(s) rejected, "
                     f"{p['withheld']} withheld by trust tier.")
        if p["warning"]:
            lines.append(f"  - {p['warning']}")
    if s["skipped_legal"]:
        lines.append(f"- Skipped (legal: {s['skipped_legal']}): never folded, superseded or sent to a model.")
    if s["stopped_at"]:
        lines.append(f"- Stopped at the time limit during {s['stopped_at']}; the rest waits for the next run.")
    return lines
