"""Running `mem reflect`, and reading opinion threads from the index: the effects around the pure
planning in `pages.py`, `journal.py` and `opinions.py` (a lock, the gates, atomic writes, backups,
the journal, and the machine-local state of the last run). Collaborators come in as `Sources`."""

from __future__ import annotations

import json
import time
from typing import Callable

from memtool import collector, trust
from memtool.analyzer import STOPWORDS
from memtool.recall import MAX_K, source, timestamp
from memtool.recall.results import time_of
from memtool.safe_writes import FileChanged
from memtool.reflect import cache, consolidation, evidence as kept_evidence, journal, listing, opinions, pages
from memtool.reflect import windows as kept_windows
from memtool.reflect.deadline import Deadline
from memtool.reflect.sources import Sources
from memtool.store import Filters, Store, entity_key
from memtool.store.local import fact_key
from memtool.workspace import Workspace

JOURNAL = "bank/journal.md"
STATE = "reflect-state.json"  # under .memory/: what the last run saw
LEGAL_PAGE = "trust: legal (never modified)"
LISTED_AT_ONCE = 64  # entity pages whose facts are read in one pass


def opinion_threads(store: Store, entity: str | None = None, *, refresh: Callable[[], object],
                    tier_of: Callable[[str], str],
                    reuse: Callable[[str, list[str], list[opinions.Opinion]], bool] | None = None,
                    pick: Callable[[list[opinions.Opinion]], list[opinions.Opinion]] | None = None,
                    filed: bool = False, known: opinions.Known | None = None,
                    weighed: dict | None = None,
                    windows: kept_evidence.Windows | None = None) -> list[opinions.Opinion]:
    """Every opinion thread (see `opinions`), optionally only those about one entity, after `refresh`;
    with `pick`, only the threads it picks (evidence is then read for their entities alone). With
    `filed`, only the threads filed under `entity` (its opinions, read by mention): the same threads
    as in the whole listing (a thread's bullets are one entity's), without grouping the opinions of
    others that merely name it (at 10^6 facts, 2,509 opinions name `Hiroshi` and 1,058 are his).

    Every opinion counts; evidence is read from the newest MAX_K facts about each entity. Rows come
    straight from the index, with the terms it analysed when indexing. `reuse(name, keys, threads)`
    may fill in an entity's evidence from an earlier run (True): its facts are then not read; `known`
    holds an earlier run's verdicts (see `opinions.weigh`), and `weighed` receives this run's, per
    entity (those `reuse` filled in keep theirs from `known`). With `windows`, an entity whose
    verdicts `known` holds takes its evidence from its kept window brought up to date where it can
    (see `memtool.reflect.evidence`); `windows.now` receives every weighed entity's window.

    Evidence is drawn only from files whose tier (`tier_of`: path → tier) is no stricter than normal:
    an opinion's confidence and counts show on pages, in answers to agents and in synced files, and
    work, private or legal text must not move them (fails closed: a file that cannot be read is legal)."""
    stored: dict[str, str] = {}

    def light(row: dict) -> dict:
        stored[row["content"]] = row["terms"] or ""
        return {"kind": row["kind"], "content": row["content"], "timestamp": timestamp(row),
                "source": source(row["path"], row["line_start"], row["line_end"]), "confidence": row["confidence"],
                "entity": None, "mentions": json.loads(row["entities"] or "[]")}

    def evidence(row: tuple) -> dict:
        """What `opinions.weigh` reads of a fact filed under `name` (a row of `Store.evidence_rows`)."""
        name, path, start, end, date, a, b, content, analysed, _, _ = row
        stored[content] = analysed or ""
        return {"content": content, "timestamp": time_of(a, b, date),
                "entity": name, "source": source(path, start, end)}

    def terms(text: str) -> set[str]:
        return {t for t in stored[text].split() if t not in STOPWORDS and not t.isdigit()}

    refresh()
    about = [store.entity_match(entity)] if entity else []
    rows = store.opinion_rows(Filters(entities=[about[0].by_mention()] if about and filed else about))
    ops = [light(r) for r in rows]
    canonical = store.canonical_names({f["mentions"][0] for f in ops if f["mentions"]} | ({entity} if entity else set()))
    for f in ops:
        f["entity"] = canonical.get(f["mentions"][0], f["mentions"][0]) if f["mentions"] else "general"
    if filed and entity:
        ops = [f for f in ops if f["entity"] == canonical.get(entity, entity)]
    ops.reverse()  # oldest first
    terms_of = opinions.cached_terms(terms)
    threads = opinions.group(ops, terms_of)
    if pick is not None:
        threads = pick(threads)
    names = sorted({o.entity for o in threads if o.entity != "general"})
    if windows is not None and entity is None and pick is None:
        windows.entities = set(names)
    keys = {n: store.entity_keys(n) for n in names}
    if reuse is not None:
        names = [n for n in names if not reuse(n, keys[n], [o for o in threads if o.entity == n])]
    others: list[dict] = []
    if windows is not None and known is not None:
        of: dict[str, list[opinions.Opinion]] = {}
        for o in threads:
            of.setdefault(o.entity, []).append(o)
        ready = {n: keys[n] for n in names if known.all_held(of[n])}
        for name, facts in windows.weighable(ready, {n: known.entities[n][0] for n in ready}, MAX_K).items():
            stored.update((f[4][0], f[4][1] or "") for f in facts if len(f) > 4)
            others += kept_evidence.evidence(name, facts)
    unread = [n for n in names if windows is None or n not in windows.now]
    rows = store.evidence_rows({n: keys[n] for n in unread}, MAX_K)
    if windows is not None:
        by_name: dict[str, list[tuple]] = {}
        for r in rows:
            by_name.setdefault(r[0], []).append(r)
        windows.now.update((n, (keys[n], *kept_evidence.window(by_name.get(n, []), MAX_K))) for n in unread)
    others += [evidence(r) for r in rows if r[-1]]
    others = [f for f in others if trust.rank(tier_of(f["source"].split("#", 1)[0])) <= trust.rank("normal")]
    fresh = set(names)
    opinions.weigh([o for o in threads if o.entity in fresh], others, terms_of, known)
    if weighed is not None:
        _note_weighed(weighed, threads, others, fresh, known)
    return threads


