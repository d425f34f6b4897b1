"""Multi-hop: query decomposition and diversity in the first 10 lines, leave one conversation out
(`python -m bench.quality --report mhop-diversity`; docs/recall-experiments.md, "Multi-hop: decomposition and
diversity").

Each question is recalled once as recall answers it (150 results, floor read as shipped); every
variant is then a rule over that list — lines of one day, of one run of adjacent turns, or of a
speaker the question does not name, kept out of the first 10 lines beyond a cap — or, for a question
naming two or more speakers of the turns it finds, one recall per named speaker (the other names
left out) interleaved. A variant only reorders: what is past the first lines keeps its order. Per
fold the variant is chosen on the two training conversations (the best cat 1–4 + multi-hop hitL@10
among those that lower no category, open-domain excepted, at 10, 25 or 50 lines on either) and
reported on the held-out one. Query vectors are embedded once per text and reused.

`--report mhop-questions` sweeps what was kept from it: memtool.recall.ranking.QUESTION_PENALTY, a
dialogue turn lowered by its share of question sentences, the same rule per fold. `--report
mhop-addressed` sweeps ANSWERED_HEAD (the answer to a turn that asks, raised to its score) and
ADDRESSED_PENALTY (another speaker's turn naming the person a present-perfect question asks about,
lowered) together, the same rule per fold. `--report mhop-told` sweeps TOLD_BOOST (a turn by the person
the question names that tells a past day, raised), the same rule per fold.
"""

from __future__ import annotations

import re
import sys
import time

from bench import heldout as H
from bench.dialogue import no_loss_any_budget
from bench.multihop import locomo_sweep_setup

POOL = 50  # results read per question (recall's candidates grow with k past 100: read as the benchmark reads them)
FIRST = 10  # lines in which a variant spreads the evidence


def _lines(r: dict) -> int:
    from bench.quality import cites

    return sum(b - a + 1 for _, a, b in cites(r))


def _day(r: dict) -> str:
    return r["source"].partition("#")[0]


def _line(r: dict) -> int:
    return int(r["source"].partition("#L")[2].partition("-")[0])


def capped(results: list[dict], over) -> list[dict]:
    """The results with those that `over(result, kept)` says exceed a cap moved from the first FIRST
    lines to just after them, each group in its order. Pure."""
    kept, later, lines = [], [], 0
    for i, r in enumerate(results):
        if lines >= FIRST:
            return kept + later + results[i:]
        if over(r, kept):
            later.append(r)
        else:
            kept.append(r)
            lines += _lines(r)
    return kept + later


def day_cap(cap: int, head: int = 0):
    """At most `cap` results of one day (file) in the first lines; the first `head` always stay."""
    def over(r, kept):
        return len(kept) >= head and sum(_day(k) == _day(r) for k in kept) >= cap
    return lambda results, q: capped(results, over)


def run_cap(cap: int, gap: int):
    """At most `cap` results of one run of nearby lines (same day, within `gap` lines of another
    result kept from that run) in the first lines: a question and its answer stay, the third
    turn of one exchange waits."""
    def over(r, kept):
        same = [k for k in kept if _day(k) == _day(r)]
        run, grew = {id(r)}, True
        members = [r]
        while grew:
            grew = False
            for k in same:
                if id(k) not in run and any(abs(_line(k) - _line(m)) <= gap for m in members):
                    run.add(id(k))
                    members.append(k)
                    grew = True
        return len(members) - 1 >= cap
    return lambda results, q: capped(results, over)


def speaker_cap(cap: int):
    """When the question names a speaker of the turns found, at most `cap` turns of other speakers
    in the first lines."""
    from memtool.dialogue import speaker_of
    from memtool.recall.ranking import names_speakers

    def rule(results, q):
        speakers = {speaker_of(r["content"]) for r in results} - {None}
        named = names_speakers(q, speakers)
        if not named:
            return results
        def over(r, kept):
            s = speaker_of(r["content"])
            return s is not None and s not in named and sum(
                (speaker_of(k["content"]) or "") not in named for k in kept) >= cap
        return capped(results, over)
    return rule


