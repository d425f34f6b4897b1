"""Issue 16, multi-hop (stop 29): a dialogue turn that asks ("Did you go camping? Was it fun?")
ranks high for a question by being one and holds no answer; after it has lent its share to the
turn that answers it, it loses QUESTION_PENALTY × its share of question sentences. Chosen leave one
conversation out on LoCoMo (docs/recall-experiments.md, "Multi-hop: decomposition and diversity")."""

from __future__ import annotations

from datetime import date

from memtool.dialogue import asking
from memtool.memory import Memory
from memtool.recall.ranking import QUESTION_PENALTY, asked_down
from memtool.workspace import Workspace
from tests.conftest import write

# Caroline asks about camping in every session; Melanie answers once, with the words "went camping".
ASKED = [("Did you go camping this summer? Was the camping fun?", "That sounds nice."),
         ("Where do you like camping? Any camping spots you love?", "Oh, I see."),
         ("How was camping with the kids? Did they like camping?", "Ha, maybe next time."),
         ("What camping gear do you use? Is camping gear pricey?", "Not sure yet."),
         ("Do you go camping often? When is your next camping trip?", "Good question!"),
         ("Was the camping trip long? Who went camping with you?", "We will see."),
         ("Would you go camping in winter? Is winter camping cold?", "No way!")]
ANSWER = "Busy. We went camping by the lake last month and the kids saw a heron."


def _transcript(tmp_path):
    for i, (question, reply) in enumerate(ASKED, start=1):
        lines = [f"# 2023-08-{i:02d}", "", f"## Session {i}", "",
                 f"- **Caroline**: {question}", f"- **Melanie**: {reply}"]
        if i == len(ASKED):
            lines += ["- **Caroline**: How is the new job going?", f"- **Melanie**: {ANSWER}"]
        write(tmp_path, f"memory/2023-08-{i:02d}.md", "\n".join(lines) + "\n")


def test_stop29_asking_is_the_share_of_a_turns_sentences_that_are_questions():
    assert asking("**Caroline**: Sounds fun! What was the best part? Do you do it often?") == 2 / 3
    assert asking("**Gina** (14:03): When are you opening the studio?") == 1.0
    assert asking("**Jon**: Thanks. [image: a photo of a cat?] I did it.") == 0.0  # captions are not asked
    assert asking("Open question: should we migrate?") == 0.0  # a note is no turn: never lowered


def test_stop29_a_turn_that_asks_goes_below_the_answer_notes_keep_their_order():
    heads = {0: {"content": "**Caroline**: When did you go camping?"},
             1: {"content": "**Caroline**: Did you go camping? Was it fun?"},
             2: {"content": "**Melanie**: We went camping by the lake."}}
    order = asked_down([(0, 1.2), (1, 1.0), (2, 0.9)], heads, 0.25)
    assert [fid for fid, _ in order] == [0, 2, 1]  # the first hit keeps its place, as after feedback
    assert order[0] == (0, 1.2)
    notes = {1: {"content": "Should we migrate the wiki?"}, 2: {"content": "The wiki moved in May."}}
    order = [(1, 1.0), (2, 0.9)]
    assert asked_down(order, notes, 0.25) is order


def test_stop29_recall_ranks_the_answer_above_the_turns_that_ask_for_it(tmp_path):
    _transcript(tmp_path)
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        result = mem.recall("Where did Melanie go camping?", k=10, mode="lexical", today=date(2023, 8, 20), min_score=0)
    finally:
        mem.close()
    contents = [r["content"] for r in result.results]
    assert QUESTION_PENALTY > 0
    answer = contents.index(f"**Melanie**: {ANSWER}")
    asking_after_first = [i for i, c in enumerate(contents) if i and c.startswith("**Caroline**") and "camping" in c]
    assert asking_after_first and answer < min(asking_after_first), contents  # on main: below three of them
    assert answer <= 1, contents


def test_stop29_review_what_asks_nothing_is_not_counted_and_what_asks_is():
    assert asking("**A**: see https://x.com/s?q=camping for the list.") == 0.0  # an address
    assert asking("**A**: [list](https://x/s?q=x) is ready.") == 0.0  # a link's target
    assert asking("**A**: `x?` is the optional operator.") == 0.0  # code
    assert asking("**A**: Really?!") == 1.0
    assert asking("**A**: 你去露营了吗？") == 1.0


def test_stop29_review_a_long_run_without_letters_is_read_in_linear_time():
    """The sentence pattern rescanned to the end from every position of a run without letters
    (20,000 characters took ~5 s per candidate, per recall): 400,000 now, in a child with a limit."""
    import subprocess
    import sys

    code = ("from memtool.dialogue import asking\n"
            "assert asking('**A**: Why? ' + '-' * 400_000 + ' ok.') == 0.5\n"
            "assert asking('**A**: ? ' + '\\U0001F600 ' * 200_000) == 0.0\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_stop29_review_a_labelled_note_alone_is_no_turn_and_scores_stop_at_zero():
    heads = {1: {"content": "**Melanie**: We went camping."},
             2: {"content": "**Open question**: should we migrate the wiki?"},
             3: {"content": "Plain note next to it."},
             4: {"content": "**Caroline**: Did you go camping?"},
             5: {"content": "**Melanie**: Yes."}}
    neighbours = {2: [3], 4: [5], 5: [4]}
    order = [(1, 1.0), (2, 0.5), (3, 0.45), (4, 0.1), (5, 0.05)]
    down = dict(asked_down(order, heads, QUESTION_PENALTY, neighbours))
    assert down[2] == 0.5  # no turn by another speaker beside it: a note, not lowered
    assert down[4] == 0.0  # a turn that asks, lowered, and not below 0
    assert asked_down(order, heads, QUESTION_PENALTY, neighbours)[0] == (1, 1.0)
