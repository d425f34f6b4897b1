"""Fusion and priors: candidate scores from both sides fused into one, the dialogue, entity and
opinion priors applied, and the best facts read in full as `Hit`s."""

from __future__ import annotations

import re
from datetime import date

from memtool.dialogue import asking, speaker_of, spoken
from memtool.recall.expansion import Expansion, expand, feedback
from memtool.recall.results import Hit
from memtool.recall.timeframe import caseless, tells_past
from memtool.store import Filters, Store

LEXICAL_WEIGHT = 0.5  # share of the normalised BM25 score in the fused score (the rest: cosine)
FOREIGN_SEMANTIC = 1.0  # the semantic share of a candidate in the other language than the query (docs/recall-experiments.md, Cross-lingual)
# A dialogue turn whose speaker the query names (as a word): questions about a person are answered in
# their own turns. 0.1 → 0.2 with the neighbour share 0.25 → 0.35: chosen leave-one-conversation-out on
# LoCoMo as the point that costs no category on the training conversations; larger boosts rank the
# real speaker's line too low for questions that name the wrong person (docs/recall-experiments.md, "Dialogue
# priors, held out").
SPEAKER_BOOST = 0.2
NEIGHBOUR_SHARE = 0.35  # a dialogue turn inherits this share of the score of the turn before or after it
# A dialogue turn (after the first hit) loses this much times its share of sentences that are questions,
# after it lent its score to the turn that answers it and after feedback: a turn that asks ranks high for
# a question by being one, and holds no answer. Chosen on LoCoMo leave one conversation out: .25 lowers no category at
# 10, 25 or 50 lines on any conversation (docs/recall-experiments.md, "Multi-hop: decomposition and diversity").
QUESTION_PENALTY = 0.25
# The turn that answers a turn asking something (the one just after it, by someone else, asking nothing)
# rises to the asking turn's score when that turn is among the first ANSWERED_HEAD hits, after the question
# penalty: it inherits the match its question had ("What inspired you?" → "I painted it because…").
# Chosen on LoCoMo leave one conversation out (docs/recall-experiments.md, "Multi-hop: answers raised, turns addressed
# to the person asked about"); 0 turns it off.
ANSWERED_HEAD = 10
# A question in the present perfect about a person ("What has Melanie painted?", "Which cities has Jon
# visited?", German "Welche Städte hat Jon besucht?": `_DONE`) asks what that person did, told in their
# own turns; a turn by someone else that names them ("Thanks, Melanie! I painted this…") answers
# something else. Such a turn loses this much (1: about the whole range of a hybrid score), after the
# answers are raised. Chosen on LoCoMo leave one conversation out: from .15 to 1 no category loses at 10,
# 25 or 50 lines on any conversation; 1 gains the most (docs/recall-experiments.md, "Multi-hop: answers raised, turns
# addressed to the person asked about").
ADDRESSED_PENALTY = 1.0
# A question naming a person is most often answered by something that happened to them, and a turn that
# tells what happened says when, from its own day ("yesterday", "last week", "two weekends ago":
# `timeframe.tells_past`). Such a turn by a speaker the query names gains this much, after the addressed
# turns are lowered. Chosen on LoCoMo leave one conversation out (docs/recall-experiments.md, "Multi-hop: turns that
# tell what happened"); 0 turns it off.
TOLD_BOOST = 0.1
_DONE = (r"^\W*(?i:what|which|where|was|welche[mnrs]?|wo)\b[^?]*?\b(?i:has|have|hat|haben)\s+"
         r"(?:(?i:both|beide)\s+)?[A-ZÄÖÜ]", 0, ("ha",))  # (pattern, flags, words: see `_found`)
