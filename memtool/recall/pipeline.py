"""The recall pipeline, in order: filters → candidates (lexical, semantic) → fusion and priors →
folding and history → names → packing. Its collaborators come in explicitly: the index (`store`),
machine-local state (`local`), the embedder (`embedding`), and `notices` for what to tell the user.
It reads the index as it is: bringing it in step first is the caller's (see memtool.freshness).
A `worker` (memtool.recall.worker) runs a hybrid query's lexical side beside its semantic side."""

from __future__ import annotations

from collections.abc import Callable

from memtool.analyzer import exact_terms, has_content_words
from memtool.embedding import Embedding
from memtool.recall.candidates import CANDIDATES, candidates
from memtool.recall.expansion import RECALL, Expansion
from memtool.recall.history import consolidated, fold_duplicates
from memtool.recall.opinions import with_opinions
from memtool.recall.pack import cost, pack
from memtool.recall.query import Query
from memtool.recall.ranking import content_first, ranked
from memtool.recall.relevance import Verdict, calibration_for, rare_words, scaled, text_kind, without_content_words
from memtool.recall.results import Hit, RecallResult
from memtool.recall.worker import LexicalWorker
from memtool.store import Filters, Store
from memtool.store.local import LocalStateFile


def _rare(store: Store, text: str) -> bool:
    """Whether a stopword-only query's words are rare in this workspace (`war` in English notes), so
    it names something after all (`Will`, `Sie`: a name, checked before)."""
    return rare_words(*store.doc_counts(set(exact_terms(text))))


def run(q: Query, *, store: Store, local: LocalStateFile, embedding: Embedding, notices: list[str],
        warnings: list[str], track_access: bool, floor: float, expansion: Expansion = RECALL,
        worker: LexicalWorker | None = None, tiers: Callable[[], Callable[[str], str]] | None = None) -> RecallResult:
    """Ranked, cited hits for `q`; `warnings` holds what the caller already has to say. `floor` is
    the relevance the best result must reach (`q.min_score` overrides it); reflect's access log
    counts only results at or above `floor`. `expansion`: the multi-hop expansion to run (see
    memtool.recall.expansion). `tiers` makes the path → trust tier lookup that opinion hits weigh
    their evidence with (see `with_opinions`)."""
    notice = _say_once(notices)
    filters = _filters(q, store)
    degraded, verdict = None, Verdict(best=None, floor=None)
    if not q.terms:
        hits, used = [Hit.from_row(r) for r in store.latest(filters, q.k)], "filter"
    else:
        found = candidates(store, embedding, q.search_text, q.terms, filters, q.mode, max(CANDIDATES, q.k), warnings,
                           worker)
        used, degraded = found.mode, found.degraded
        hits = ranked(store, found.scores, filters, q.search_text, q.k * 3,
                      q.timeframe.priors if q.timeframe else (), expansion, q.terms)
        verdict = _verdict(found, q, store, floor, warnings)
        if not has_content_words(q.text) and not store.names_an_entity(q.text) and not _rare(store, q.text):
            verdict = without_content_words(verdict, floor if q.min_score is None else q.min_score)
    if not hits:  # not "nothing found" when a filter asks for what no fact has
        _say_unmatched(q, filters, store, notice)
    hits = consolidated(hits, local, q.as_of, reorder=bool(q.terms), notice=notice)
    _name(hits, store, filters)
    hits = fold_duplicates(hits)[: q.k]
    if q.terms:
        hits = content_first(hits)
        for h, s in zip(hits, scaled([h.score or 0.0 for h in hits], verdict.best)):
            h.score = s
        if not verdict.relevant:
            verdict.below, hits = len(hits), []
    if q.budget:
        packed = pack(hits, q.budget)
        if hits and not packed:  # not "nothing found": the answer did not fit
            least = min(cost(h) for h in hits)
            notice(f"no result fits in a budget of {q.budget} token{'s' if q.budget != 1 else ''} (the smallest needs "
                   f"about {least}); give a larger budget")
        hits = packed
    with_opinions(hits, store, notice, tiers)
    stale = set(store.paths_with_status("stale"))
    for h in hits:
        h.stale = h.path in stale
    result = RecallResult(query=q.text, mode=used, hits=hits, terms=q.terms, warnings=warnings, degraded=degraded,
                          verdict=verdict if q.terms else None,
                          dates=[s.to_dict() for s in q.timeframe.spans] if q.timeframe else [])
    if track_access:
        record_access(result, local, floor, notices)
    warnings.extend(n for n in notices if n not in warnings)
    return result