def _note_weighed(weighed: dict, threads: list[opinions.Opinion], others: list[dict], fresh: set[str],
                  known: opinions.Known | None) -> None:
    """entity → [sources weighed, {fingerprint: [supporting, contradicting]}] of every entity with a
    thread: the `fresh` ones from what was weighed now, the others as `known` had them."""
    sources: dict[str, list[str]] = {}
    for f in others:
        sources.setdefault(f["entity"], []).append(f["source"])
    for o in threads:
        if o.entity == "general":
            continue
        if o.entity in fresh:
            entry = weighed.setdefault(o.entity, [sources.get(o.entity, []), {}])
            entry[1][known.fingerprint(o) if known is not None else opinions.fingerprint(o)] = [o.supporting,
                                                                                                  o.contradicting]
        elif known is not None and o.entity in known.entities and o.entity not in weighed:
            before, verdicts = known.entities[o.entity]
            weighed[o.entity] = [sorted(before),
                                 {fp: [sorted(sup), sorted(con)] for fp, (sup, con) in verdicts.items()}]


def run(src: Sources, dry_run: bool = False, force: bool = False, since: str | None = None,
        overwrite_edits: bool = False, review: bool | None = None, time_limit: float | None = None) -> dict:
    """One reflect run: consolidation phases, then entity pages (generated blocks only), opinions and a
    journal entry; `dry_run` writes nothing.

    Gates: unless `force`, a run does work only if `[reflect] min_hours` passed since the last one and
    at least `min_new_facts` new facts arrived. `since` limits pages to entities with facts from then on.
    """
    # A run holds ~10⁶ objects that live until it ends and hold no cycles (facts, word sets,
    # listings, page plans): with the collector on it walked them again and again as they piled up
    # (7 full and ~100 middle collections at 10⁵ facts, freeing ~500 objects: 0.5 s of a 5.5 s run).
    # They are freed as `_run` returns, before the collector comes back: its first collection walked
    # every one of them (0.3 s at 10⁵ facts).
    with collector.paused():
        return _run(src, dry_run, force, since, overwrite_edits, review, time_limit)


