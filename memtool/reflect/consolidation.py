"""The consolidation phases of `mem reflect`: orient, dedup, contradictions, stability, connections
and the optional model review. The rules are pure (`rules.py`, `memtool.stability`); this module reads
the index, measures similarities, and records decisions in the machine-local state
(`.memory/local.sqlite`). The Markdown is never touched here.

Each run examines the facts it has not seen before (cost follows what is new), stops cleanly at
its deadline (what was examined stays recorded; the rest waits for the next run) and writes
nothing on a dry run.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from operator import itemgetter

from memtool import stability, trust
from memtool.analyzer import STOPWORDS, fold, index_terms
from memtool.reflect import ledger, postings, proposals, queue
from memtool.reflect import review as model_review
from memtool.reflect import rules
from memtool.reflect.deadline import Deadline
from memtool.reflect.decisions import PAGE as DECISIONS
from memtool.reflect.sources import Sources
from memtool.store import Store
from memtool.store.local import LocalState, fact_key

WORD = re.compile(r"\w+")
FIELD = re.compile(r"\[[^\]\[]*::[^\]\[]*\]")  # inline fields such as [cost:: 2h] are not attributes
CHUNK = 1000  # new facts examined between deadline checks


def load_facts(store: Store, globs: dict[str, list[str]]) -> list[dict]:
    """Every fact consolidation considers: key, source, kind, day, entities, content, trust, and the
    terms the index analysed its content into. Term and word sets are made on demand (see `_Sets`),
    since a run needs them for what is new."""
    tiers: dict[tuple[str, str], str] = {}
    parsed: dict[str | None, list[str]] = {}
    facts = []
    declared_of = store.file_trust()
    for path, line, end, kind, day, entities, content, ehash, analysed in store.consolidation_rows():
        declared = declared_of.get(path)
        if declared is None:
            continue  # a fact of no indexed file (never, as the index is written)
        names = parsed.get(entities)
        if names is None:
            names = parsed[entities] = json.loads(entities or "[]")
        tier = tiers.get((path, declared))
        if tier is None:
            tier = tiers[(path, declared)] = trust.file_tier(path, declared, globs)
        facts.append({"key": fact_key(path, content), "path": path,
                      "source": f"{path}#L{line}" + (f"-L{end}" if end and end != line else ""), "kind": kind,
                      "day": (day or "")[:10] or None, "entities": names, "content": content, "ehash": ehash,
                      "trust": tier, "terms": analysed})
    return facts


class _Sets(dict):
    """key → frozenset, computed on first use (and from a cache of earlier runs where there is one)."""

    def __init__(self, make, cached: dict[str, str] | None = None):
        super().__init__()
        self.make, self.cached = make, cached or {}

    def __missing__(self, key: str) -> frozenset:
        text = self.cached.get(key)
        value = self[key] = frozenset(text.split()) if text is not None else self.make(key)
        return value

    def listed(self, key: str):
        """The distinct words of `key`, from the cache's text when its set was not made yet."""
        if key not in self and key in self.cached:
            return self.cached[key].split()
        return self[key]


def term_set(terms_text: str) -> frozenset:
    """Index terms (forms and stems): do two facts talk about the same thing?"""
    return frozenset(t for t in terms_text.split() if t not in STOPWORDS and len(t) > 1 and not t.isdigit())


def fact_terms(f: dict) -> frozenset:
    """The term set of a fact's content, inline fields left out: the index's analysis where it has no
    field (the same terms, not analysed again)."""
    if f.get("terms") is not None and not FIELD.search(f["content"]):
        return term_set(f["terms"])
    return term_set(index_terms(FIELD.sub(" ", f["content"])))


def word_set(content: str) -> frozenset:
    """Surface words, numbers included: do two facts say the same thing?"""
    return frozenset(w for w in (x if x.isascii() else fold(x) for x in WORD.findall(content.lower()))
                     if w not in STOPWORDS)


