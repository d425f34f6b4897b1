"""Issue 16, multi-hop: `--report unnamed-rules` (bench/dialogue.py) tells questions apart by their
form — how many speakers they name, whether a name is the subject, whether it is one plain name —
and chooses a rule per fold only if it lowers no category at 10, 25 or 50 lines on the training
conversations (docs/recall-experiments.md, "The share by the question's form")."""

from bench import dialogue


def test_unnamed_rules_read_the_question_s_form():
    asks_view = "What personality traits might Melanie say Caroline has?"
    assert dialogue._subject(asks_view, "Melanie") and not dialogue._subject(asks_view, "Caroline")
    assert dialogue._subject("What has Melanie painted?", "Melanie")
    assert not dialogue._subject("What inspired Caroline's painting?", "Caroline")
    assert dialogue._plain("What has Melanie painted?", {"Melanie"})
    assert not dialogue._plain("What do Melanie's family give her?", {"Melanie"})  # possessive
    assert not dialogue._plain("How did Melanie feel about her family supporting her?", {"Melanie"})  # pronoun
    assert not dialogue._plain(asks_view, {"Melanie", "Caroline"})  # two names
    rules = dialogue._rules()
    assert rules["one 1.0, many .5"](asks_view, {"Melanie", "Caroline"}) == 0.5
    assert rules["one 1.0, many .5"]("What has Melanie painted?", {"Melanie"}) == 1.0
    assert rules["flat .5"]("What has Melanie painted?", {"Melanie"}) == 0.5


def _rows(conv: str, hits: dict[int, list[int]]) -> list[dict]:
    """One row per question of category `c`, each hit at (10, 25, 50) lines as given."""
    return [{"conv": conv, "category": c, "score": dict(zip(("hitL@10", "hitL@25", "hitL@50"), h))}
            for c, per in hits.items() for h in per]


def test_unnamed_rules_a_rule_that_loses_at_25_lines_is_not_chosen():
    base = {c: _conv(c, [[0, 1, 1], [1, 1, 1]]) for c in ("a", "b")}
    better_at_10_worse_at_25 = {c: _conv(c, [[1, 1, 1], [0, 0, 1]]) for c in ("a", "b")}
    better = {c: _conv(c, [[1, 1, 1], [1, 1, 1]]) for c in ("a", "b")}
    grid = {"flat .5": base, "greedy": better_at_10_worse_at_25}
    assert dialogue.choose_rule(grid, "flat .5", list(grid), ["a", "b"]) == "flat .5"
    grid["plain"] = better
    assert dialogue.choose_rule(grid, "flat .5", list(grid), ["a", "b"]) == "plain"


def _conv(conv: str, multi_hop: list[list[int]]) -> list[dict]:
    """A conversation of these multi-hop questions and one single-hop question found at 10 lines."""
    return _rows(conv, {1: multi_hop, 4: [[1, 1, 1]]})
