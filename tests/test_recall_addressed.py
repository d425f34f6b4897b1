"""Issue 16, multi-hop: a question in the present perfect about a person ("What has Melanie
painted?") is answered in that person's own turns; the other speaker's replies that name them
("Thanks, Melanie! I painted this…") hold the question's words and answer something else. After the
other priors they lose ADDRESSED_PENALTY. Chosen leave one conversation out on LoCoMo (docs/recall-experiments.md,
"Multi-hop: answers raised, turns
addressed to the person asked about")."""

from __future__ import annotations

from datetime import date

from memtool.memory import Memory
from memtool.recall.ranking import _DONE, ADDRESSED_PENALTY, _found, addressed_down
from memtool.workspace import Workspace
from tests.conftest import write

# Caroline paints in every session and thanks Melanie by name; Melanie painted once, in a long turn of hers.
SESSIONS = [("Thanks, Melanie! I painted this sunset after the beach trip, Melanie.", "Wow, so bright!"),
            ("Thanks, Melanie! I painted this after I visited the center.", "It looks great."),
            ("Thanks, Melanie! I painted these flowers for the show.", "They are lovely."),
            ("Thanks, Melanie! I painted my path as a trans woman here.", "So moving.")]
OWN = ("Busy week with the kids, the garden, the car and work, but in between I painted a horse, "
       "my first animal piece, all in brown and gold.")


def _transcript(tmp_path):
    for i, (caroline, melanie) in enumerate(SESSIONS, start=1):
        lines = [f"# 2023-08-{i:02d}", "", f"## Session {i}", "", "- **Caroline**: Look at this one.",
                 "- **Melanie**: Show me.", f"- **Caroline**: {caroline}", f"- **Melanie**: {melanie}"]
        if i == len(SESSIONS):
            lines += ["- **Caroline**: How was your week?", f"- **Melanie**: {OWN}"]
        write(tmp_path, f"memory/2023-08-{i:02d}.md", "\n".join(lines) + "\n")


def test_the_form_is_a_present_perfect_question_about_someone_named():
    for q in ("What has Melanie painted?", "Which cities has Jon visited?", "Where has Maria made friends?",
              "What subject have Caroline and Melanie both painted?", "Which city have both Jean and John visited?",
              "Welche Städte hat Jon besucht?", "Was hat Melanie gemalt?", "Wo hat Maria Freunde gefunden?"):
        assert _found(_DONE, q), q
    for q in ("What pets does Melanie have?", "What does Caroline say running has been great for?",
              "What do Jon and Gina both have in common?", "When did Melanie paint a sunrise?",
              "What has been painted?", "Melanie painted what?"):
        assert not _found(_DONE, q), q


def test_turns_by_someone_else_naming_the_person_asked_about_go_down_first_hit_too():
    heads = {0: {"content": "**Caroline**: Thanks, Melanie! I painted this."},
             1: {"content": "**Melanie**: I painted a horse."},
             2: {"content": "**Melanie**: Thanks, Caroline! It shows, Melanie is proud."},  # names only herself
             3: {"content": "Melanie painted the fence (a note, no turn)."}}
    order = [(0, 1.0), (1, 0.8), (2, 0.7), (3, 0.6)]
    down = addressed_down(order, heads, "What has Melanie painted?", 0.5)
    assert [fid for fid, _ in down] == [1, 2, 3, 0]
    assert dict(down)[0] == 0.5
    assert addressed_down(order, heads, "What did Melanie paint?", 0.5) is order  # another form
    assert addressed_down(order, heads, "What has Jon painted?", 0.5) is order  # names no speaker found
    assert addressed_down([(0, 0.2), (1, 0.1)], heads, "What has Melanie painted?", 0.5) == [(1, 0.1), (0, 0.0)]  # stops at 0


def test_recall_ranks_the_persons_own_turn_above_the_replies_naming_them(tmp_path):
    _transcript(tmp_path)
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        result = mem.recall("What has Melanie painted?", k=10, mode="lexical", today=date(2023, 8, 20), min_score=0)
    finally:
        mem.close()
    contents = [r["content"] for r in result.results]
    assert ADDRESSED_PENALTY > 0
    assert contents[0] == f"**Melanie**: {OWN}", contents  # on main: 5th, below the four replies naming her


def test_a_name_that_is_also_a_word_is_matched_as_written():
    """Review of mhop8: "What has Will planted?" lowered Anna's "I will plant tomatoes" (the name was
    matched case-folded); a turn names a speaker with the capitals the speaker's name has."""
    heads = {1: {"content": "**Anna**: I will plant tomatoes in May."},
             2: {"content": "**Will**: I planted beans and leeks."},
             3: {"content": "**Anna**: Will, your beans look great."}}
    order = [(1, 0.9), (2, 0.8), (3, 0.7)]
    assert addressed_down(order, heads, "What has Will planted?", ADDRESSED_PENALTY) == [
        (1, 0.9), (2, 0.8), (3, max(0.0, 0.7 - ADDRESSED_PENALTY))]


def test_when_every_hit_would_be_lowered_the_order_keeps_its_scores():
    """Review of mhop8: in a chat where each turn names the other, every hit fell to 0 and the scores
    said nothing; with nothing to prefer, the order comes back as it was."""
    heads = {1: {"content": "**Caroline**: Melanie, I painted a lake."},
             2: {"content": "**Melanie**: Caroline, I painted a horse."}}
    order = [(1, 0.9), (2, 0.8)]
    assert addressed_down(order, heads, "What have Caroline and Melanie both painted?", ADDRESSED_PENALTY) == order