def orient(store: Store, local: LocalState, facts: list[dict], unseen: int) -> dict:
    """Phase 1, read-only: counts per kind and folder, embedding coverage, stability, trust tiers."""
    per_file = Counter(map(itemgetter("path"), facts))  # counted per file, not per fact: ~2,800 files at 10^5
    tiers = dict(zip(map(itemgetter("path"), facts), map(itemgetter("trust"), facts)))  # one tier per file
    folders: Counter = Counter()
    for path, n in per_file.items():  # in the order files first occur, as the facts are
        folders[path.split("/", 1)[0] if "/" in path else "."] += n
    return orient_from({
        "facts": len(facts),
        "kinds": dict(Counter(map(itemgetter("kind"), facts)).most_common()),
        "folders": dict(folders.most_common()),
        "trust": dict(Counter(tiers.values()).most_common()),
    }, store, local, unseen)


def orient_from(static: dict, store: Store, local: LocalState, unseen: int) -> dict:
    """Phase 1 from the figures the Markdown fixes (`static`: facts, kinds, folders, trust) and those that
    change without it (embedding coverage, stability). A `static` from a run on the same Markdown may
    carry its embedding counts: while as many vectors are stored, none is missing anew (no scan)."""
    usage = local.usage_all()
    n = static["facts"]
    total_s = sum(s for s, _, _ in usage.values()) + stability.STABILITY_DEFAULT * max(0, n - len(usage))
    vectors = store.vectors
    embedded = vectors.count()
    missing = static["not_embedded"] if static.get("embedded") == embedded else vectors.count_missing()
    return {
        "facts": n, "new": unseen, "kinds": static["kinds"], "folders": static["folders"],
        "embedded": embedded, "not_embedded": missing,
        "average_stability_days": round(total_s / n, 1) if n else None,
        "used_facts": len(usage), "trust": static["trust"],
    }


class VectorSpace:
    """The stored vectors of every fact, loaded once per run (None when semantic search cannot run)."""

    def __init__(self, store: Store, facts: list[dict]):
        self.index, self.matrix = store.vectors.for_hashes(sorted({f["ehash"] for f in facts if f["ehash"]}))
        self.owners: dict[int, list[str]] = defaultdict(list)
        for f in facts:
            if f["ehash"] in self.index:
                self.owners[self.index[f["ehash"]]].append(f["key"])

    @classmethod
    def load(cls, src: Sources, facts: list[dict]) -> "VectorSpace | None":
        if src.vectors_usable() is not None:
            return None
        space = cls(src.store, facts)
        return space if space.matrix is not None else None


def _similarities(space: VectorSpace | None, by_key: dict, new: list[dict], pairs: set, threshold: float) -> dict:
    """Cosine for each lexical candidate pair, plus pairs found by vectors alone (new × all, ≥ threshold)."""
    out: dict[tuple[str, str], float | None] = {p: None for p in pairs}
    if space is None:
        return out  # numpy is not imported for nothing (~0.1 s)
    import numpy as np

    index, matrix = space.index, space.matrix
    for a, b in pairs:
        ia, ib = index.get(by_key[a]["ehash"]), index.get(by_key[b]["ehash"])
        if ia is not None and ib is not None:
            out[(a, b)] = float(matrix[ia] @ matrix[ib])
    rows = [(f["key"], index[f["ehash"]]) for f in new if f["ehash"] in index]
    for start in range(0, len(rows), 256):
        chunk = rows[start:start + 256]
        sims = matrix[[i for _, i in chunk]] @ matrix.T
        for (key, _), line in zip(chunk, sims):
            for j in np.nonzero(line >= threshold)[0]:
                for other in space.owners[int(j)]:
                    if other != key and (key, other) not in out and (other, key) not in out:
                        out[(key, other)] = float(line[j])
    return out


@dataclass
class _Compared:
    """What phases 2 and 3 found among the facts they examined (keys; see `rules`)."""

    examined: list[str] = field(default_factory=list)
    folds: list[tuple] = field(default_factory=list)  # (kept, folded, cos, jaccard)
    near: list[tuple] = field(default_factory=list)  # near-duplicates to review, same shape
    supersede: list[tuple[str, str, str]] = field(default_factory=list)  # (older, newer, why)
    unclear: list[tuple[str, str]] = field(default_factory=list)  # possible contradictions (older, newer)
    notice: str | None = None  # why the word postings were rebuilt


