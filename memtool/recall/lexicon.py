"""Query-side translation between English and German with a small bundled lexicon. Pure but for
reading the list once (`lexicon_en_de.txt` beside this module: common words, written by hand for
memtool, MIT).

A query's words cannot find a note written in the other language; its translated content words
can (`passport` finds `Reisepass`, `Wohnung` finds `flat`). Words are looked up by their folded
form, then by their English and German Snowball stems, in both directions, so no language
detection is needed: a word found in the English column yields its German words and vice versa.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from memtool.analyzer import STOPWORDS, fold, query_terms, word_terms, words

LEXICON = "lexicon_en_de.txt"


@lru_cache(maxsize=1)
def table() -> dict[str, tuple[str, ...]]:
    """Folded word or stem → the other language's words, for both columns of the lexicon."""
    text = resources.files("memtool.recall").joinpath(LEXICON).read_text(encoding="utf-8")
    pairs: dict[str, dict[str, None]] = {}
    for english, german in parse(text):
        for source, targets in [(english, german), *((g, [english]) for g in german)]:
            for key in _keys(source):
                pairs.setdefault(key, {}).update({w: None for t in targets for w in t.split()})
    return {key: tuple(ws) for key, ws in pairs.items()}


def parse(text: str) -> list[tuple[str, list[str]]]:
    """`english: deutsch, deutsch` lines → (english, [deutsch, …]); comments and blanks skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        english, _, german = line.partition(":")
        targets = [g.strip() for g in german.split(",") if g.strip()]
        if english.strip() and targets:
            out.append((english.strip(), targets))
    return out


def _keys(phrase: str) -> tuple[str, ...]:
    """The lookup keys of a one-word entry (its folded form and stems); none for a phrase."""
    found = words(phrase)
    if len(found) != 1:
        return ()
    return word_terms(found[0][2])


def translations(text: str) -> list[str]:
    """The other language's words for the content words of `text` (first listed sense first)."""
    lookup = table()
    out: dict[str, None] = {}
    for _, _, word in words(text):
        if fold(word) in STOPWORDS:
            continue
        for key in word_terms(word):
            if key in lookup:
                out.update({w: None for w in lookup[key] if fold(w) not in STOPWORDS})
                break
    return list(out)


def translated_terms(text: str, terms: list[str]) -> list[str]:
    """Search terms for the translations of `text`'s words, those already in `terms` left out."""
    extra = query_terms(" ".join(translations(text))) if translations(text) else []
    have = set(terms)
    return [t for t in extra if t not in have]
