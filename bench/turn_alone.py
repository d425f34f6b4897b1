"""A dialogue turn's vector alone beside the pair's (`python -m bench.quality --report turn-alone`).

Experiment, bench-side: a turn is embedded together with the turn before it (memtool.embedders.
embed_text); here each turn is also embedded alone (once, memoised in the cache folder) and the
semantic side's cosine of a fact is a combination of the two: the pair's (as shipped), the
larger, or a weighted mean. The semantic candidates are then scored exactly over every fact of
the (small) workspace. Per fold the combination is chosen on the two other conversations by the
held-out rule of bench.dialogue (the best cat 1–4 + multi-hop hitL@10 among the points that
lower no category at 10, 25 or 50 lines on either) and reported on the held-out one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bench import heldout as H

# how the pair's cosine p and the turn-alone one a become the fact's: label → (kind, weight of p)
POINTS = {"pair": ("mean", 1.0), "max": ("max", None), "mean .75": ("mean", 0.75), "mean .5": ("mean", 0.5),
          "mean .25": ("mean", 0.25), "alone": ("mean", 0.0)}
# a second sweep: finer weights, the alone cosine discounted, and only for the turns of a speaker the
# question names (`--alone-points more`)
MORE = {"pair": ("mean", 1.0), "mean .9": ("mean", 0.9), "max -.02": ("max", 0.02), "max -.04": ("max", 0.04),
        "named max": ("named", 0.0), "named max -.02": ("named", 0.02), "named mean .5": ("named mean", 0.5)}
POINTS.update(MORE)
# a third: reciprocal-rank fusion of the two lists (k 60; the pair's rank counted once or twice)
RRF = {"pair": ("mean", 1.0), "rrf": ("rrf", 1.0), "rrf pair x2": ("rrf", 2.0)}
POINTS.update(RRF)


class AloneVectors:
    """Per workspace: fact ids, the pair vectors (the index's), the turn-alone vectors."""

    def __init__(self, mem, cache: Path, text: str):
        import numpy as np

        from memtool.embedders import embed_text
        from memtool.store.vectors import dequantize, quantize

        store = mem.store
        rows = store.conn.execute(
            "SELECT f.id, f.ehash, f.content, f.context, p.content FROM facts f"
            " LEFT JOIN facts p ON p.path = f.path AND p.ord = f.ord - 1 WHERE f.ehash IS NOT NULL ORDER BY f.id").fetchall()
        index, matrix = store.vectors.for_hashes([r[1] for r in rows])
        rows = [r for r in rows if r[1] in index]
        self.ids = [r[0] for r in rows]
        self.pair = matrix[[index[r[1]] for r in rows]]
        pair_texts = [embed_text(r[2], r[3], r[4]) for r in rows]
        alone_texts = {"content": lambda: [r[2] for r in rows],
                       "context": lambda: [embed_text(r[2], r[3], None) for r in rows],
                       "unmarked": lambda: [_unmarked(t) for t in pair_texts],
                       "last": lambda: [embed_text(r[2], r[3], _last_sentence(r[4]) if r[4] else None)
                                        for r in rows]}[text]()
        path = cache / f"turn-alone-{text}.npy"
        if path.exists():
            alone = np.load(path)
        else:
            todo = [i for i, (a, p) in enumerate(zip(alone_texts, pair_texts)) if a != p]
            t = time.perf_counter()
            alone = self.pair.copy()
            embedder = mem.embedding.embedder
            embedder = getattr(embedder, "inner", embedder)
            for s in range(0, len(todo), 32):
                part = todo[s:s + 32]
                vecs = embedder.embed([alone_texts[i] for i in part], tiers=["normal"] * len(part))
                alone[part] = dequantize([r.tobytes() for r in quantize(vecs)], vecs.shape[1])
            np.save(path, alone)
            print(f"  {len(todo)} turns embedded alone in {time.perf_counter() - t:.0f}s", file=sys.stderr)
        self.alone = alone
        from memtool.dialogue import speaker_of

        self.speakers = np.array([speaker_of(r[2]) or "" for r in rows], dtype=object)
        self.differs = sum(a != p for a, p in zip(alone_texts, pair_texts))

    def cosines(self, query, point, named=frozenset()):
        import numpy as np

        q = query / (np.linalg.norm(query) or 1.0)
        p, a = self.pair @ q, self.alone @ q
        kind, w = POINTS[point]
        if kind == "max":
            return np.maximum(p, a - (w or 0.0))
        if kind == "rrf":
            return w / (60 + _ranks(p)) + 1 / (60 + _ranks(a))
        if kind.startswith("named"):
            mask = np.isin(self.speakers, list(named)) if named else np.zeros(len(p), dtype=bool)
            other = np.maximum(p, a - w) if kind == "named" else w * p + (1 - w) * a
            return np.where(mask, other, p)
        return w * p + (1 - w) * a


def semantic_with(alone_of: dict, point: str):
    """memtool.recall.candidates.semantic, its ranking cosines read from `alone_of[store]` by `point`
    (the relevance's nearest records as shipped; no translations or centring: LoCoMo is English)."""
    from memtool.recall import candidates as C

    shipped = C.semantic

    def semantic(store, embedding, query, filters, n, also=()):
        found, own = shipped(store, embedding, query, filters, n, also)
        vecs = alone_of.get(id(store))
        if vecs is None or also or filters.active:
            return found, own
        q = embedding.embedder.embed([query], tiers=["normal"], query=True)[0]
        asked = _named(vecs, query)
        first = _top(vecs, vecs.cosines(q, point, asked), n)
        named = C._speakers_named(store, query, first)
        unnamed = C.without_names(query, named) if named else ""
        if not unnamed:
            return first, own
        other = embedding.embedder.embed([unnamed], tiers=["normal"], query=True)[0]
        share = C.unnamed_share(query, named)
        mixed = (1 - share) * q + share * other
        return _top(vecs, vecs.cosines(mixed / float((mixed @ mixed) ** 0.5), point, asked), n), own

    return semantic


def _unmarked(text: str) -> str:
    """The pair's text without the speakers' `**Name**:` labels (the second vector of `--alone-text
    unmarked`: the names out of the turn's vector, as recall takes them half out of the query's)."""
    import re

    from memtool.dialogue import _SPEAKER

    label = re.compile(r"(?m)(^|: )" + _SPEAKER.pattern.lstrip("^") + r"\s*")
    return label.sub(lambda m: m.group(1), text)


def _last_sentence(turn: str) -> str:
    """A turn's label and its last sentence, image captions left out (`--alone-text last`: the pair
    with only the end of the turn before, most often the question the turn answers)."""
    import re

    from memtool.dialogue import _SPEAKER

    m = _SPEAKER.match(turn)
    label, body = (turn[:m.end()], turn[m.end():]) if m else ("", turn)
    body = re.sub(r"\[image:[^\]]*\]", " ", body).strip()
    sentences = [x for x in re.split(r"(?<=[.!?])\s+", body) if x.strip()]
    return f"{label} {sentences[-1]}".strip() if sentences else turn


def _ranks(sims):
    """1-based rank of each value, best first."""
    import numpy as np

    ranks = np.empty(len(sims))
    ranks[np.argsort(-sims, kind="stable")] = np.arange(1, len(sims) + 1)
    return ranks


def _named(vecs: AloneVectors, query: str) -> set[str]:
    """The speakers `query` names as written (memtool.recall.candidates._speakers_named's rule)."""
    import re

    from memtool.recall.ranking import names_speakers

    found = names_speakers(query, {s for s in vecs.speakers if s})
    return {s for s in found if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query)}


