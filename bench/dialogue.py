"""Dialogue priors, leave one conversation out (`python -m bench.quality --report dialogue`).

The speaker boost and the neighbour share of memtool.recall.ranking are swept over the LoCoMo dev
questions; per fold the point is chosen on the two training conversations: the best cat 1–4 +
multi-hop hitL@10 among the points that lower no category's hitL@10 (adversarial included) on
either of them, and reported on the held-out one next to the shipped values. Query vectors are
embedded once per question and reused (bench.multihop.QueryVectors). The constants are module
values read at ranking time; the report sets them for a run and restores them after.
"""

from __future__ import annotations

import itertools
import re
import sys
import time

from bench import heldout as H
from bench.multihop import locomo_sweep_setup

GRID = {"speaker_boost": (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5), "neighbour_share": (0.25, 0.35, 0.5)}
CATS = ("cat1-4", "multi-hop", "temporal", "single-hop", "adversarial")


def at10(rows: list[dict]) -> dict[str, float]:
    figs = H.category_figures(rows)
    return {c: figs[c]["hitL@10"] for c in CATS if figs[c]["n"]}


def no_loss(point: dict, base: dict, convs: list[str]) -> bool:
    """Whether `point` keeps every category's hitL@10 on each of `convs` at least at `base`'s."""
    for c in convs:
        new, old = at10(point[c]), at10(base[c])
        if any(new[k] < old[k] - 1e-9 for k in old):
            return False
    return True


def choose(grid: dict, base_key, train: list[str]):
    """The training conversations' best point (cat 1–4 + multi-hop hitL@10) among those losing nothing."""
    allowed = [k for k in grid if no_loss(grid[k], grid[base_key], train)]
    return max(allowed, key=lambda k: (training_gain(grid[k], train), k == base_key))


def training_gain(runs: dict, train: list[str]) -> float:
    """Cat 1–4 plus multi-hop hitL@10 over the `train` conversations of `runs` (conversation → rows)."""
    figs = H.category_figures([r for c in train for r in runs[c]])
    return (figs["cat1-4"]["hitL@10"] or 0.0) + (figs["multi-hop"]["hitL@10"] or 0.0)


def report_dialogue(args, wss, scorer, out: dict) -> None:
    from bench.quality import run
    from memtool.recall import ranking

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = (ranking.SPEAKER_BOOST, ranking.NEIGHBOUR_SHARE)
    grid = {}
    try:
        for point in [shipped, *itertools.product(*GRID.values())]:
            if point in grid:
                continue
            t = time.perf_counter()
            ranking.SPEAKER_BOOST, ranking.NEIGHBOUR_SHARE = point
            grid[point] = {c: run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer) for c in convs}
            print(f"  speaker boost {point[0]}, neighbour share {point[1]}: {time.perf_counter() - t:.0f}s",
                  file=sys.stderr)
    finally:
        ranking.SPEAKER_BOOST, ranking.NEIGHBOUR_SHARE = shipped
    base = (0.1, 0.25)  # before issue 16's held-out tuning
    sweep = H.markdown_table(["speaker boost / neighbour share", *convs],
                             [[f"{p[0]} / {p[1]}", *(" / ".join(H.fmt(v) for v in at10(grid[p][c]).values())
                                                    for c in convs)] for p in grid])
    print(f"\ndialogue priors, every point, hitL@10 ({' / '.join(CATS)}) per conversation\n{sweep}")
    rows = []
    for held, train in H.folds(convs):
        chosen = choose(grid, base, train)
        rows.append([held, f"{chosen[0]} / {chosen[1]}",
                     *(f"{H.fmt(at10(grid[base][held]).get(k))} → {H.fmt(at10(grid[chosen][held]).get(k))}" for k in CATS)])
    text = H.markdown_table(["held out", "chosen on the other two", *CATS], rows)
    print(f"\ndialogue priors, held out (hitL@10, 0.1 / 0.25 → the chosen point)\n{text}")
    out["dialogue"] = {"sweep": sweep, "table": text}


# --- the speakers' names out of the query's vector (memtool.recall.candidates.UNNAMED_SHARE) ---------