ENTITY_BOOST = 0.1  # a fact mentioning an entity (or alias) the query names
OPINION_BOOST = 0.15  # an opinion, when the query asks what someone prefers or thinks
# What carries no content of its own: links and embeds (their target is another page's matter),
# URLs, Markdown and table punctuation, list markers.
_LINKS = re.compile(r"!?\[\[[^\]]*\]\]|!?\[[^\]]*\]\([^)]*\)|<[^>]*>|https?://\S+")
_TWO_LETTERS = re.compile(r"[^\W\d_]{2}")  # letters: word characters but digits and _
TIME_BOOST = 0.25  # a fact dated in a span the query names ("last week"), fading near it (chosen held out, docs/recall-experiments.md)
_PREFERENCE = (r"\b(prefers?|preferences?|likes?|dislikes?|favou?rite|thinks?|opinions?|feels? about|"
               r"bevorzugt|mag|mögen|findet|meinung|lieber|hält .* von)\b", re.I,
               ("prefer", "like", "favo", "think", "opinion", "feel", "bevorzugt", "mag", "mögen", "findet", "meinung",
                "lieber", "hält"))


def fuse(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]],
         lexical_weight: float = LEXICAL_WEIGHT, foreign: set[int] = frozenset()) -> dict[int, float]:
    """Combine candidate lists into one score per fact id. Pure.

    BM25 scores are divided by the best one; cosines are min-max scaled over the semantic
    candidates (e5 cosines crowd into a narrow band, so their raw values carry little). A fact
    found by only one side keeps that side's share. Measured on real conversations and the
    bilingual example set, this beat reciprocal-rank fusion (see docs/recall.md). A fact in
    another language than the query (`foreign`) cannot be found by the query's words, so its
    semantic side counts in full (measured on the bilingual set, docs/recall-experiments.md).
    """
    scores: dict[int, float] = {}
    if lexical:
        best = lexical[0][1] or 1.0
        for fid, s in lexical:
            scores[fid] = scores.get(fid, 0.0) + lexical_weight * (s / best)
    if semantic:
        hi, lo = semantic[0][1], semantic[-1][1]
        span = (hi - lo) or 1.0
        weight = 1.0 - lexical_weight if lexical else 1.0
        for fid, c in semantic:
            scores[fid] = scores.get(fid, 0.0) + (FOREIGN_SEMANTIC if fid in foreign else weight) * max(0.0, (c - lo) / span)
    return scores


def is_scaffolding(content: str) -> bool:
    """Whether a record holds nothing but navigation or structure: a link-only list item
    (`- [[SEO]]`), an image embed, a rule, a row of punctuation: no two letters in a row outside
    links. Pure. Text without `[`, `<` or `http` holds no link, so most records skip that pass
    (~3 ms of a one-shot recall's 200 candidates)."""
    if "[" in content or "<" in content or "http" in content:
        content = _LINKS.sub(" ", content)
    return _TWO_LETTERS.search(content) is None


def _found(rule: tuple[str, int, tuple[str, ...]], query: str) -> bool:
    """Whether the pattern of `rule` (`_DONE`, `_PREFERENCE`: pattern, flags, words) is in `query`.
    Searched only in a query holding one of the rule's words (as `timeframe.caseless` lower-cases
    it), without which the pattern cannot match, and compiled by `re` on first use: compiling both
    was ~1.5 ms of a one-shot `mem recall`, and most queries hold none of their words. Pure."""
    pattern, flags, words = rule
    folded = caseless(query)
    return any(w in folded for w in words) and re.search(pattern, query, flags) is not None


def content_first(hits: list[Hit]) -> list[Hit]:
    """The final order: records with content before those without (`is_scaffolding`), each group
    in its order; a record without content scores no higher than the last record with content."""
    bare = [h for h in hits if is_scaffolding(h.content)]
    if not bare:
        return hits
    content = [h for h in hits if not is_scaffolding(h.content)]
    floor = min((h.score for h in content if h.score is not None), default=None)
    for h in bare:
        if floor is not None and h.score is not None:
            h.score = min(h.score, floor)
    return content + bare
