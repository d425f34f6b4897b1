"""The documentation-style benchmark set: its data is consistent and its scaffolding rules hold."""

import json

from bench import docset


def test_docset_scaffolding_rules_tell_content_from_navigation_embeds_and_table_headers():
    page = ["Open the [[Command palette]].", "- [[Templates]]", "[[SEO]], [[Permalinks]]", "![[shot.png]]",
            "| Setting | Default |", "|---|---|", "| Separator | `---` |", "## Merge notes", "",
            "1. Click **New shelf**.", "- [Guide](guide.md)"]
    kinds = [docset.scaffolding_kind(page, n) for n in range(1, len(page) + 1)]
    assert kinds == [None, "link-only", "link-only", "image", "table-header", "table-header", None, "heading",
                     "blank", None, "link-only"]


def test_docset_questions_cite_content_lines_and_cover_both_cross_directions():
    questions = [json.loads(line) for line in docset.QUESTIONS.read_text(encoding="utf-8").splitlines()]
    docset.check_questions(questions)  # exits on a cited line that is missing or content-less
    assert len({q["qid"] for q in questions}) == len(questions)
    directions = [docset.direction(q) for q in questions if q["type"] == "cross"]
    assert directions.count("de→en") >= 25 and directions.count("en→de") >= 25
    assert {q["type"] for q in questions} == set(docset.TYPES)
    assert all(not q.get("evidence_locations") for q in map(json.loads, docset.OFFTOPIC.read_text().splitlines()))
