"""The `mem` command as a user runs it: real processes, real files."""


import pytest
from conftest import run_json, run_mem, write


def test_init_creates_layout_and_never_overwrites(tmp_path):
    ws = tmp_path / "brain"
    proc = run_mem("init", ws, check=0)
    assert proc.stdout.strip() == str(ws.resolve())
    for rel in ("memory.md", "SOUL.md", "bank/world.md", "bank/experience.md", "bank/opinions.md", "memtool.toml"):
        assert (ws / rel).is_file(), rel
    assert (ws / "bank" / "entities").is_dir() and list((ws / "memory").glob("*.md"))
    assert ".memory/" in (ws / ".gitignore").read_text()
    (ws / "memory.md").write_text("# mine\n", encoding="utf-8")
    proc, data = run_json("init", ws)
    assert proc.returncode == 0 and data == {"workspace": str(ws.resolve()), "created": []}
    assert (ws / "memory.md").read_text(encoding="utf-8") == "# mine\n"


def test_workspace_discovery(tmp_path, example_ws):
    nested = example_ws / "bank" / "entities"
    proc, data = run_json("status", cwd=nested)
    assert proc.returncode == 0 and data["workspace"] == str(example_ws.resolve())
    proc, data = run_json("-w", example_ws, "status", cwd=tmp_path)
    assert data["workspace"] == str(example_ws.resolve())
    from conftest import mem_env

    proc, data = run_json("status", cwd=tmp_path, env=mem_env(MEM_WORKSPACE=str(example_ws)))
    assert data["workspace"] == str(example_ws.resolve())
    lost = tmp_path / "nowhere"
    lost.mkdir()
    proc = run_mem("recall", "x", cwd=lost)
    assert proc.returncode == 3 and "mem init" in proc.stderr and not proc.stdout


# Every command that opens a workspace (mem init makes one; sync clone makes its own folder)
EVERY_COMMAND = [["status"], ["check"], ["index"], ["recall", "x"], ["retain", "W: x"], ["note", "x"], ["about", "X"],
                 ["opinions"], ["episodes", "x"], ["recent"], ["reflect", "--force"], ["core", "show"],
                 ["core", "append", "- x"], ["forget", "x", "--yes"], ["review", "list"], ["schedule"],
                 ["get", "memory.md"], ["sync", "status"], ["sync", "off"], ["sync", "REMOTE"], ["summarize", "x"],
                 ["import", "obsidian", "VAULT"], ["watch"], ["mcp"], ["serve"]]


