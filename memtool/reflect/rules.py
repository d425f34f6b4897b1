"""The rules of consolidation, pure: duplicates, contradictions and connections (the stability
update they record lives in `memtool.stability`, shared with recall's ranking).

Works on plain fact dicts (`key`, `path`, `source`, `kind`, `day`, `entities`, `content`, `trust`) plus the
similarities the caller measured. Nothing here reads files, the index or the clock.

Thresholds are documented in docs/reflect.md with the measurements behind them. One finding shapes
them: the default embedding model (multilingual-e5-small) puts different facts about one person at
cosine 0.93–0.99 ("sailing on the Elbe" vs "on the Alster": 0.97), so cosine alone cannot say
"same fact". A fold needs the vectors *and* the words to agree.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from memtool import trust
from memtool.analyzer import fold

FOLD_COSINE = 0.95  # vectors at least this similar …
FOLD_LEXICAL = 0.85  # … and words at least this similar (Jaccard, fillers aside): one fact said twice
REVIEW_COSINE = 0.95  # same entity, this similar by meaning, but worded differently: a near-duplicate to review
REVIEW_LEXICAL = 0.5  # without vectors: same entity and this much term overlap
MAX_POSTING = 200  # words in more facts than this are too common to find candidates by

# Words naming the same attribute in different ways (index terms: forms and stems, folded).
ATTRIBUTES = (
    frozenset("lives live liv living moved move moves relocated wohnt wohnen wohn lebt leben umgezogen umzug "
              "gezogen gezog zieht flat wohnung address adresse".split()),
    frozenset("works work working job employer joined join company firma arbeitet arbeit arbeiten "
              "gewechselt angefangen".split()),
)
ATTRIBUTE_BONUS = 0.25
SUPERSEDE_MIN = 0.15  # attribute-term overlap (Jaccard, names aside) a change needs with the fact it replaces

CHANGE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|moved|moves|switched|changed|instead|these days|"
    r"jetzt|nun|inzwischen|mittlerweile|nicht mehr|keine? \w+ mehr|gezogen|umgezogen|zieht|gewechselt|"
    r"statt|anstatt|sondern)\b", re.I)


# Words that restate rather than change a fact ("still", "again", "immer noch"): ignored when
# deciding whether two facts say the same thing.
FILLERS = frozenset("""still again also always really just even already anyway too once more
immer noch auch wieder schon weiterhin nach wie vor eben halt wirklich""".split())


_NAME = re.compile(r"(?<![.!?:;]\s)(?<!^)\b([A-ZÄÖÜ][\w'-]+)")


def names_in(text: str) -> frozenset:
    """Capitalised words not at a sentence start: the people and places a text names."""
    return frozenset(fold(m.group(1)) for m in _NAME.finditer(text.strip()))


def jaccard(a: frozenset | set, b: frozenset | set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


@dataclass
class Findings:
    folds: list[tuple[str, str, float | None, float]] = field(default_factory=list)  # (kept, folded, cos, jaccard)
    review: list[tuple[str, str, float | None, float]] = field(default_factory=list)
    supersede: list[tuple[str, str, str]] = field(default_factory=list)  # (older, newer, why)
    unclear: list[tuple[str, str]] = field(default_factory=list)  # possible contradictions (older, newer)
    connections: list[tuple[str, str, int]] = field(default_factory=list)  # entities co-mentioned, unlinked
    skipped_legal: int = 0


def candidate_pairs(new: list[dict], index, words: dict[str, frozenset], threshold,
                    by_key: dict[str, dict]) -> set[tuple[str, str]]:
    """Pairs (new fact, any fact) that could reach `threshold(fact)` word similarity (Jaccard) and be
    a finding; `index` holds facts per word (`df`) and the keys of the words few facts hold (`postings`).

    Prefix filtering: with every word set ordered rarest first, two sets with Jaccard ≥ t must
    share one of the first |x| − ⌈t·|x|⌉ + 1 words of x. So only those words' postings are read,
    and a run costs what is new, not the square of what exists. Of those, only pairs that `about`
    says may be a finding are kept (most candidates of a fact with an entity are about another one)."""
    pairs = set()
    for f in new:
        key = f["key"]
        ordered = sorted(words[key], key=lambda w: (index.df[w], w))
        t = threshold(f)
        prefix = len(ordered) - math.ceil(t * len(ordered)) + 1
        found = set()
        for w in ordered[:prefix]:
            keys = index.postings.get(w, ())
            if len(keys) <= MAX_POSTING:
                found.update(keys)
        found.discard(key)
        first, names = about(f)
        for k in found:
            theirs = by_key[k]["entities"]
            if theirs:
                head = theirs[0].lower()
                if head == first or (head in names and about(by_key[k])[1] == names):
                    pairs.add((key, k))
            elif not names:
                pairs.add((key, k))
    return pairs


def about(f: dict) -> tuple[str | None, frozenset]:
    """A fact's first entity and its entities, lower-cased. Two facts can be a finding only if their
    entities are the same (a fold, `_same_names`) or their first entity is (a near-duplicate to
    review, `_same_entity`; a possible contradiction, `_unclear`)."""
    names = f["entities"]
    return (names[0].lower() if names else None), frozenset(e.lower() for e in names)


def classify_pairs(pairs: dict[tuple[str, str], float | None], by_key: dict[str, dict],
                   terms: dict[str, frozenset], fold_cos: float = FOLD_COSINE, fold_lex: float = FOLD_LEXICAL,
                   review_cos: float = REVIEW_COSINE, review_lex: float = REVIEW_LEXICAL,
                   listed=None) -> Findings:
    """Duplicates to fold and near-duplicates to review, from candidate pairs with their cosine (or None).
    `listed(key)`: the distinct words of a fact, which need not be its set (default: `terms[key]`):
    the other fact of a pair is measured against the new one without making its set."""
    out = Findings()
    legal = set()
    listed = listed or terms.__getitem__
    low = min(fold_lex, review_lex)
    by_new: dict[str, list[tuple[str, float | None]]] = defaultdict(list)  # a new fact is in many pairs
    for (a, b), cos in pairs.items():
        by_new[a].append((b, cos))
    close = []  # the pairs similar enough to classify: most are not, and only these are sorted
    for a, others in by_new.items():
        fa = by_key[a]
        wa = None  # its words but fillers
        for b, cos in others:
            fb = by_key[b]
            if trust.LEGAL in (fa["trust"], fb["trust"]):
                legal.update(k for k, f in ((a, fa), (b, fb)) if f["trust"] == trust.LEGAL)
                continue
            if wa is None:
                wa = terms[a] - FILLERS
            theirs = listed(b)
            shared = len(wa.intersection(theirs))  # fillers are not in wa
            union = len(wa) + len(theirs) - len(FILLERS.intersection(theirs)) - shared
            lex = shared / union if union else 1.0  # jaccard(wa, terms[b] - FILLERS)
            if lex >= low or (cos is not None and cos >= review_cos):
                close.append((a, b, cos, lex))
    close.sort(key=lambda p: (p[0], p[1]))  # the order pairs were classified in: sorted
    for a, b, cos, lex in close:
        fa, fb = by_key[a], by_key[b]
        kept, folded = sorted((fa, fb), key=lambda f: (f["day"] or "9999", f["source"]))
        if lex >= fold_lex and (cos is None or cos >= fold_cos) and _same_names(fa, fb, terms[a], terms[b]):
            out.folds.append((kept["key"], folded["key"], cos, lex))
        elif _same_entity(fa, fb) and (cos >= review_cos if cos is not None else lex >= review_lex):
            out.review.append((kept["key"], folded["key"], cos, lex))
    out.skipped_legal = len(legal)
    return out


def _same_names(a: dict, b: dict, words_a: frozenset, words_b: frozenset) -> bool:
    """Same entities, and no capitalised name in one that the other does not contain."""
    return ({e.lower() for e in a["entities"]} == {e.lower() for e in b["entities"]}
            and not names_in(a["content"]) - words_b and not names_in(b["content"]) - words_a)


def _same_entity(a: dict, b: dict) -> bool:
    return bool(a["entities"]) and bool(b["entities"]) and a["entities"][0].lower() == b["entities"][0].lower()


def clusters(pairs: list[tuple[str, str, float | None, float]]) -> list[list[str]]:
    """Connected groups of keys (union-find), each sorted, largest first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, *_ in pairs:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = defaultdict(list)
    for x in list(parent):
        groups[find(x)].append(x)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))


