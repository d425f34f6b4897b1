"""Candidate retrieval: the facts each side finds for a query, lexical (BM25 over the FTS index)
and semantic (nearest vectors), filters applied, fused into one score per fact."""

from __future__ import annotations

from memtool.analyzer import fts_match
from memtool.embedding import Embedding
from memtool.recall.ranking import fuse
from memtool.store import Filters, Store

CANDIDATES = 100  # lexical and semantic candidates each, before fusion


def lexical(store: Store, terms: list[str], filters: Filters, n: int) -> list[tuple[int, float]]:
    """(fact id, BM25 score) of the best `n` facts holding the query's terms."""
    return store.search_ids(fts_match(store.prune_common(terms)), filters, n)


def semantic(store: Store, embedding: Embedding, query: str, filters: Filters, n: int) -> list[tuple[int, float]]:
    """(fact id, cosine) of the facts nearest to the query, filters applied."""
    qvec = embedding.embedder.embed([query], tiers=["normal"], query=True)[0]  # the caller's own words
    hits = store.vectors.nearest(qvec, n * 4 if filters.active else n)
    return store.ids_for_hashes(hits, filters)[:n]


def candidates(store: Store, embedding: Embedding, query: str, terms: list[str], filters: Filters, mode: str,
               n: int, warnings: list[str]) -> tuple[dict[int, float], str, str | None]:
    """Fused candidate scores, the mode that actually ran, and why it is degraded (if it is);
    what the user should know goes to `warnings`."""
    found, degraded = [], None
    if mode != "lexical":
        degraded = embedding.unusable(store)
        if degraded is None:
            found = semantic(store, embedding, query, filters, n)
            warnings.extend(store.vectors.take_notices())  # e.g. the approximate index rebuilt
            missing, _withheld = embedding.gaps(store)  # withheld: by trust tier, found by words (see status)
            if missing:
                warnings.append(f"{missing} records have no vector yet and are found only by words; run 'mem index'")
        else:
            warnings.append(f"semantic search unavailable, answering by words only: {degraded}")
    words = lexical(store, terms, filters, n) if mode != "semantic" or degraded else []
    used = "lexical" if degraded or mode == "lexical" else mode
    return fuse(words, found if used != "lexical" else []), used, degraded
