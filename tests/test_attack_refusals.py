"""Defects a hostile QA pass left: input that was half-applied, silently reread as something else, or
written past a limit. Each is refused up front, with a reason and a hint, and nothing changes."""

import os

import pytest
from conftest import mem_env, run_json, run_mem


@pytest.mark.parametrize("link", ["memtool.toml", "bank", "SOUL.md"])
def test_init_refuses_a_dangling_link_before_creating_anything(tmp_path, link):
    """`mem init` wrote memory/, bank/, memory.md... and then stopped at memtool.toml -> nowhere."""
    ws = tmp_path / "brain"
    ws.mkdir()
    (ws / link).symlink_to(tmp_path / "missing")
    proc = run_mem("init", ws)
    assert proc.returncode != 0 and "does not exist; nothing was created" in proc.stderr, proc.stderr
    assert f"rm {ws / link}" in proc.stderr
    assert sorted(os.listdir(ws)) == [link] and not (tmp_path / "missing").exists()
    (ws / link).unlink()
    assert run_mem("init", ws).returncode == 0 and (ws / "memtool.toml").is_file()


def test_init_refuses_a_link_out_of_the_workspace_before_creating_anything(tmp_path):
    ws = tmp_path / "brain"
    ws.mkdir()
    (ws / "SOUL.md").symlink_to(tmp_path / "elsewhere" / "SOUL.md")
    (tmp_path / "elsewhere").mkdir()
    proc = run_mem("init", ws)
    assert proc.returncode != 0 and "nothing was created" in proc.stderr, proc.stderr
    assert sorted(os.listdir(ws)) == ["SOUL.md"] and not os.listdir(tmp_path / "elsewhere")


NEAR_MISSES = ["W@Peter: Moved to Lisbon.", "B@warelay:fixed it", "W@Peter moved", "O (c=0.5): Likes tea.",
               "O(c=0.5) Likes tea.", "O(c=1.5): Likes tea.", "O(c=abc): Likes tea.", "X @Peter: Likes tea.",
               "W @: Moved to Lisbon.", "W @ Peter: Moved to Lisbon.", "O(c=0.5) @ : Likes tea."]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_retain_refuses_a_typed_bullet_with_a_malformed_prefix(empty_ws, line):
    """`mem retain "W@Peter: …"` became an untyped log line without a word."""
    before = {p: p.read_bytes() for p in (empty_ws / "memory").glob("*.md")}
    proc = run_mem("-w", empty_ws, "retain", line)
    assert proc.returncode == 2 and "not a valid Retain bullet" in proc.stderr and "hint:" in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in (empty_ws / "memory").glob("*.md")} == before


def test_retain_names_the_fix_for_a_missing_space(empty_ws):
    proc = run_mem("-w", empty_ws, "retain", "W@Peter: Moved to Lisbon.")
    assert "put a space between the type letter and the entity, e.g. 'W @Peter: …'" in proc.stderr
    proc = run_mem("-w", empty_ws, "retain", "O (c=0.5): Likes tea.")
    assert "without a space, e.g. 'O(c=0.8)'" in proc.stderr
    # `W @: …`, `W @ Peter: …` were kept as plain log lines, without a word
    for line in ("W @: Moved to Lisbon.", "W @ Peter: Moved to Lisbon."):
        proc = run_mem("-w", empty_ws, "retain", line)
        assert "an @ needs the entity's name right after it, e.g. 'W @Peter: …'" in proc.stderr, proc.stderr


@pytest.mark.parametrize("line", ["a@b.com: my address", "I @Peter said hi", "Peter: likes tea", "I @ home: tea",
                                  "Meet @ 5: tea"])
def test_retain_keeps_plain_text_that_only_resembles_a_bullet(empty_ws, line):
    proc, data = run_json("-w", empty_ws, "retain", line)
    assert proc.returncode == 0 and data["kind"] == "log", proc.stderr


def test_check_reports_near_miss_bullets_written_by_hand_with_file_and_line(empty_ws):
    (empty_ws / "memory" / "2026-01-05.md").write_text(
        "# 2026-01-05\n\n## Retain\n" + "".join(f"- {line}\n" for line in NEAR_MISSES), encoding="utf-8")
    proc = run_mem("-w", empty_ws, "check")
    for n in range(len(NEAR_MISSES)):
        assert f"memory/2026-01-05.md:{4 + n}: error " in proc.stdout + proc.stderr, (n, proc.stdout, proc.stderr)


def test_a_blank_workspace_variable_or_option_is_named_as_blank(tmp_path):
    """MEM_WORKSPACE="  " answered "MEM_WORKSPACE    is not a folder" and the hint "mem init   "."""
    proc = run_mem("status", cwd=tmp_path, env=mem_env(MEM_WORKSPACE="  "))
    assert proc.returncode == 2 and "MEM_WORKSPACE is blank ('  ')" in proc.stderr, proc.stderr
    assert "unset MEM_WORKSPACE" in proc.stderr and "mem init  " not in proc.stderr
    proc = run_mem("-w", " ", "status", cwd=tmp_path)
    assert proc.returncode == 2 and "--workspace is blank" in proc.stderr, proc.stderr
    proc = run_mem("init", "  ", cwd=tmp_path)
    assert proc.returncode == 2 and "blank" in proc.stderr and not os.listdir(tmp_path), proc.stderr