def run(src: Sources, *, deadline: Deadline, dry_run: bool, review: bool, ran_before: bool = False) -> dict:
    """Phases 1–5 and 7, then proposals; returns what was found and done (the journal is written by the
    caller). `ran_before`: an earlier run is known (lost word postings are then worth a notice).

    The facts come from the ledger (`ledger`: the text of unchanged files' facts is read only where a
    phase compares it), or all from the index when the model review or proposals may read any of them."""
    cfg = src.config
    if review or cfg.reflect_propose:
        return _run(src, load_facts(src.store, cfg.trust_globs), deadline, dry_run, review, ran_before)
    try:
        facts = ledger.facts(src.store, src.local, cfg.trust_globs, save=not dry_run)
        return _run(src, facts, deadline, dry_run, review, ran_before)
    except ledger.Stale:
        if not dry_run:
            with src.local.transaction():
                src.local.reset_ledger()
        facts = ledger.facts(src.store, src.local, cfg.trust_globs, save=not dry_run) if not dry_run \
            else load_facts(src.store, cfg.trust_globs)
        report = _run(src, facts, deadline, dry_run, review, ran_before)
        report["notice"] = "; ".join(filter(None, (ledger.REBUILT, report["notice"])))
        return report


def _run(src: Sources, facts: list[dict], deadline: Deadline, dry_run: bool, review: bool, ran_before: bool) -> dict:
    """`run` on `facts`."""
    by_key = {f["key"]: f for f in facts}
    local = src.local
    seen = local.seen_words()
    unseen = [k for k in by_key if k not in seen]
    report: dict = {"orient": orient(src.store, local, facts, len(unseen)), "folded": [], "review": [],
                    "superseded": [], "unclear": [], "strengthened": [], "faded": 0, "connections": [], "llm": None,
                    "skipped_legal": 0, "stopped_at": None, "examined": 0, "proposals": None}
    words = _Sets(lambda k: word_set(by_key[k]["content"]), seen)
    found = _compare(src, facts, by_key, unseen, words, deadline, dry_run, ran_before)
    decided, _ = queue.standing(src.ws)  # a person's decisions (bank/decisions.md) are not asked again
    found.near = queue.undecided("near-duplicate", found.near, decided)
    found.unclear = queue.undecided("contradiction", found.unclear, decided)
    report["skipped_legal"] = sum(1 for f in facts if f["trust"] == trust.LEGAL)
    report["examined"] = len(found.examined)
    report["notice"] = found.notice  # for the caller to say; not part of what the run found
    _report_pairs(report, by_key, found)
    # Phase 4: stability from the access log.
    strengthened, faded, usage_rows, last_rowid = _stability(local, dry_run)
    report["strengthened"] = [{"source": by_key[k]["source"], "content": by_key[k]["content"], "stability": round(s, 1),
                               "uses": u} for k, s, u in strengthened if k in by_key]
    report["faded"] = faded
    # Phase 5: connections between entities of new facts that their pages do not make.
    if not deadline.passed("connections"):
        touched = {e.lower() for k in found.examined for e in by_key[k]["entities"]}
        linked = _linked_pairs(src.store)
        tier_of = src.tier_lookup()
        limit = trust.rank(tier_of(DECISIONS))  # a person's decision names the pair on that page
        report["connections"] = [{"a": a, "b": b, "facts": n, "files": files} for a, b, n, files in
                                 rules.connections([f for f in facts if f["entities"]], linked)
                                 if (a.lower() in touched or b.lower() in touched)
                                 and all(trust.rank(tier_of(path)) <= limit for path in files)]
        report["connections"] = queue.undecided("connection", [(c["a"], c["b"], c) for c in report["connections"]],
                                                decided)
        report["connections"] = [c for *_, c in report["connections"]][:10]
    # Phase 7: the optional model review of what rules could not decide.
    decisions: list[tuple] = []
    if review and not deadline.passed("review"):
        report["llm"], decisions = model_review.ask(src, by_key, _dedupe(found.near), found.unclear, deadline)
    # Proposals of typed facts and the week's observation, for the review queue (never on a dry run).
    if src.config.reflect_propose and not dry_run and not deadline.passed("proposals"):
        report["proposals"] = proposals.run(src, facts, decided, deadline)
    report["stopped_at"] = deadline.hit_at
    if report["llm"] or report["proposals"]:  # a person may have decided while a model answered (`mem mcp`
        decided, _ = queue.standing(src.ws)  # runs other calls meanwhile): their decision stands over the model's
        decisions = [d for d in decisions if queue.undecided(d[0], [d[1:3]], decided)]
    if not dry_run:
        ledger.read_texts([by_key[k] for d in decided.values() for k in (d.a, d.b) if k in by_key])  # before writing
        _record(local, by_key, found, words, decisions, usage_rows, last_rowid)
        with local.transaction():
            queue.keep_connections(local, report["connections"], decided)
            queue.honour(local, decided, by_key)
    return report


