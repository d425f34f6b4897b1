"""Issue 16, multi-hop: when a question names a speaker of the dialogue turns it finds, the ranking
vector is half the question as asked and half the question without that name: the name drew the
replies that address the person ("Thanks Melanie!") above the person's own turns, which the speaker
prior lifts anyway (docs/recall-experiments.md, "Speakers' names out of the vector"). The vectors here come from
the Ollama stand-in (hashed bags of words), so which wording wins is known exactly."""

from __future__ import annotations


from memtool.config import Config
from memtool.memory import Memory
from memtool.recall.candidates import without_names
from memtool.workspace import Workspace
from tests.conftest import write

# One turn a day, so each turn is embedded alone (a turn is embedded with the turn before it).
TURNS = {
    "2023-05-01": "**Caroline**: Thanks Melanie! Melanie, Melanie, you are the best.",
    "2023-05-02": "**Melanie**: We did paint the old red barn by the river last summer with the kids and our "
                  "neighbours from across the street.",
    "2023-05-03": "**Caroline**: The weather is cold today.",
    "2023-05-04": "**Melanie**: Bye for now.",
}


def test_unnamed_a_speakers_own_turn_outranks_replies_that_only_name_her(tmp_path, stub):
    ws = tmp_path / "ws"
    for day, turn in TURNS.items():
        write(ws, f"memory/{day}.md", f"# {day}\n\n- {turn}\n")
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    mem = Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder="ollama")
    mem.track_access = False
    try:
        result = mem.recall("What did Melanie paint?", k=4, mode="semantic", min_score=0)
    finally:
        mem.close()
    assert result.results[0]["content"].startswith("**Melanie**: We did paint the old red barn")
    assert "What did paint?" in stub.embedded, "the question is embedded without the speaker's name too"


def test_unnamed_the_names_and_their_possessive_leave_the_question():
    assert without_names("What has Melanie's family done with Mel?", {"Melanie", "Mel"}) == "What has family done with ?"
    assert without_names("What do Jon and Gina both have in common?", {"Jon", "Gina"}) == "What do and both have in common?"
    assert without_names("Melanie?", {"Melanie"}) == ""  # nothing left to search by


def test_unnamed_a_label_in_the_notes_is_not_a_name_in_the_question(tmp_path, stub):
    """`- **Status**: …` reads like a turn; "what is the status of …" does not name anyone."""
    ws = tmp_path / "ws"
    write(ws, "memory/2023-05-01.md", "# 2023-05-01\n\n- **Status**: migration 80% done\n- **Owner**: Ana\n")
    write(ws, "memtool.toml", '[embedder]\nprovider = "ollama"\nmodel = "toy-a"\n')
    mem = Memory(Workspace(ws), Config.load(ws / "memtool.toml"), embedder="ollama")
    mem.track_access = False
    try:
        mem.recall("what is the status of the migration?", k=4, mode="semantic", min_score=0)
    finally:
        mem.close()
    assert not [t for t in stub.embedded if "what is the of the migration" in t], stub.embedded
