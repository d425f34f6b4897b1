"""Candidate retrieval: the facts each side finds for a query, lexical (BM25 over the FTS index)
and semantic (nearest vectors), filters applied, fused into one score per fact."""

from __future__ import annotations

import re
from collections import namedtuple
from contextlib import contextmanager
from functools import lru_cache

from memtool.analyzer import MIN_PREFIX, STOPWORDS, detect_language, fold, query_terms, word_terms
from memtool.analyzer import words as spans
from memtool.dialogue import speaker_of
from memtool.embedding import Embedding
from memtool.errors import ProviderUnavailable
from memtool.recall.lexicon import translations
from memtool.recall.ranking import fuse, names_speakers
from memtool.recall.relevance import word_shares
from memtool.recall.worker import Either, LexicalWorker
from memtool.store import Filters, Store

CANDIDATES = 100  # lexical and semantic candidates each, before fusion
# Of the ranking vector, the share read without the speakers the query names (dialogue turns): chosen
# leave one conversation out on LoCoMo as the point that lowers no category on the training
# conversations at 10, 25 or 50 lines (docs/recall-experiments.md, "Multi-hop", "Speakers' names out of the vector").
UNNAMED_SHARE = 0.5
# Language centring's share (memtool.recall.centring): 0, off, as shipped. On three bilingual sets
# it lifts every cross-lingual half but costs monolingual questions (on the parallel set a record's
# translation overtakes it); docs/recall-experiments.md, "The parallel set". bench.quality --centring S sets it.
CENTRING = 0.0
NEAREST = 3  # records nearest to the query whose words the relevance reads (docs/recall-experiments.md, "Words beside the cosine")
# What the translations appended to a query (`semantic`) add to its nearest record's cosine: the median
# over the off-topic probes of the bilingual notes workspaces that get translations (.012; answerable
# ones .004). The cross-lingual reading of the relevance takes it off again (`across_reading`).
ACROSS_LIFT = 0.012
# What a semantic candidate written in the other language than the query (German or English) adds to
# its cosine before fusion: e5-small sets any text nearer to the texts of its own language, so a
# German question's nearest lines are German ones, an answer in English sits .03-.05 lower
# (docs/recall-experiments.md, "Language centring"). Not for a candidate whose twin in the query's language is a
# candidate too (their vectors' cosine TWIN or more: one sentence in two languages, whichever the
# question's own words find answers; `Vectors.twins` compares them inside SQLite). Measured on the
# three bilingual sets (.015 and .88 best; docs/recall-experiments.md, "A lift across languages, twins
# excepted", and "The lift and the verb forms, shipped"). bench.quality --foreign-lift L --twin T sets them.
FOREIGN_LIFT = 0.015
TWIN = 0.88


def lexical(store: Store, terms: list[str], filters: Filters, n: int, also: list[str] = ()) -> list[tuple[int, float]]:
    """(fact id, BM25 score) of the best `n` facts holding the query's terms (or the words `also`)."""
    if also:
        terms = terms + [t for t in query_terms(" ".join(also)) if t not in terms]
    return store.search_terms(terms, filters, n)


