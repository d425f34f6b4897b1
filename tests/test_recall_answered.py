"""Issue 16, multi-hop: a turn that asks ranks high for a question with its words, and the turn that
answers it, just after it, often shares none of them. When the asking turn is among the first
ANSWERED_HEAD hits, its answer rises to its score. Chosen leave one conversation out on LoCoMo
(docs/recall-experiments.md, "Multi-hop: answers raised, turns
addressed to the person asked about")."""

from __future__ import annotations

from datetime import date

from memtool.memory import Memory
from memtool.recall.ranking import ANSWERED_HEAD
from memtool.workspace import Workspace
from tests.conftest import write

DAYS = [["- **Caroline**: The art show opens Friday, the art is hung.", "- **Melanie**: Great news."],
        ["- **Melanie**: I saw the art show poster, what a show! Painting and art everywhere.",
         "- **Caroline**: Yes, big art show."],
        ["- **Melanie**: My painting is not for the art show, the show is too big.", "- **Caroline**: Fair enough."],
        ["- **Caroline**: My painting for the art show is done.", "- **Melanie**: Cool."],
        ["- **Caroline**: Any news?", "- **Melanie**: Inspired by the art show, I hung my painting in the show hall."],
        ["- **Caroline**: What inspired your painting for the art show, Mel?",
         "- **Melanie**: The lake at dawn, after a long walk with my kids."]]
ANSWER = "**Melanie**: The lake at dawn, after a long walk with my kids."


def test_the_answer_to_a_turn_that_asks_rises_to_its_score(tmp_path):
    for i, lines in enumerate(DAYS, start=1):
        write(tmp_path, f"memory/2023-08-{i:02d}.md", "\n".join([f"# 2023-08-{i:02d}", "", f"## Session {i}", "", *lines]) + "\n")
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        result = mem.recall("What inspired the painting for the art show?", k=10, mode="lexical",
                            today=date(2023, 8, 20), min_score=0)
    finally:
        mem.close()
    contents = [r["content"] for r in result.results]
    assert ANSWERED_HEAD > 0
    assert contents[0].startswith("**Caroline**: What inspired"), contents  # the first hit keeps its place
    assert contents.index(ANSWER) == 1, contents  # on main: 4th, below "Any news?" and its answer


def test_an_answer_is_raised_only_from_the_same_section(tmp_path):
    """Review of mhop8: the record after an asking turn may open the next conversation of the same
    file (the ChatGPT importer writes each as its own section); it is no answer and stays where it was."""
    write(tmp_path, "memory/2026-11-20.md", "\n".join([
        "# 2026-11-20", "", "## ChatGPT: bread", "",
        "- **User** (17:00): How long should sourdough bread rest?",
        "- **Assistant** (17:01): About twelve hours for sourdough bread. Would you like a sourdough bread schedule?",
        "", "## ChatGPT: travel", "",
        "- **User** (18:00): Book me a train to Berlin on Friday.",
        "- **Assistant** (18:01): Here are three trains to Berlin."]) + "\n")
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        asking = [fid for fid, in mem.store.conn.execute("SELECT id FROM facts WHERE content LIKE '%Would you like%'")]
        assert mem.store.following(asking) == {}
        result = mem.recall("sourdough bread", k=10, mode="lexical", today=date(2026, 11, 21), min_score=0)
    finally:
        mem.close()
    contents = [r["content"] for r in result.results]
    assert contents[0].startswith("**Assistant** (17:01)"), contents
    assert contents[1].startswith("**User** (17:00)"), contents  # before the fix: the Berlin line, raised to 1.0
    assert all(r["score"] < result.results[0]["score"] for r in result.results[1:]), result.results
