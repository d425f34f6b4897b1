"""The parallel set (bench/parallel.py): its committed workspace and questions are what the source
builds, every cited line is the sentence it names, and each direction has enough questions."""

import json

from bench import parallel


def test_parallel_set_is_built_from_its_source_and_cites_the_sentences(tmp_path):
    paras = parallel.parse(parallel.SOURCE.read_text(encoding="utf-8"))
    questions = parallel.build(paras, tmp_path)
    committed = [json.loads(line) for line in parallel.QUESTIONS.read_text(encoding="utf-8").splitlines()]
    assert questions == committed
    built = sorted(p.name for p in (tmp_path / "memory").glob("*.md"))
    assert built == sorted(p.name for p in (parallel.WORKSPACE / "memory").glob("*.md"))
    for name in built:
        assert (tmp_path / "memory" / name).read_text() == (parallel.WORKSPACE / "memory" / name).read_text()
    by_id = {p["id"]: p for p in paras}
    source_q = {(p["id"], k): q for p in paras for k, q in enumerate(p["questions"], 1)}
    for q in questions:
        k = int(q["qid"].split("-q")[1].split("-")[0])
        sentence = source_q[(q["paragraph"], k)]["sentence"]
        for lang, (loc,) in q["evidence_by_lang"].items():
            path, _, line = loc.partition("#L")
            text = (parallel.WORKSPACE / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
            assert text == f"- {by_id[q['paragraph']][lang][sentence - 1]}"


def test_parallel_set_has_forty_questions_per_direction_and_both_languages_in_one_workspace():
    questions = parallel.load_questions()
    directions = [f"{q['lang']}→{lang}" for q in questions for lang in q["evidence_by_lang"]]
    assert all(directions.count(d) >= 40 for d in parallel.DIRECTIONS)
    one_language = [d for q in questions if len(q["langs"]) == 1 for d in [f"{q['lang']}→{q['langs'][0]}"]]
    assert one_language.count("en→de") >= 20 and one_language.count("de→en") >= 20
    days = parallel.layout(parallel.parse(parallel.SOURCE.read_text(encoding="utf-8")))
    assert [lang for _, lang in days[:4]] == ["en", "de", "en", "de"]
    assert {half for half in map(parallel.half, questions)} == {"A", "B"}