def timely(rows: dict[int, dict], spans) -> dict[int, float]:
    """fact id → how near its day (or the dates its text names) is to the spans a query names, in
    [0, 1] (see `timeframe.Span.nearness`); undated facts are left out. Pure."""
    out: dict[int, float] = {}
    if not spans:
        return out
    for fid, row in rows.items():
        dated = [(d, d) for d in [row.get("date")] if d]
        if row.get("valid_from"):
            dated.append((row["valid_from"], row.get("valid_to") or row["valid_from"]))
        best = 0.0
        for a, b in dated:
            try:
                first, last = date.fromisoformat(a), date.fromisoformat(b)
            except ValueError:
                continue
            best = max(best, *(s.nearness(first, last) for s in spans))
        if best:
            out[fid] = best
    return out


def names_speakers(query: str, speakers: set[str]) -> set[str]:
    """The speakers the query names as a word ("What did Jon's studio offer?" names Jon, not Jo).
    Pure."""
    folded = query.casefold()
    return {s for s in speakers if re.search(rf"(?<!\w){re.escape(s.casefold())}(?!\w)", folded)}


def rerank(scores: dict[int, float], rows: dict[int, dict], neighbours: dict[int, list[int]],
           query: str, naming: set[int] = frozenset(), near: dict[int, float] | None = None) -> list[tuple[int, float]]:
    """Priors, then the final order: (fact id, score), best first. Pure.

    A fact that mentions an entity the query names (`naming`) gets a small boost, and so does an
    opinion when the query asks what someone prefers, likes or thinks. In a transcript
    (list items like `- **Caroline**: …`) the answer to a question is often the next turn, and the
    question names who said it: a turn gets a share of its neighbours' scores and a boost when its
    speaker is named in the query (`names_speakers`). A fact dated in or near a span the query
    names (`near`, see `timely`) gets up to TIME_BOOST. Records without content of their own
    (`is_scaffolding`) come after every record with content, whatever their score.
    """
    speakers = {fid: speaker_of(row["content"]) for fid, row in rows.items()}
    named = names_speakers(query, set(filter(None, speakers.values())))
    asks_opinion = _found(_PREFERENCE, query)
    boosted = dict(scores)
    for fid in scores:
        if asks_opinion and fid in rows and rows[fid]["kind"] == "opinion":
            boosted[fid] += OPINION_BOOST
        if speakers.get(fid) in named:
            boosted[fid] += SPEAKER_BOOST
        if fid in naming:
            boosted[fid] += ENTITY_BOOST
        if near and fid in near:
            boosted[fid] += TIME_BOOST * near[fid]
    out = dict(boosted)
    for fid, score in boosted.items():
        if not speakers.get(fid):
            continue
        for nb in neighbours.get(fid, ()):
            if speakers.get(nb):
                out[nb] = max(out.get(nb, 0.0), boosted.get(nb, 0.0) + NEIGHBOUR_SHARE * score)
    bare = {fid for fid in out if fid in rows and is_scaffolding(rows[fid]["content"])}
    return sorted(out.items(), key=lambda x: (x[0] in bare, -x[1], x[0]))