def semantic(store: Store, embedding: Embedding, query: str, filters: Filters, n: int,
             also: list[str] = (), meanwhile=None, bilingual: bool = False, alone=None
             ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], list[tuple[int, float]]]:
    """(fact id, cosine) of the facts nearest to the query, filters applied, of the NEAREST
    nearest to the query's own words, best first (recall's relevance), and of the one nearest to
    the query with its translations (`across_reading`; none without them). The words `also` (its
    translations) are embedded with it, after it in brackets, for the ranking: `When does my
    passport expire? (Reisepass)` (other ways measured in docs/recall-experiments.md, Cross-lingual); they
    would lift the relevance of any question (off-topic ones too), so it comes from the query alone.
    When the query names speakers of the dialogue turns found ("What has Melanie painted?"), the
    ranking vector is half the query as asked and half the query without those names: a name pulls
    the turns that address that person ("Wow, Melanie!"), while the speaker prior already lifts the
    person's own turns (measured leave one conversation out: docs/recall-experiments.md, "Multi-hop").
    `meanwhile`: run while a child process searches the vectors, if one does (`Embedding.search`).
    `bilingual`: the notes hold the other language too; the ranking then lifts the records written in
    it (`lifted`). `alone`: a function giving the query's own vector, embedded elsewhere (the lexical
    worker: `candidates`) while its text with the translations is embedded here."""
    texts = [query, f"{query} ({', '.join(also)})"] if also else [query]
    pool = n * 4 if filters.active else n
    vectors, nearest = embedding.search(store, texts, [-1, 0] if also else [-1], pool,  # one scan for both
                                        store.vectors.notices.append, meanwhile,
                                        {query: alone} if alone is not None and also else None)
    means = _language_means(store) if CENTRING else None  # None too unless the notes hold both languages
    ranked = _centred(store, vectors()[-1], detect_language(query), means, nearest[0], pool) if means else nearest[0]
    lift = (lambda near: lifted(store, near, detect_language(query))) if bilingual and FOREIGN_LIFT else None
    ranked = lift(ranked) if lift else ranked
    found = store.ids_for_hashes(ranked, filters)[:n]
    own = store.ids_for_hashes(nearest[-1], filters) if ranked is not nearest[0] or also else found  # raw cosines: the relevance
    across = (found if ranked is nearest[0] else store.ids_for_hashes(nearest[0], filters))[:1] if also else []
    named = _speakers_named(store, query, found)
    unnamed = without_names(texts[-1], named) if named else ""
    if unnamed:  # the speakers' turns are found by the speaker prior; their names drew the replies to them
        other = embedding.embedder.embed([unnamed], tiers=["normal"], query=True)[0]
        share = unnamed_share(query, named)
        mixed = (1 - share) * vectors()[-1] + share * other
        near = store.vectors.nearest(mixed / float((mixed @ mixed) ** 0.5), pool)
        found = store.ids_for_hashes(lift(near) if lift else near, filters)[:n]
    return found, own[:NEAREST], across


def lifted(store: Store, ranked: list[tuple[str, float]], lang: str) -> list[tuple[str, float]]:
    """`ranked` (vector hash, cosine) with FOREIGN_LIFT added to the cosine of the records written
    in the other language than `lang`, except those whose twin in `lang` is among `ranked` (their
    vectors' cosine TWIN or more: `Vectors.twins`), best first."""
    texts = store.texts_for_hashes([h for h, _ in ranked])
    langs = {h: written_language(text) for h, text in texts.items()}
    foreign = [h for h, written in langs.items() if written != lang]
    if not foreign:
        return ranked
    twins = store.vectors.twins(foreign, [h for h, written in langs.items() if written == lang], TWIN)
    lift = {h: FOREIGN_LIFT for h in foreign if h not in twins}
    return sorted(((h, c + lift.get(h, 0.0)) for h, c in ranked), key=lambda x: -x[1])


@lru_cache(maxsize=4096)
def written_language(text: str) -> str:
    """`detect_language` of a record's text, remembered: a query's semantic candidates are read
    twice (`lifted`, `_foreign`), and a long-running process meets the same records again."""
    return detect_language(text)


def across_reading(store: Store, query: str, also: list[str], across: list[tuple[int, float]],
                   counted: "Counted | None") -> tuple[float, float] | None:
    """(cosine, near) of the record nearest to the query with its translations `also`, for a second
    reading of the relevance (`relevance.Verdict`, docs/recall-experiments.md "Cross-lingual: the floor"): only
    when that record is written in the other language and holds one of the translated words, its
    cosine less ACROSS_LIFT (what the bracketed words add to an off-topic question's nearest cosine,
    median), `near` the share of the query's words it holds (forms and translations). None otherwise."""
    if not across or not also:
        return None
    fid, cosine = across[0]
    heads = store.fact_heads([fid])
    terms = store.fact_terms([fid]).get(fid, set())
    if fid not in heads or detect_language(heads[fid]["content"]) == detect_language(query):
        return None
    if not terms & {t for word in also for _, _, w in spans(word) for t in word_terms(w)}:
        return None
    shares = wording(store, query, [fid], counted)
    return (cosine - ACROSS_LIFT, shares[1]) if shares else None


def _language_means(store: Store) -> dict | None:
    from memtool.recall.centring import language_means

    return language_means(store)