def parts(query: str, speakers: set[str]) -> list[str]:
    """For a query naming two or more of `speakers`: one query per named speaker, the others (and an
    "and" or "&" beside them, and "both") left out. Pure; [] for a query naming fewer."""
    from memtool.recall.ranking import names_speakers

    named = sorted(names_speakers(query, speakers))
    if len(named) < 2:
        return []
    out = []
    for keep in named:
        text = query
        for other in named:
            if other == keep:
                continue
            o = re.escape(other)
            pattern = rf"\s*(?:\band\b|&)\s+{o}(?:'s)?\b|\b{o}(?:'s)?\s+(?:\band\b|&)\s*|\b{o}(?:'s)?\b"
            text = re.sub(pattern, " ", text, flags=re.I)
        text = re.sub(r"(?i)\bboth\b", " ", text)
        out.append(re.sub(r"\s+", " ", text).strip())
    return out


def joined(query: str, speakers: set[str]) -> bool:
    """Whether the query joins two of the speakers it names by "and" or "&" ("Jon and Gina"). Pure."""
    from memtool.recall.ranking import names_speakers

    named = [re.escape(n) for n in names_speakers(query, speakers)]
    return any(re.search(rf"(?i)\b{a}\s+(?:and|&)\s+{b}\b", query) for a in named for b in named if a != b)


def interleaved(lists: list[list[dict]], head: list[dict] = ()) -> list[dict]:
    """`head`, then the lists' results in turn (first of each, second of each, …), each once. Pure."""
    seen, out = set(), []
    for r in head:
        if r["source"] not in seen:
            seen.add(r["source"])
            out.append(r)
    for i in range(max(map(len, lists), default=0)):
        for lst in lists:
            if i < len(lst) and lst[i]["source"] not in seen:
                seen.add(lst[i]["source"])
                out.append(lst[i])
    return out


def by_share(lists: list[list[dict]]) -> list[dict]:
    """Every list's results by their share of that list's best score, the most any list gives. Pure."""
    best: dict[str, tuple[float, dict]] = {}
    for lst in lists:
        top = (lst[0]["score"] or 1.0) if lst else 1.0
        for r in lst:
            share = (r["score"] or 0.0) / top
            if r["source"] not in best or share > best[r["source"]][0]:
                best[r["source"]] = (share, r)
    return [r for _, r in sorted(best.values(), key=lambda x: -x[0])]


_IMAGE = re.compile(r"\[image:[^\]]*\]")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def asking(content: str) -> float:
    """The share of a record's sentences that are questions (a dialogue turn's label and image
    captions left out). Pure."""
    from memtool.dialogue import speaker_of

    text = _IMAGE.sub(" ", content)
    if speaker_of(text):
        text = text.partition(":")[2]
    sentences = [s.strip() for s in _SENTENCE.findall(text) if re.search(r"\w", s)]
    return sum(s.endswith("?") for s in sentences) / len(sentences) if sentences else 0.0


def questions_down(delta: float, last: bool = False):
    """Each result's share of the best score less `delta` × its share of question sentences (or, with
    `last`, `delta` when its last sentence is a question), reordered."""
    def rule(results, q):
        top = (results[0]["score"] or 1.0) if results else 1.0
        def penalty(r):
            if last:
                text = _IMAGE.sub(" ", r["content"]).rstrip()
                return delta if text.endswith("?") else 0.0
            return delta * asking(r["content"])
        return sorted(results, key=lambda r: -((r["score"] or 0.0) / top - penalty(r)))
    return rule


def speaker_parts(full, ps, speakers_of):
    """Each part's results cut to its own speaker's turns (and lines that are no turn), in turn."""
    from memtool.dialogue import speaker_of

    lists = [[r for r in lst if speaker_of(r["content"]) in (None, s)] for lst, s in zip(ps, speakers_of)]
    return interleaved(lists, full[:1])


