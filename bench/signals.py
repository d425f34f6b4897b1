"""Candidate confidence signals for one recall: what might tell a memory from a guess.

Reads the index the way recall does (read-only: the store's BM25 search and vector search, the
embedder's query vector) without changing memtool, so the signals can be compared before the
recall code exposes one. Higher always means "more likely answerable".

    best_score                   recall's calibrated relevance of the query (its first result's public score;
                                 what the "nothing relevant" floor is applied to)
    hybrid_top, hybrid_gap       the public score of the first hybrid result, and its lead over the second
    lexical_top                  the public score of the first result in --mode lexical
                                 (--mode semantic's first score is 1.0 + priors by construction: min-max
                                 scaling over the candidates; not recorded)
    cos_top                      raw cosine of the nearest vector to the query (e5: query: prefix)
    cos_z                        how far cos_top stands above the cosines of the 100 nearest (in their SDs)
    cos_lead                     cos_top minus the 100th nearest cosine
    bm25_top                     raw BM25 of the best lexical hit (FTS5 bm25(), sign flipped)
    bm25_norm                    bm25_top / (2.2 × the summed IDF of the query terms): 1.0 ≈ every term, once
    coverage                     share of the query's words found in the best lexical hit
    idf_coverage                 the same, weighted by each word's IDF in this workspace
    known_terms                  IDF-weighted share of the query's words found anywhere in the workspace
"""

from __future__ import annotations

import math
import statistics

from memtool.analyzer import fts_match

NAMES = ("best_score", "hybrid_top", "hybrid_gap", "lexical_top", "cos_top", "cos_z", "cos_lead",
         "bm25_top", "bm25_norm", "coverage", "idf_coverage", "known_terms")
K1 = 1.2  # FTS5's bm25 k1: a term's contribution is at most IDF × (k1 + 1)


def _top(result) -> float:
    return result.results[0]["score"] if result.results and result.results[0]["score"] is not None else 0.0


def _gap(result) -> float:
    scores = [r["score"] or 0.0 for r in result.results[:2]]
    return scores[0] - scores[1] if len(scores) == 2 else (scores[0] if scores else 0.0)


class Signals:
    """Signals over one indexed Memory; document frequencies are cached per term."""

    def __init__(self, mem):
        self.mem = mem
        self.conn = mem.store.conn
        self.n_facts = self.conn.execute("SELECT count(*) FROM facts").fetchone()[0] or 1
        self._df: dict[str, int] = {}

    def df(self, term: str) -> int:
        if term not in self._df:
            self._df[term] = self.conn.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?",
                                               (fts_match([term]),)).fetchone()[0]
        return self._df[term]

    def idf(self, term: str) -> float:
        """FTS5's IDF (floored at 1e-6 as FTS5 does)."""
        n = self.df(term)
        return max(1e-6, math.log((self.n_facts - n + 0.5) / (n + 0.5)))

    def lexical(self, terms: list[str]) -> dict:
        from memtool.store import Filters

        words = _word_terms(terms)
        idf = {t: self.idf(t) for t in words}
        total = sum(idf.values()) or 1.0
        hits = [{"id": fid, "score": score} for fid, score in self.mem.store.search_ids(fts_match(terms), Filters(), 1)] \
            if terms else []
        out = {"bm25_top": 0.0, "bm25_norm": 0.0, "coverage": 0.0, "idf_coverage": 0.0,
               "known_terms": sum(v for t, v in idf.items() if self.df(t)) / total}
        if hits:
            row = self.conn.execute("SELECT terms, ctx_terms FROM facts WHERE id = ?", (hits[0]["id"],)).fetchone()
            have = set(" ".join(x or "" for x in row).split())
            found = [t for t in words if _matches(t, terms, have)]
            out.update(bm25_top=hits[0]["score"], bm25_norm=hits[0]["score"] / ((K1 + 1) * total),
                       coverage=len(found) / len(words) if words else 0.0,
                       idf_coverage=sum(idf[t] for t in found) / total)
        return out

    def semantic(self, query: str, results: list[dict]) -> dict:
        """Cosine signals, and `result_cos`: each result's own raw cosine (0.0 without a vector)."""
        vec = self.mem.embedder.embed([query], tiers=["normal"], query=True)[0]
        every = dict(self.mem.store.vectors.nearest(vec, max(1, self.mem.store.vectors.count())))
        cos = sorted(every.values(), reverse=True)[:100]
        if not cos:
            return {"cos_top": 0.0, "cos_z": 0.0, "cos_lead": 0.0, "result_cos": [0.0] * len(results)}
        sd = statistics.pstdev(cos) or 1.0
        return {"cos_top": cos[0], "cos_z": (cos[0] - statistics.mean(cos)) / sd, "cos_lead": cos[0] - cos[-1],
                "result_cos": [every.get(self.ehash(r), 0.0) for r in results]}

    def ehash(self, result: dict) -> str | None:
        path, _, lines = result["source"].partition("#L")
        row = self.conn.execute("SELECT ehash FROM facts WHERE path = ? AND line_start = ?",
                                (path, int(lines.partition("-L")[0]))).fetchone()
        return row[0] if row else None

    def of(self, query: str, hybrid) -> dict:
        """All signals for `query`, given its hybrid RecallResult (lexical and semantic are run here)."""
        lexical = self.mem.recall(query, k=2, mode="lexical")
        best = hybrid.verdict.best if hybrid.verdict and hybrid.verdict.best is not None else 0.0
        return {"best_score": best, "hybrid_top": _top(hybrid), "hybrid_gap": _gap(hybrid), "lexical_top": _top(lexical),
                **self.semantic(query, hybrid.results), **self.lexical(hybrid.terms)}


def _word_terms(terms: list[str]) -> list[str]:
    """The query's own terms (prefix variants `word*` dropped: they repeat a word)."""
    return [t for t in terms if not t.endswith("*")]


def _matches(term: str, terms: list[str], have: set[str]) -> bool:
    if term in have:
        return True
    return f"{term}*" in terms and any(h.startswith(term) for h in have)