def record_access(result: RecallResult, local: LocalStateFile, floor: float, notices: list[str]) -> None:
    """Log the facts `result` returned at or above `floor` (all of them for an answer without a
    relevance), for reflect's stability; a failure to is a notice, never a failed recall."""
    best = result.verdict.best if result.verdict is not None else None
    counted = [h for h in result.hits if best is None or (h.score or 0.0) >= floor]
    _record_access(local, [h.key for h in counted], _say_once(notices))


def _verdict(found, q: Query, store: Store, floor: float, warnings: list[str]) -> Verdict:
    """The query's calibrated relevance and the floor it must reach (none without a calibration)."""
    if found.best_cosine is None:
        return Verdict(best=None, floor=None)
    heads = store.fact_heads([found.nearest]) if found.nearest is not None else {}
    kind = text_kind(heads[found.nearest]["content"]) if found.nearest in heads else "notes"
    cal = calibration_for(found.fingerprint, kind)
    if cal is None:
        if q.min_score:
            warnings.append(f"--min-score needs calibrated scores, and {found.fingerprint} has none: "
                            "nothing was held back (docs/recall.md, Relevance)")
        return Verdict(best=None, floor=None)
    known, near = found.words or (None, None)
    best = cal.relevance(found.best_cosine, known, near)
    across = found.across if found.across and known is not None and kind == "notes" else None
    if across:  # a cross-lingual answer, read by its own record
        best = max(best, cal.relevance(across[0], known, across[1]))
    return Verdict(best=best,
                   floor=floor if q.min_score is None else q.min_score,
                   kind=kind, cosine=found.best_cosine, known=known, near=near, across=across)


def listed(store: Store, local: LocalStateFile, filters: Filters, k: int, notices: list[str]) -> list[Hit]:
    """Facts matching `filters` only, newest first, with reflect's decisions (no folding, no packing)."""
    hits = consolidated([Hit.from_row(r) for r in store.latest(filters, k)], local, None, reorder=False,
                        notice=_say_once(notices))
    _name(hits, store, filters)
    return hits


def _filters(q: Query, store: Store) -> Filters:
    return Filters(kinds=q.kinds, since=q.since, until=q.until, entities=[store.entity_match(e) for e in q.entities],
                   fields=q.fields, tags=q.tags)


def _say_unmatched(q: Query, filters: Filters, store: Store, notice: Callable[[str], None]) -> None:
    """Name each --entity, --tag and --field that no fact matches even alone (a typo, most often)."""
    alone = [(f"no fact mentions {name!r} (entities are @mentions, [[links]] or pages in bank/entities/)",
              Filters(entities=[match])) for name, match in zip(q.entities, filters.entities)]
    alone += [(f"no fact has the tag #{tag}", Filters(tags=[tag])) for tag in q.tags]
    alone += [(f"no fact has the field [{key}:: {value if value is not None else '…'}]", Filters(fields=[(key, value)]))
              for key, value in q.fields]
    for message, only in alone:
        if not store.latest_ids(only, 1):
            notice(message)


def _name(hits: list[Hit], store: Store, filters: Filters) -> None:
    """Each hit's entities as results name them: mentions resolved to their page, and the entities
    it is known to be about (it passed an entity filter, perhaps by naming the entity in plain words)."""
    canonical = store.canonical_names({m for h in hits for m in h.mentions})
    about = [m.name for m in filters.entities if m.plain]
    for h in hits:
        h.entities = list(dict.fromkeys([*(canonical.get(m, m) for m in h.mentions), *about]))


def _record_access(local: LocalStateFile, keys: list[str], notice: Callable[[str], None]) -> None:
    try:
        local.record_access(keys)
    except Exception as exc:  # the access log is a ranking hint: never fail a recall over it
        notice(f"could not record this recall for stability ({exc})")


def _say_once(notices: list[str]) -> Callable[[str], None]:
    def notice(message: str) -> None:
        if message not in notices:  # a long-running process says each thing once
            notices.append(message)
    return notice
