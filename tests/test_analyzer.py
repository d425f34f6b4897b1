import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtool.analyzer import (_WORD, _word_string, detect_language, fold, fts_match, has_content_words,
                              highlight_spans, index_terms, query_terms)


def terms(text):
    return set(index_terms(text).split())


def test_fold_strips_diacritics_and_sharp_s():
    assert fold("Straße") == "strasse"
    assert fold("Müller") == "muller"
    assert fold("CAFÉ") == "cafe"


def test_german_and_english_inflections_meet():
    assert "haus" in terms("Häuser") and "haus" in terms("Haus")
    assert "run" in terms("running") and "run" in terms("run")
    assert terms("Bücher") & terms("Buch")
    assert set(query_terms("Strasse")) & terms("Straße")
    assert set(query_terms("Muller")) & terms("Müller")


def test_cjk_bigrams_and_emoji_are_searchable():
    assert set(query_terms("ありがとう")) <= terms("「ありがとうございます」")
    assert set(query_terms("🎉")) <= terms("party 🎉 tonight")


def test_stopwords_dropped_unless_nothing_else():
    assert "the" not in query_terms("the house")
    assert "house*" in query_terms("the house") and "the*" not in query_terms("the")
    assert query_terms("the") == ["the"]


@pytest.mark.parametrize("text", ["🎉🎉", "🎉", "→→", "✅", "★ the", "🇩🇪", "❤️", "👍🏽 und die", "the \u0301", "WHAT IS IT",
                                  "AND", "NOT OR", "the", "was ist das"])
def test_pictographs_symbols_and_stopwords_name_nothing(text):
    """An emoji-only query (`🎉🎉`) counted as content and was answered at ~0.5 in the README's
    three-fact workspace; a query in capitals throughout is shouted, its stopwords still stopwords."""
    assert not has_content_words(text)


@pytest.mark.parametrize("text", ["5555555", "2026", "IT", "US", "the IT", "東京", "Привет", "مرحبا", "Peter 🎉",
                                  "🎉 party", "ΑΒΓ", "WHERE DOES PETER LIVE", "NEAR Lisbon"])
def test_digits_other_scripts_and_abbreviations_are_content(text):
    assert has_content_words(text)


def test_a_word_in_capitals_is_searched_beside_other_words():
    """`IT budget` searched `budget` alone: the capitals made `IT` content only when alone."""
    assert "it" in query_terms("IT budget") and "budget" in query_terms("IT budget")
    assert query_terms("IT") == ["it"]
    assert "us" in query_terms("tax rules in the US")
    assert "in" not in query_terms("tax rules in the US") and "the" not in query_terms("tax rules in the US")
    for syntax in ("budget AND report", "budget NOT report", "budget OR report", "(budget OR report) AND NOT x"):
        assert {"budg", "report"} <= set(query_terms(syntax)) and not {"and", "or", "not"} & set(query_terms(syntax))
        assert fts_match(query_terms(syntax)).count(" OR ") == len(query_terms(syntax)) - 1  # quoted terms only
    # shouted: every word in capitals, its stopwords are stopwords
    assert set(query_terms("WHAT IS THE IT BUDGET")) == set(query_terms("budget"))
    # a combining mark alone is no word to search: `the ́` searches `the`, as `the` does
    assert query_terms("the \u0301") == ["the"]


def test_fts_match_never_contains_user_syntax():
    for hostile in ['"', "AND(", "NEAR(a b)", "a* -b", "x OR", "((", "col:val", "^start"]:
        match = fts_match(query_terms(hostile))
        for part in match.split(" OR ") if match else []:
            assert part.startswith('"') and part.rstrip("*").endswith('"')


def test_highlight_spans_point_at_matching_words():
    text = "Die Häuser in der Straße"
    spans = highlight_spans(text, query_terms("haus strasse"))
    assert [text[s:e] for s, e in spans] == ["Häuser", "Straße"]


@pytest.mark.parametrize("text, lang", [
    ("Mietvertrag Kastanienallee Kaution", "de"), ("Steuerberater Termin", "de"), ("Zahnarzt Rechnung", "de"),
    ("Heizung kaputt", "de"), ("Bewerbung Anschreiben", "de"), ("Wann läuft mein Reisepass ab?", "de"),
    ("tax advisor appointment", "en"), ("heating broken", "en"), ("Lena birthday", "en"),
    ("weekly sync meeting", "en"), ("where does Jonas live", "en"), ("Peter Lisbon", "en"),
    # an umlaut, in either case, weighs half a function word
    ("it Größe Übel Äpfel", "de"), ("the it Größe Übel Äpfel", "en"), ("ÖL ÜBER", "de"),
])
def test_14_12_language_of_noun_only_queries(text, lang):
    assert detect_language(text) == lang


def test_c_stemmer_and_pure_python_fallback_give_the_same_terms():
    """PyStemmer (C) is used where it installs, snowballstemmer (pure Python) elsewhere: an index
    built by one and queried through the other must meet, so their stems must be identical."""
    Stemmer = pytest.importorskip("Stemmer", reason="PyStemmer not installed: only the fallback runs here")
    from snowballstemmer import english_stemmer, german_stemmer

    words = ["running", "generously", "relational", "häuser", "straßenbahnhaltestellen", "verhandlungen",
             "aufgestanden", "müllers", "hopefulness", "skies", "dying", "kindergärten", "bücher",
             "geschäftsführerin", "arguing", "conditional", "früchte", "vorgestern", "analysed"]
    for language, pure in (("english", english_stemmer.EnglishStemmer()), ("german", german_stemmer.GermanStemmer())):
        c = Stemmer.Stemmer(language)
        assert c.stemWords(words) == [pure.stemWord(w) for w in words], language


_PIECES = st.sampled_from(["Straße", "Häuser", "running", "snake_case", "a_b_", "_", "e\u0301t\u00e9", "ありがとう", "🎉",
                           "①②", "Ⓐx", "x🎉y", "#tag", "[[Anna", "2026-12-01", "90,57", "€", ".", "—", "İstanbul"])
_SPACES = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\u3000", "\u2009", ""])


@given(st.lists(st.tuples(_PIECES, _SPACES), max_size=12))
@settings(max_examples=300, deadline=None)
def test_index_terms_by_pieces_are_the_terms_of_every_word(parts):
    """`index_terms` analyses whitespace-separated pieces (each once): the same terms, in the same
    order, as analysing every word of the whole text."""
    text = "".join(p + s for p, s in parts)
    assert index_terms(text) == " ".join(filter(None, map(_word_string, _WORD.findall(text))))


def test_no_whitespace_character_is_part_of_a_word():
    """What lets `index_terms` split at whitespace first: no character `str.split` splits at is one
    `_WORD` matches."""
    spaces = "".join(chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace())
    assert spaces and not _WORD.search(spaces)