@pytest.mark.parametrize("args", EVERY_COMMAND, ids=" ".join)
def test_a_folder_that_is_not_a_workspace_is_refused_by_every_command_and_left_empty(tmp_path, args):
    """`mem -w EMPTY_DIR index` (or a typo'd path that exists, or $MEM_WORKSPACE naming one) made it a
    workspace: .memory/, today's log, the index. Only `mem init` makes one; the rest say so (exit 3)."""
    from conftest import mem_env

    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "VAULT").mkdir()
    (tmp_path / "VAULT" / "n.md").write_text("a note\n", encoding="utf-8")
    (tmp_path / "REMOTE").mkdir()
    args = [str(tmp_path / a) if a in ("VAULT", "REMOTE") else a for a in args]
    for env, how in ((None, ["-w", empty]), (mem_env(MEM_WORKSPACE=str(empty)), [])):
        proc = run_mem(*how, *args, cwd=tmp_path, env=env, input="")
        assert proc.returncode == 3, proc.stderr
        assert f"not a memtool workspace: {empty}" in proc.stderr and f"mem init {empty}" in proc.stderr
        assert list(empty.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["REMOTE", "VAULT", "empty"]


def test_mem_w_dir_init_creates_that_folder_and_a_second_folder_is_a_usage_error(tmp_path):
    """`mem -w DIR init` made the current folder a workspace, not DIR."""
    target, here = tmp_path / "brain", tmp_path / "here"
    here.mkdir()
    assert run_mem("-w", target, "init", cwd=here).returncode == 0
    assert (target / "memory.md").is_file() and list(here.iterdir()) == []
    assert run_mem("-w", target, "status", cwd=here).returncode == 0
    proc = run_mem("-w", target, "init", tmp_path / "other", cwd=here)
    assert proc.returncode == 2 and "two folders" in proc.stderr and not (tmp_path / "other").exists()


def test_mem_workspace_init_creates_that_folder_and_a_second_folder_is_a_usage_error(tmp_path):
    """`MEM_WORKSPACE=X mem init` made the current folder a workspace, not X."""
    from conftest import mem_env

    target, here = tmp_path / "brain", tmp_path / "here"
    here.mkdir()
    env = mem_env(MEM_WORKSPACE=str(target))
    assert run_mem("init", cwd=here, env=env).returncode == 0
    assert (target / "memory.md").is_file() and list(here.iterdir()) == []
    assert run_mem("init", target, cwd=here, env=env).returncode == 0  # the same folder: fine
    proc = run_mem("init", tmp_path / "other", cwd=here, env=env)
    assert proc.returncode == 2 and "$MEM_WORKSPACE" in proc.stderr and not (tmp_path / "other").exists()


def test_retain_then_recall_cites_the_new_line(example_ws):
    proc, data = run_json("retain", "W @Peter: Adopted a cat named Pixel.", "--date", "2026-11-29", cwd=example_ws)
    assert proc.returncode == 0, proc.stderr
    path, line = data["path"], data["line"]
    assert (example_ws / path).read_text(encoding="utf-8").splitlines()[line - 1] == "- W @Peter: Adopted a cat named Pixel."
    proc, out = run_json("recall", "Pixel cat", cwd=example_ws)
    assert out["results"][0]["source"] == f"{path}#L{line}"
    assert out["results"][0]["kind"] == "world" and out["results"][0]["entities"] == ["Peter"]


def test_retain_rejects_bad_bullets_and_changes_nothing(example_ws):
    before = {p: p.read_bytes() for p in example_ws.rglob("*.md")}
    for bad in ["X @Tom: nope", "O(c=7): too sure", "W(c=0.5): only opinions", "", "W: two\nlines", "# a heading"]:
        proc = run_mem("retain", bad, cwd=example_ws)
        assert proc.returncode == 2 and "error:" in proc.stderr, (bad, proc.stderr)
    proc = run_mem("retain", "S: fine", "--date", "2026-13-01", cwd=example_ws)
    assert proc.returncode == 2 and "--date" in proc.stderr
    assert {p: p.read_bytes() for p in example_ws.rglob("*.md")} == before


def test_recall_json_and_human_output(example_ws):
    proc, data = run_json("recall", "Marrakech", "--k", "3", "--since", "2026-11-01", cwd=example_ws)
    assert proc.returncode == 0
    assert data["mode"] == "lexical" and data["count"] == len(data["results"]) <= 3
    for r in data["results"]:
        assert set(r) >= {"kind", "timestamp", "entities", "content", "source", "score"}
    human = run_mem("recall", "Marrakech", "--k", "3", cwd=example_ws, check=0)
    assert "memory/" in human.stdout and "#L" in human.stdout
    none = run_mem("recall", "zzzyxw", cwd=example_ws, check=0)
    assert none.stdout == "" and "nothing found" in none.stderr
    proc, empty = run_json("recall", "zzzyxw", cwd=example_ws)
    assert proc.returncode == 0 and empty["results"] == [] and empty["count"] == 0


def test_usage_errors_have_reason_hint_and_json(example_ws):
    proc = run_mem("recall", "Peter", "--since", "last tuesday", cwd=example_ws)
    assert proc.returncode == 2 and "error:" in proc.stderr and "hint:" in proc.stderr
    proc, data = run_json("recall", "", cwd=example_ws)
    assert proc.returncode == 2 and data["error"] == "UsageError" and data["hint"]
    proc = run_mem("recall", "Peter", "--kind", "nonsense", cwd=example_ws)
    assert proc.returncode == 2


def test_index_status_check(example_ws):
    proc, report = run_json("index", cwd=example_ws)
    assert proc.returncode == 0 and report["parsed"] >= 40 and report["facts"] > 200
    proc, again = run_json("index", cwd=example_ws)
    assert again["parsed"] == 0
    proc, rebuilt = run_json("index", "--rebuild", cwd=example_ws)
    assert rebuilt["rebuilt"] and rebuilt["facts"] == report["facts"]
    proc, status = run_json("status", cwd=example_ws)
    assert status["days"]["count"] >= 30 and status["facts_by_kind"]["opinion"] >= 12
    assert status["entity_pages"] >= 8 and status["index"]["bytes"] > 0
    human = run_mem("status", cwd=example_ws, check=0)
    assert "facts" in human.stdout
    # status counts what indexing found; mem check lists those and checks links too (it said "0 warnings"
    # beside a check that listed one)
    assert "1 error, 0 warnings found while indexing (mem check lists them, and checks links too)" in human.stdout
    proc, check = run_json("check", cwd=example_ws)
    assert proc.returncode == 1  # the example has one deliberately malformed bullet
    assert check["errors"] == 1 and check["diagnostics"][0]["location"].startswith("memory/2026-11-24.md:")
    human = run_mem("check", cwd=example_ws)
    assert human.returncode == 1 and "memory/2026-11-24.md:" in human.stdout


def test_check_is_clean_and_exits_zero_on_good_workspace(tmp_path):
    ws = tmp_path / "w"
    run_mem("init", ws, check=0)
    proc, data = run_json("check", cwd=ws)
    assert proc.returncode == 0 and data["errors"] == 0


def test_help_and_version():
    proc = run_mem("--help", check=0)
    for cmd in ("init", "retain", "index", "recall", "status", "check"):
        assert cmd in proc.stdout
    for cmd in ("init", "retain", "index", "recall", "status", "check"):
        sub = run_mem(cmd, "--help", check=0)
        assert "Example:" in sub.stdout, cmd
    assert run_mem("--version", check=0).stdout.startswith("mem ")


TYPOS = [["recal", "x"], ["recall", "x", "--bogus"], ["recall", "-Peter"], ["retain"], ["recall", "x", "--k", "many"],
         ["--bogus"], ["core", "nope"], ["sync", "restore", "a", "b"]]


def test_14_1_typos_and_missing_arguments_are_one_line_and_a_hint_exit_2(example_ws):
    for args in TYPOS:
        proc = run_mem(*args, cwd=example_ws)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: "), (args, lines)
    proc = run_mem("recall", "-Peter", cwd=example_ws)
    assert "mem recall -- -Peter" in proc.stderr
    # `--` only where the command takes text: `mem -- -V` and `mem status -- -x` would be nonsense
    for args, hint in ((["-V"], "hint: see mem --help"), (["status", "-x"], "hint: see mem status --help")):
        proc = run_mem(*args, cwd=example_ws)
        assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == hint, proc.stderr
    assert "Did you mean 'recall'" in run_mem("recal", "x", cwd=example_ws).stderr
    proc, data = run_json("recall", "x", "--bogus", cwd=example_ws)
    assert proc.returncode == 2 and data["error"] == "UsageError" and "--bogus" in data["message"]


def test_14_1_usage_errors_in_process_with_the_installed_typer(example_ws, monkeypatch, capsys):
    import typer

    from memtool.cli import main

    monkeypatch.chdir(example_ws)
    for args in TYPOS:
        with pytest.raises(SystemExit) as exit_:
            main(args)
        err = capsys.readouterr().err
        assert exit_.value.code == 2, (typer.__version__, args, err)
        assert err.startswith("error: ") and "\nhint: " in err, (typer.__version__, args, err)


def test_15_errors_are_json_only_when_the_json_option_was_given(example_ws):
    for args in (["get", "--", "--json"], ["recall", "x", "--since", "--json"]):  # "--json" as text, not the option
        proc = run_mem(*args, cwd=example_ws)
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("error: "), (args, proc.stdout)
    for args in (["get", "nothing.md"], ["recall", "x", "--bogus"]):  # the option: after or before click parsed it
        proc, data = run_json(*args, cwd=example_ws)
        assert proc.returncode == 2 and data["error"] == "UsageError" and proc.stderr.startswith("error: "), args


@pytest.mark.parametrize("args", [[], ["core"], ["review"]], ids=lambda a: " ".join(["mem", *a]))
def test_a_group_without_its_command_shows_its_help_not_an_error(tmp_path, args):
    """`mem` alone printed `error: Usage: mem [OPTIONS] …`, the whole help as an error message, then
    `hint: see mem --help` (the help it had just shown). Now the help as click shows it: on stderr
    (nothing ran: exit 2, stdout empty), starting with its usage line and listing the commands."""
    proc = run_mem(*args, cwd=tmp_path)
    assert proc.returncode == 2 and not proc.stdout
    assert proc.stderr.startswith(f"Usage: {' '.join(['mem', *args])} [OPTIONS] COMMAND"), proc.stderr
    assert "Commands:" in proc.stderr and "error:" not in proc.stderr and "hint:" not in proc.stderr


def test_init_refuses_a_folder_whose_memory_folder_is_a_workspace_or_code(tmp_path):
    """`mem init ~/memory`, later `mem init` in ~ by mistake: it made ~ a workspace whose daily logs
    folder was the other workspace (its memory.md and bank pages counted as 6 daily logs, a retain
    wrote into its root). Discovery already refuses that layout; init now refuses it too, and a
    `memory/` code package likewise, creating nothing. A memory/ of daily logs is taken as before."""
    home = tmp_path / "home"
    run_mem("init", home / "memory", cwd=tmp_path, check=0)
    proc = run_mem("init", cwd=home)
    assert proc.returncode == 2, proc.stderr
    assert f"{home / 'memory'} is a memtool workspace itself" in proc.stderr and "hint: " in proc.stderr
    assert sorted(p.name for p in home.iterdir()) == ["memory"]
    code = tmp_path / "project"
    write(code, "memory/__init__.py", "")
    proc, data = run_json("init", code, cwd=tmp_path)
    assert proc.returncode == 2 and "__init__.py" in data["message"], data
    assert sorted(p.relative_to(code).as_posix() for p in code.rglob("*")) == ["memory", "memory/__init__.py"]
    logs = tmp_path / "logs"
    write(logs, "memory/2026-11-02.md", "# 2026-11-02\n\n- a line\n")
    run_mem("init", logs, cwd=tmp_path, check=0)
    assert (logs / "memory.md").is_file()
