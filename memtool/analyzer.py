"""Text analysis shared by indexing and querying: tokens, folding, stemming, FTS5 queries.

The same pipeline turns a record into index terms and a query into search terms, so
SQLite's FTS5 only ever sees plain space-separated terms (never user syntax):

- fold: NFKD, drop combining marks, casefold (``Straße`` → ``strasse``, ``Müller`` → ``muller``);
- stem: every word of 3+ letters also yields its English and German Snowball stems
  (``Häuser`` → ``hauser`` + ``haus``; ``running`` → ``run``), so inflections meet without
  guessing the language of a line;
- CJK runs become overlapping character bigrams; pictographs (emoji) become ``u1f389``-style
  terms; everything else that is not a letter or digit separates words.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Bump when the terms produced for the same text change: the index is then rebuilt.
ANALYZER_VERSION = "1"

_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+|[\u2190-\u2bff\U0001F000-\U0001FAFF]")
_CJK_FIRST = "\u3040"  # the lowest code point _cjk() matches


@lru_cache(maxsize=None)
def _cjk() -> re.Pattern:
    """Runs of CJK characters, compiled on first use: its ranges cost ~1.5 ms to compile (a good part
    of a one-shot `mem recall`), and most text has none."""
    return re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


@lru_cache(maxsize=None)
def _picto() -> re.Pattern:
    """One arrow, symbol or emoji character (compiled on first use, as `_cjk`)."""
    return re.compile(r"[\u2190-\u2bff\U0001F000-\U0001FAFF]")


def _has_cjk(text: str) -> bool:
    return bool(text) and max(text) >= _CJK_FIRST and _cjk().search(text) is not None


def _is_pictograph(word: str) -> bool:
    return len(word) == 1 and _picto().fullmatch(word) is not None

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes auch
    auf aus bei bin bis bist da damit dann das dass dein deine dem den der des dessen dich die dies
    diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines er es etwas
    euch euer eure fur hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre im in
    indem ins ist jede jedem jeden jeder jedes jetzt kann kein keine konnen mal man manche mein meine
    mich mir mit muss nach nicht nichts noch nun nur ob oder ohne sehr sein seine sich sie sind so
    solche soll sondern sonst uber um und uns unser unter viel vom von vor war waren warst was weg weil
    weiter welche wenn wer werde werden wie wieder will wir wird wo wollen zu zum zur zwar zwischen
    """.split()
)

_stemmers: tuple | None = None


def _get_stemmers():
    global _stemmers
    if _stemmers is None:
        _stemmers = (_snowball("english"), _snowball("german"))
    return _stemmers


@lru_cache(maxsize=65_536)
def stem(folded: str, language: str) -> str:
    """The Snowball stem of a folded word in `language` (`en` or `de`)."""
    en, de = _get_stemmers()
    return (en if language == "en" else de).stemWord(folded)

def _snowball(language: str):
    """One Snowball stemmer: PyStemmer's C code when installed, else the pure-Python algorithm,
    loaded alone (the package's `__init__` imports all ~35 languages: ~15 ms of a one-shot recall)."""
    import importlib
    import importlib.util
    import sys
    import types

    try:
        import Stemmer

        return Stemmer.Stemmer(language)
    except ImportError:
        pass
    package = sys.modules.get("snowballstemmer")
    spec = None if package else importlib.util.find_spec("snowballstemmer")
    if package is None and spec is not None and spec.submodule_search_locations:
        shell = types.ModuleType("snowballstemmer")  # the package without its __init__, while one module loads
        shell.__path__ = list(spec.submodule_search_locations)
        sys.modules["snowballstemmer"] = shell
        try:
            module = importlib.import_module(f"snowballstemmer.{language}_stemmer")
            return getattr(module, f"{language.capitalize()}Stemmer")()
        except (ImportError, AttributeError):
            pass  # another layout: the package's own way below
        finally:
            if sys.modules.get("snowballstemmer") is shell:
                del sys.modules["snowballstemmer"]
    import snowballstemmer

    return snowballstemmer.stemmer(language)


