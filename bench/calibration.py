"""The "nothing relevant" floor per kind of text (issue 16): conversation turns and notes sit at
different distances from any question, so recall calibrates the raw cosine of the nearest record
with the constants of that record's kind (memtool.recall.relevance.text_kind: a `**Name**: text`
turn is dialogue, anything else notes), for notes with the query's word shares beside it (`known`,
`near`: memtool.recall.relevance.word_shares), fitted per fold here (`fit(rows, WORDS)`, then
`with_margin`). Printed by `--report offtopic` and `--report docset`.

Probes. Dialogue workspaces: the LoCoMo dev conversations with the probes of `--report offtopic`
(their own questions answerable, the example set and the handwritten off-topic questions not).
Notes workspaces: the example workspace and the docset, each asked its own questions (answerable)
and the other sets' questions (off-topic): LoCoMo cat 1-4 (every third on the docset), the
example set or the docset's, the
handwritten off-topic questions (bench/data/offtopic_questions.jsonl), the docset's off-topic ones
and bench/data/notes_offtopic.jsonl (questions one might ask of notes or help pages that neither
workspace answers: appointments, recipes, app features the docset's app lacks).

Folds. Every question file is split in three parts by line order (LoCoMo questions by their
conversation), named after the three conversations; a probe belongs to its question's part and, in
a LoCoMo workspace, to that conversation too. Fold f is fitted on the probes that do not belong to
f and reported on those that belong to f alone, as `--report offtopic` does. The notes constants
are also checked across workspaces: fitted on the example workspace, reported on the docset, and
the reverse.
"""

from __future__ import annotations

from pathlib import Path

from bench import heldout as H

ROOT = Path(__file__).resolve().parents[1]
NOTES_OFFTOPIC = ROOT / "bench" / "data" / "notes_offtopic.jsonl"
NOTES_WORKSPACES = ("example", "docset")
SIGNALS = ("coverage", "bm25_norm", "idf_coverage", "known", "near")  # word signals tried beside the cosine for notes
WORDS = ("cos", "known", "near")  # what recall reads for notes (memtool.recall.relevance.Calibration)


def parts(questions: list[dict], convs: list[str]) -> dict[str, str]:
    """qid → the fold its question belongs to: line order modulo 3, named after the conversations."""
    return {q["qid"]: convs[i % len(convs)] for i, q in enumerate(questions)}


def notes_probes(args, convs: list[str]) -> list[tuple[str, str, list[dict], int, dict]]:
    """(workspace, question set, questions, label, qid → fold) for the notes workspaces, beyond the
    example workspace's probes in `reports.offtopic_rows`."""
    from bench import docset
    from bench.quality import read_jsonl
    from bench.reports import OFFTOPIC_QUESTIONS, example_questions, locomo_questions

    own = read_jsonl(docset.QUESTIONS)
    off = read_jsonl(docset.OFFTOPIC)
    notes = read_jsonl(NOTES_OFFTOPIC)
    hand = read_jsonl(OFFTOPIC_QUESTIONS)
    example = example_questions(args)
    locomo = [q for q in locomo_questions(args) if q["category"] != 5][::3]  # every third: 128
    conv_of = {q["qid"]: q["conv"] for q in locomo}
    blank = lambda qs: [dict(q, evidence_locations=[]) for q in qs]  # noqa: E731
    usable = lambda qs, ws: [q for q in qs if ws not in q.get("answerable_in", ())]  # noqa: E731
    return [("docset", "docset", own, 1, parts(own, convs)),
            ("docset", "docset off-topic", off, 0, parts(off, convs)),
            ("docset", "notes off-topic", usable(notes, "docset"), 0, parts(notes, convs)),
            ("docset", "handwritten", usable(hand, "docset"), 0, parts(hand, convs)),
            ("docset", "example set asked of the docset", blank(example), 0, parts(example, convs)),
            ("docset", "LoCoMo asked of the docset", blank(locomo), 0, conv_of),
            ("example", "notes off-topic", usable(notes, "example"), 0, parts(notes, convs)),
            ("example", "docset asked of the example", blank(own), 0, parts(own, convs)),
            ("example", "docset off-topic", off, 0, parts(off, convs))]


def kind_rows(args, wss, scorer) -> tuple[list[dict], list[str]]:
    """Every labelled probe of both kinds of workspace, with `wkind` (dialogue or notes workspace),
    `near_kind` (the calibration recall used), `cos` and the word signals."""
    from bench.reports import offtopic_rows, rows_for

    rows, convs = offtopic_rows(args, wss, scorer)
    for ws, qset, questions, label, fold in notes_probes(args, convs):
        for q, r in zip(questions, rows_for(wss, ws, qset, questions, "hybrid", scorer, signals=True)):
            rows.append(dict(r, score=r["score_open"], ws=ws, question=q["question"], label=label,
                             subset=qset if label == 0 else "answerable", owners=[fold[q["qid"]]]))
    out = [r for r in rows if r["label"] is not None and r.get("cos") is not None]
    for r in out:
        r["wkind"] = "notes" if r["ws"] in NOTES_WORKSPACES else "dialogue"
    return out, convs