DECOMPOSE = {
    "parts in turn": lambda full, ps: interleaved(ps),
    "whole, then parts in turn": lambda full, ps: interleaved([full, *ps]),
    "whole's first, then parts in turn": lambda full, ps: interleaved(ps, full[:1]),
    "whole's first 3, then parts in turn": lambda full, ps: interleaved(ps, full[:3]),
    "whole and parts by share of their best": lambda full, ps: by_share([full, *ps]),
    "parts by share of their best": lambda full, ps: by_share(ps),
}
DIVERSE = {
    **{f"day cap {c}" + (f", first {h} free" if h else ""): day_cap(c, h) for c in (2, 3, 4) for h in (0, 3)},
    **{f"run cap {c}, gap {g}": run_cap(c, g) for c in (1, 2, 3) for g in (1, 2)},
    **{f"unnamed speakers cap {c}": speaker_cap(c) for c in (3, 4, 5, 6)},
    **{f"questions down {d}": questions_down(d) for d in (0.05, 0.1, 0.15, 0.2, 0.3)},
    **{f"last sentence a question, down {d}": questions_down(d, True) for d in (0.05, 0.1, 0.2)},
}


def report_diversity(args, wss, scorer, out: dict) -> None:
    from bench.quality import cites, last_day
    from memtool.dialogue import speaker_of

    questions, convs, mems = locomo_sweep_setup(args, wss)
    ks = [1, 5, 10, 25, 50]
    from memtool.recall.ranking import names_speakers

    recalled = {}  # qid → (full results, part results or [], refused)
    split_by = {}  # qid → (the speakers of its parts, whether the question joins them by "and")
    t = time.perf_counter()
    for c in convs:
        mem, today = mems[c], last_day(mems[c].ws.root)
        floor = mem.config.recall_floor
        for q in [q for q in questions if q["conv"] == c]:
            res = mem.recall(q["question"], k=POOL, mode="hybrid", today=today, min_score=0)
            best = res.verdict.best if res.verdict else None
            speakers = {speaker_of(r["content"]) for r in res.results} - {None}
            ps = [mem.recall(p, k=POOL, mode="hybrid", today=today, min_score=0).results
                  for p in parts(q["question"], speakers)]
            who = sorted(names_speakers(q["question"], speakers)) if ps else []
            recalled[q["qid"]] = (res.results, ps, best is not None and best < floor)
            split_by[q["qid"]] = (who, joined(q["question"], speakers))
    split = sum(1 for v in recalled.values() if v[1])
    print(f"  recalled {len(recalled)} questions ({split} in parts) in {time.perf_counter() - t:.0f}s", file=sys.stderr)

    def rows(order) -> dict[str, list[dict]]:
        by_conv = {c: [] for c in convs}
        for q in questions:
            full, ps, refused = recalled[q["qid"]]
            ranked = [] if refused else [cites(r) for r in order(q, full, ps)[:50]]
            by_conv[q["conv"]].append({"qid": q["qid"], "category": q["category"],
                                       "score": scorer.score_question(q, ranked, ks, False)})
        return by_conv

    grid = {"as shipped": rows(lambda q, full, ps: full)}
    for name, fuse in DECOMPOSE.items():
        grid[f"decompose: {name}"] = rows(lambda q, full, ps, fuse=fuse: fuse(full, ps) if ps else full)
    for name, fuse in DECOMPOSE.items():  # only "A and B"
        grid[f"decompose 'A and B': {name}"] = rows(
            lambda q, full, ps, fuse=fuse: fuse(full, ps) if ps and split_by[q["qid"]][1] else full)
    grid["decompose: each part's own speaker's turns, in turn"] = rows(
        lambda q, full, ps: speaker_parts(full, ps, split_by[q["qid"]][0]) if ps else full)
    grid["decompose 'A and B': each part's own speaker's turns, in turn"] = rows(
        lambda q, full, ps: speaker_parts(full, ps, split_by[q["qid"]][0]) if ps and split_by[q["qid"]][1] else full)
    for name, rule in DIVERSE.items():
        grid[name] = rows(lambda q, full, ps, rule=rule: rule(full, q["question"]))
    for name, rule in DIVERSE.items():  # both: the parts interleaved, then the cap
        if name.startswith("day cap 3") or name.startswith("run cap 2") or name == "unnamed speakers cap 5":
            grid[f"whole's first + parts, {name}"] = rows(
                lambda q, full, ps, rule=rule: rule(interleaved(ps, full[:1]) if ps else full, q["question"]))

    sweep = H.markdown_table(["variant", *convs], [[p, *(_cell(grid[p][c]) for c in convs)] for p in grid])
    print(f"\nmulti-hop decomposition and diversity, every variant per conversation: cat 1–4 hitL@10/25/50; "
          f"hitL@10 multi-hop / temporal / single-hop / adversarial\n{sweep}")
    held = []
    for h, train in H.folds(convs):
        allowed = [p for p in grid if no_loss_any_budget(grid[p], grid["as shipped"], train)]
        chosen = max(allowed, key=lambda p: (_gain(grid[p], train), p == "as shipped"))
        held.append([h, chosen, _cell(grid["as shipped"][h]), _cell(grid[chosen][h])])
    text = H.markdown_table(["held out", "chosen on the other two", "as shipped", "chosen"], held)
    print(f"\nmulti-hop decomposition and diversity, held out\n{text}")
    out["mhop-diversity"] = {"sweep": sweep, "table": text}


