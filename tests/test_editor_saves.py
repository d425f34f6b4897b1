"""An editor holding an old copy of a file saves it over a line `mem` just appended: memtool cannot
prevent that, but it must say so (status, check, recall's warnings), put the line back on request
(backing up what it replaces) and let a person who deleted the line on purpose dismiss the warning.
Real `mem` processes; the editor is this test, saving the buffer it read before the append."""

import os
import re
from datetime import date

import pytest
from conftest import mem_env, run_json, run_mem

ENV = mem_env(MEM_EMBEDDER="none")
TODAY = f"memory/{date.today().isoformat()}.md"
CORE_TEXT = "# Core memory\n\n- Works from Lisbon.\n"


def _ws(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "bank" / "entities").mkdir(parents=True)
    (ws / "memory.md").write_text(CORE_TEXT, encoding="utf-8")
    (ws / TODAY).write_text(f"# {date.today().isoformat()}\n\nWritten by hand.\n", encoding="utf-8")
    (ws / "bank" / "world.md").write_text("# World\n\n- The office is in Alfama.\n", encoding="utf-8")
    return ws


def _save(path, buffer: bytes, how: str) -> None:
    """Save `buffer` over `path` as editors do: a temp file renamed over it, or in place (truncate + write)."""
    if how == "rename":
        tmp = path.with_name(f".{path.name}.swp")
        tmp.write_bytes(buffer)
        os.replace(tmp, path)
    else:
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(buffer)


def _gone(ws) -> list[dict]:
    proc, status = run_json("-w", ws, "status", env=ENV)
    assert proc.returncode == 0, proc.stderr
    return status["retained_gone"]


WRITES = [  # (the command's arguments, the file it appends to, the line as it lands)
    (["core", "append", "- Prefers tea in the afternoon."], "memory.md", "- Prefers tea in the afternoon."),
    (["core", "insert", "3", "Call him Pete."], "memory.md", "Call him Pete."),
    (["retain", "W @Peter: Moved to Porto."], TODAY, "- W @Peter: Moved to Porto."),
    (["note", "Jonas moved the meeting to Friday."], TODAY, "- Jonas moved the meeting to Friday."),
    (["note", "--page", "bank/world.md", "The printer is on floor 2."], "bank/world.md", "- The printer is on floor 2."),
]


@pytest.mark.parametrize("how", ["rename", "in-place"])
@pytest.mark.parametrize("args,rel,line", WRITES, ids=[w[0][0] + "-" + w[0][1][:6] for w in WRITES])
def test_a_line_an_editor_saved_over_is_reported_and_restored(tmp_path, args, rel, line, how):
    ws = _ws(tmp_path)
    path = ws / rel
    stale = path.read_bytes()  # the editor opened the file here …
    run_mem("-w", ws, *args, check=0, env=ENV)
    assert line in path.read_text(encoding="utf-8").splitlines()
    _save(path, stale, how)  # … and saves its old buffer after mem appended

    gone = _gone(ws)
    assert [(g["path"], g["text"] if g["kind"] == "core" else f"- {g['text']}") for g in gone] == [(rel, line)]
    people = run_mem("-w", ws, "status", check=0, env=ENV)
    assert "1 line(s) mem wrote are gone" in people.stdout and line in people.stdout
    proc, found = run_json("-w", ws, "recall", "Lisbon", env=ENV)
    warning = [w for w in found["warnings"] if "are gone from" in w]
    assert warning and rel in warning[0] and "mem check --restore" in warning[0]
    proc, check = run_json("-w", ws, "check", env=ENV)
    assert proc.returncode == 1
    assert [d["code"] for d in check["diagnostics"] if d["path"] == rel] == ["retained-line-missing"]

    saved = path.read_text(encoding="utf-8")
    proc, restored = run_json("-w", ws, "check", "--restore", env=ENV)
    assert proc.returncode == 0, proc.stderr
    now = path.read_text(encoding="utf-8")
    assert now.startswith(saved) and now.splitlines()[-1] == line  # put back at the end; nothing else moved
    assert restored["restored"][0]["restored"] == f"{rel}#L{len(now.splitlines())}"
    assert _gone(ws) == []
    if rel == "memory.md":  # a replace of memory.md backs the replaced file up first
        backups = list((ws / ".memory" / "backups").rglob("memory.md*"))
        assert any(b.read_text(encoding="utf-8") == saved for b in backups)