def contradictions(new: list[dict], facts: list[dict], terms: dict[str, frozenset], names: dict[str, frozenset],
                   pairs: dict[tuple[str, str], float | None], words: dict[str, frozenset],
                   folded: set[tuple[str, str]] = frozenset(),
                   by_key: dict[str, dict] | None = None) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """Newer facts that supersede older ones about the same entity and attribute, and unclear pairs.

    Clear: same first entity, the newer fact announces a change ("moved", "now", "no longer",
    "jetzt", "nicht mehr", "statt", …), and the older fact is the one it resembles most in content
    terms other than the entity's name (overlap ≥ SUPERSEDE_MIN, at least one shared term). A
    change replaces one fact; each older fact ends at its earliest successor.
    Only pairs involving a `new` fact are examined. Unclear: among the candidate `pairs`, same
    entity and kind world, similar but not the same words, no change marker: left for review.
    `by_key`: `facts` by key, if the caller has them so.
    """
    first_day: dict[str, str] = {}  # entity → the earliest day of its new facts: only later facts are read
    for f in new:
        if _eligible(f):
            e = f["entities"][0].lower()
            first_day[e] = min(first_day.get(e, f["day"]), f["day"])
    by_entity: dict[str, list[dict]] = defaultdict(list)  # the facts of the entities new facts are about
    for f in facts:
        if f["entities"] and (e := f["entities"][0].lower()) in first_day and _eligible(f):
            by_entity[e].append(f)
    markers = {e: [f for f in by_entity[e] if f["day"] > day and CHANGE.search(f["content"])]
               for e, day in first_day.items() if e in by_entity}
    found: dict[str, tuple[str, str, str]] = {}
    by_key = {f["key"]: f for f in facts} if by_key is None else by_key

    def best_older(newer: dict, entity: str, candidates: list[dict]) -> None:
        """The one older fact a change replaces: the most similar one (attribute terms) not replaced yet."""
        own = names.get(entity, frozenset())
        mine = terms[newer["key"]] - own
        best, best_score, best_shared = None, SUPERSEDE_MIN, None
        for older in candidates:
            if older["day"] >= newer["day"] or (older["kind"] == "opinion") != (newer["kind"] == "opinion"):
                continue
            if (older["key"], newer["key"]) in folded or (newer["key"], older["key"]) in folded:
                continue
            current = found.get(older["key"])
            if current is not None and by_key[current[1]]["day"] <= newer["day"]:
                continue  # already replaced by something earlier
            theirs = terms[older["key"]] - own
            shared = mine & theirs
            score = len(shared) / len(mine | theirs) if shared else 0.0
            for group in ATTRIBUTES:  # "moved to Lisbon" is about where someone lives
                if mine & group and theirs & group:
                    shared = shared | (mine & group)
                    score += ATTRIBUTE_BONUS
            if score >= best_score and (best is None or score > best_score or older["day"] > best["day"]):
                best, best_score, best_shared = older, score, shared
        if best is not None:
            found[best["key"]] = (best["key"], newer["key"],
                                  f"“{CHANGE.search(newer['content']).group(0)}”, same {sorted(best_shared)[0]!r}")

    for f in sorted(new, key=lambda f: (f["day"] or "", f["source"])):
        if not _eligible(f):
            continue
        entity = f["entities"][0].lower()
        if CHANGE.search(f["content"]):  # as the newer fact: the best older fact of the entity
            best_older(f, entity, by_entity[entity])
        for newer in markers.get(entity, ()):  # as an older fact arriving late
            if newer["day"] > (f["day"] or ""):
                best_older(newer, entity, [f])
    return sorted(found.values()), _unclear(by_key, terms, names, pairs, words, set(found))