def fold(word: str) -> str:
    """Lower-case and strip diacritics; ß becomes ss."""
    if word.isascii():  # nothing to decompose, and casefold() is lower(): ~25× faster
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def fold_text(text: str) -> str:
    """`fold` of a whole text at once (the same characters, every one folded as `fold` folds it):
    one normalisation and one pass for the combining marks it holds, where folding a long text
    word by word costs ~4× more."""
    decomposed = unicodedata.normalize("NFKD", text)
    marks = {c for c in set(re.findall(r"[^\x00-\x7f]", decomposed)) if unicodedata.combining(c)}
    if marks:
        decomposed = re.sub(f"[{''.join(sorted(marks))}]", "", decomposed)
    return decomposed.casefold()


def words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) for every word of `text`; CJK runs stay whole here."""
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


@lru_cache(maxsize=262_144)
def word_terms(word: str) -> tuple[str, ...]:
    """The index terms of one word: its folded form plus distinct stems (or CJK bigrams)."""
    if _is_pictograph(word):
        return (f"u{ord(word):x}",)
    folded = fold(word)
    if not folded:
        return ()
    if _has_cjk(folded):
        return tuple(_cjk_terms(folded))
    if len(folded) < 3 or folded.isdigit():
        return (folded,)
    en, de = _get_stemmers()
    terms = [folded]
    for stem in (en.stemWord(folded), de.stemWord(folded)):
        if stem and stem not in terms:
            terms.append(stem)
    return tuple(terms)


def _cjk_terms(folded: str) -> list[str]:
    """Split a word into CJK bigrams and non-CJK pieces."""
    out: list[str] = []
    pos = 0
    for m in _cjk().finditer(folded):
        if m.start() > pos:
            out.append(folded[pos : m.start()])
        run = m.group()
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = m.end()
    if pos < len(folded):
        out.append(folded[pos:])
    return out


def index_terms(text: str) -> str:
    """The space-separated terms FTS5 indexes for `text`: those of its whitespace-separated pieces
    in turn (no word spans whitespace), each piece analysed once (`_piece_string`): a full build's
    analysis costs a third of matching `_WORD` over every text."""
    return " ".join(filter(None, map(_piece_string, text.split())))


@lru_cache(maxsize=262_144)
def _piece_string(piece: str) -> str:
    """The terms of the words of one whitespace-free piece of text (`Thursday.`, `[[Anna`)."""
    return " ".join(filter(None, map(_word_string, _WORD.findall(piece))))


@lru_cache(maxsize=262_144)
def _word_string(word: str) -> str:
    """`word_terms` joined by spaces ('' for none): a full build spends a third less on analysis."""
    return " ".join(word_terms(word))


MIN_PREFIX = 4  # query words this long also match as prefixes: `Steuer` finds `Steuerberaterin`


SEARCH_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})  # typed as search syntax, searched as words


def has_content_words(text: str) -> bool:
    """Whether `text` names something to look for: a word that is not a stopword (in any language
    memtool knows them of; see `_content`), nor a pictograph (`🎉`, `→`, `✅`: they set a mood, a
    row of them names no topic). Digits are content (`5555555`: the floor judges them)."""
    found = words(text)
    shouted = _shouted(found)
    return any(_content(w, shouted) and not _is_pictograph(w) for _, _, w in found)


def _shouted(found: list[tuple[int, int, str]]) -> bool:
    """Whether a query of several words is written in capitals throughout (`WHAT IS THE BUDGET`)."""
    return len(found) > 1 and not any(c.islower() for _, _, w in found for c in w)


def _content(word: str, shouted: bool) -> bool:
    """Whether `word` is no stopword: its folded form is none, or it is written in capitals, two
    letters or more, in a query that is not (`IT`, `US`: abbreviations; not the search operators
    `AND`, `NOT`: syntax a person typed, not a topic). A combining mark alone is no word."""
    folded = fold(word)
    if folded not in STOPWORDS:
        return bool(folded)
    return not shouted and len(word) >= 2 and word.isupper() and word not in SEARCH_OPERATORS


def exact_terms(text: str) -> list[str]:
    """Each word's folded index term (no stems, no prefixes): what the index counts facts of."""
    return [t[0] for t in (word_terms(w) for _, _, w in words(text)) if t]


