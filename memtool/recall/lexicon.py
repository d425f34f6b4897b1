"""Query-side translation between English and German with a bundled lexicon. Pure but for
reading the list once (`lexicon_en_de.txt` beside this module: ~4,000 English words, the most
frequent by rank and the everyday ones, with their German words, written by hand for memtool, MIT;
its header tells how the words were chosen).

A query's words cannot find a note written in the other language; its translated content words
can (`passport` finds `Reisepass`, `Wohnung` finds `flat`). A word is looked up by its folded form,
and only when no entry is written so, by its Snowball stem in the entry's language (`houses` finds
`house`; `Grund` does not find `Gründer`, whose German stem it is, nor `old` `older`, whose German
stem it is); a word found in the English column yields its German words and vice versa (recall
translates from the query's language only). The lexicon is read when a query first needs a
translation (recall asks only in a workspace that holds both languages): ~10 ms once.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from memtool.analyzer import STOPWORDS, fold, stem, word_terms, words

LEXICON = "lexicon_en_de.txt"
# Forms of the auxiliaries and modals the analyser's stopwords lack: translated they would add
# function words (`wurde` → `became`) or a word spelt alike (`Würde`, dignity, folds to `wurde`).
FUNCTION_WORDS = frozenset(
    """wurde wurden worden gewesen ware waren hatte hatten gehabt konnte konnten musste mussten
    sollte sollten durfte darf durfen mochte mochten mag musst seid""".split())


@lru_cache(maxsize=1)
def table() -> dict[str, list[tuple[str, str, list[str]]]]:
    """The lexicon in both directions, (language of the word, word, the other language's words),
    bucketed by the first three letters of the folded word: a query stems only the entries that
    share its words' start, not all of them (stemming the whole list costs ~20 ms)."""
    text = Path(__file__).with_name(LEXICON).read_text(encoding="utf-8")  # importlib.resources: ~2 ms more to import
    buckets: dict[str, list[tuple[str, str, list[str]]]] = {}
    for english, german in parse(text):
        for lang, source, targets in [("en", english, german), *(("de", g, [english]) for g in german)]:
            if " " not in source:  # phrases are targets only
                buckets.setdefault(fold(source)[:3], []).append((lang, source, targets))
    return buckets


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


def translations(text: str, lang: str | None = None) -> list[str]:
    """The other language's words for the content words of `text` (first listed sense first); with
    `lang` (`en` or `de`, see `analyzer.detect_language`) only from that language, so an English
    word that looks German (`kind`, `art`) is not translated. A translation that is one of the
    word's own forms (`Plan` for `plans`, `Bank` for `banker`) adds nothing and is left out."""
    buckets = table()
    out: dict[str, None] = {}
    for _, _, word in words(text):
        folded = fold(word)
        if folded in STOPWORDS or folded in FUNCTION_WORDS:
            continue
        own = word_terms(word)
        entries = [(language, source, targets) for language, source, targets in buckets.get(folded[:3], ())
                   if lang in (None, language)]
        found = [targets for _, source, targets in entries if fold(source) == folded] or \
                [targets for language, source, targets in entries if stem(folded, language) == stem(fold(source), language)]
        out.update({w: None for targets in found for t in targets for w in t.split()
                    if (f := fold(w)) not in STOPWORDS and f not in FUNCTION_WORDS and f not in own})
    return list(out)

