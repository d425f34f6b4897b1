"""Options given wrong: an error that says so, the same as recall's, never a silently different answer."""

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import mem_env, run_json, run_mem


def test_opinions_checks_k_and_entity_and_says_when_there_are_none(example_ws):
    """`--k -3` listed all but the last three, `--k 0` printed nothing, `--entity ''` listed every
    opinion, and an entity without opinions printed nothing at all, all with exit 0."""
    for args, said in ((["--k", "0"], "k must be from 1 to 1000"), (["--k", "-3"], "k must be from 1 to 1000"),
                       (["--entity", ""], "--entity needs a name"), (["-e", "@"], "--entity needs a name")):
        proc = run_mem("opinions", *args, cwd=example_ws)
        assert proc.returncode == 2 and said in proc.stderr and not proc.stdout, (args, proc.stderr)
    proc = run_mem("opinions", "--entity", "Nobody", cwd=example_ws, check=0)
    assert not proc.stdout and "no opinions about Nobody" in proc.stderr
    proc, data = run_json("opinions", "--entity", "Nobody", cwd=example_ws)
    assert proc.returncode == 0 and data["opinions"] == []
    proc, data = run_json("opinions", "--k", "2", cwd=example_ws)
    assert proc.returncode == 0 and data["count"] == 2


def test_brackets_in_names_and_paths_are_shown_as_written(tmp_path):
    """rich read them as markup: `mem about "[/x]"` and `mem status` in a folder named `[/w]` ended in a
    MarkupError traceback; `mem about` said "[]" for "[[links]]" and `mem watch` dropped "[reflect]"."""
    ws = tmp_path / "notes [/w]"
    run_mem("init", ws, check=0)
    proc = run_mem("status", cwd=ws, check=0)
    assert f"workspace {ws}" in proc.stdout
    proc = run_mem("about", "[/x]", cwd=ws, check=0)
    assert "nothing is known about '[/x]'" in proc.stderr and "[[links]]" in proc.stderr
    assert "[[links]]" in run_mem("entities", cwd=ws, check=0).stderr
    watch = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "watch", "--interval", "0.2"],
                             env=mem_env(), stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
    finally:
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=30)
    assert watch.returncode == 0 and f"watching {ws}" in err and "[reflect] auto" in err, err


def test_writing_to_a_file_too_large_to_index_is_refused(tmp_path):
    """retain and note answered a citation for a line recall can never find (the file is past
    [index] max_file_bytes and not indexed), and said nothing; then they wrote it with a warning.
    Now the write is refused up front, with the limit and what to do, and nothing is written."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    (ws / "memtool.toml").write_text("[index]\nmax_file_bytes = 2000\n", encoding="utf-8")
    log = ws / "memory" / "2026-11-20.md"
    log.write_text("# 2026-11-20\n\n" + "- filler line\n" * 200, encoding="utf-8")
    before = log.read_bytes()
    proc = run_mem("retain", "W: The giraffe escaped.", "--date", "2026-11-20", cwd=ws)
    assert proc.returncode == 4 and "already has 2,814 bytes, over [index] max_file_bytes (2,000)" in proc.stderr
    assert "nothing was written" in proc.stderr and "raise [index] max_file_bytes" in proc.stderr
    proc = run_mem("note", "Okapi seen.", "--date", "2026-11-20", cwd=ws)
    assert proc.returncode == 4 and "max_file_bytes" in proc.stderr and log.read_bytes() == before
    assert run_json("retain", "W: Small day.", "--date", "2026-11-21", cwd=ws)[1]["warnings"] == []


def test_the_readmes_own_memory_filter_example_finds_the_facts_it_just_retained(tmp_path):
    """README's `mem recall --entity Pete …` found nothing in the fresh memory it walks through (no
    page gives Peter that alias there)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own memory", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line.split("  #", 1)[0])[1:] for line in section.splitlines() if line.startswith("mem ")]
    ws = tmp_path / "memory"
    run_mem("init", ws, check=0)
    for args in commands:
        if args[0] == "retain":
            run_mem(*args, cwd=ws, check=0)
    listing = next(a for a in commands if a[0] == "recall" and "--entity" in a)
    proc = run_mem(*listing, cwd=ws, check=0)
    assert json.loads(proc.stdout)["count"] == 2  # the W and the O bullet about @Peter


def test_get_says_what_is_wrong_with_a_file_or_a_range(tmp_path):
    """`mem get` of a file that is not UTF-8 said "refusing to modify it" (get only reads); a range
    written backwards was "outside" the file."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    (ws / "bank" / "latin.md").write_bytes("Grüße\n".encode("latin-1"))
    proc = run_mem("get", "bank/latin.md", cwd=ws)
    assert proc.returncode == 4 and "not valid UTF-8" in proc.stderr and "modify" not in proc.stderr
    proc = run_mem("get", "memory.md#L3-L1", cwd=ws)
    assert proc.returncode == 2 and "backwards" in proc.stderr and "memory.md#L1-L3" in proc.stderr


def test_the_journal_names_entity_pages_apart_from_the_typed_lists(tmp_path):
    """The journal said "Updated 1 entity page(s): World" for bank/world.md."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    run_mem("retain", "W @Peter: Moved to Lisbon.", cwd=ws, check=0)
    run_mem("retain", "B @Peter: I helped Peter move.", cwd=ws, check=0)
    run_mem("reflect", "--force", cwd=ws, check=0)
    journal = (ws / "bank" / "journal.md").read_text(encoding="utf-8")
    assert "- Created 1 entity page(s): Peter\n" in journal
    assert "the generated list in `bank/world.md`, `bank/experience.md`." in journal
    assert "World" not in journal.split("entity page(s):", 1)[1].split("\n", 1)[0]


@pytest.mark.parametrize("args", [
    ["recall", "tax", "--k", "0"], ["recall", "tax", "--k", "-1"], ["recall", "tax", "--budget", "0"],
    ["episodes", "tax", "--k", "0"], ["entities", "--k", "0"], ["opinions", "--k", "5000"], ["about", "Peter", "--k", "0"],
    ["about", "Peter", "--budget", "1"], ["recent", "--budget", "1"], ["get", "memory.md", "--max-lines", "0"],
    ["get", "memory.md#L9999"], ["forget", "memory.md#L9999"], ["sync", "resolve", "memory.md", "--keep", "mine"],
], ids=" ".join)
def test_every_usage_error_says_what_to_do(example_ws, args):
    """docs/cli.md: errors print `error: <reason>` and `hint: <what to do>`; `--k 0`, `--budget 0`,
    `--max-lines 0`, a line past a file's end and `--keep mine` said the reason alone (JSON `"hint": null`)."""
    proc = run_mem(*args, cwd=example_ws)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "\nhint: " in proc.stderr, proc.stderr
    proc, data = run_json(*args, cwd=example_ws)
    assert proc.returncode == 2 and data["error"] == "UsageError" and data["hint"], data


def test_opinions_takes_an_entity_written_as_a_mention(example_ws):
    """`mem opinions -e @Peter` said "no opinions about @Peter" where `-e Peter` listed them; recall's
    `--entity @Peter` and `mem about @Peter` take the @ as written."""
    _, plain = run_json("opinions", "--entity", "Peter", cwd=example_ws)
    assert plain["opinions"]
    for spelled in ("@Peter", " @Peter "):
        proc, data = run_json("opinions", "--entity", spelled, cwd=example_ws)
        assert proc.returncode == 0 and data["opinions"] == plain["opinions"], (spelled, data)