@pytest.mark.parametrize("how", [["-w", ""], ["--workspace="], ["--workspace", ""], "env"])
def test_an_empty_workspace_option_or_variable_is_a_usage_error_not_the_current_folder(example_ws, how):
    """`mem -w "" status` (and MEM_WORKSPACE="") silently used the current folder: in a workspace it
    answered for that one, as if nothing had been named."""
    env = mem_env(MEM_WORKSPACE="") if how == "env" else None
    proc = run_mem(*([] if how == "env" else how), "status", cwd=example_ws, env=env)
    name = "MEM_WORKSPACE" if how == "env" else "--workspace"
    assert proc.returncode == 2 and f"error: {name} is empty" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 2 and "hint:" in proc.stderr and not proc.stdout
    assert not (example_ws / ".memory").exists()  # nothing indexed in the current folder


@pytest.mark.parametrize("value,said", [("", "is empty"), ("  ", "is blank ('  ')")])
def test_an_empty_workspace_variable_is_refused_by_init_and_recall_too(tmp_path, value, said):
    """`MEM_WORKSPACE="  " mem init` created a workspace in a folder named "  "."""
    for args in (["init"], ["recall", "Peter"], ["retain", "W: x"]):
        proc = run_mem(*args, cwd=tmp_path, env=mem_env(MEM_WORKSPACE=value))
        assert proc.returncode == 2 and f"MEM_WORKSPACE {said}" in proc.stderr, (args, proc.stderr)
    assert not os.listdir(tmp_path)


def test_a_workspace_path_with_spaces_is_quoted_in_the_hint(tmp_path):
    proc = run_mem("-w", tmp_path / "my brain", "status")
    assert proc.returncode == 3 and f"mem init '{tmp_path / 'my brain'}'" in proc.stderr, proc.stderr


@pytest.mark.parametrize("args", [["summarize", "2026-02-30"], ["summarize", "30.02.2026"], ["episodes", "2026-02-30"],
                                  ["recall", "2026-13-01"], ["recall", "--json", "2025-02-29"]])
def test_an_argument_shaped_like_a_date_that_is_no_day_is_a_usage_error(example_ws, args):
    """`mem summarize 2026-02-30` searched for the words 2026, 02 and 30 (and asked Ollama about them)."""
    proc = run_mem("-w", example_ws, *args, env=mem_env(OLLAMA_HOST="http://127.0.0.1:9"))
    assert proc.returncode == 2 and "is shaped like a date but is not a day" in proc.stderr, proc.stderr
    assert "hint: give a real day" in proc.stderr and (not proc.stdout or '"error": "UsageError"' in proc.stdout)


@pytest.mark.parametrize("args", [["summarize", "0025-11-30"], ["summarize", "1899-12-31"], ["summarize", "30.11.0025"],
                                  ["episodes", "0001-01-01"], ["recall", "0000-01-01"], ["recall", "--json", "0025-11-30"]])
def test_an_argument_shaped_like_a_date_before_1900_is_a_usage_error(example_ws, args):
    """`mem summarize 0025-11-30` (a typo for 2025) searched the words 0025, 11 and 30 instead of
    refusing the day as `--date 0025-11-30` and `--since 0025-11-30` do."""
    proc = run_mem("-w", example_ws, *args, env=mem_env(OLLAMA_HOST="http://127.0.0.1:9"))
    assert proc.returncode == 2 and "is shaped like a date but is not a day" in proc.stderr, proc.stderr
    assert "before 1900" in proc.stderr and "has 31 days" not in proc.stderr
    assert "hint: give a real day" in proc.stderr and (not proc.stdout or '"error": "UsageError"' in proc.stdout)


@pytest.mark.parametrize("option", ["--since", "--until", "--as-of"])
def test_recall_date_options_refuse_a_day_that_does_not_exist(example_ws, option):
    proc = run_mem("-w", example_ws, "recall", "Peter", option, "2026-02-30")
    assert proc.returncode == 2 and f"{option} '2026-02-30'" in proc.stderr, proc.stderr


def test_a_real_leap_day_and_a_day_inside_longer_text_are_still_searched(example_ws):
    assert run_mem("-w", example_ws, "recall", "2024-02-29").returncode == 0
    assert run_mem("-w", example_ws, "recall", "Peter 2026-02-30").returncode == 0


@pytest.fixture()
def small_limit(tmp_path):
    """A workspace whose [index] max_file_bytes is 1,000, today's log a short one."""
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    (ws / "memtool.toml").write_text("[index]\nmax_file_bytes = 1000\n", encoding="utf-8")
    return ws


def _files(ws):
    return {p: p.read_bytes() for p in ws.rglob("*.md") if ".memory" not in p.parts}


@pytest.mark.parametrize("args", [["note", "x" * 1200], ["retain", "W: " + "x" * 1200],
                                  ["note", "--page", "bank/world.md", "x" * 1200], ["note", "--page", "Newcomer", "x" * 1200]])