def ranked(store: Store, scores: dict[int, float], filters: Filters, query: str, n: int, spans=(),
           expansion: Expansion = Expansion(), terms: list[str] = ()) -> list[Hit]:
    """The best `n` hits after the priors and `expansion` (see memtool.recall.expansion), each with
    its final score. Feedback ranks twice: the first order's best hits pick the words, and the
    candidates holding them are ranked again with the priors.

    Ranking reads only kind and text of the candidates; full rows are read for the best `n`."""
    heads = store.fact_heads(list(scores))
    turns = [fid for fid, row in heads.items() if speaker_of(row["content"])]
    neighbours = store.neighbours(turns)  # only dialogue turns pass score to neighbours
    heads.update(store.fact_heads(sorted({x for xs in neighbours.values() for x in xs} - heads.keys())))
    if filters.active:  # neighbours pulled in by the dialogue prior must pass the filters too
        allowed = store.filter_ids(list(heads), filters)
        heads = {i: r for i, r in heads.items() if i in allowed}
    naming = store.facts_naming(query, list(heads))
    near = timely({i: heads[i] for i in scores if i in heads}, spans)
    order = [(fid, s) for fid, s in rerank(scores, heads, neighbours, query, naming, near) if fid in heads]
    if expansion.kind == "feedback" and terms:  # the best hits' rare words lift the candidates holding them
        order = _fed_back(store, order, scores, heads, neighbours, query, naming, near, filters, expansion)
    order = expand(store, order, heads, query, list(terms), filters, expansion)
    if QUESTION_PENALTY:
        order = asked_down(order, heads, QUESTION_PENALTY, neighbours)
    if ANSWERED_HEAD:
        order = answered_up(order, heads, store, ANSWERED_HEAD)
    if ADDRESSED_PENALTY:
        order = addressed_down(order, heads, query, ADDRESSED_PENALTY)
    if TOLD_BOOST:
        order = told_up(order, heads, query, TOLD_BOOST)
    best = order[:n]
    rows = {row["id"]: row for row in store.facts_by_id([fid for fid, _ in best])}
    return [Hit.from_row(rows[fid], score) for fid, score in best if fid in rows]


def asked_down(order: list[tuple[int, float]], heads: dict[int, dict], penalty: float,
               neighbours: dict[int, list[int]] | None = None) -> list[tuple[int, float]]:
    """`order` with each dialogue turn after the first hit lowered by `penalty` × its share of
    question sentences (`memtool.dialogue.asking`), ranked again (stable: ties keep their places):
    a turn that asks is answered by the turn after it, which has already inherited its share. Only
    a turn in a dialogue: next to a turn by someone else (`neighbours`, when given; a note written
    `**Open question**: …` alone is no turn). Scores stop at 0 (what follows multiplies them). The
    first hit keeps its place and score, as after feedback (an exact query keeps its line on top).
    An order without turns that ask comes back as it was. Pure."""
    lowered = {fid: penalty * asking(heads[fid]["content"]) for fid, _ in order[1:]
               if fid in heads and (neighbours is None or _answered(fid, heads, neighbours))}
    if not any(lowered.values()):
        return order
    first, top = order[0]
    rest = sorted(((fid, min(max(0.0, s - lowered.get(fid, 0.0)), top)) for fid, s in order[1:]),
                  key=lambda x: -x[1])
    return [(first, top), *rest]


def answered_up(order: list[tuple[int, float]], heads: dict[int, dict], store: Store,
                head: int) -> list[tuple[int, float]]:
    """`order` with the answer to each turn that asks among its first `head` hits (the record just
    after it in its file: a turn by another speaker that asks nothing) raised to the asking turn's
    score when below it, ranked again, stably (the asking turn stays above its answer on a tie). The
    first hit keeps its place and score. An order without such a pair comes back as it was."""
    asks = {fid: s for fid, s in order[:head] if fid in heads and asking(heads[fid]["content"])}
    if not asks:
        return order
    raised = {}
    for fid, nxt in store.following(list(asks)).items():
        own = speaker_of(heads[fid]["content"])
        if nxt in heads and speaker_of(heads[nxt]["content"]) not in (None, own) and not asking(heads[nxt]["content"]):
            raised[nxt] = max(raised.get(nxt, 0.0), asks[fid])
    if not raised:
        return order
    first, top = order[0]
    rest = sorted(((fid, max(s, raised.get(fid, s))) for fid, s in order[1:]), key=lambda x: -x[1])
    return [(first, top), *rest]