def test_a_line_deleted_on_purpose_is_dismissed_once_and_for_all(tmp_path):
    ws = _ws(tmp_path)
    run_mem("-w", ws, "core", "append", "- Old phone: 0151 234.", check=0, env=ENV)
    core = ws / "memory.md"
    core.write_text(core.read_text(encoding="utf-8").replace("- Old phone: 0151 234.\n", ""), encoding="utf-8")
    assert [g["text"] for g in _gone(ws)] == ["- Old phone: 0151 234."]
    proc, acked = run_json("-w", ws, "check", "--ack", "memory.md", env=ENV)
    assert proc.returncode == 0 and [a["text"] for a in acked["acknowledged"]] == ["- Old phone: 0151 234."]
    assert _gone(ws) == []
    run_mem("-w", ws, "core", "append", "- Likes figs.", check=0, env=ENV)  # later edits do not bring it back
    assert _gone(ws) == [] and "Old phone" not in core.read_text(encoding="utf-8")


def test_lines_memtool_itself_replaced_are_not_reported(tmp_path):
    ws = _ws(tmp_path)
    run_mem("-w", ws, "core", "append", "- Prefers tea.\n- Reads at night.", check=0, env=ENV)
    run_mem("-w", ws, "core", "replace", "- Prefers tea.", "- Prefers coffee.", check=0, env=ENV)
    assert _gone(ws) == []
    core = ws / "memory.md"
    stale = core.read_text(encoding="utf-8").replace("- Prefers coffee.\n", "")
    core.write_text(stale, encoding="utf-8")  # the replacement is a line mem wrote, too
    assert [(g["text"], g["by"]) for g in _gone(ws)] == [("- Prefers coffee.", "core replace")]