def replay(src: Sources, static: dict, skipped_legal: int, *, dry_run: bool) -> dict:
    """What `run` finds when no fact is new and no decision changed since the run that left `static`
    (its orient figures) and `skipped_legal`: nothing to compare, so only stability (phase 4) and the
    live orient figures are computed."""
    local = src.local
    report: dict = {"orient": orient_from(static, src.store, local, 0), "folded": [], "review": [],
                    "superseded": [], "unclear": [], "strengthened": [], "faded": 0, "connections": [], "llm": None,
                    "skipped_legal": skipped_legal, "stopped_at": None, "examined": 0, "clusters": [],
                    "proposals": None}
    strengthened, faded, usage_rows, last_rowid = _stability(local, dry_run)
    by_key = {}
    if strengthened:  # facts recalled since the last run: find them by key (the one scan a replay may need)
        keys = {k for k, _, _ in strengthened}
        by_key = {f["key"]: f for f in load_facts(src.store, src.config.trust_globs) if f["key"] in keys}
    report["strengthened"] = [{"source": by_key[k]["source"], "content": by_key[k]["content"], "stability": round(s, 1),
                               "uses": u} for k, s, u in strengthened if k in by_key]
    report["faded"] = faded
    if not dry_run:
        with local.transaction():
            local.put_usage(usage_rows)
            local.set_meta("access_rowid", str(last_rowid))
    return report


def _compare(src: Sources, facts: list[dict], by_key: dict, unseen: list[str], words: _Sets,
             deadline: Deadline, dry_run: bool, ran_before: bool) -> _Compared:
    """Phases 2 and 3, dedup and contradictions: only what is new is examined, against everything,
    in chunks between deadline checks. Near-duplicates that are really contradictions are dropped."""
    cfg = src.config
    terms = _Sets(lambda k: fact_terms(by_key[k]))
    names = defaultdict(set)
    for e in {e for f in facts for e in f["entities"]}:
        names[e.lower()].update(index_terms(e).split())
    names = {k: frozenset(v) for k, v in names.items()}
    space = VectorSpace.load(src, facts) if unseen else None
    index = None
    if unseen:  # new facts need the postings of their own words only, kept up to date per file
        vocabulary = set().union(*(words[k] for k in unseen))
        index = postings.load(src.local, facts, words.listed, vocabulary, save=not dry_run, ran_before=ran_before,
                              live=by_key.keys())

    def threshold(f: dict) -> float:
        """The lowest word similarity that matters for a fact: review (by words) needs an entity."""
        return rules.REVIEW_LEXICAL if f["entities"] and space is None else cfg.fold_lexical

    out = _Compared(notice=index.notice if index is not None else None)
    for start in range(0, len(unseen), CHUNK):
        if deadline.passed("dedup"):
            break
        new = [by_key[k] for k in unseen[start:start + CHUNK]]
        ledger.read_texts(new)
        pairs = rules.candidate_pairs(new, index, words, threshold, by_key)
        sims = _similarities(space, by_key, new, pairs, min(cfg.fold_cosine, cfg.review_cosine))
        found = rules.classify_pairs(sims, by_key, words, cfg.fold_cosine, cfg.fold_lexical,
                                     cfg.review_cosine, rules.REVIEW_LEXICAL, words.listed)
        out.folds += found.folds
        out.near += found.review
        folded = {(a, b) for a, b, *_ in out.folds}
        about = rules.subjects(new, facts)
        ledger.read_texts(rules.contradiction_reads(new, about))  # in one query, not one by one
        sup, unc = rules.contradictions(new, about, terms, names, sims, words, folded, by_key)
        out.supersede += sup
        out.unclear += unc
        out.examined += [f["key"] for f in new]
    contested = {frozenset((o, n)) for o, n, _ in out.supersede} | {frozenset(p) for p in out.unclear}
    out.near = [p for p in out.near if frozenset(p[:2]) not in contested]
    return out