def addressed_down(order: list[tuple[int, float]], heads: dict[int, dict], query: str,
                   penalty: float) -> list[tuple[int, float]]:
    """`order` with each dialogue turn lowered by `penalty` when the query asks, in the present perfect
    (`_DONE`), what a speaker it names did and the turn, by someone else, names that speaker: it
    addresses or talks about the person asked about, whose own turns tell what they did. Ranked again,
    stably; scores stop at 0. The first hit is lowered too: such a reply ("Yeah Maria! Friends like
    you make a big difference") is often first for the question's words. A turn names a speaker as
    written (capitals kept: "I will…" names no Will). An order with nothing to lower, or with every
    hit to lower, comes back as it was. Pure."""
    if not _found(_DONE, query):
        return order
    speakers = {fid: speaker_of(heads[fid]["content"]) for fid, _ in order if fid in heads}
    named = names_speakers(query, set(filter(None, speakers.values())))
    lowered = {fid for fid, _ in order if speakers.get(fid)
               and _names(spoken(heads[fid]["content"]), named - {speakers[fid]})}
    if not lowered or len(lowered) == len(order):  # nothing to prefer: scores keep their meaning
        return order
    return sorted(((fid, max(0.0, s - penalty) if fid in lowered else s) for fid, s in order), key=lambda x: -x[1])


def told_up(order: list[tuple[int, float]], heads: dict[int, dict], query: str,
            boost: float) -> list[tuple[int, float]]:
    """`order` with each dialogue turn by a speaker the query names that tells of a past day
    (`timeframe.tells_past`: "yesterday", "last week", "vor zwei Wochen") raised by `boost`, up to the
    first hit's score, and ranked again, stably. The first hit keeps its place and score. An order
    without such a turn comes back as it was. Pure."""
    speakers = {fid: speaker_of(heads[fid]["content"]) for fid, _ in order if fid in heads}
    named = names_speakers(query, set(filter(None, speakers.values())))
    if not named:
        return order
    raised = {fid for fid, _ in order[1:] if speakers.get(fid) in named and tells_past(spoken(heads[fid]["content"]))}
    if not raised:
        return order
    first, top = order[0]
    rest = sorted(((fid, min(s + boost, top) if fid in raised else s) for fid, s in order[1:]), key=lambda x: -x[1])
    return [(first, top), *rest]


def _names(text: str, speakers: set[str]) -> set[str]:
    """The `speakers` a turn's text names as written, with its capitals ("I will plant…" names no Will)."""
    return {s for s in speakers if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)}


def _answered(fid: int, heads: dict[int, dict], neighbours: dict[int, list[int]]) -> bool:
    """Whether the turn `fid` has a neighbour in its file that is a turn by another speaker."""
    own = speaker_of(heads[fid]["content"])
    return any(n in heads and speaker_of(heads[n]["content"]) not in (None, own) for n in neighbours.get(fid, ()))


def _fed_back(store: Store, order: list[tuple[int, float]], scores: dict[int, float], heads: dict[int, dict],
              neighbours: dict[int, list[int]], query: str, naming: set[int], near: dict[int, float],
              filters: Filters, expansion: Expansion) -> list[tuple[int, float]]:
    """`order` ranked again after feedback (memtool.recall.expansion.feedback) lifted the candidates
    holding the best hits' rare words. Nothing passes the first hit by the question's own words and
    meaning, and it keeps its score: an exact query keeps its line on top, and a tie there stays for
    the stability prior to break."""
    extra = feedback(store, order, heads, query, set(scores), filters, expansion)
    if not extra:
        return order
    first, top = order[0]
    scores = {fid: s + extra.get(fid, 0.0) for fid, s in scores.items()}
    again = [(fid, s) for fid, s in rerank(scores, heads, neighbours, query, naming, near) if fid in heads]
    return sorted(((fid, top if fid == first else min(s, top * (1 - 1e-9))) for fid, s in again),
                  key=lambda x: (x[0] != first, -x[1], x[0]))