def _centred(store: Store, query, lang: str, means: dict, nearest: list[tuple[str, float]],
             pool: int) -> list[tuple[str, float]]:
    """The vectors nearest to the query and to its centred vector (twice as many: the other
    language's records rank higher centred), ranked by their centred cosine
    (memtool.recall.centring, CENTRING of each mean taken away), best first."""
    from memtool.recall.centring import centred_cosines, centred_query

    more = store.vectors.nearest(centred_query(query, lang, means, CENTRING), 2 * pool)
    hashes = list(dict.fromkeys(h for h, _ in nearest + more))
    texts = store.texts_for_hashes(hashes)
    index, matrix = store.vectors.for_hashes(hashes)
    hashes = [h for h in hashes if h in index and h in texts]
    if not hashes:
        return nearest
    sims = centred_cosines(query, lang, matrix[[index[h] for h in hashes]],
                           [detect_language(texts[h]) for h in hashes], means, CENTRING)
    return sorted(zip(hashes, map(float, sims)), key=lambda x: -x[1])


def _speakers_named(store: Store, query: str, found: list[tuple[int, float]]) -> set[str]:
    """The speakers of the dialogue turns `found` that the query names as written: capitalised as
    a name ("What did Melanie paint?"), so that a note's `**Status**: …` label is not taken out of
    "what is the status of the migration?"."""
    speakers = {s for row in store.fact_heads([f for f, _ in found]).values() if (s := speaker_of(row["content"]))}
    return {s for s in names_speakers(query, speakers) if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query)}


def unnamed_share(query: str, named: set[str]) -> float:
    """The share of the ranking vector read without the speakers `named` in `query`: the same for
    every question. Rules on the question's form (one speaker or two, a name as subject, a
    possessive or pronoun) were measured held out and not kept (docs/recall-experiments.md, "The share by the
    question's form"); `bench.quality --report unnamed-rules` swaps this function per rule. Pure."""
    return UNNAMED_SHARE


def without_names(query: str, names: set[str]) -> str:
    """`query` without the `names` (and their possessive): "What has Melanie's family done?" → "What
    has family done?". Empty when nothing else is left. Pure."""
    for name in names:
        query = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", " ", query, flags=re.I)
    rest = " ".join(query.split())
    return rest if any(c.isalnum() for c in rest) else ""


# Words every text of a language holds: an index that holds at most one of them has (next to) no
# text in that language, and nothing to translate a query into. The first set's words are no words
# of the other language, nor the stem of one (the index holds stems of both languages: `under`
# gives `und`, `andere` `and`); the second's are (`mit`, MIT licence; `ist`, IST; `der`, van der;
# `wir`, wire; `it`, IT; `to`, To-do; `was`; `has`, Hase), so one of the first set must be among the two.
_MARKERS = {"de": (frozenset("nicht ich auf ein eine auch sich oder das bis vor zum zur noch sind nach wird sie beim zu".split()),
                   frozenset("und der dem den die ist mit wir".split())),
            "en": (frozenset("the is with of for that this you are from have my be we".split()),
                   frozenset("and has it to was not will".split()))}


def holds_language(store: Store, lang: str) -> bool:
    """Whether the index holds text in `lang` (`de` or `en`): two of its _MARKERS, one of them
    no word of the other language. One look-up of 28 or 22 terms (their counts are remembered)."""
    words, alike = _MARKERS[lang]
    held = store.known_terms(words | alike)
    return len(held) >= 2 and bool(held & words)


def written_in(store: Store, word: str, lang: str) -> bool:
    """Whether a note written in `lang` holds `word`: a fact holding it beside one of the words of
    _MARKERS that are no words of the other language. A false friend of the lexicon (`See` for
    `lake`, spelt as English `see`) is kept only so: where German notes say `See` it finds them,
    where only English ones say `see` it would find only those (one look-up, ~0.1 ms)."""
    return store.holds_with(fold(word), _MARKERS[lang][0])


def bilingual(store: Store, query: str) -> bool:
    """Whether the notes hold the other language than the query's (German or English) too."""
    return holds_language(store, "en" if detect_language(query) == "de" else "de")