def _gain(runs: dict, train: list[str]) -> float:
    figs = H.category_figures([r for c in train for r in runs[c]])
    return (figs["cat1-4"]["hitL@10"] or 0.0) + (figs["multi-hop"]["hitL@10"] or 0.0)


def _cell(rows) -> str:
    f = H.category_figures(rows)
    return ("/".join(H.fmt(f["cat1-4"][m]) for m in H.BUDGETS) + "; "
            + " / ".join(H.fmt(f[k]["hitL@10"]) for k in ("multi-hop", "temporal", "single-hop", "adversarial")))


# --- turns that ask, lowered (memtool.recall.ranking.QUESTION_PENALTY) ------------------------------

QUESTION_GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def _last_asks(content: str) -> float:
    """1 when a dialogue turn's last sentence is a question (the form swept beside the share)."""
    from memtool.dialogue import _ASIDE, speaker_of

    return float(bool(speaker_of(content)) and _ASIDE.sub(" ", content).rstrip().endswith("?"))


def report_questions(args, wss, scorer, out: dict) -> None:
    """The penalty for a dialogue turn's share of question sentences (or for a last sentence that
    asks), swept over the LoCoMo dev questions as recall answers them (floor on); per fold the best
    training cat 1–4 + multi-hop hitL@10 among the points that lower no category at 10, 25 or 50
    lines on either training conversation, reported on the held-out one."""
    from bench.quality import run
    from memtool import dialogue
    from memtool.recall import ranking

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = (ranking.QUESTION_PENALTY, ranking.asking)
    points = {"0 (before)": (0.0, dialogue.asking)}
    points.update({f"share × {d}": (d, dialogue.asking) for d in QUESTION_GRID})
    points.update({f"last asks × {d}": (d, _last_asks) for d in QUESTION_GRID})
    grid = {}
    try:
        for label, (penalty, form) in points.items():
            t = time.perf_counter()
            ranking.QUESTION_PENALTY, ranking.asking = penalty, form
            grid[label] = {c: run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer) for c in convs}
            print(f"  questions down, {label}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    finally:
        ranking.QUESTION_PENALTY, ranking.asking = shipped
    out["mhop-questions"] = _swept(grid, convs, "turns that ask, lowered", "penalty", "as shipped")


def _swept(grid: dict, convs: list[str], title: str, point: str, before: str) -> dict:
    """A sweep's two tables, printed: every point per conversation, and per fold the point with the best
    training gain among those that lower no category at any budget on either training conversation
    ("0 (before)" on a tie), reported on the held-out one; returned with the figures, for --json."""
    base = "0 (before)"
    sweep = H.markdown_table([point, *convs], [[p, *(_cell(grid[p][c]) for c in convs)] for p in grid])
    print(f"\n{title}, every point per conversation: cat 1–4 hitL@10/25/50; hitL@10 multi-hop / temporal / "
          f"single-hop / adversarial\n{sweep}")
    held = []
    for h, train in H.folds(convs):
        allowed = [p for p in grid if no_loss_any_budget(grid[p], grid[base], train)]
        chosen = max(allowed, key=lambda p: (_gain(grid[p], train), p == base))
        held.append([h, chosen, _cell(grid[base][h]), _cell(grid[chosen][h]),
                     no_loss_any_budget(grid[chosen], grid[base], [h])])
    text = H.markdown_table(["held out", "chosen on the other two", before, "chosen", "loses nothing"], held)
    print(f"\n{title}, held out\n{text}")
    return {"sweep": sweep, "table": text,
            "grid": {p: {c: H.category_figures(grid[p][c]) for c in convs} for p in grid}}


# --- answers raised, turns addressed to the person asked about lowered ------------------------------
# (memtool.recall.ranking.ANSWERED_HEAD, ADDRESSED_PENALTY)

ANSWERED_POINTS = {"0 (before)": (0, 0.0), "answered 5": (5, 0.0), "answered 10": (10, 0.0), "answered 20": (20, 0.0),
                   "addressed × .5": (0, 0.5), "addressed × 1": (0, 1.0),
                   "answered 10, addressed × .5": (10, 0.5), "answered 10, addressed × 1": (10, 1.0)}


def report_addressed(args, wss, scorer, out: dict) -> None:
    """The answer to a turn that asks among the first N hits raised to its score, and the penalty for
    a turn by someone else that names the person a present-perfect question asks about ("What has
    Melanie painted?"), swept over the LoCoMo dev questions as recall answers them (floor on); per fold
    the best training cat 1–4 + multi-hop hitL@10 among the points that lower no category at 10, 25 or
    50 lines on either training conversation, reported on the held-out one."""
    from bench.quality import run
    from memtool.recall import ranking

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = (ranking.ANSWERED_HEAD, ranking.ADDRESSED_PENALTY)
    grid = {}
    try:
        for label, (head, penalty) in ANSWERED_POINTS.items():
            t = time.perf_counter()
            ranking.ANSWERED_HEAD, ranking.ADDRESSED_PENALTY = head, penalty
            grid[label] = {c: run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer) for c in convs}
            print(f"  {label}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    finally:
        ranking.ANSWERED_HEAD, ranking.ADDRESSED_PENALTY = shipped
    out["mhop-addressed"] = _swept(grid, convs, "answers raised, addressed turns lowered", "point", "before")


# --- turns that tell what happened, raised (memtool.recall.ranking.TOLD_BOOST) ----------------------

TOLD_GRID = (0.05, 0.075, 0.1, 0.125, 0.15)


def report_told(args, wss, scorer, out: dict) -> None:
    """The boost for a turn by a speaker the question names that tells a past day ("yesterday", "last
    week": memtool.recall.timeframe.tells_past), swept over the LoCoMo dev questions as recall answers
    them (floor on); per fold the best training cat 1–4 + multi-hop hitL@10 among the points that lower
    no category at 10, 25 or 50 lines on either training conversation, reported on the held-out one."""
    from bench.quality import run
    from memtool.recall import ranking

    questions, convs, mems = locomo_sweep_setup(args, wss)
    shipped = ranking.TOLD_BOOST
    grid = {}
    try:
        for label, boost in {"0 (before)": 0.0, **{f"told + {b}": b for b in TOLD_GRID}}.items():
            t = time.perf_counter()
            ranking.TOLD_BOOST = boost
            grid[label] = {c: run(mems[c], [q for q in questions if q["conv"] == c], "hybrid", scorer) for c in convs}
            print(f"  {label}: {time.perf_counter() - t:.0f}s", file=sys.stderr)
    finally:
        ranking.TOLD_BOOST = shipped
    out["mhop-told"] = _swept(grid, convs, "turns that tell what happened, raised", "boost", "before")
