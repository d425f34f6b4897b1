"""Query-side translation between English and German with a bundled lexicon. Pure but for
reading the list once (`lexicon_en_de.txt` beside this module: ~7,400 English words, the most
frequent by rank (to rank 20,000) and the everyday ones, with their German words, written by hand for memtool, MIT;
its header tells how the words were chosen).

A query's words cannot find a note written in the other language; its translated content words
can (`passport` finds `Reisepass`, `Wohnung` finds `flat`). A word is looked up by its folded form,
and only when no entry is written so, by its Snowball stem in the entry's language (`houses` finds
`house`; `Grund` does not find `Gründer`, whose German stem it is, nor `old` `older`, whose German
stem it is); a word found in the English column yields its German words and vice versa (recall
translates from the query's language only). The lexicon is read when a query first needs a
translation (recall asks only in a workspace that holds both languages), and only the lines
holding a word that starts like the query's words are decoded and parsed (`buckets`), found by
bisecting a shipped index of word starts (`lexicon_en_de.starts`, `index`; written again by
`write_starts` after an edit of the lexicon, and built in process where it was not).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from memtool.analyzer import STOPWORDS, fold, stem, word_terms, words

LEXICON = "lexicon_en_de.txt"
STARTS = "lexicon_en_de.starts"  # its index of word starts (`index`), written at development time
# Whether a German word no entry is written as nor stems like is looked up as the regular verb form it
# may be (`infinitives`: `schützt` → `schützen` → protect). Measured on the three bilingual sets with
# the larger lexicon and the lift across languages: German questions about English notes gain on all
# three, two questions are lost (docs/recall-experiments.md "The lift and the verb forms, shipped").
# bench.quality --verb-forms off|on sets it.
VERB_FORMS = True
# Whether a German word no entry is written as nor stems like (nor is a verb form, with VERB_FORMS) is
# read as a compound (`_by_parts`: `Sturmfluten` → `Sturm`, `Fluten`), for the ranking's translations
# only. Off, as shipped: on the three bilingual sets it gains German questions about English notes on
# the docset and the parallel set but loses one on the example set, and read by the relevance too it
# answers more off-topic German questions (docs/recall-experiments.md "Compounds and compound heads").
# bench.quality --compounds sets it. A tail has at least COMPOUND_TAIL letters (`Hamburg` is no `burg`).
COMPOUNDS = False
COMPOUND_TAIL = 5
# Forms of the auxiliaries and modals the analyser's stopwords lack: translated they would add
# function words (`wurde` → `became`) or a word spelt alike (`Würde`, dignity, folds to `wurde`).
# Written capitalised inside a sentence they are the noun (`Würde`, `Ware`, `Waren`, goods), and
# a translation the lexicon writes capitalised is one (`merchandise` → `Ware`): those are kept.
FUNCTION_WORDS = frozenset(
    """wurde wurden worden gewesen ware waren hatte hatten gehabt konnte konnten musste mussten
    sollte sollten durfte darf durfen mochte mochten mag musst seid""".split())


@lru_cache(maxsize=1)
def _lexicon() -> tuple[bytes, bytes]:
    """The lexicon's bytes and its index of starts (`index`): STARTS when it was built from these
    bytes (its CRC-32), else built now (~22 ms), so the answers never depend on the shipped index.
    Neither is decoded or split whole (reading both: ~0.2 ms): a query's starts are found by
    bisection (`_offsets`) and only their lines decoded."""
    here = Path(__file__)  # importlib.resources: ~2 ms more to import
    data = here.with_name(LEXICON).read_bytes()
    try:
        starts = here.with_name(STARTS).read_bytes()
    except FileNotFoundError:
        starts = b""
    return data, starts if starts.startswith(_head(data).encode()) else index(data).encode()


def _head(data: bytes) -> str:
    """The first line of STARTS: which lexicon, by the CRC-32 of its bytes, it was built from."""
    return f"# {LEXICON} by word start (written by lexicon.write_starts); CRC-32 {zlib.crc32(data):08x}\n"


def index(data: bytes) -> str:
    """STARTS for the lexicon `data` (UTF-8): after `_head`, per start (the first three folded
    letters of a word; sorted) the byte offsets in `data` of the lines holding a word that folds to
    it, in order (`start<TAB>offset offset …`); phrases are targets only and count for no start.
    Pure; written at development time (`write_starts`), so that a query finds its starts' lines
    without folding or searching the whole lexicon."""
    offsets: dict[str, list[int]] = {}
    at = 0
    for line in data.split(b"\n"):
        for english, german in parse(line.decode("utf-8")):
            for start in {fold(source)[:3] for source in (english, *german) if " " not in source}:
                offsets.setdefault(start, []).append(at)
        at += len(line) + 1
    return _head(data) + "".join(f"{start}\t{' '.join(map(str, found))}\n" for start, found in sorted(offsets.items()))


def write_starts() -> None:
    """Write STARTS beside this module for its lexicon: at development time, after editing the lexicon
    (`python3 -c "from memtool.recall.lexicon import write_starts; write_starts()"`)."""
    here = Path(__file__)
    here.with_name(STARTS).write_bytes(index(here.with_name(LEXICON).read_bytes()).encode("utf-8"))


def _offsets(starts: bytes, start: str) -> list[int]:
    """The offsets an index of starts (`index`) lists for `start`, none if it lists none: found by
    bisecting its sorted lines (UTF-8 bytes sort as the code points of `sorted`), so the cost does
    not grow with the lexicon."""
    key = start.encode("utf-8")
    lo, hi = starts.find(b"\n") + 1, len(starts)  # line starts; the line sought, if listed, starts in [lo, hi)
    while lo < hi:
        mid = starts.rfind(b"\n", lo, (lo + hi) // 2) + 1 or lo  # the start of the line around the middle
        end = starts.find(b"\n", mid)
        tab = starts.find(b"\t", mid, end)
        if starts[mid:tab] == key:
            return [int(o) for o in starts[tab + 1:end].split()]
        lo, hi = (end + 1, hi) if starts[mid:tab] < key else (lo, mid)
    return []


def _line(data: bytes, offset: int) -> str:
    """The line of the lexicon's bytes that starts at `offset`, decoded."""
    end = data.find(b"\n", offset)
    return data[offset:end if end >= 0 else len(data)].decode("utf-8")