def _run(src: Sources, dry_run: bool, force: bool, since: str | None, overwrite_edits: bool, review: bool | None,
         time_limit: float | None) -> dict:
    if not dry_run:
        src.ws.sweep_temp()  # what a killed run left behind
    started = time.perf_counter()
    cfg = src.config
    tier_of = src.tier_lookup()
    fits = _fits(tier_of)
    deadline = Deadline(cfg.reflect_time_limit if time_limit is None else time_limit)
    with src.ws.lock("reflect", busy="another mem reflect or mem forget is running in this workspace"), \
            src.store.pages_mapped():
        src.refresh()
        state = _load_state(src.ws)
        review = cfg.reflect_review if review is None else review
        opts, files, decided = cache.options(src, since, overwrite_edits), src.store.file_rows(), src.local.decisions_signature()
        record = None if review else cache.previous(src, opts)  # the model review may have open items to ask
        # Proposals depend on more than changes (a backlog over runs, the calendar's weeks): such a run
        # reads the facts; the per-entity reuse below still applies.
        replay = cache.replayable(record, cache.signature(opts, files, decided)) and not cfg.reflect_propose
        if replay and state.get("opinions") not in (None, {}, record["opinions"]):
            replay = False  # the "moved from" values are another run's: recompute the moves
        gate = None if force else _gate(src, state, nothing_new=replay)
        if gate:
            return {"dry_run": dry_run, "changed": False, "gated": gate, "entry": None, "opinion_moves": [],
                    "suggestions": [], "pages": [], "seconds": round(time.perf_counter() - started, 3)}
        changes, made, evidence, reused, notice, listings, weighed, known = None, {}, {}, 0, None, {}, {}, None
        meanwhile: list[str] = []
        windows = evidence_windows = None
        if replay:
            found = consolidation.replay(src, record["orient"], record["skipped_legal"], dry_run=dry_run)
            plan = cache.plan_from(record)
            plan.consolidation, confidences = found, record["opinions"]
        else:
            changes = cache.since_last(src, record, files, decided)
            if not dry_run:
                cache.forget(src)
            before = src.local.supersessions()
            found = consolidation.run(src, deadline=deadline, dry_run=dry_run, review=review,
                                      ran_before=state.get("last_run") is not None)
            notice = found.pop("notice")
            meanwhile = _written_meanwhile(src, files) if found["llm"] or found["proposals"] else []
            if meanwhile:  # what the last run left is not what this one read: no reuse, no record (see below)
                changes = None
            if changes is not None:
                changes.paths |= cache.superseded_paths(before, src.local.supersessions())
            plan = pages.Plan(consolidation=found)
            known = cache.weighed(src, record, changes)
            usable = changes is not None and kept_evidence.usable(src, record, changes.files)
            evidence_windows = kept_evidence.Windows(src, changes.files if usable else None)
            # Refreshed at the start, and again after a model's answers (`_written_meanwhile`): the run writes
            # no Markdown before its pages (consolidation keeps its decisions in .memory/).
            threads = opinion_threads(src.store, refresh=lambda: None, tier_of=tier_of,
                                      reuse=_reuse_evidence(changes, known) if changes is not None else None,
                                      known=known, weighed=weighed, windows=evidence_windows)
            evidence = _evidence(threads)
            windows = kept_windows.Windows(kept_windows.usable(src, record, changes.files if changes else None))
            reused = _plan_entity_pages(src, plan, threads, since, tier_of, fits, deadline, overwrite_edits, changes, made,
                                        listings, windows)
            _plan_opinions(src.ws, plan, threads, state, fits, overwrite_edits, tier_of)
            typed = {kind: src.facts(kinds=[kind], k=MAX_K) for kind in pages.TYPED_PAGES}
            _plan_typed_indexes(src, plan, fits, overwrite_edits, typed)
            plan.suggestions = pages.core_suggestions(threads, typed["world"], src.ws.read_text(src.ws.core_path))
            plan.core = src.ws.core_path
            confidences = {o.key: round(o.confidence, 3) for o in threads}
        plan.suggested_before = set(state.get("suggested", []))
        seconds = time.perf_counter() - started
        stamp = time.strftime("%Y-%m-%d %H:%M %Z (UTC%z)")  # local time, the zone said
        changed = [p for p in plan.pages if p.action in ("create", "update")]
        if changed and not dry_run:
            _write_pages(src.ws, changed)
            changed = [p for p in changed if p.action in ("create", "update")]
        entry = journal.entry(plan, stamp, seconds, dry_run, fits(JOURNAL))
        consolidated = any(found[k] for k in ("folded", "superseded", "review", "unclear", "connections",
                                              "strengthened")) or found["faded"] \
            or bool((found["proposals"] or {}).get("proposed"))
        if not dry_run:
            written = [p.path for p in changed]
            if (changed or consolidated) and tier_of(JOURNAL) == trust.LEGAL:  # never modified: said, not written
                plan.pages.append(pages.PagePlan("Journal", JOURNAL, "skipped", reason=LEGAL_PAGE))
            elif changed or consolidated:
                _append_journal(src.ws, entry)
                written.append(JOURNAL)
            _save_state(src.ws, {"opinions": confidences, "last_run": time.time(),
                                 "suggested": sorted(plan.suggested_before | {x["source"] for x in plan.suggestions})})
            if deadline.hit_at is None and not review and not meanwhile:  # recorded after the Markdown: a killed run leaves none
                if written:
                    src.refresh()  # what this run wrote is part of the next run's inputs
                if replay:
                    if written:
                        cache.resave(src, record, files, written)
                else:
                    # A page created now may change which facts name its entity (by plain words) and how its
                    # mentions are named: if it did, the record leaves it out, so the next run sees a new
                    # page and recomputes every entity.
                    created = _renaming(src, [p for p in changed if p.action == "create"], listings)
                    cache.save(src, opts, files, [w for w in written if w not in created], plan, found, confidences,
                               made, evidence, changes, weighed, windows, evidence_windows)
    return {"dry_run": dry_run, "changed": bool(changed or consolidated), "entry": entry, "opinion_moves": plan.moves,
            "suggestions": plan.suggestions, "consolidation": found, "written_meanwhile": meanwhile,
            "pages": [{"entity": p.entity, "path": p.path, "action": p.action, "reason": p.reason}
                      for p in plan.pages],
            "reused": {"replayed": replay, "entity_pages": len(record["entities"]) if replay else reused,
                       "entity_pages_made": 0 if replay else len(made) - reused,
                       "evidence_verdicts": known.taken if known else 0,
                       **({"notice": notice} if notice else {})},
            "seconds": round(time.perf_counter() - started, 3)}