def _top(vecs: AloneVectors, sims, n: int) -> list[tuple[int, float]]:
    import numpy as np

    order = np.argsort(-sims, kind="stable")[:n]
    return sorted(((vecs.ids[i], float(sims[i])) for i in order), key=lambda x: (-x[1], x[0]))


def report_turn_alone(args, wss, scorer, out: dict) -> None:
    from bench.dialogue import LOSS_CATS, choose_rule, no_loss_any_budget
    from bench.multihop import locomo_sweep_setup
    from memtool.recall import candidates as C

    questions, convs, mems = locomo_sweep_setup(args, wss)
    text = getattr(args, "alone_text", None) or "content"
    alone_of = {}
    for c in convs:
        vecs = AloneVectors(mems[c], Path(mems[c].ws.root) / ".memory", text)
        alone_of[id(mems[c].store)] = vecs
        print(f"  {c}: {vecs.differs} of {len(vecs.ids)} facts have a turn-alone text of their own", file=sys.stderr)
    shipped = C.semantic
    grid = {}
    try:
        grid["as shipped"] = _runs(mems, questions, convs, scorer)
        sweeps = {"more": MORE, "rrf": RRF}
        first = {k: v for k, v in POINTS.items() if (k not in MORE and k not in RRF) or k == "pair"}
        for point in sweeps.get(getattr(args, "alone_points", ""), first):
            t = time.perf_counter()
            C.semantic = semantic_with(alone_of, point)
            grid[point] = _runs(mems, questions, convs, scorer)
            print(f"  {point}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    finally:
        C.semantic = shipped
    cell = lambda rows: _cell(rows)
    sweep = H.markdown_table(["point", *convs], [[p, *(cell(grid[p][c]) for c in convs)] for p in grid])
    print(f"\nturn alone ({text}), every point: cat 1–4 hitL@10/25/50; hitL@10 multi-hop / single-hop / temporal / "
          f"adversarial (with the floor)\n{sweep}")
    rows, pooled_base, pooled = [], [], []
    for held, train in H.folds(convs):
        chosen = choose_rule(grid, "pair", [p for p in grid if p != "as shipped"], train)
        rows.append([held, chosen, cell(grid["pair"][held]), cell(grid[chosen][held]),
                     "yes" if no_loss_any_budget(grid[chosen], grid["pair"], [held]) else "**no**"])
        pooled_base += grid["pair"][held]
        pooled += grid[chosen][held]
    table = H.markdown_table(["held out", "chosen on the other two", "pair", "chosen", "loses nothing held out"], rows)
    print(f"\nturn alone ({text}), held out\n{table}\npooled held out: {cell(pooled_base)} → {cell(pooled)}")
    per_cat = H.markdown_table(["category", "pair (pooled)", "chosen (pooled)"],
                               [[k, _triple(H.category_figures(pooled_base)[k]), _triple(H.category_figures(pooled)[k])]
                                for k in ("cat1-4", *LOSS_CATS[1:], "open-domain")])
    print(per_cat)
    out["turn_alone"] = {"sweep": sweep, "table": table, "rows": grid}


def _runs(mems, questions, convs, scorer) -> dict:
    from bench.quality import run

    return {c: run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer) for c in convs}


def _cell(rows) -> str:
    f = H.category_figures(rows)
    return ("/".join(H.fmt(f["cat1-4"][m]) for m in H.BUDGETS) + "; "
            + " / ".join(H.fmt(f[k]["hitL@10"]) for k in ("multi-hop", "single-hop", "temporal", "adversarial")))


def _triple(f) -> str:
    return "/".join(H.fmt(f[m]) for m in H.BUDGETS) + f" ({f['n']})"