def test_a_line_that_would_push_its_file_past_max_file_bytes_is_refused(small_limit, args):
    """A note large enough to push the log past max_file_bytes was written, and recall then warned
    that the file is no longer indexed."""
    before = _files(small_limit)
    proc = run_mem("-w", small_limit, *args)
    assert proc.returncode == 4 and "over [index] max_file_bytes (1,000)" in proc.stderr, proc.stderr
    assert "nothing was written" in proc.stderr and "hint:" in proc.stderr
    assert _files(small_limit) == before
    assert not (small_limit / "bank" / "entities" / "Newcomer.md").exists()
    assert run_mem("-w", small_limit, args[0], *args[1:-1], "A short one.").returncode == 0


def test_mcp_retain_and_note_refuse_past_max_file_bytes(small_limit):
    from test_mcp import call, session

    async def script(s):
        return [await call(s, "retain", bullet="W: " + "x" * 1200), await call(s, "note", text="y" * 1200)]
    before = _files(small_limit)
    for result in session(small_limit, script):
        assert result.is_error and "over [index] max_file_bytes (1,000)" in result.content[0].text
    assert _files(small_limit) == before


def test_init_leaves_an_existing_linked_file_alone_and_completes_the_rest(tmp_path):
    """The checks cover only what init writes: a SOUL.md linked to a file elsewhere is kept as it is."""
    (tmp_path / "dotfiles").mkdir()
    (tmp_path / "dotfiles" / "SOUL.md").write_text("# mine\n", encoding="utf-8")
    ws = tmp_path / "brain"
    ws.mkdir()
    (ws / "SOUL.md").symlink_to(tmp_path / "dotfiles" / "SOUL.md")
    assert run_mem("init", ws).returncode == 0 and (ws / "memory.md").is_file()
    assert (ws / "SOUL.md").is_symlink() and (tmp_path / "dotfiles" / "SOUL.md").read_text() == "# mine\n"


def _refused_past_limit(ws, *args: str) -> None:
    """`mem ARGS` in `ws` (max_file_bytes 1,000) is refused past the limit (exit 4) with no file changed."""
    before = _files(ws)
    proc = run_mem("-w", ws, *args)
    assert proc.returncode == 4 and "over [index] max_file_bytes (1,000)" in proc.stderr, proc.stderr
    assert _files(ws) == before


def _pad(path, size: int) -> None:
    """Grow a Markdown file by hand to `size` bytes with plain lines."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(text + "\nfiller " + "y" * (size - len(text.encode()) - 9) + "\n", encoding="utf-8")
    assert path.stat().st_size == size


def test_check_restore_refuses_a_line_that_would_push_its_file_past_max_file_bytes(small_limit):
    """`mem check --restore` appended the vanished line past [index] max_file_bytes: the log was then
    not indexed, and the restored line (and every other) could not be recalled."""
    proc, data = run_json("-w", small_limit, "note", "Jonas moved the meeting to Friday.")
    log = small_limit / data["path"]
    log.write_text(log.read_text(encoding="utf-8").replace("- Jonas moved the meeting to Friday.\n", ""), encoding="utf-8")
    _pad(log, 990)
    _refused_past_limit(small_limit, "check", "--restore")
    _, status = run_json("-w", small_limit, "status")
    assert [e["text"] for e in status["retained_gone"]] == ["Jonas moved the meeting to Friday."]


@pytest.mark.parametrize("args", [["core", "append", "- " + "x" * 900], ["core", "insert", "2", "x" * 900]])
def test_core_edits_refuse_to_push_memory_md_past_max_file_bytes(small_limit, args):
    _refused_past_limit(small_limit, *args)


def test_check_restore_refuses_a_core_line_past_max_file_bytes(small_limit):
    run_mem("-w", small_limit, "core", "append", "- Prefers tea.", check=0)
    core = small_limit / "memory.md"
    core.write_text(core.read_text(encoding="utf-8").replace("- Prefers tea.\n", ""), encoding="utf-8")
    _pad(core, 995)
    _refused_past_limit(small_limit, "check", "--restore")


def test_a_review_decision_refuses_to_push_decisions_md_past_max_file_bytes(tmp_path):
    """`mem review decide` appended its line to bank/decisions.md past [index] max_file_bytes."""
    from test_review import _item, _ws

    from memtool.reflect import decisions

    ws = _ws(tmp_path)
    run_mem("-w", ws, "reflect", "--force", check=0)
    item = _item(ws)["items"][0]
    (ws / "memtool.toml").write_text("[index]\nmax_file_bytes = 1000\n", encoding="utf-8")
    (ws / decisions.PAGE).write_text(decisions.HEADER, encoding="utf-8")
    _pad(ws / decisions.PAGE, 990)
    before = _files(ws)
    proc = run_mem("-w", ws, "review", "decide", item["id"], "fold")
    assert proc.returncode == 4 and "over [index] max_file_bytes (1,000)" in proc.stderr, proc.stderr
    assert _files(ws) == before and _item(ws)["items"][0]["id"] == item["id"]  # still open