def _written_meanwhile(src: Sources, files: dict[str, list]) -> list[str]:
    """The files that changed since the run read `files` (the index's rows then), with the index brought
    in step: while a model answered, other calls (`mem mcp` gives them the turn) or programs may have
    written. The pages are planned from the files as they are now, each written only if unchanged
    since (`_write_pages`); the run leaves no record to reuse (it read some files as they were before)."""
    src.refresh()
    now = src.store.file_rows()
    return sorted(p for p in files.keys() | now.keys() if files.get(p) != now.get(p))


def _fits(tier_of: Callable[[str], str]) -> Callable[[str], Callable[[str], bool]]:
    """page → whether a source may be shown on it: derived text never holds a stricter tier than its page."""
    ranks: dict[str, int] = {}  # path → its tier's rank (asked once per cited fact)

    def rank(path: str) -> int:
        if path not in ranks:
            ranks[path] = trust.rank(tier_of(path))
        return ranks[path]

    def fits(page: str) -> Callable[[str], bool]:
        limit = rank(page)
        return lambda cited: rank(cited.split("#")[0]) <= limit

    return fits


def _plan_entity_pages(src: Sources, plan: pages.Plan, threads: list[opinions.Opinion], since: str | None,
                       tier_of: Callable[[str], str], fits, deadline: Deadline, overwrite_edits: bool,
                       changes: cache.Changes | None = None, made: dict | None = None,
                       created: dict | None = None, windows: kept_windows.Windows | None = None) -> int:
    """Plan the entity pages: one per entity with enough facts it may show (legal pages never).

    An entity nothing in `changes` touches keeps what the last run planned for it (returns how many
    did); `made` receives what each page was made from (see `cache`), `created` the facts of each page
    to create (see `_renaming`). The others' facts come from their `windows` brought up to date where
    the kept ones allow it, else listed afresh; `windows` receives both."""
    confidences = {o.source: o.confidence for o in threads}  # an older bullet keeps its own written c
    made = {} if made is None else made
    recent, reused = None, 0
    if since:
        recent = {e for f in src.facts(since=since) for e in f["entities"]}
    names = [name for name, _count in src.store.entity_counts(pages.MIN_FACTS) if recent is None or name in recent]
    kept = {}
    for name in names:
        rec = changes.entities.get(name) if changes is not None else None
        if rec is not None and _untouched(rec, changes, src.store.entity_keys(name), confidences):
            kept[name] = rec
    remade = [name for name in names if name not in kept]
    windows = kept_windows.Windows() if windows is None else windows
    if windows.usable and remade:
        kept_windows.bring_up_to_date(src, remade, changes.files, pages.LISTED, windows, set(changes.written))
    listings = {name: facts for name, (facts, _) in windows.now.items()}
    fresh = [name for name in remade if name not in listings]
    successors = src.local.supersessions() if remade else {}
    order = src.store.fact_order() if len(fresh) >= listing.AT_ONCE else None  # once for every pass
    owners: dict[str, str] = {}  # page path → the entity whose page it is (two names may make one file name)
    for name in names:
        if deadline.passed("entity pages"):
            break
        rec = kept.get(name)
        if rec is None:
            if name not in listings:  # the next entities' facts in one pass (the deadline is checked between)
                start, places = fresh.index(name), {}
                listed = listing.entity_facts(src.store, fresh[start:start + LISTED_AT_ONCE], pages.LISTED, order, places)
                listings.update(listed)
                windows.now.update((n, (facts, places)) for n, facts in listed.items())
            rec = _plan_entity_page(src, name, listings[name], confidences, tier_of, fits, overwrite_edits, successors)
            if rec["action"] is not None and rec["path"] in owners and owners[rec["path"]] != rec["entity"]:
                rec = dict(rec, action="skipped", text=None, reason=f"{pages.NAME_TAKEN} ({owners[rec['path']]})")
            if rec["action"] == "create" and created is not None:
                listing.complete(src.store, listings[name], successors)  # in full: ids change with a re-read file
                created[name] = listings[name]
        else:
            reused += 1
        made[name] = rec
        if rec["action"] is not None:
            owners.setdefault(rec["path"], rec["entity"])
        plan.held_back += rec["held"]
        if rec["action"] is not None:
            plan.facts += rec["facts"]
            plan.pages.append(pages.PagePlan(rec["entity"], rec["path"], rec["action"], rec.get("text"), rec["reason"],
                                             rec.get("was")))
    return reused