def split(rows: list[dict], fold: str) -> tuple[list[dict], list[dict]]:
    return [r for r in rows if fold not in r["owners"]], [r for r in rows if r["owners"] == [fold]]


def fit(rows: list[dict], names=("cos",)) -> tuple[float, ...] | None:
    """Calibration constants (midpoint, scale[, words, together]) of a class-balanced logistic fit
    of P(answerable) on the raw cosine and, with `names` = WORDS, recall's word shares."""
    labels = [r["label"] for r in rows]
    if len(set(labels)) < 2:
        return None
    if tuple(names) == ("cos",):
        return H.calibration(H.fit_logistic(rows, labels, ["cos"], balanced=True))
    rows = [_neutral(r) for r in rows]
    model = H.fit_logistic(rows, labels, list(names), balanced=True)
    raw = {n: w / model["stats"][n][1] for n, w in zip(names, model["w"])}
    const = model["b"] - sum(raw[n] * model["stats"][n][0] for n in names)
    scale, words, together = 1 / raw["cos"], raw.get("known", 0.0), raw.get("near", 0.0)
    return -scale * (const + words / 2 + together / 2), scale, words, together


def _neutral(row: dict) -> dict:
    """A query without content words has no word shares: recall then reads the cosine alone (½, ½)."""
    return row if row.get("known") is not None else dict(row, known=0.5, near=0.5)


def with_margin(cal: tuple, rows: list[dict], floor: float, max_loss: float = 0.02) -> tuple:
    """`cal` with the highest midpoint (steps of .0002 around its own) at which `floor` costs at most
    `max_loss` of the answerable `rows` their evidence from the first 10 lines."""
    pos = [r for r in rows if r["label"] == 1]
    best = None
    for step in range(-300, 301):
        moved = (cal[0] + step * 0.0002, *cal[1:])
        if _lost([dict(r, p=relevance(r, {"notes": moved, "dialogue": moved})) for r in pos], floor, "p") <= max_loss:
            best = moved
    return best or cal


def relevance(row: dict, cals: dict[str, tuple]) -> float:
    """P(on topic) of a probe with the calibration of its nearest record's kind, and its
    cross-lingual reading when recall read one (`Verdict.across`): the higher, as recall takes it."""
    cal = calibration(cals[row["near_kind"]])
    across = row.get("across")
    best = cal.relevance(row["cos"], row.get("known"), row.get("near"))
    return max(best, cal.relevance(across[0], row["known"], across[1])) if across else best


def calibration(cal: tuple):
    """A Calibration from (midpoint, scale[, words, together[, either]]), `either` itself such a tuple."""
    from memtool.recall.relevance import Calibration

    either = cal[4] if len(cal) > 4 else None
    return Calibration(*cal[:4], either=calibration(either) if either else None)


def _fmt(cal: tuple) -> str:
    first = "/".join(f"{v:.4g}" for v in cal[:4])
    return first + (f" or {_fmt(cal[4])}" if len(cal) > 4 and cal[4] else "")


def rates(rows: list[dict], cals: dict, floor: float) -> list:
    """n answerable, n off-topic, AUC of the calibrated score, share of off-topic refused, share of
    answerable that lose their evidence from the first 10 lines, share of answerable refused."""
    scored = [dict(r, p=relevance(r, cals)) for r in rows]
    pos, neg = [r for r in scored if r["label"] == 1], [r for r in scored if r["label"] == 0]
    got = H.floor_rates(floor, pos, neg, "p")
    return [len(pos), len(neg), H.auc([r["p"] for r in pos], [r["p"] for r in neg]),
            got["offtopic_refused"], got["answerable_lost"], got["answerable_refused"]]


def shipped(fingerprint: str) -> dict[str, tuple[float, ...]]:
    """The constants recall ships for `fingerprint`, per kind of text."""
    from memtool.recall.relevance import KINDS, calibration_for

    def flat(cal):
        return (cal.midpoint, cal.scale, cal.words, cal.together, flat(cal.either) if cal.either else None)

    return {kind: flat(calibration_for(fingerprint, kind)) for kind in KINDS}


COSINE_ONLY_NOTES = (0.834, 0.013)  # the notes constants before the words joined the cosine (issue 16)