def translated(store: Store, query: str) -> list[str]:
    """The lexicon's translations of the query's words, from the query's language (see
    recall/lexicon.py), that the index holds, whole or as the head of a longer term (`Umzug` in
    `Umzugsangebote`: recall searches it as a prefix): the others cannot match, and would only blur
    the query's vector. None when the notes are (next to) all in the query's language: `child` is not
    turned into `Kind` for English notes that say "kind"."""
    lang = detect_language(query)
    if not holds_language(store, "en" if lang == "de" else "de"):
        return []  # before the lexicon: a one-language workspace never reads it (~10 ms once)
    return translations(query, lang, lambda words: _held_or_headed(store, words),
                        lambda word, into: written_in(store, word, into))


def _held_or_headed(store: Store, folded: set[str]) -> set[str]:
    """The `folded` words the index holds as terms or, as recall searches them (MIN_PREFIX letters
    or more), as the head of a longer term (`umzug` in `Umzugsangebote`)."""
    held = store.known_terms(folded)
    return held | store.held_prefixes({w for w in folded - held if len(w) >= MIN_PREFIX and w.isalpha()})


def wording(store: Store, query: str, nearest: list[int], counted: "Counted | None" = None) -> tuple[float, float] | None:
    """How much of the query's wording the workspace holds, and one of the `nearest` records
    (`relevance.word_shares`). A content word is held in any of its forms, as a prefix (`Steuer`
    in `Steuerberaterin`, as recall searches), or, in a workspace that holds the other language
    (German or English), in one of its lexicon translations. `counted`: `counted_forms(store,
    query)`, when it was already read."""
    forms, counts, facts = counted or counted_forms(store, query)
    held = store.fact_terms(nearest)
    records = [[bool(f & terms) or _prefix_in(word, terms) for word, f in forms.items()] for terms in held.values()]
    return word_shares([max((counts[t] for t in f), default=0) for f in forms.values()], facts, records)


class Counted(namedtuple("Counted", "forms counts facts")):
    """The query's content words and the index's counts that `wording` weighs them by: `forms` (see
    `query_forms`), `counts` (facts holding each form), `facts` (in the index). Not a
    `typing.NamedTuple`: no `typing` on the read path (memtool.TYPE_CHECKING)."""

    __slots__ = ()


def counted_forms(store: Store, query: str) -> Counted:
    """The query's word forms (`query_forms`) and how many facts hold each (what does not depend
    on the records nearest to it)."""
    forms = query_forms(store, query)
    counts, facts = store.doc_counts(set().union(*forms.values()))
    return Counted(forms, counts, facts)


def query_forms(store: Store, query: str) -> dict[str, set[str]]:
    """Folded content word → its index terms and those of its lexicon translations (these only
    where the index holds the other language)."""
    lang = detect_language(query)
    bilingual = holds_language(store, "en" if lang == "de" else "de")
    forms: dict[str, set[str]] = {}
    held = lambda folded: _held_in_any_form(store, folded)  # noqa: E731
    written = lambda word, into: written_in(store, word, into)  # noqa: E731
    for _, _, word in spans(query):
        folded = fold(word)
        if folded in STOPWORDS or folded in forms:
            continue
        forms[folded] = set(word_terms(word))
        for other in translations(word, lang, held, written, compounds=False) if bilingual else []:
            forms[folded].update(t for _, _, w in spans(other) for t in word_terms(w))
    return forms


def _held_in_any_form(store: Store, folded: set[str]) -> set[str]:
    """The `folded` words of which the index holds any term (the word or a stem)."""
    terms = {w: set(word_terms(w)) for w in folded}
    known = store.known_terms(set().union(*terms.values()))
    return {w for w, t in terms.items() if t & known}


def _prefix_in(word: str, terms: set[str]) -> bool:
    return len(word) >= MIN_PREFIX and word.isalpha() and any(t.startswith(word) for t in terms)


# What candidate retrieval found for one query: the fused ranking score per fact id (`scores`), the
# mode that actually ran, why the asked-for mode could not run in full (`degraded`), the raw cosine of
# the fact nearest to the query's own words passing the filters (`best_cosine`), the fingerprint of
# the vectors it comes from, the id of that fact (`nearest`: its text picks the calibration), the
# query's wording in the notes (`words`: (known, near), see `wording`), and (cosine, near) of the
# cross-lingual reading (`across`, see `across_reading`).
_FOUND = ("scores", "mode", "degraded", "best_cosine", "fingerprint", "nearest", "words", "across")