_BUCKETS: dict[str, tuple[tuple[str, str, list[str]], ...]] = {}


def buckets(starts: set[str]) -> dict[str, tuple[tuple[str, str, list[str]], ...]]:
    """Per start (the first three folded letters of a word), the entries, both directions, whose
    word folds to the same start: (language of the word, word, the other language's words), in
    the file's order. Only the lines holding such a word are read and parsed, found by the index of
    starts (`index`) for all the starts not read before; a query stems only these entries."""
    missing = sorted(set(starts) - _BUCKETS.keys())
    if missing:
        data, by_start = _lexicon()
        found = sorted({o for start in missing for o in _offsets(by_start, start)})
        read: dict[str, list] = {start: [] for start in missing}
        for english, german in parse("\n".join(_line(data, o) for o in found)):
            for lang, source, targets in [("en", english, german), *(("de", g, [english]) for g in german)]:
                if " " not in source and (start := fold(source)[:3]) in read:  # phrases are targets only
                    read[start].append((lang, source, targets))
        _BUCKETS.update((start, tuple(entries)) for start, entries in read.items())
    return {start: _BUCKETS[start] for start in starts}


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


def translations(text: str, lang: str | None = None, held: Callable[[set[str]], set[str]] | None = None,
                 written: Callable[[str, str], bool] | None = None, verbs: bool | None = None,
                 compounds: bool | None = None) -> list[str]:
    """The other language's words for the content words of `text` (first listed sense first); with
    `lang` (`en` or `de`, see `analyzer.detect_language`) only from that language, so an English
    word that looks German (`kind`, `art`) is not translated. A translation that is one of the
    word's own forms (`Plan` for `plans`, `Bank` for `banker`) adds nothing and is left out, and so
    is a false friend (`false_friend`: `lake` → `See`, `Kunst` → `art`), unless `written(word,
    language)` says the notes hold it written in the language it was translated into. `held`: of a
    set of folded words, those the notes hold (`Store.known_terms`); only those are returned (and
    only those are checked for false friends: ~5 ms less on a query's first translation). `verbs`:
    whether a German word without an entry is read as a regular verb form (`infinitives`; by default
    VERB_FORMS, on); only with `lang` "de". `compounds`: whether a German word still without an
    entry is read as a compound of words that have one (`_by_parts`; by default COMPOUNDS, off),
    unless the notes hold it (`held`)."""
    content = [(word, folded) for start, _, word in words(text)
               if (folded := fold(word)) not in STOPWORDS and not _function_word(text, start, word)]
    read = buckets({folded[:3] for _, folded in content})
    found: dict[tuple[str, str], None] = {}  # (language translated from, word of a translation)
    for word, folded in content:
        own = word_terms(word)
        entries = [(language, source, targets) for language, source, targets in read[folded[:3]]
                   if lang in (None, language)]
        hits = [(language, targets) for language, source, targets in entries if fold(source) == folded] or \
               [(language, targets) for language, source, targets in entries
                if stem(folded, language) == stem(fold(source), language)] or \
               (_by_infinitive(folded) if lang == "de" and (VERB_FORMS if verbs is None else verbs) else []) or \
               (_by_parts(folded, held) if lang == "de" and (COMPOUNDS if compounds is None else compounds) else [])
        found.update({(language, w): None for language, targets in hits for t in targets for w in t.split()
                      if (f := fold(w)) not in STOPWORDS and not _function_target(w) and f not in own})
    if held is not None:
        known = held({fold(w) for _, w in found})
        found = {(language, w): None for language, w in found if fold(w) in known}
    spelt = buckets({fold(w)[:3] for _, w in found})
    return list(dict.fromkeys(w for language, w in found if not false_friend(w, language, spelt[fold(w)[:3]])
                              or (written and written(w, "de" if language == "en" else "en"))))


