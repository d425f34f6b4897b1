"""The held-out reports of `python -m bench.quality --report …`: each prints Markdown tables and
stores its rows and figures in `out` (written by --json).

    heldout    LoCoMo dev, leave-one-conversation-out: the mode is chosen on two conversations and
               reported on the third; per fold and category hitL@10/25/50, their mean and pooled figures
    offtopic   candidate confidence signals (bench/signals.py) for answerable and off-topic queries:
               AUC, and a "nothing relevant" floor chosen on two folds and applied to the third;
               the floor per kind of text, conversations and notes (bench/calibration.py)
    bilingual  example set hit@1 per direction (question language → evidence-line language); with
               several --modes also each cross-lingual question's rank per mode (words, meaning or fusion)
    latency    in-process recall p50/p95 at 10^4 generated facts (real query embedding, synthetic vectors)
    docset     the documentation-style set per type and direction, and scaffolding on top (bench/docset.py)
    parallel   encyclopedic paragraphs in English and German as daily logs, per direction and half (bench/parallel.py)
    multihop   LoCoMo dev, leave-one-conversation-out, per multi-hop expansion variant (bench/multihop.py)
    dialogue   LoCoMo dev, leave-one-conversation-out, speaker boost × neighbour share (bench/dialogue.py)
    unnamed    LoCoMo dev, leave-one-conversation-out, the query's vector without the speakers it names (bench/dialogue.py)
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

from bench import calibration, dialogue, diversity, docset, multihop, parallel, turn_alone
from bench import heldout as H
from bench import signals as S

ROOT = Path(__file__).resolve().parents[1]
OFFTOPIC_QUESTIONS = ROOT / "bench" / "data" / "offtopic_questions.jsonl"
# off-topic questions naming a speaker of the conversation ({name}: each of its two main speakers)
NAMED_OFFTOPIC = ROOT / "bench" / "data" / "offtopic_named.jsonl"
COMBINATIONS = {  # logistic models over several signals, fitted per fold on its training rows
    "cos+idf_coverage": ("cos_top", "idf_coverage"),
    "combined": ("cos_top", "cos_z", "idf_coverage", "known_terms", "bm25_norm", "hybrid_gap"),
}

_memo: dict = {}


def rows_for(wss, ws: str, qset: str, questions: list[dict], mode: str, scorer, signals: bool = False) -> list[dict]:
    """bench.quality.run over `ws`, remembered for this process (a report may reuse another's rows)."""
    from bench.quality import run

    key = (ws, qset, mode)
    if (*key, True) in _memo:
        return _memo[(*key, True)]
    if not signals and (*key, False) in _memo:
        return _memo[(*key, False)]
    t = time.perf_counter()
    mem = wss.get(ws)
    rows = run(mem, questions, mode, scorer, signals=S.Signals(mem) if signals else None)
    print(f"  {qset} on {ws}, {mode}: {len(rows)} queries in {time.perf_counter() - t:.0f}s", file=sys.stderr)
    _memo[(*key, signals)] = rows
    return rows


def locomo_questions(args) -> list[dict]:
    from bench.quality import read_jsonl, thin

    questions = read_jsonl(Path(args.eval_dir) / "locomo-dev" / "questions.jsonl")
    return [q for conv in sorted({q["conv"] for q in questions})
            for q in thin([q for q in questions if q["conv"] == conv], args.quick)]


def example_questions(args) -> list[dict]:
    from bench.quality import EXAMPLE_QUESTIONS, read_jsonl, thin

    return thin(read_jsonl(EXAMPLE_QUESTIONS), args.quick, 2)


def _triple(fig: dict) -> str:
    vals = [fig[m] for m in H.BUDGETS]
    return "/".join(H.fmt(v) for v in vals) + f" ({fig['n']})" if fig["n"] else "–"


# --- heldout -----------------------------------------------------------------------------------

def report_heldout(args, wss, scorer, out: dict) -> None:
    modes = ["hybrid"] if args.quick else args.modes.split(",")
    questions = locomo_questions(args)
    convs = sorted({q["conv"] for q in questions})
    rows = {m: [r for c in convs for r in rows_for(wss, c, "locomo", [q for q in questions if q["conv"] == c], m, scorer)]
            for m in modes}
    cats = ["cat1-4", "multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]
    for m in modes:  # untuned: per conversation
        per = {c: H.category_figures([r for r in rows[m] if r["conv"] == c]) for c in convs}
        text = H.markdown_table(["category", *convs, "all"],
                                [[cat, *(_triple(per[c][cat]) for c in convs),
                                  _triple(H.category_figures(rows[m])[cat])] for cat in cats])
        print(f"\nLoCoMo dev per conversation, mode {m}: hitL@10/25/50 (n)\n{text}")
        out[f"heldout/per-conversation/{m}"] = {"table": text, "figures": per}
    folds, pooled = [], []
    for held, train in H.folds(convs):
        mode = H.choose({m: None for m in modes},
                        lambda m: [r for r in rows[m] if r["conv"] in train and r["category"] in (1, 2, 3, 4)])
        test = [r for r in rows[mode] if r["conv"] == held]
        pooled += test
        folds.append({"held_out": held, "trained_on": train, "mode": mode, "figures": H.category_figures(test)})
    mean = {cat: {"n": sum(f["figures"][cat]["n"] for f in folds),
                  **{b: _mean([f["figures"][cat][b] for f in folds]) for b in H.BUDGETS}} for cat in cats}
    header = ["category", *(f"{f['held_out']} ({f['mode']})" for f in folds), "mean of folds", "pooled"]
    text = H.markdown_table(header, [[cat, *(_triple(f["figures"][cat]) for f in folds), _triple(mean[cat]),
                                      _triple(H.category_figures(pooled)[cat])] for cat in cats])
    print("\nLoCoMo dev, leave-one-conversation-out (mode chosen on the other two by cat1-4 hitL@10;"
          f" held-out hitL@10/25/50, n)\n{text}")
    out["heldout/loo"] = {"table": text, "folds": folds, "mean": mean}


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return statistics.mean(vals) if vals else None


# --- offtopic ----------------------------------------------------------------------------------

def offtopic_rows(args, wss, scorer) -> tuple[list[dict], list[str]]:
    """Every probe as a row with its signals, `label` (1 answerable, 0 off-topic, None adversarial),
    `subset`, and `owners`: the folds it belongs to (its LoCoMo workspace, its question's part).
    A row is held out in fold f when its owners are {f}, and trains fold f when f is not among them."""
    from bench.quality import read_jsonl

    locomo = locomo_questions(args)
    convs = sorted({q["conv"] for q in locomo})
    example = example_questions(args)
    handwritten = read_jsonl(OFFTOPIC_QUESTIONS)
    part = {q["qid"]: convs[i % len(convs)] for i, q in enumerate(example)}
    part.update({q["qid"]: convs[i % len(convs)] for i, q in enumerate(handwritten)})
    probes = []
    for c in convs:
        own = [q for q in locomo if q["conv"] == c]
        probes.append((c, "locomo", own, lambda q, c=c: (1 if q["category"] != 5 else None, "answerable", {c})))
        probes.append((c, "example-as-offtopic", [dict(q, evidence_locations=[]) for q in example],
                       lambda q, c=c: (0, "example set asked of LoCoMo", {c, part[q["qid"]]})))
        probes.append((c, "handwritten", [q for q in handwritten if c not in q.get("answerable_in", ())],
                       lambda q, c=c: (0, "handwritten", {c, part[q["qid"]]})))
        probes.append((c, "named", named_offtopic(wss, c), lambda q, c=c: (None, "named off-topic", {c})))
    probes.append(("example", "example", example, lambda q: (1, "answerable", {part[q["qid"]]})))
    probes.append(("example", "locomo-as-offtopic", [dict(q, evidence_locations=[]) for q in locomo if q["category"] != 5],
                   lambda q: (0, "LoCoMo asked of the example", {q["conv"]})))
    probes.append(("example", "handwritten", [q for q in handwritten if "example" not in q.get("answerable_in", ())],
                   lambda q: (0, "handwritten", {part[q["qid"]]})))
    rows = []
    for ws, qset, questions, label_of in probes:
        for q, r in zip(questions, rows_for(wss, ws, qset, questions, "hybrid", scorer, signals=True)):
            label, subset, owners = label_of(q)
            if subset == "answerable" and label is None:
                subset = "adversarial"
            rows.append(dict(r, score=r["score_open"], ws=ws, question=q["question"], label=label, subset=subset,
                             owners=sorted(owners)))  # signals are judged before recall's own floor
    return rows, convs


def named_offtopic(wss, conv: str) -> list[dict]:
    """The templates of NAMED_OFFTOPIC filled with the conversation's two most frequent speakers:
    off-topic questions that name someone every other turn is by. Reported apart (label None)."""
    from collections import Counter

    from bench.quality import read_jsonl

    root = wss.get(conv).ws.root
    turns = Counter(m.group(1) for p in sorted((root / "memory").glob("*.md"))
                    for m in re.finditer(r"^- \*\*([^*]+)\*\*:", p.read_text(encoding="utf-8"), re.M))
    return [dict(t, qid=f"{t['qid']}-{i}", question=t["question"].format(name=name), evidence_locations=[])
            for t in read_jsonl(NAMED_OFFTOPIC) for i, (name, _) in enumerate(turns.most_common(2))]


def _split(rows, fold):
    test = [r for r in rows if r["owners"] == [fold]]
    train = [r for r in rows if fold not in r["owners"]]
    return train, test


def report_offtopic(args, wss, scorer, out: dict) -> None:
    rows, convs = offtopic_rows(args, wss, scorer)
    labelled = [r for r in rows if r["label"] is not None]
    pos, neg = [r for r in labelled if r["label"] == 1], [r for r in labelled if r["label"] == 0]
    adversarial = [r for r in rows if r["subset"] == "adversarial"]
    subsets = sorted({r["subset"] for r in neg})
    print(f"\noff-topic probes: {len(pos)} answerable, {len(neg)} off-topic ("
          + ", ".join(f"{s}: {sum(r['subset'] == s for r in neg)}" for s in subsets)
          + f"), {len(adversarial)} adversarial (reported apart)", file=sys.stderr)
    # the logistic combinations, fitted per fold on its training rows, predicted on its held-out rows
    for name, signals in COMBINATIONS.items():
        for held in convs:
            train, _ = _split(labelled, held)
            model = H.fit_logistic(train, [r["label"] for r in train], signals)
            for r in rows:
                if r["owners"] == [held]:
                    r[name] = H.predict(model, r)
    names = [*S.NAMES, *COMBINATIONS]
    table_rows, figures = [], {}
    for name in names:
        fold_figs = []
        for held in convs:
            train, test = _split(labelled, held)
            if name in COMBINATIONS:  # its training predictions come from a model fitted on that fold's training rows
                model = H.fit_logistic(train, [r["label"] for r in train], COMBINATIONS[name])
                train = [dict(r, **{name: H.predict(model, r)}) for r in train]
            floor = H.choose_floor([r for r in train if r["label"] == 1], [r for r in train if r["label"] == 0], name)
            tpos, tneg = [r for r in test if r["label"] == 1], [r for r in test if r["label"] == 0]
            rates = H.floor_rates(floor, tpos, tneg, name)
            rates["auc"] = H.auc([r[name] for r in tpos], [r[name] for r in tneg])
            rates["held_out"] = held
            fold_figs.append(rates)
        scored = [r for r in labelled if name in r]
        all_auc = H.auc([r[name] for r in scored if r["label"] == 1], [r[name] for r in scored if r["label"] == 0])
        fig = {"auc_all": all_auc, "folds": fold_figs,
               **{k: _mean([f[k] for f in fold_figs]) for k in ("auc", "offtopic_refused", "answerable_lost")}}
        figures[name] = fig
        table_rows.append([name, fig["auc_all"], fig["auc"], *(f["floor"] for f in fold_figs),
                           fig["offtopic_refused"], fig["answerable_lost"]])
    text = H.markdown_table(["signal", "AUC all", "AUC held-out", *(f"floor ({c} held out)" for c in convs),
                             "off-topic refused", "answerable lost"], table_rows)
    print("\nconfidence signals: answerable (LoCoMo cat1-4, example set) vs off-topic; floor chosen on two folds "
          f"(≤ {H.MAX_LOSS:.0%} answerable lose their evidence from the first 10 lines), rates held out, mean of folds\n{text}")
    best = max(names, key=lambda n: (figures[n]["offtopic_refused"] or 0) - 10 * max(0.0, (figures[n]["answerable_lost"] or 0) - H.MAX_LOSS))
    detail = []
    for f in figures[best]["folds"]:
        _, test = _split(rows, f["held_out"])
        per = {s: _refused([r for r in test if r["subset"] == s], best, f["floor"]) for s in subsets}
        detail.append([f["held_out"], f["floor"], f["auc"], f["offtopic_refused"], f["answerable_lost"],
                       f["answerable_refused"], *(per[s] for s in subsets),
                       _refused([r for r in test if r["subset"] == "adversarial"], best, f["floor"])])
    text2 = H.markdown_table(["held out", "floor", "AUC", "off-topic refused", "answerable lost", "answerable refused",
                              *subsets, "adversarial refused"], detail)
    print(f"\nbest signal {best!r}, per fold (held-out rates)\n{text2}")
    # the same signal's distribution, to read a floor in plain words
    quant = [[label, *(_quantile([r[best] for r in sel if best in r], q) for q in (0.05, 0.25, 0.5, 0.75, 0.95))]
             for label, sel in (("answerable", pos), ("answerable, evidence in first 10 lines",
                                                      [r for r in pos if r["score"].get("hitL@10") == 1.0]),
                                *((s, [r for r in neg if r["subset"] == s]) for s in subsets), ("adversarial", adversarial))]
    text3 = H.markdown_table([f"{best} of", "p5", "p25", "p50", "p75", "p95"], quant)
    print(f"\n{text3}")
    text4 = cosine_floor(rows, convs, scorer)
    text5 = shipped_floor(rows, convs, wss)
    mem = wss.get(convs[0])
    kinds = calibration.report(calibration.kind_rows(args, wss, scorer)[0], convs, mem.embedder.fingerprint(),
                               mem.config.recall_floor)
    out["offtopic"] = {"tables": [text, text2, text3, text4, text5], "per_kind": kinds, "figures": figures, "best": best,
                       "rows": [{k: v for k, v in r.items() if k != "score"} | {"hitL@10": r["score"].get("hitL@10")}
                                for r in rows]}


def shipped_floor(rows: list[dict], convs: list[str], wss) -> str:
    """What recall's own default floor does, per held-out fold: its constants were fitted before
    these folds were reported (docs/recall.md), and nothing here is tuned."""
    floor = wss.get(convs[0]).config.recall_floor
    labelled = [r for r in rows if r["label"] is not None]
    table_rows = []
    for held in [*convs, "all"]:
        test = labelled if held == "all" else _split(labelled, held)[1]
        pos, neg = [r for r in test if r["label"] == 1], [r for r in test if r["label"] == 0]
        adversarial = [r for r in rows if r["subset"] == "adversarial" and (held == "all" or r["owners"] == [held])]
        named = [r for r in rows if r["subset"] == "named off-topic" and (held == "all" or r["owners"] == [held])]
        rates = H.floor_rates(floor, pos, neg, "best_score")
        table_rows.append([held, len(pos), len(neg), H.auc([r["best_score"] for r in pos], [r["best_score"] for r in neg]),
                           rates["offtopic_refused"], rates["answerable_lost"], rates["answerable_refused"],
                           _refused(adversarial, "best_score", floor), _refused(named, "best_score", floor)])
    text = H.markdown_table(["held out", "answerable", "off-topic", "AUC of best_score", "off-topic refused",
                             "answerable lost", "answerable refused", "adversarial refused",
                             "named off-topic refused"], table_rows)
    print(f"\nrecall's default floor (best_score < {floor}: 'nothing relevant'), as shipped\n{text}")
    return text


def cosine_floor(rows: list[dict], convs: list[str], scorer) -> str:
    """The raw-cosine floor two ways, chosen per fold on its training rows: per query (nothing relevant
    when the nearest vector is below it) and per result (results whose own cosine is below it are
    dropped); and the cosine at which a class-balanced logistic fit says P(answerable) = 0.5."""
    labelled = [r for r in rows if r["label"] is not None]
    grid = [round(0.70 + i * 0.001, 3) for i in range(251)]  # e5 cosines live in a narrow band
    table_rows = []
    for held in convs:
        train, test = _split(labelled, held)
        tpos = [r for r in train if r["label"] == 1]
        hpos, hneg = [r for r in test if r["label"] == 1], [r for r in test if r["label"] == 0]
        adversarial = [r for r in rows if r["owners"] == [held] and r["subset"] == "adversarial"]
        x0, scale = H.calibration(H.fit_logistic(train, [r["label"] for r in train], ["cos_top"], balanced=True))
        for max_loss in (0.01, 0.02, H.MAX_LOSS):
            floor = H.highest_floor(grid, lambda f: _lost_per_query(tpos, f), max_loss)
            table_rows.append([held, f"per query, ≤ {max_loss:.0%} lost in training", floor, _refused(hneg, "cos_top", floor),
                               _lost_per_query(hpos, floor), _refused(adversarial, "cos_top", floor),
                               x0 if max_loss == H.MAX_LOSS else None, scale if max_loss == H.MAX_LOSS else None])
        per_result = H.highest_floor(grid, lambda f: _lost_per_result(tpos, f, scorer))
        table_rows += [[held, "per result", per_result, _refused(hneg, "cos_top", per_result),
                        _lost_per_result(hpos, per_result, scorer), _refused(adversarial, "cos_top", per_result), None, None]]
    text = H.markdown_table(["held out", "floor applies", "cos floor", "off-topic refused", "answerable lost",
                             "adversarial refused", "P=0.5 at cos", "scale"], table_rows)
    print(f"\nraw cosine floor, chosen on the two other folds (≤ {H.MAX_LOSS:.0%} answerable lose their evidence "
          f"from the first 10 lines), held-out rates; logistic calibration P(answerable) = 1/(1+exp(-(cos-x0)/scale))\n{text}")
    return text


def _lost_per_query(rows, floor):
    return sum(r["score"].get("hitL@10") == 1.0 and r["cos_top"] < floor for r in rows) / len(rows)


def _lost_per_result(rows, floor, scorer):
    lost = 0
    for r in rows:
        if r["score"].get("hitL@10") != 1.0:
            continue
        kept = [c for c, cos in zip(r["ranked"], r["result_cos"]) if cos >= floor]
        lost += scorer.score_question({"evidence_locations": r["evidence"]}, kept, [10], False)["hitL@10"] != 1.0
    return lost / len(rows)


def _refused(rows, name, floor):
    rows = [r for r in rows if name in r]
    return sum(r[name] < floor for r in rows) / len(rows) if rows else None


def _quantile(vals, q):
    if not vals:
        return None
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(q * len(vals)))]