UNNAMED_GRID = (0.0, 0.25, 0.4, 0.5, 0.6, 0.7, 1.0)
LOSS_CATS = ("cat1-4", "multi-hop", "temporal", "single-hop", "adversarial")  # open-domain: 8–11 questions


def no_loss_any_budget(point: dict, base: dict, convs: list[str]) -> bool:
    """Whether `point` keeps every category (open-domain excepted) at 10, 25 and 50 lines on each of
    `convs` at least at `base`'s."""
    for c in convs:
        new, old = H.category_figures(point[c]), H.category_figures(base[c])
        if any(new[k][m] < old[k][m] - 1e-9 for k in LOSS_CATS if old[k]["n"] for m in H.BUDGETS):
            return False
    return True


def _cell(rows) -> str:
    """cat 1–4 hitL@10/25/50; hitL@10 of multi-hop / single-hop / adversarial, for a sweep table."""
    f = H.category_figures(rows)
    return ("/".join(H.fmt(f["cat1-4"][m]) for m in H.BUDGETS) + "; "
            + " / ".join(H.fmt(f[k]["hitL@10"]) for k in ("multi-hop", "single-hop", "adversarial")))


def report_unnamed(args, wss, scorer, out: dict) -> None:
    """The share of the ranking vector read without the speakers a question names, swept; per fold
    the best training cat 1–4 + multi-hop hitL@10 among the shares that lower no category at any
    budget on either training conversation (floor off: `score_open`), reported on the held-out one."""
    from memtool.recall import candidates

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = candidates.UNNAMED_SHARE
    try:
        grid = _sweep({share: share for share in UNNAMED_GRID}, lambda v: setattr(candidates, "UNNAMED_SHARE", v),
                      mems, questions, convs, scorer, "share without names ")
    finally:
        candidates.UNNAMED_SHARE = shipped

    sweep = H.markdown_table(["share without names", *convs], [[s, *(_cell(grid[s][c]) for c in convs)] for s in grid])
    print(f"\nspeakers' names out of the vector, every share: cat 1–4 hitL@10/25/50; hitL@10 multi-hop / "
          f"single-hop / adversarial (floor off)\n{sweep}")
    rows = []
    for held, train in H.folds(convs):
        chosen = choose_rule(grid, 0.0, list(grid), train)
        rows.append([held, chosen, _cell(grid[0.0][held]), _cell(grid[chosen][held])])
    text = H.markdown_table(["held out", "chosen on the other two", "share 0", "chosen share"], rows)
    print(f"\nspeakers' names out of the vector, held out\n{text}")
    out["unnamed"] = {"sweep": sweep, "table": text}


# --- rules on the question's form: which share, for which question (candidates.unnamed_share) ----------

_AUX = r"(?:do|does|did|has|have|had|is|was|are|were|would|will|might|could|can|should|may|what|who|when|how|why|where)"


def _subject(query: str, name: str) -> bool:
    """Whether `name` stands where a question's subject does: first, or after an auxiliary or a
    question word ("What did Melanie paint?", "Melanie is …"), not as a possessive."""
    return bool(re.search(rf"(?:^|\b{_AUX}\s+){re.escape(name)}(?!['’]s)\b", query, flags=re.I))


_PRONOUN = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself)\b", re.I)


def _plain(query: str, named: set[str]) -> bool:
    """One speaker named, not as a possessive, and no he/she/his/her referring back to anyone:
    "What has Melanie painted?", not "What do Melanie's family give her?"."""
    return (len(named) == 1 and not _PRONOUN.search(query)
            and not re.search(rf"\b{re.escape(next(iter(named)))}['’]s\b", query, flags=re.I))