def conversation_only(fingerprint: str) -> dict[str, tuple[float, float]]:
    """Before per-kind calibration: the dialogue constants for every kind of text."""
    cal = shipped(fingerprint)["dialogue"][:4]  # the cosine alone: before the words joined it for conversations too
    return {"dialogue": cal, "notes": cal}


RATE_COLUMNS = ["answerable", "off-topic", "AUC", "off-topic refused", "answerable lost", "answerable refused"]


GROUPS = (("LoCoMo (dialogue)", lambda r: r["wkind"] == "dialogue"), ("example (notes)", lambda r: r["ws"] == "example"),
          ("docset (notes)", lambda r: r["ws"] == "docset"), ("notes workspaces", lambda r: r["wkind"] == "notes"))


def per_kind_table(rows: list[dict], convs: list[str], cals: dict, floor: float) -> str:
    """Rates of a calibration per workspace group, per held-out fold and over all probes, with the
    calibrations the probes were read with (the kind of their nearest record)."""
    out = []
    for name, keep in GROUPS:
        sel = [r for r in rows if keep(r)]
        if not sel:
            continue
        used = ", ".join(f"{k} {sum(r['near_kind'] == k for r in sel)}" for k in ("dialogue", "notes")
                         if any(r["near_kind"] == k for r in sel))
        for fold in [*convs, "all"]:
            test = sel if fold == "all" else split(sel, fold)[1]
            out.append([name, used, fold, *rates(test, cals, floor)])
    return H.markdown_table(["workspaces", "calibration used", "held out", *RATE_COLUMNS], out)


def cosine_floors(rows: list[dict], convs: list[str]) -> str:
    """For notes: the highest raw-cosine floor costing at most 1/2/3 % of the training probes'
    answerable questions their evidence, and what it does on the held-out ones, per notes workspace."""
    notes = [r for r in rows if r["near_kind"] == "notes"]
    grid = [round(0.70 + i * 0.001, 3) for i in range(251)]
    out = []
    for max_loss in (0.01, 0.02, H.MAX_LOSS):
        for fold in convs:
            train, test = split(notes, fold)
            tpos = [r for r in train if r["label"] == 1]
            floor = H.highest_floor(grid, lambda f: _lost(tpos, f), max_loss)
            cells = []
            for ws in (*NOTES_WORKSPACES, None):
                sel = [r for r in test if ws is None or r["ws"] == ws]
                got = H.floor_rates(floor, [r for r in sel if r["label"] == 1], [r for r in sel if r["label"] == 0], "cos")
                cells += [got["offtopic_refused"], got["answerable_lost"]]
            out.append([f"≤ {max_loss:.0%}", fold, floor, *cells])
    return H.markdown_table(["lost in training", "held out", "cos floor", "example refused", "example lost",
                             "docset refused", "docset lost", "both refused", "both lost"], out)


def _lost(rows: list[dict], floor: float, signal: str = "cos") -> float:
    return sum(r["score"].get("hitL@10") == 1.0 and r[signal] < floor for r in rows) / len(rows)


def notes_folds(rows: list[dict], convs: list[str], floor: float, before: dict) -> tuple[str, list]:
    """The notes constants fitted per fold on its training probes whose nearest record is notes, the
    cosine alone (before) and with the word shares (after, as recall reads them), each moved to the
    highest midpoint at which the floor costs the training probes at most 2 % of the answerable
    questions' evidence; reported on the held-out probes of the notes workspaces and of the dialogue
    ones (whose constants stay). Then across the two notes workspaces."""
    notes = [r for r in rows if r["near_kind"] == "notes"]
    out, fits = [], []
    for fold in [*convs, *(f"fit on {ws}" for ws in NOTES_WORKSPACES)]:
        if fold in convs:
            train = split(notes, fold)[0]
        else:
            train = [r for r in notes if r["ws"] == fold.removeprefix("fit on ")]
        cos_only, words = fit(train), fit(train, WORDS)
        if cos_only is None or words is None:  # one class only: nothing to fit
            continue
        cos_only, words = with_margin(cos_only, train, floor), with_margin(words, train, floor)
        fits.append({"held_out": fold, "cosine": cos_only, "words": words})
        for wkind in ("notes", "dialogue"):
            if fold in convs:
                test = split([r for r in rows if r["wkind"] == wkind], fold)[1]
            elif wkind == "notes":
                test = [r for r in rows if r["wkind"] == "notes" and f"fit on {r['ws']}" != fold]
            else:
                continue
            b, a = rates(test, dict(before, notes=cos_only), floor), rates(test, dict(before, notes=words), floor)
            out.append([fold, f"{wkind} workspaces", "/".join(f"{v:.3f}" for v in words), a[0], a[1],
                        b[2], a[2], b[3], a[3], b[4], a[4]])
    text = H.markdown_table(["held out", "reported on", "notes constants (midpoint/scale/words/together)",
                             "answerable", "off-topic", "AUC before", "AUC after", "refused before", "refused after",
                             "lost before", "lost after"], out)
    return text, fits


