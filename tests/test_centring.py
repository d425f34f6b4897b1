"""Issue 16, item 4: language centring (memtool.recall.centring), measured and off as shipped
(docs/recall-experiments.md, "The parallel set"); its pure cosine, on hand-made vectors."""

import numpy as np

from memtool.recall.centring import centred_cosines


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_4_centring_puts_the_answer_in_the_other_language_before_an_unrelated_line_in_the_question_s():
    # axis 0: German, axis 1: English (the language component); axes 2 and 3: two topics
    means = {"de": _unit([1, 0, 0, 0]) * 0.8, "en": _unit([0, 1, 0, 0]) * 0.8}
    query = _unit([1, 0, 1, 0])  # a German question on topic 2
    records = np.stack([_unit([0, 1, 1, 0]),    # the English answer, topic 2
                        _unit([1, 0, 0.2, 1])])  # a German line on topic 3
    langs = ["en", "de"]
    raw = centred_cosines(query, "de", records, langs, means, share=0.0)
    assert raw[1] > raw[0]  # the model's cosine: the question's language first
    centred = centred_cosines(query, "de", records, langs, means, share=1.0)
    assert centred[0] > centred[1]
    assert np.allclose(raw, records @ query)