def _rules() -> dict[str, object]:
    def flat(s):
        return lambda q, named: s

    def count(one, many):
        return lambda q, named: one if len(named) == 1 else many

    def subject(subj, other):
        return lambda q, named: subj if all(_subject(q, n) for n in named) else other

    def plain(yes, no):
        return lambda q, named: yes if _plain(q, named) else no

    def unowned(yes, no):  # one name, not possessive (pronouns allowed)
        return lambda q, named: yes if len(named) == 1 and not re.search(
            rf"\b{re.escape(next(iter(named)))}['’]s\b", q, flags=re.I) else no

    def no_pronoun(yes, no):
        return lambda q, named: no if _PRONOUN.search(q) else yes

    rules = {"flat .5": flat(0.5), "flat 1": flat(1.0)}
    for yes in (0.6, 0.7, 0.8, 0.9, 1.0):
        rules[f"one {yes}, many .5"] = count(yes, 0.5)
        rules[f"subject {yes}, else .5"] = subject(yes, 0.5)
        rules[f"plain {yes}, else .5"] = plain(yes, 0.5)
    rules |= {"one 1, many 0": count(1.0, 0.0), "subject 1, else 0": subject(1.0, 0.0),
              "unowned 1, else .5": unowned(1.0, 0.5), "unowned .7, else .5": unowned(0.7, 0.5),
              "no pronoun 1, else .5": no_pronoun(1.0, 0.5), "no pronoun .7, else .5": no_pronoun(0.7, 0.5),
              "plain .65, else .5": plain(0.65, 0.5), "plain .75, else .5": plain(0.75, 0.5),
              "plain 1, else .4": plain(1.0, 0.4)}
    return rules


FAMILIES = ("one", "subject", "plain", "any")  # a rule's family: its name's first word


def _sweep(points: dict, apply, mems: dict, questions: list[dict], convs: list[str], scorer, say: str = "") -> dict:
    """label → conversation → hybrid rows (floor off: `score` is `score_open`), each point's value
    put in place by `apply` before its runs; the caller restores what was shipped."""
    from bench.quality import run

    grid = {}
    for label, value in points.items():
        t = time.perf_counter()
        apply(value)
        grid[label] = {c: [{**r, "score": r["score_open"]} for r in
                           run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer)] for c in convs}
        print(f"  {say}{label}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    return grid


def choose_rule(grid: dict, base: str, rules: list[str], train: list[str]) -> str:
    """The training conversations' best rule (cat 1–4 + multi-hop hitL@10) among `rules` that lower
    no category at any budget on either (`no_loss_any_budget`); ties: `base`."""
    allowed = [r for r in rules if no_loss_any_budget(grid[r], grid[base], train)]
    return max(allowed, key=lambda r: (training_gain(grid[r], train), r == base))


def report_unnamed_rules(args, wss, scorer, out: dict) -> None:
    """Rules on the question's form choosing the share without names (`_rules`), against the
    shipped flat share: per fold and family of rules (`FAMILIES`; "any": all of them), the best
    training cat 1–4 + multi-hop hitL@10 among the rules that lower no category at any budget on
    either training conversation (`choose_rule`), reported held out (floor off: `score_open`)."""
    from memtool.recall import candidates

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = candidates.unnamed_share
    try:
        grid = _sweep(_rules(), lambda v: setattr(candidates, "unnamed_share", v), mems, questions, convs, scorer)
    finally:
        candidates.unnamed_share = shipped
    base = "flat .5"

    sweep = H.markdown_table(["rule", *convs], [[s, *(_cell(grid[s][c]) for c in convs)] for s in grid])
    print(f"\nshare without names by the question's form, every rule: cat 1–4 hitL@10/25/50; hitL@10 multi-hop / "
          f"single-hop / adversarial (floor off)\n{sweep}")
    rows = []
    for family in FAMILIES:
        for held, train in H.folds(convs):
            chosen = choose_rule(grid, base, [r for r in grid if r == base or family in ("any", r.split()[0])], train)
            rows.append([family, held, chosen, _cell(grid[base][held]), _cell(grid[chosen][held]),
                         "yes" if no_loss_any_budget(grid[chosen], grid[base], [held]) else "**no**"])
    text = H.markdown_table(["rules", "held out", "chosen on the other two", base, "chosen rule", "loses nothing held out"], rows)
    print(f"\nshare without names by the question's form, held out (each family of rules, and any rule)\n{text}")
    out["unnamed_rules"] = {"sweep": sweep, "table": text,
                            "rows": {s: {c: grid[s][c] for c in convs} for s in grid}}