def _renaming(src: Sources, made: list[pages.PagePlan], listed: dict[str, list[dict]]) -> set[str]:
    """The pages among those a run `made` (created, then indexed) that change what a run would make
    from the same facts: the entity's facts (its name in plain words now counts), its name (a file
    name could not hold it), or how its mentions are named (spelled otherwise, they now name the page)."""
    successors = src.local.supersessions() if made else {}
    out = set()
    for p in made:
        name = p.entity
        before = listed.get(name)
        if before is None or pages.slug_for(name) != name or src.store.spellings(entity_key(name)) - {name}:
            out.add(p.path)
            continue
        now = listing.entity_facts(src.store, [name], pages.LISTED)[name]
        listing.complete(src.store, now, successors)
        if _without_ids(now) != _without_ids(before):
            out.add(p.path)
    return out


def _without_ids(facts: list[dict]) -> list[dict]:
    return [{k: v for k, v in f.items() if k != "id"} for f in facts]


def _untouched(rec: dict, changes: cache.Changes, keys: list[str], confidences: dict[str, float]) -> bool:
    """Whether an entity page is made from the same facts, supersessions and confidences as last time."""
    return (not changes.named(keys) and changes.paths.isdisjoint(rec["paths"])
            and all(confidences.get(s) == c for s, c in rec["conf"].items()))