def contradiction_reads(new: list[dict], facts: list[dict]) -> list[dict]:
    """The facts of `facts` whose text `contradictions(new, facts, …)` compares: those later than the
    first new fact of their entity (possible change markers) and every fact of an entity a new fact
    announces a change of (the older fact it may replace). `new` come with their texts."""
    first_day: dict[str, str] = {}
    changing = set()
    for f in new:
        if _eligible(f):
            e = f["entities"][0].lower()
            first_day[e] = min(first_day.get(e, f["day"]), f["day"])
            if CHANGE.search(f["content"]):
                changing.add(e)
    return [f for f in facts if f["entities"] and (e := f["entities"][0].lower()) in first_day and _eligible(f)
            and (e in changing or f["day"] > first_day[e])]


def subjects(new: list[dict], facts: list[dict]) -> list[dict]:
    """The facts of `facts` that `contradictions(new, facts, …)` and `contradiction_reads` look at
    (those that can take part, about the first entity of a new fact that can): either gives the same
    answer from these as from all `facts`, so a caller scans every fact once."""
    entities = {f["entities"][0].lower() for f in new if _eligible(f)}
    return [f for f in facts if f["entities"] and f["entities"][0].lower() in entities and _eligible(f)]


def _eligible(f: dict) -> bool:
    """A fact that can supersede or be superseded: about an entity, dated, not legal, not a page."""
    return bool(f["entities"]) and bool(f["day"]) and f["trust"] != trust.LEGAL and not f["path"].startswith("bank/")