class Found(namedtuple("Found", _FOUND, defaults=(None, None, None))):
    """What candidate retrieval found for one query (the fields above; a namedtuple, as `Counted`)."""

    __slots__ = ()


def candidates(store: Store, embedding: Embedding, query: str, terms: list[str], filters: Filters, mode: str,
               n: int, warnings: list[str], worker: LexicalWorker | None = None) -> Found:
    """Fused candidate scores and what ran; what the user should know goes to `warnings`. With a
    `worker`, a hybrid query's lexical side runs in its thread while the semantic side runs in
    this one (the same answer: see memtool.recall.worker)."""
    found, nearest, across = [], [], []
    also = translated(store, query)  # an English query finds German notes, and the reverse
    degraded = embedding.unusable(store) if mode != "lexical" else None
    both = mode == "hybrid" and degraded is None
    beside = worker and both and not embedding.searches_aside()  # else a child searches the vectors meanwhile
    # A query with translations is embedded twice, alone and with them: the worker embeds it alone
    # before its lexical side, while this thread embeds the longer text (else this one embeds both)
    job = embedding.elsewhere(query) if beside and also else None
    alone = Either(job) if job is not None else None

    def words_side(index: Store) -> tuple[list[tuple[int, float]], Counted | None]:
        if alone is not None:
            alone.offer()
        # with the semantic side, `wording`'s counts too: they read the index as the lexical side does
        return lexical(index, terms, filters, n, also), counted_forms(index, query) if both else None

    with worker.beside(store, words_side) if beside else _inline(store, words_side) as words_found:
        if mode != "lexical":
            if degraded is None:
                # which translations the index holds tells of the notes (any trust tier): only in-process;
                # the lift across languages is measured for the bundled model only
                inside = embedding.embedder.destination.in_process
                try:
                    found, nearest, across = semantic(store, embedding, query, filters, n, also if inside else [],
                                                      words_found if both else None,
                                                      inside and bool(FOREIGN_LIFT) and bilingual(store, query),
                                                      alone.value if alone is not None and inside else None)
                except ProviderUnavailable as exc:  # the model did not load when the query was embedded
                    degraded = f"{exc.message}; {exc.hint}"
                warnings.extend(store.vectors.take_notices())  # e.g. the approximate index rebuilt
                missing, _withheld = embedding.gaps(store)  # withheld: by trust tier, found by words (see status)
                if missing and degraded is None:
                    warnings.append(f"{missing} records have no vector yet and are found only by words; run 'mem index'")
            if degraded is not None:
                embedding.end_aside()  # a child forked at start would only load the model on the other core
                warnings.append(f"semantic search unavailable, answering by words only: {degraded}")
        # read while the lexical side may still run: needed when it finds anything (nearly always)
        foreign = _foreign(store, query, found) if both and nearest else set()
        words, counted = words_found() if mode != "semantic" or degraded else ([], None)
    used = "lexical" if degraded or mode == "lexical" else mode
    best = nearest[0] if nearest and used != "lexical" else None
    fingerprint = embedding.embedder.fingerprint() if best is not None else None
    foreign = foreign if words and best is not None else set()
    return Found(fuse(words, found if used != "lexical" else [], foreign=foreign), used, degraded,
                 best[1] if best else None, fingerprint, best[0] if best else None,
                 wording(store, query, [fid for fid, _ in nearest], counted) if best is not None else None,
                 across_reading(store, query, also, across, counted) if best is not None else None)


@contextmanager
def _inline(store: Store, job):
    """`LexicalWorker.beside`'s shape, without a thread: `job(store)` runs when its result is first asked."""
    done = []

    def result():
        if not done:
            done.append(job(store))
        return done[0]
    yield result


def _foreign(store: Store, query: str, found: list[tuple[int, float]]) -> set[int]:
    """The semantic candidates written in another language than the query (German or English)."""
    lang = detect_language(query)
    heads = store.fact_heads([fid for fid, _ in found])
    return {fid for fid, row in heads.items() if written_language(row["content"]) != lang}