def _report_pairs(report: dict, by_key: dict, found: _Compared) -> None:
    """The pairs of phases 2 and 3 as the run reports them: sources and texts, not keys."""
    report["folded"] = [_pair(by_key, a, b, cos, lex) for a, b, cos, lex in _dedupe(found.folds)]
    report["review"] = [_pair(by_key, a, b, cos, lex) for a, b, cos, lex in _dedupe(found.near)]
    report["clusters"] = [[by_key[k]["source"] for k in c] for c in rules.clusters(_dedupe(found.near))]
    report["superseded"] = [{"old": by_key[o]["source"], "new": by_key[n]["source"], "until": by_key[n]["day"],
                             "why": why, "old_content": by_key[o]["content"], "new_content": by_key[n]["content"]}
                            for o, n, why in found.supersede]
    report["unclear"] = [{"old": by_key[o]["source"], "new": by_key[n]["source"],
                          "old_content": by_key[o]["content"], "new_content": by_key[n]["content"]}
                         for o, n in found.unclear]


def _record(local: LocalState, by_key: dict, found: _Compared, words: _Sets, decisions: list[tuple],
            usage_rows: list, last_rowid: int) -> None:
    """Write what the run decided to the machine-local state, in one transaction."""
    with local.transaction():
        local.put_folds([(b, a, cos, lex, "rule") for a, b, cos, lex in _dedupe(found.folds)])
        local.put_supersede([(o, n, by_key[n]["day"], "rule", why, by_key[o]["source"], by_key[o]["content"],
                              by_key[n]["source"]) for o, n, why in found.supersede])
        local.put_review([(a, b, "near-duplicate", "open", None, queue.detail(by_key[a], by_key[b], cos, lex))
                          for a, b, cos, lex in _dedupe(found.near)]
                         + [(o, n, "contradiction", "open", None, queue.detail(by_key[o], by_key[n])) for o, n in found.unclear])
        for kind, a, b, decision, reason in decisions:
            model_review.apply_decision(local, by_key, kind, a, b, decision, reason)
        local.put_usage(usage_rows)
        local.set_meta("access_rowid", str(last_rowid))
        local.mark_seen([(k, " ".join(sorted(words[k]))) for k in found.examined])
        local.forget(by_key.keys())


def _dedupe(pairs):
    seen, out = set(), []
    for p in pairs:
        key = frozenset(p[:2])
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _pair(by_key, a, b, cos, lex) -> dict:
    return {"kept": by_key[a]["source"], "other": by_key[b]["source"], "cosine": None if cos is None else round(cos, 3),
            "words": round(lex, 2), "content": by_key[a]["content"], "other_content": by_key[b]["content"]}


def _stability(local: LocalState, dry_run: bool) -> tuple[list, int, list, int]:
    """Fold the access log since the last run into each fact's stability (see stability.next_stability);
    a dry run reads the recalls logged beside the table without folding them in."""
    since = int(local.meta("access_rowid", "0"))
    accesses, last = local.accesses_since(since, fold=not dry_run)
    usage = local.usage_all()
    rows, strengthened, faded = [], [], 0
    for key, times in accesses.items():
        s, last_used, uses = usage.get(key, (stability.STABILITY_DEFAULT, 0.0, 0))
        days = len({int(t // 86400) for t in times})
        new_s = stability.next_stability(s, days)
        rows.append((key, new_s, max(last_used, max(times)), uses + len(times)))
        strengthened.append((key, new_s, uses + len(times)))
    for key, (s, last_used, uses) in usage.items():
        if key not in accesses:
            new_s = stability.next_stability(s, 0)
            if new_s < s:
                faded += 1
            rows.append((key, new_s, last_used, uses))
    strengthened.sort(key=lambda x: -x[1])
    return strengthened[:10], faded, rows, last


def _linked_pairs(store: Store) -> set[frozenset]:
    """Entity pairs whose page mentions the other (outside generated blocks: the index skips those)."""
    pairs = set()
    for entity, mentions in store.entity_page_mentions():
        for m in json.loads(mentions or "[]"):
            if m.lower() != entity.lower():
                pairs.add(frozenset((entity.lower(), m.lower())))
    return pairs