def _plan_entity_page(src: Sources, name: str, listed: list[dict], confidences: dict[str, float], tier_of, fits,
                      overwrite_edits: bool, successors: dict[str, tuple]) -> dict:
    """One entity page's plan (`action` None: no page) from the entity's `listed` facts (newest
    `pages.LISTED`, see `listing`), with what it is made from; the facts it prints are completed
    (their text, and successors from `successors`)."""
    page = src.store.entity_page(name)
    path = page["path"] if page else f"bank/entities/{pages.slug_for(name)}.md"
    entity = page["entity"] if page else name
    rec = {"entity": entity, "path": path, "action": None, "reason": "", "facts": 0, "held": 0, "paths": [], "conf": {}}
    if not pages.fits_a_file_name(path):  # (its tier would read as legal: a file that cannot be read)
        return dict(rec, action="skipped", reason=pages.TOO_LONG)
    if tier_of(path) == trust.LEGAL:
        return dict(rec, action="skipped", reason=LEGAL_PAGE)
    files = [f["source"].split("#")[0] for f in listed]
    visible = fits(path)
    allowed = {p: p not in (path, JOURNAL) and visible(p) for p in set(files)}  # asked once per file (per page)
    facts = [f for f, p in zip(listed, files) if p not in (path, JOURNAL)]
    shown = [f for f, p in zip(listed, files) if allowed[p]]
    rec.update(held=len(facts) - len(shown), paths=sorted(set(files)),
               conf={f["source"]: confidences.get(f["source"]) for f in shown if f["kind"] == "opinion"})
    if len(shown) < pages.MIN_FACTS:
        return rec
    shown = pages.newest_written(shown)  # sorted once for both
    listing.complete(src.store, [f for part in pages.printed(shown, in_order=True) for f in part], successors)
    current = src.ws.read_text(path) if (src.ws.root / path).exists() else None
    body = pages.page_body(entity, shown, confidences, path, in_order=True, visible=visible)
    p = pages.plan_page(entity, path, current, body, overwrite_edits)
    return dict(rec, action=p.action, reason=p.reason, text=p.text, was=p.was, facts=len(shown))


def _reuse_evidence(changes: cache.Changes, weighed: dict):
    """`opinion_threads`' reuse: an entity whose facts no change mentions keeps last run's evidence
    (once what it was weighed against is `weighed`, so that the next run can carry it on)."""
    weighed = weighed.entities
    def reuse(name: str, keys: list[str], threads: list[opinions.Opinion]) -> bool:
        known = changes.evidence.get(name)
        if known is None or len(known) != len(threads) or not changes.keys.isdisjoint(keys) or name not in weighed:
            return False
        for o, (supporting, contradicting) in zip(threads, known):
            o.supporting, o.contradicting = list(supporting), list(contradicting)
        return True

    return reuse


def _evidence(threads: list[opinions.Opinion]) -> dict[str, list]:
    """entity → its threads' (supporting, contradicting), in order."""
    out: dict[str, list] = {}
    for o in threads:
        if o.entity != "general":
            out.setdefault(o.entity, []).append([o.supporting, o.contradicting])
    return out


def _plan_opinions(ws: Workspace, plan: pages.Plan, threads: list[opinions.Opinion], state: dict, fits,
                   overwrite_edits: bool, tier_of: Callable[[str], str]) -> None:
    """Plan `bank/opinions.md` (a legal one is never modified) and note the opinions whose confidence
    moved since the last run."""
    page = pages.OPINIONS_PAGE
    plan.moves = pages.opinion_moves(threads, state.get("opinions", {}))
    if tier_of(page) == trust.LEGAL:
        plan.pages.append(pages.PagePlan("Opinions", page, "skipped", reason=LEGAL_PAGE))
        return
    current = ws.read_text(page) if (ws.root / page).exists() else None
    body = pages.opinions_body(threads, fits(page))
    plan.pages.append(pages.plan_page("Opinions", page, current, body, overwrite_edits, block=pages.OPINIONS_BLOCK))


