"""Issue 16, multi-hop: a question naming a person is most often answered by something that happened
to them, and a turn telling what happened says when, from its own day ("Lost my job yesterday", "a
trip last year", "two weekends ago"). Such a turn by a speaker the query names gains TOLD_BOOST after
the other priors. Chosen leave one conversation out on LoCoMo (docs/recall-experiments.md, "Multi-hop: turns that
tell what happened")."""

from __future__ import annotations

from datetime import date

from memtool.memory import Memory
from memtool.recall.ranking import TOLD_BOOST, told_up
from memtool.recall.timeframe import tells_past
from memtool.workspace import Workspace
from tests.conftest import write


def test_a_text_tells_of_a_past_day_named_from_its_own():
    for text in ("Lost my job as a banker yesterday.", "We went camping two weekends ago.",
                 "Last year I took a solo trip.", "I did it a few years ago.", "Last night was fun.",
                 "I met her last Friday.", "Over the past month it grew.", "Ich war vor ein paar Tagen dort.",
                 "Gestern haben wir gemalt.", "Letzten Freitag war ich dort.", "Vor zwei Wochen fing es an.",
                 "Letzte Woche kam der Brief.", "Letztes Frühjahr zogen wir um.", "Last spring we moved."):
        assert tells_past(text), text
    for text in ("I love volunteering.", "Next week we open.", "This week is busy.", "That was the last straw.",
                 "In the past I painted.", "See you tomorrow!", "Nächste Woche geht es los.",
                 "It lasted two years.", "Ich bin seit zwei Jahren dabei."):
        assert not tells_past(text), text


def test_the_named_persons_turns_that_tell_a_past_day_go_up_first_hit_kept():
    heads = {0: {"content": "**Gina**: Thanks, Jon! You rock."},
             1: {"content": "**Jon**: Dance is my passion."},
             2: {"content": "**Jon**: Lost my job yesterday, so I'm starting a studio."},
             3: {"content": "**Gina**: I lost my job yesterday too."},  # a speaker the query does not name
             4: {"content": "Jon lost his job yesterday (a note, no turn)."}}
    order = [(0, 1.0), (1, 0.8), (2, 0.75), (3, 0.7), (4, 0.65)]
    up = told_up(order, heads, "What happened to Jon's job?", 0.1)
    assert [fid for fid, _ in up] == [0, 2, 1, 3, 4]
    assert dict(up)[2] == 0.85
    assert told_up([(1, 1.0), (2, 0.95)], heads, "What did Jon do?", 0.1) == [(1, 1.0), (2, 1.0)]  # up to the first
    assert told_up(order, heads, "What happened to the job?", 0.1) is order  # names no speaker
    assert told_up([(0, 1.0), (1, 0.8)], heads, "What did Jon do?", 0.1) == [(0, 1.0), (1, 0.8)]  # none tells


def test_recall_ranks_the_persons_turn_telling_what_happened_above_talk_on_the_topic(tmp_path):
    write(tmp_path, "memory/2023-01-20.md", "\n".join([
        "# 2023-01-20", "", "## Session 1", "",
        "- **Gina**: Hey Jon, how is the dance going?",
        "- **Jon**: Dance is my life, I dance every day and dance keeps me going.",
        "- **Gina**: Great! What else is new?",
        "- **Jon**: I teach dance to kids now.",
        "- **Gina**: Nice!",
        "- **Jon**: I lost my job at the bank yesterday, so I'm starting my own dance studio.",
        "- **Gina**: Wow, good luck with it!"]) + "\n")
    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        result = mem.recall("What has Jon done about dance?", k=5, mode="lexical", today=date(2023, 1, 21), min_score=0)
    finally:
        mem.close()
    contents = [r["content"] for r in result.results]
    assert TOLD_BOOST > 0
    assert contents[0].startswith("**Jon**: Dance is my life"), contents  # the first hit keeps its place
    assert contents[1].startswith("**Jon**: I lost my job at the bank yesterday"), contents  # before: 3rd