def query_terms(text: str) -> list[str]:
    """Distinct search terms for a query, stopwords dropped unless nothing else is left (a word in
    capitals is none: `IT budget` searches `it` too; see `_content`).

    A term ending in `*` is a prefix (the folded word as typed), so the head of a German
    compound finds the compound.
    """
    found = words(text)
    shouted = _shouted(found)
    all_words = [w for _, _, w in found]
    content = [w for w in all_words if _content(w, shouted)]
    chosen = content or all_words
    seen: dict[str, None] = {}
    for w in chosen:
        terms = word_terms(w)
        for t in terms:
            seen.setdefault(t, None)
        if terms and len(terms[0]) >= MIN_PREFIX and terms[0].isalpha() and not _has_cjk(terms[0]):
            seen.setdefault(terms[0] + "*", None)
    return list(seen)


def fts_match(terms: list[str]) -> str:
    """An FTS5 MATCH expression that ORs quoted terms; never contains user syntax."""
    parts = []
    for t in terms:
        prefix = t.endswith("*")
        word = t[:-1] if prefix else t
        parts.append('"' + word.replace('"', '""') + '"' + ("*" if prefix else ""))
    return " OR ".join(parts)


def word_groups(terms: list[str]) -> list[list[str]]:
    """`terms` (as `query_terms` gives them) grouped by the word they come from: its folded form,
    its stems and its prefix (`issue`, `issu`, `issue*`). Pure."""
    groups: list[tuple[list[str], set[str]]] = []
    for t in terms:
        word = t.removesuffix("*")
        related = {word, *word_terms(word)}
        for members, known in groups:
            if related & known:
                members.append(t)
                known.update(related)
                break
        else:
            groups.append(([t], related))
    return [members for members, _ in groups]


def highlight_spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """Character spans of the words in `text` that share a term (or a prefix) with the query."""
    exact = {t for t in terms if not t.endswith("*")}
    prefixes = tuple(t[:-1] for t in terms if t.endswith("*"))
    return [(s, e) for s, e, w in words(text)
            if exact.intersection(word_terms(w)) or (prefixes and any(t.startswith(prefixes) for t in word_terms(w)))]


_GERMAN_HINTS = frozenset("und der die das ist nicht ich mit ein eine auf den dem des zu wir sie es wie was wann wo "
                          "warum welche welcher mein meine bei noch auch schon heute morgen gestern".split())
_ENGLISH_HINTS = frozenset("the and is not with a an of to we you it how what when where why which my at still "
                           "also already today tomorrow yesterday did does was were".split())


# Spelling that tells the languages apart when a text has no function words ("Mietvertrag
# Kastanienallee Kaution"): German's sch/ie/ei/eu/tz/k/z, ver-/ge- prefixes and -ung/-keit/-heit
# endings against English's th/wh/ea/oo/ou, -ing/-ly and a c not in ch/ck.
_GERMAN_SPELLING = re.compile(r"sch|ie|ei|eu|tz|pf|k|z|^ver|^ge|^be|ung$|keit$|heit$|lich$")
_ENGLISH_SPELLING = re.compile(r"th|wh|ea|oo|ou|ay|ing$|ly$|c(?![hk])|w")


def detect_language(text: str) -> str:
    """`de` or `en`, by common function words (and umlauts), else by spelling; English when unsure."""
    folded = [w.casefold() for w in _WORD.findall(text)]  # `words` without their spans: recall asks for 100 at a time
    lower = text.casefold()
    de = sum(w in _GERMAN_HINTS for w in folded) + sum(map(lower.count, "äöüß")) * 0.5
    en = sum(w in _ENGLISH_HINTS for w in folded)
    if de == en:  # no telling words: weigh the spelling of the words there are
        de = sum(len(_GERMAN_SPELLING.findall(w)) for w in folded)
        en = sum(len(_ENGLISH_SPELLING.findall(w)) for w in folded)
    return "de" if de > en else "en"