def _unclear(by_key: dict[str, dict], terms: dict[str, frozenset], names: dict[str, frozenset],
             pairs: dict[tuple[str, str], float | None], words: dict[str, frozenset],
             superseded: set[str]) -> list[tuple[str, str]]:
    """Candidate pairs of world facts about one entity, from different days, that share content terms
    and are similar but not the same in words, with no change marker: possible contradictions."""
    unclear = []
    for a, b in pairs:
        fa, fb = by_key[a], by_key[b]
        if fa["kind"] != "world" or fb["kind"] != "world" or not (_eligible(fa) and _eligible(fb)):
            continue  # most facts are not world facts: that is asked first
        if fa["entities"][0].lower() != fb["entities"][0].lower() or fa["day"] == fb["day"]:
            continue
        older, newer = sorted((fa, fb), key=lambda f: (f["day"], f["source"]))
        if older["key"] in superseded or CHANGE.search(newer["content"]):
            continue
        own = names.get(older["entities"][0].lower(), frozenset())
        if (terms[older["key"]] - own) & (terms[newer["key"]] - own) \
                and 0.4 <= jaccard(words[a] - FILLERS, words[b] - FILLERS) < FOLD_LEXICAL:
            unclear.append((older["key"], newer["key"]))
    return sorted(set(unclear))


def connections(facts: list[dict], linked: set[frozenset], minimum: int = 3) -> list[tuple[str, str, int, list[str]]]:
    """Entity pairs mentioned together in at least `minimum` facts whose pages do not link each other,
    with how often and the files that mention them together (a pair is as strict as its strictest file)."""
    together: Counter = Counter()
    files: dict[tuple[str, str], set[str]] = {}
    spelled: dict[str, str] = {}
    for f in facts:
        names = sorted({e.lower() for e in f["entities"]})
        for e in f["entities"]:
            spelled.setdefault(e.lower(), e)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                together[(a, b)] += 1
                files.setdefault((a, b), set()).add(f["path"])
    return [(spelled[a], spelled[b], n, sorted(files[(a, b)])) for (a, b), n in together.most_common()
            if n >= minimum and frozenset((a, b)) not in linked]