# --- bilingual ---------------------------------------------------------------------------------

def evidence_language(ws: Path, loc: str) -> str:
    from memtool.analyzer import detect_language

    path, _, line = loc.partition("#L")
    text = (ws / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
    return detect_language(text)


def report_bilingual(args, wss, scorer, out: dict) -> None:
    questions = example_questions(args)
    src = wss.source("example")
    direction = {}
    for q in questions:
        langs = sorted({evidence_language(src, loc) for loc in q["evidence_locations"]})
        direction[q["qid"]] = f"{q['lang']}→{langs[0]}" if len(langs) == 1 else f"{q['lang']}→de+en"
    modes = ["hybrid"] if args.quick else args.modes.split(",")
    groups = ["en→en", "de→de", "de→en", "en→de", "en→de+en", "de→de+en"]
    table_rows = []
    for m in modes:
        rows = rows_for(wss, "example", "example", questions, m, scorer)
        for g in groups:
            sel = [r for r, q in zip(rows, questions) if direction[q["qid"]] == g]
            if sel:
                table_rows.append([m, g, len(sel), H.mean_of(sel, "hit@1"), H.mean_of(sel, "hit@5"),
                                   H.mean_of(sel, "hitL@10")])
    text = H.markdown_table(["mode", "question → evidence", "n", "hit@1", "hit@5", "hitL@10"], table_rows)
    print(f"\nexample set per direction (evidence language by memtool.analyzer.detect_language of the line)\n{text}")
    out["bilingual"] = {"table": text, "direction": direction,
                        "rows": {m: rows_for(wss, "example", "example", questions, m, scorer) for m in modes}}
    if len(modes) > 1:
        ranks = cross_ranks(questions, direction, {m: rows_for(wss, "example", "example", questions, m, scorer)
                                                   for m in modes})
        print(f"\ncross-lingual questions: rank of the first result citing an evidence line, per mode, before the floor (–: not among 50)\n{ranks}")
        out["bilingual"]["ranks"] = ranks


def cross_ranks(questions: list[dict], direction: dict, rows: dict[str, list[dict]]) -> str:
    """Per cross-lingual question, the rank of the first result citing its evidence in each mode (1 / MRR):
    tells a miss by words (lexical –) from one by meaning (semantic low) or by fusion."""
    table = []
    for i, q in enumerate(questions):
        d = direction[q["qid"]]
        if d.split("→")[0] not in d.split("→")[1]:
            rr = [rows[m][i]["score_open"].get("mrr") for m in rows]  # before the floor
            table.append([q["qid"], d, *(round(1 / r) if r else "–" for r in rr), q["question"]])
    return H.markdown_table(["qid", "direction", *rows, "question"], table)


# --- latency -----------------------------------------------------------------------------------

def report_latency(args, wss, scorer, out: dict) -> None:
    from bench.generate import generate
    from bench.run import pick_queries, recall_latency, synthetic_vectors
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    facts = 2_000 if args.quick else 10_000
    ws = wss.root / f"generated-{facts}"
    fresh = not (ws / ".memory" / "index.sqlite").exists()
    if fresh:
        generate(ws, facts, overwrite=ws.exists())
    mem = Memory(Workspace(ws), embedder=args.embedder)
    mem.track_access = False
    if fresh:
        synthetic_vectors(mem)
    mem.refresh()
    queries = pick_queries(ws, 60)
    table_rows = []
    for mode in ("lexical", "hybrid"):
        p50, p95 = recall_latency(mem, queries, 4, mode=mode)
        table_rows.append([f"{facts:,} generated facts", mode, p50, p95])
    mem.close()
    for name, key in (("LoCoMo dev (~500 facts per conversation), k=50", "locomo"),
                      ("example workspace, k=50", "example")):
        rows = [r for (ws_, qset, mode, _), rs in _memo.items() if qset == key and mode == "hybrid" for r in rs]
        if rows:
            lat = sorted(r["latency_s"] * 1000 for r in rows)
            table_rows.append([name, "hybrid", _quantile(lat, 0.5), _quantile(lat, 0.95)])
    text = H.markdown_table(["workspace", "mode", "p50 ms", "p95 ms"], table_rows)
    print(f"\nrecall latency in-process (k=10 on generated facts with synthetic vectors; the query is embedded "
          f"by the real model)\n{text}")
    out["latency"] = {"table": text}


REPORTS = {"heldout": report_heldout, "offtopic": report_offtopic, "bilingual": report_bilingual,
           "latency": report_latency}
REPORTS["docset"] = docset.report_docset
REPORTS["parallel"] = parallel.report_parallel
REPORTS["multihop"] = multihop.report_multihop
REPORTS["dialogue"] = dialogue.report_dialogue
REPORTS["unnamed"] = dialogue.report_unnamed
REPORTS["unnamed-rules"] = dialogue.report_unnamed_rules
REPORTS["turn-alone"] = turn_alone.report_turn_alone
REPORTS["mhop-diversity"] = diversity.report_diversity
REPORTS["mhop-questions"] = diversity.report_questions
REPORTS["mhop-addressed"] = diversity.report_addressed
REPORTS["mhop-told"] = diversity.report_told