def test_a_check_cache_another_memtool_wrote_is_not_trusted(tmp_path):
    """An older memtool reads a core line as a list item and caches it as gone; this one reads again."""
    import json

    ws = _ws(tmp_path)
    run_mem("-w", ws, "core", "append", "- Prefers tea.", check=0, env=ENV)
    assert _gone(ws) == []
    checked = ws / ".memory" / "retained-checked.json"
    cache = json.loads(checked.read_text(encoding="utf-8"))
    entry = json.loads((ws / ".memory" / "retained.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    del cache["format"]
    cache["files"]["memory.md"]["missing"] = [{k: entry[k] for k in ("id", "at", "path", "line", "text", "kind")}]
    checked.write_text(json.dumps(cache), encoding="utf-8")
    assert _gone(ws) == []


@pytest.mark.parametrize("verb", ["--restore", "--ack"])
def test_check_restore_and_ack_show_a_core_line_as_it_was_written(tmp_path, verb):
    """A line of memory.md is recorded whole: `mem check --restore` showed `- ## Likes` and
    `- - Green tea.` for `## Likes` and `- Green tea.` (a list marker the file never had)."""
    ws = _ws(tmp_path)
    core = ws / "memory.md"
    stale = core.read_bytes()
    run_mem("-w", ws, "core", "append", "## Likes\n- Green tea.", check=0, env=ENV)
    _save(core, stale, "rename")
    shown = run_mem("-w", ws, "check", verb, check=0, env=ENV).stdout.splitlines()
    assert [line.split("  ", 1)[1] for line in shown] == ["## Likes", "- Green tea."], shown


def test_a_code_block_core_append_wrote_is_restored_whole(tmp_path):
    """`mem core append` of a fenced block records its three lines; an editor's stale save drops them.
    `mem check --restore` put them back one line at a time, and the first, an opening fence alone, was
    refused (exit 2): nothing was restored, not even a later line of another edit. Now the lines one
    edit wrote are put back together, as one append."""
    ws = _ws(tmp_path)
    core = ws / "memory.md"
    stale = core.read_bytes()
    run_mem("-w", ws, "core", "append", "```\nssh me@host\n```", check=0, env=ENV)
    run_mem("-w", ws, "core", "append", "- Likes figs.", check=0, env=ENV)
    _save(core, stale, "rename")
    proc, restored = run_json("-w", ws, "check", "--restore", env=ENV)
    assert proc.returncode == 0, proc.stderr
    lines = core.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == CORE_TEXT.splitlines() and lines[3:] == ["```", "ssh me@host", "```", "- Likes figs."]
    assert [r["restored"] for r in restored["restored"]] == [f"memory.md#L{n}" for n in (4, 5, 6, 7)]
    assert _gone(ws) == []


def test_a_nested_core_line_is_restored_with_its_indentation(tmp_path):
    """`mem core append` of a nested list item; an editor's stale save drops it; `mem check --restore`
    put it back as `- Green tea.`, no longer nested under its parent."""
    ws = _ws(tmp_path)
    core = ws / "memory.md"
    stale = core.read_bytes()
    run_mem("-w", ws, "core", "append", "- Drinks:\n  - Green tea.\n\t- Mate.", check=0, env=ENV)
    _save(core, stale, "rename")
    shown = run_mem("-w", ws, "check", env=ENV).stdout
    assert "'  - Green tea.'" in shown
    proc = run_mem("-w", ws, "check", "--restore", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert core.read_text(encoding="utf-8").splitlines()[3:] == ["- Drinks:", "  - Green tea.", "\t- Mate."]
    assert _gone(ws) == []


@pytest.mark.parametrize("rel,args", [(TODAY, ["note", "Jonas moved the meeting to Friday."]),
                                      ("memory.md", ["core", "append", "- Prefers tea in the afternoon."])])
def test_two_restores_at_once_put_a_line_back_once(tmp_path, rel, args):
    """Two `mem check --restore` (two terminals, or a person and an agent's hook) both found the line
    gone, then each appended it under the file's lock: it was back twice. Under the lock each now
    looks again whether the line is still gone."""
    import subprocess
    import sys
    import time

    from memtool.workspace import Workspace

    ws = _ws(tmp_path)
    path = ws / rel
    stale = path.read_bytes()
    run_mem("-w", ws, *args, check=0, env=ENV)
    line = path.read_text(encoding="utf-8").splitlines()[-1]
    _save(path, stale, "rename")
    with Workspace(ws).lock(rel):  # both restores find the line gone, then wait here for the lock
        procs = [subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "check", "--restore"], env=ENV,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        time.sleep(3)
        assert [p.poll() for p in procs] == [None, None]
    assert [p.wait(60) for p in procs] == [0, 0], [p.stderr.read() for p in procs]
    assert path.read_text(encoding="utf-8").splitlines().count(line) == 1
    assert _gone(ws) == []


EDITOR = """
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop):
    if sys.argv[3] == "append":  # `echo … >> journal.md`, or an editor that appends in place
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"- editor line {n}\\n")
    else:  # an editor saving what it read a moment ago plus a line, by a rename
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path + ".swp", "w", encoding="utf-8") as f:
            f.write(text + f"- editor line {n}\\n")
        os.replace(path + ".swp", path)
    n += 1
    time.sleep(float(sys.argv[4]))
print(n)
"""


@pytest.mark.parametrize("how", ["append", "rename"])
def test_a_journal_append_racing_an_editor_loses_no_line_of_the_editor(tmp_path, how):
    """`mem reflect` wrote bank/journal.md as the text it had read plus its entry, by a rename: a line
    another program added to the journal meanwhile was gone. Now the entry is appended to the open
    file (as `mem retain` appends), so the other program's lines all stay; appended in place, both sides stay."""
    import subprocess
    import sys

    from memtool.reflect.runner import JOURNAL, _append_journal
    from memtool.workspace import Workspace

    ws = _ws(tmp_path)
    path, stop = ws / JOURNAL, tmp_path / "stop"
    path.write_text("# Journal\n", encoding="utf-8")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(stop), how, "0.0002"], stdout=subprocess.PIPE, text=True)
    try:
        for n in range(60):
            _append_journal(Workspace(ws), f"## run {n}\n\n- found nothing.\n")
    finally:
        stop.touch()
        written = int(editor.communicate(timeout=30)[0])
    text = path.read_text(encoding="utf-8")
    assert [f"- editor line {n}" for n in range(written)] == re.findall(r"- editor line \d+", text)
    if how == "append":
        assert re.findall(r"## run \d+", text) == [f"## run {n}" for n in range(60)]


def test_an_append_racing_another_programs_appends_is_written_once_and_says_where_it_landed(tmp_path):
    """A line another program appended between an append's last check and its write moved the append
    down; it then looked failed and was made again: a retained line stood twice (and was cited by the
    bytes before the other program's line). `mem retain`, `mem note`, review decisions and the journal
    all append through `Workspace.append`."""
    import subprocess
    import sys

    from memtool.workspace import Workspace

    ws = _ws(tmp_path)
    path, stop = ws / TODAY, tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(stop), "append", "0.00005"],
                              stdout=subprocess.PIPE, text=True)
    try:
        answers = [Workspace(ws).append(TODAY, lambda before, n=n: f"- mine {n}\n".encode()) for n in range(400)]
    finally:
        stop.touch()
        written = int(editor.communicate(timeout=30)[0])
    text = path.read_bytes()
    assert re.findall(rb"- mine \d+", text) == [f"- mine {n}".encode() for n in range(400)], written
    assert all(text.startswith(before + data) for before, data in answers)
    assert [f"- editor line {n}".encode() for n in range(written)] == re.findall(rb"- editor line \d+", text)
