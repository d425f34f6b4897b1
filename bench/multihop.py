"""Multi-hop expansion, leave one conversation out (`python -m bench.quality --report multihop`).

Each expansion variant of memtool.recall.expansion (context, entities, second-hop, feedback) is run
over the LoCoMo dev questions for every point of its grid; per fold the point is chosen on the two
training conversations (multi-hop hitL@10 + cat 1–4 hitL@10; for feedback, among the points that
lower no category on either of them) and reported on the held-out one, next to no expansion. Recall
itself runs feedback (`memtool.recall.expansion.RECALL`); "no expansion" is the baseline here. Query
vectors are embedded once per question and reused across the grid (the same vectors recall would
compute; a grid point then costs ranking only).
"""

from __future__ import annotations

import itertools
import sys
import time

from bench import heldout as H

GRID = {
    "context": {"seeds": (3, 5, 10), "window": (1, 2, 3), "share": (0.15, 0.3, 0.5)},
    "entities": {"seeds": (1, 3, 5), "share": (0.1, 0.2, 0.35)},
    "second-hop": {"seeds": (1, 3, 5), "share": (0.1, 0.2, 0.35)},
    "feedback": {"seeds": (3, 5, 8), "words": (3, 6, 10), "share": (0.05, 0.1, 0.15, 0.2)},
}
# Chosen like the dialogue priors: the best training point among those that lower no category's
# hitL@10 on either training conversation (bench.dialogue.choose); the others by `objective` alone.
NO_LOSS_RULE = {"feedback"}
CATS = ("cat1-4", "multi-hop", "temporal", "open-domain", "single-hop", "adversarial")


class QueryVectors:
    """An embedder that remembers the query vectors it made (documents are not embedded here)."""

    def __init__(self, inner):
        self.inner, self.memo = inner, {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts, *, tiers, query=False):
        if not query:
            return self.inner.embed(texts, tiers=tiers, query=query)
        key = tuple(texts)
        if key not in self.memo:
            self.memo[key] = self.inner.embed(texts, tiers=tiers, query=True)
        return self.memo[key]


def locomo_sweep_setup(args, wss) -> tuple[list[dict], list[str], dict]:
    """LoCoMo questions, their conversations and each one's Memory, its query vectors memoised."""
    from bench.reports import locomo_questions

    questions = locomo_questions(args)
    convs = sorted({q["conv"] for q in questions})
    mems = {c: wss.get(c) for c in convs}
    for mem in mems.values():
        mem.embedding._embedder = QueryVectors(mem.embedding.embedder)
    return questions, convs, mems


def points(kind: str) -> list[dict]:
    grid = GRID[kind]
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def objective(rows: list[dict]) -> float:
    figs = H.category_figures(rows)
    return (figs["multi-hop"]["hitL@10"] or 0.0) + (figs["cat1-4"]["hitL@10"] or 0.0)


def report_multihop(args, wss, scorer, out: dict) -> None:
    from bench.dialogue import choose
    from bench.quality import run
    from memtool.recall.expansion import RECALL, Expansion

    questions, convs, mems = locomo_sweep_setup(args, wss)

    def rows_of(how: Expansion) -> dict[str, list[dict]]:
        by_conv = {}
        for c in convs:
            mems[c].recall_expansion = how
            by_conv[c] = run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer)
            mems[c].recall_expansion = RECALL  # as recall runs it, for the reports after this one
        return by_conv

    t = time.perf_counter()
    base = rows_of(Expansion())
    print(f"  no expansion: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    variants = {"none": {"{}": base}}
    for kind in [k for k in GRID if k in (args.expansions or ",".join(GRID)).split(",")]:
        variants[kind] = {}
        for point in points(kind):
            t = time.perf_counter()
            variants[kind][repr(point)] = rows_of(Expansion(kind=kind, **point))
            print(f"  {kind} {point}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    summary, tables = [], []
    for kind, grid in variants.items():
        folds = []
        grid = {**grid, "{}": base} if kind in NO_LOSS_RULE else grid  # "{}": no expansion
        for held, train in H.folds(convs):
            if kind in NO_LOSS_RULE:
                chosen = choose(grid, "{}", train)
            else:
                chosen = max(grid, key=lambda p: objective([r for c in train for r in grid[p][c]]))
            folds.append({"held_out": held, "point": chosen, "figures": H.category_figures(grid[chosen][held]),
                          "base": H.category_figures(base[held])})
        text = H.markdown_table(["category", *(f"{f['held_out']}" for f in folds)],
                                [[cat, *(_pair(f, cat) for f in folds)] for cat in CATS])
        chosen = "; ".join(f"{f['held_out']}: {f['point']}" for f in folds)
        print(f"\nmulti-hop expansion {kind!r}, held out (chosen on the other two: {chosen}); "
              f"hitL@10/25/50 (n), no expansion → {kind}\n{text}")
        tables.append(text)
        sweep = H.markdown_table(["point", *(f"{c} multi-hop / cat1-4 hitL@10" for c in convs)],
                                 [[p, *(_at10(grid[p][c]) for c in convs)] for p in grid])
        print(f"\nevery point of {kind!r}, per conversation (untuned)\n{sweep}")
        summary.append([kind, *(f["figures"]["multi-hop"]["hitL@10"] for f in folds),
                        *(f["figures"]["cat1-4"]["hitL@10"] - f["base"]["cat1-4"]["hitL@10"] for f in folds)])
        out[f"multihop/{kind}"] = {"table": text, "sweep": sweep, "folds": folds}
    text = H.markdown_table(["variant", *(f"multi-hop hitL@10 ({c})" for c in convs),
                             *(f"Δ cat1-4 hitL@10 ({c})" for c in convs)], summary)
    print(f"\nmulti-hop expansion, held-out summary\n{text}")
    out["multihop/summary"] = {"table": text}


def _pair(fold: dict, cat: str) -> str:
    a, b = fold["base"][cat], fold["figures"][cat]
    if not b["n"]:
        return "–"
    return ("/".join(H.fmt(a[m]) for m in H.BUDGETS) + " → " + "/".join(H.fmt(b[m]) for m in H.BUDGETS)
            + f" ({b['n']})")


def _at10(rows: list[dict]) -> str:
    figs = H.category_figures(rows)
    return f"{H.fmt(figs['multi-hop']['hitL@10'])} / {H.fmt(figs['cat1-4']['hitL@10'])}"
