"""Issue 16, held-out ranking: in a transcript, a question about a person is answered in that
person's own turns. A turn whose speaker the query names (as a word) gets SPEAKER_BOOST, chosen
leave-one-conversation-out on LoCoMo with the neighbour share (docs/recall-experiments.md, "Dialogue priors,
held out")."""

from __future__ import annotations

from datetime import date

from memtool.memory import Memory
from memtool.recall.ranking import names_speakers, rerank
from memtool.workspace import Workspace
from tests.conftest import write

# Caroline's turn matches the words better (paint, painting); the question is about Melanie.
LOG = """# 2023-07-15

## Session 9

- **Caroline**: I paint every weekend, painting sunsets.
- **Melanie**: The weather was lovely on Saturday.
- **Caroline**: We had a picnic in the park with friends.
- **Melanie**: Yes! And the kids and I tried pottery class together.
- **Caroline**: Sounds nice, I love hearing about your family.
- **Melanie**: Last week I finished a painting of a horse.
"""


def turns(*speakers_and_text):
    return {i: {"content": f"**{who}**: {text}", "kind": "fact"} for i, (who, text) in enumerate(speakers_and_text)}


def test_dialogue_a_turn_by_the_person_asked_about_outranks_better_matching_talk_by_another():
    rows = turns(("Caroline", "I paint sunsets, I paint lakes, I paint all day."), ("Melanie", "I painted a horse."))
    order = rerank({0: 0.75, 1: 0.6}, rows, {}, "What did Melanie paint?")
    assert [fid for fid, _ in order] == [1, 0]


def test_dialogue_a_speaker_is_named_only_as_a_word():
    rows = turns(("Al", "The plan needs a budget."), ("Jon", "The plan needs a date."))
    assert names_speakers("Tell me all about the plan", {"Al", "Jon"}) == set()
    assert names_speakers("What did Jon's plan say?", {"Al", "Jon"}) == {"Jon"}
    order = rerank({0: 0.5, 1: 0.55}, rows, {}, "Tell me all about the plan")  # "all" does not name Al
    assert [fid for fid, _ in order] == [1, 0]


def test_dialogue_recall_puts_the_named_speakers_answer_first(tmp_path):
    write(tmp_path, "memory/2023-07-15.md", LOG)
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        result = mem.recall("What did Melanie paint?", k=5, mode="lexical", today=date(2023, 7, 20))
    finally:
        mem.close()
    first = result.results[0]
    assert first["content"].startswith("**Melanie**: Last week I finished a painting"), result.results
    assert first["source"] == "memory/2023-07-15.md#L10"