def _plan_typed_indexes(src: Sources, plan: pages.Plan, fits, overwrite_edits: bool, typed: dict[str, list[dict]]) -> None:
    """Plan bank/world.md and bank/experience.md: generated indexes of the W and B facts a page may show
    (`typed`: kind → its newest facts; a legal page is never modified; the page's own facts are not listed on it)."""
    tier_of = src.tier_lookup()
    for kind, page in pages.TYPED_PAGES.items():
        if tier_of(page) == trust.LEGAL:
            plan.pages.append(pages.PagePlan(kind.title(), page, "skipped", reason=LEGAL_PAGE))
            continue
        visible = fits(page)
        found = typed[kind]
        facts = [f for f in found if f["source"].split("#")[0] != page and visible(f["source"])]
        if not facts:
            continue
        current = src.ws.read_text(page) if (src.ws.root / page).exists() else None
        plan.pages.append(pages.plan_page(kind.title(), page, current, pages.typed_index_body(kind, facts, page, len(found) < MAX_K, visible),
                                          overwrite_edits, block=kind))


def _write_pages(ws: Workspace, changed: list[pages.PagePlan]) -> None:
    """Write the changed pages under each file's lock, backing up what an update replaces. A page
    saved (or created) since its plan was made is not written: it becomes `skipped` (`CHANGED`), so
    the save stands and the next run plans from it."""
    for p in changed:
        with ws.lock(p.path):
            path = ws.resolve(p.path)
            try:
                now = path.read_bytes()
            except FileNotFoundError:
                now = None
            if (None if now is None else pages.seen(now)) != p.was:
                p.action, p.reason, p.text = "skipped", pages.CHANGED, None
                continue
            if now is not None:
                ws.backup(p.path)
            try:  # (a file created meanwhile is not b"": refused)
                ws.write_atomic(p.path, p.text, expect=b"" if now is None else now)
            except FileChanged:
                p.action, p.reason, p.text = "skipped", pages.CHANGED, None


JOURNAL_HEADER = "# Journal\n\nWhat each `mem reflect` run found and did.\n"


def _append_journal(ws: Workspace, entry: str) -> None:
    """Append `entry` to the journal after a blank line (a new journal starts with its header), as
    `mem retain` appends: to the open file, never by replacing it, so a line another program added
    meanwhile stays (`Workspace.append`)."""
    def plan(before: bytes) -> bytes:
        if not before:
            return (JOURNAL_HEADER + "\n" + entry).encode("utf-8")
        return (("\n" if before.endswith(b"\n") else "\n\n") + entry).encode("utf-8")

    with ws.lock(JOURNAL):
        ws.read_text(JOURNAL)  # refuses a journal that is not UTF-8 before anything is written
        ws.append(JOURNAL, plan)


def _gate(src: Sources, state: dict, nothing_new: bool = False) -> str | None:
    """Why this run should not do work yet (None: it should); `nothing_new`: no fact is new (known
    without reading them)."""
    cfg = src.config
    last = state.get("last_run")
    if last is not None:
        hours = (time.time() - last) / 3600
        if hours < cfg.reflect_min_hours:
            return f"the last run was {hours:.1f} h ago (runs need {cfg.reflect_min_hours:g} h between them)"
    if cfg.reflect_min_new:
        new = 0 if nothing_new else len(src.local.unseen([fact_key(path, content)
                                                          for path, content in src.store.fact_texts()]))
        if new < cfg.reflect_min_new and last is not None:
            return f"{new} new fact(s) since the last run (runs need {cfg.reflect_min_new})"
    return None


def _load_state(ws: Workspace) -> dict:
    """What the last reflect run saw (machine-local, under .memory/; losing it only loses 'from' values)."""
    try:
        return json.loads((ws.state_dir / STATE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _save_state(ws: Workspace, state: dict) -> None:
    ws.write_atomic(f".memory/{STATE}", json.dumps(state, indent=1, sort_keys=True))
