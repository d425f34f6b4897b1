"""Language centring of the semantic side, for notes written in German and English (issue 16,
item 4).

A multilingual embedder's vectors carry a component shared by every text of a language: with
e5-small, any German line sits nearer a German question than most English lines do, whatever
they say, so a question finds lines of its own language first. Subtracting each language's mean
vector (from the query that of the query's language, from a record that of its own) and comparing
what is left removes that component (Libovický et al. 2020, "On the language neutrality of
pre-trained multilingual representations"); recall can take away a share of it
(memtool.recall.candidates.CENTRING; off as shipped, and then this module is not imported). Measured in docs/recall-experiments.md ("Language centring", "The parallel set"). The means come from an even sample of the index's records,
kept per process until the index changes; in an index with (next to) no text in one of the
languages there is nothing to centre and the ranking is the model's.
"""

from __future__ import annotations

from memtool.analyzer import detect_language

SAMPLE = 400  # records read to estimate the language means (~25 ms at 10^4 records, once per process and index state)
MIN_RECORDS = 20  # records of each language in the sample before the index counts as bilingual
_means: dict = {}  # (index file and object, its state, vector fingerprint) → the means: one entry per process


def language_means(store) -> dict | None:
    """`de` and `en` → the mean of their records' vectors (a sample), or None for an index with
    fewer than MIN_RECORDS sampled records of either language."""
    key = (str(store.path), id(store), store.state_version(), store.vectors.fingerprint())
    if key not in _means:
        _means.clear()
        _means[key] = _estimate(store.sample_texts(SAMPLE), store.vectors)
    return _means[key]


def _estimate(rows: list[tuple[str, str]], vectors) -> dict | None:
    import numpy as np

    index, matrix = vectors.for_hashes(list({h for _, h in rows}))
    groups: dict[str, list[int]] = {"de": [], "en": []}
    for content, ehash in rows:
        if ehash in index:
            groups[detect_language(content)].append(index[ehash])
    if any(len(rows_) < MIN_RECORDS for rows_ in groups.values()):
        return None
    return {lang: np.asarray(matrix[rows_], dtype=np.float32).mean(axis=0) for lang, rows_ in groups.items()}


def centred_query(query, lang: str, means: dict, share: float):
    """The query vector without `share` of its language's mean (`lang`: the query's, by
    detect_language). Pure."""
    return query / _norm(query) - share * means[lang]


def centred_cosines(query, lang: str, matrix, langs: list[str], means: dict, share: float):
    """Cosines between the centred query and each row of `matrix` (unit record vectors) centred by
    its own language (`langs`, one per row), `share` of each mean taken away. Pure."""
    import numpy as np

    q = centred_query(query, lang, means, share)
    rows = matrix - share * np.stack([means[l] for l in langs])
    return (rows / _norm(rows, axis=1)) @ (q / _norm(q))


def _norm(x, axis=None):
    import numpy as np

    n = np.linalg.norm(x, axis=axis, keepdims=axis is not None)
    return np.where(n == 0, 1.0, n) if axis is not None else (n or 1.0)