def infinitives(folded: str) -> list[str]:
    """The infinitives a folded German word may be a regular form of, most likely first: `kommt`,
    `kommst`, `komme` → `kommen`; `baute`, `bauten` → `bauen`; `gemacht` → `machen`; `abgefeuert`
    → `abfeuern`. The lexicon lists verbs by their infinitive, and the German Snowball stem keeps
    a verb's endings `-t`, `-st`, `-te` (`kommt` stems to `kommt`). Pure."""
    bases = []
    for particle in _PARTICLES:  # past participle, with a separable particle or none: (ab)ge-…-t / -en
        core = folded[len(particle) + 2:]
        if folded.startswith(particle + "ge") and len(core) >= 3:
            bases += [particle + core[:-1]] if core.endswith("t") else [particle + core[:-2]] if core.endswith("en") else []
    bases += [folded[:-len(end)] for end in _ENDINGS if folded.endswith(end) and len(folded) - len(end) >= 3]
    found = dict.fromkeys(b + ("n" if b.endswith(("er", "el")) else "en") for b in bases)
    return [w for w in found if w != folded]


_ENDINGS = ("test", "tet", "ten", "te", "est", "et", "st", "t", "e")  # present and weak past forms
_PARTICLES = ("", "ab", "an", "auf", "aus", "ein", "mit", "vor", "zu", "zuruck", "weg", "fest", "her", "hin", "los")


def _by_infinitive(folded: str) -> list[tuple[str, list[str]]]:
    """A German word no entry is written as nor stems like, looked up as the regular verb form it
    may be (`infinitives`): the first of its infinitives that a German entry is written as."""
    candidates = infinitives(folded) if len(folded) >= 4 and folded.isalpha() else []
    read = buckets({c[:3] for c in candidates})
    for candidate in candidates:
        hits = [("de", targets) for language, source, targets in read[candidate[:3]]
                if language == "de" and fold(source) == candidate]
        if hits:
            return hits
    return []


def parts(folded: str) -> list[tuple[str, str]]:
    """The ways to read a folded German word as a compound (head, tail), longest tail first: every
    tail of COMPOUND_TAIL letters or more after a head of three or more. Pure."""
    return [(folded[:i], folded[i:]) for i in range(3, len(folded) - COMPOUND_TAIL + 1)] if folded.isalpha() else []


def _entry(folded: str, read) -> list[tuple[str, list[str]]]:
    """The German entries written as the folded word or, without one, stemming like it."""
    entries = [(source, targets) for language, source, targets in read.get(folded[:3], ()) if language == "de"]
    return [("de", targets) for source, targets in entries if fold(source) == folded] or \
           [("de", targets) for source, targets in entries if stem(folded, "de") == stem(fold(source), "de")]


def _by_parts(folded: str, held: Callable[[set[str]], set[str]] | None) -> list[tuple[str, list[str]]]:
    """A German word no entry is written as nor stems like, read as a compound (`parts`): the
    entries of its longest tail that has one (`Sturmfluten` → `Fluten` → flood), and of its head,
    as written or without a linking `s` or `n` (`Sturm` → storm; `Umzugs` → `Umzug`). Not when the
    notes hold the word itself (`held`): a name or a compound the notes write is found as it is."""
    if held is not None and held({folded}):
        return []
    splits = parts(folded)
    heads = {h: [h, h[:-1]] if h.endswith(("s", "n")) else [h] for h, _ in splits}
    read = buckets({t[:3] for _, t in splits} | {w[:3] for forms in heads.values() for w in forms})
    for head, tail in splits:
        if found := _entry(tail, read):
            return found + next((hits for w in heads[head] if len(w) >= 3 and (hits := _entry(w, read))), [])
    return []


def false_friend(word: str, lang: str, entries) -> bool:
    """Whether `word`, a translation from `lang`, is spelt as a word of `lang` itself of another
    meaning: one whose own entries do not list it (`See`, lake, is English `see`, whose entry says
    `sehen`; `art` for `Kunst` is German `Art`, kind). Such a word cannot tell the languages apart:
    it would find the query's own language's `see` (`issue` → `Problem` stays: `problem`'s entry
    lists `Problem`). `entries`: `buckets` of the word's start."""
    folded = fold(word)
    own = [targets for language, source, targets in entries if language == lang and fold(source) == folded]
    return bool(own) and not any(fold(w) == folded for targets in own for t in targets for w in t.split())


def _function_word(text: str, start: int, word: str) -> bool:
    """Whether the query's `word` (at `start` of `text`) is one of FUNCTION_WORDS: not when it is
    capitalised inside a sentence (`die Waren`, goods; `Würde`, dignity)."""
    if fold(word) not in FUNCTION_WORDS:
        return False
    before = text[:start].rstrip()
    return not word[:1].isupper() or not before or before[-1] in ".!?:;"


def _function_target(word: str) -> bool:
    """Whether a translation is one of FUNCTION_WORDS as the lexicon writes it (lower case: a verb form)."""
    return word[:1].islower() and fold(word) in FUNCTION_WORDS