def dialogue_folds(rows: list[dict], convs: list[str], floor: float, before: dict) -> str:
    """The second reading for conversations: the word shares beside the cosine (`WORDS`) fitted per
    fold on its training probes whose nearest record is a turn, moved to cost them at most 1 % of the
    answerable questions' evidence, and read beside the cosine alone (on topic when either says so);
    held-out rates of the dialogue workspaces, before (the cosine alone) and after."""
    dialogue = [r for r in rows if r["near_kind"] == "dialogue"]
    out = []
    for fold in convs:
        train, test = split(dialogue, fold)
        words = fit(train, WORDS)
        if words is None:
            continue
        words = with_margin(words, train, floor, max_loss=0.01)
        after = dict(before, dialogue=(*before["dialogue"][:4], words))
        b, a = rates(test, before, floor), rates(test, after, floor)
        out.append([fold, "/".join(f"{v:.3f}" for v in words), a[0], a[1], b[2], a[2], b[3], a[3], b[4], a[4],
                    b[5], a[5]])
    return H.markdown_table(["held out", "second reading (midpoint/scale/words/together)", "answerable", "off-topic",
                             "AUC before", "AUC after", "refused before", "refused after", "lost before", "lost after",
                             "answerable refused before", "after"], out)


def word_signals(rows: list[dict], convs: list[str]) -> str:
    """Held-out AUC of the cosine alone and of logistic combinations with one word signal, fitted
    per fold on the training probes whose nearest record is notes."""
    notes = [r for r in rows if r["near_kind"] == "notes"]
    out = []
    for combo in (("cos",), *(("cos", s) for s in SIGNALS), WORDS, ("cos", *SIGNALS)):
        aucs = []
        for fold in convs:
            train, test = [[_neutral(r) for r in part] for part in split(notes, fold)]
            model = H.fit_logistic(train, [r["label"] for r in train], combo, balanced=True)
            p = [(H.predict(model, r), r["label"]) for r in test]
            aucs.append(H.auc([v for v, y in p if y == 1], [v for v, y in p if y == 0]))
        out.append([" + ".join(combo), *aucs, sum(aucs) / len(aucs)])
    return H.markdown_table(["signals (notes)", *(f"AUC {c} held out" for c in convs), "mean"], out)


def report(rows: list[dict], convs: list[str], fingerprint: str, floor: float) -> dict:
    """Print the per-kind tables; return them for --json."""
    now = shipped(fingerprint)
    before = conversation_only(fingerprint)
    cosine = dict(now, dialogue=now["dialogue"][:4], notes=COSINE_ONLY_NOTES)
    tables = {}
    tables["before"] = per_kind_table(rows, convs, before, floor)
    print(f"\nfloor {floor} per kind, with the conversation constants for all text (before per-kind calibration)\n"
          f"{tables['before']}")
    tables["cosine"] = per_kind_table(rows, convs, cosine, floor)
    print(f"\nfloor {floor} per kind, the cosine alone (notes {COSINE_ONLY_NOTES[0]}/{COSINE_ONLY_NOTES[1]}: "
          f"before the words joined it)\n{tables['cosine']}")
    tables["shipped"] = per_kind_table(rows, convs, now, floor)
    print(f"\nfloor {floor} per kind, as shipped (calibration by the kind of the nearest record: "
          + ", ".join(f"{k} {_fmt(cal)}" for k, cal in now.items()) + f")\n{tables['shipped']}")
    tables["folds"], fits = notes_folds(rows, convs, floor, before)
    print(f"\nnotes constants fitted per fold (training probes whose nearest record is notes) with a 2 % margin, "
          f"held-out rates at floor {floor}: before = the cosine alone, after = with the word shares\n{tables['folds']}")
    tables["floors"] = cosine_floors(rows, convs)
    print(f"\nnotes: a raw-cosine floor chosen on the training folds, held-out rates per notes workspace\n{tables['floors']}")
    cosine_dialogue = dict(now, dialogue=now["dialogue"][:4])
    tables["dialogue"] = dialogue_folds(rows, convs, floor, cosine_dialogue)
    print(f"\nconversations: the word shares as a second reading beside the cosine, fitted per fold with a 1 % "
          f"margin, held-out rates at floor {floor}: before = the cosine alone, after = either reading\n{tables['dialogue']}")
    tables["signals"] = word_signals(rows, convs)
    print(f"\nword signals beside the cosine for notes (logistic, class-balanced, fitted per fold)\n{tables['signals']}")
    return {"tables": tables, "fits": fits}
