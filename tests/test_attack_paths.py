"""Paths a newcomer mistypes: a sync remote inside the workspace, a `~user` that does not exist."""

import pwd

import pytest
from conftest import mem_env, run_mem

NO_USER = "~memtool-no-such-user"


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    run_mem("init", ws, check=0)
    return ws


def files(ws):
    return sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if ".memory" not in p.parts)


@pytest.mark.parametrize("remote", [".", "bank/remote", ".memory/remote"])
def test_a_sync_remote_inside_the_workspace_is_refused(ws, remote):
    """`mem sync .` pushed manifest.json, objects/ and .manifest.lock among the notes and bound the
    workspace to itself."""
    before = files(ws)
    proc = run_mem("sync", remote, cwd=ws)
    assert proc.returncode == 2 and "workspace" in proc.stderr and "hint:" in proc.stderr, proc.stderr
    assert files(ws) == before
    assert not (ws / ".memory" / "remote").exists() and not (ws / ".memory" / "sync").exists()


def test_a_home_folder_of_no_user_is_a_usage_error_everywhere(ws, tmp_path):
    with pytest.raises(KeyError):
        pwd.getpwnam(NO_USER[1:])
    for args in (["sync", f"{NO_USER}/remote"], ["sync", f"file://{NO_USER}/remote"],
                 ["sync", "clone", str(tmp_path / "remote"), f"{NO_USER}/ws"], ["init", f"{NO_USER}/ws"],
                 ["-w", f"{NO_USER}/ws", "status"], ["import", "obsidian", f"{NO_USER}/vault", "--dry-run"]):
        proc = run_mem(*args, cwd=ws)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("error: cannot find the home folder") and "Traceback" not in proc.stderr
    proc = run_mem("status", cwd=tmp_path, env=mem_env(MEM_WORKSPACE=NO_USER))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("source", ["bank", "bank/world.md", "."])
def test_importing_from_inside_the_workspace_is_refused(ws, source):
    """`mem import obsidian bank` copied the workspace's own pages to bank/bank/ (and again, one level
    deeper, on every run)."""
    before = files(ws)
    proc = run_mem("import", "obsidian", source, cwd=ws)
    assert proc.returncode == 2 and "hint:" in proc.stderr, proc.stderr
    assert files(ws) == before


def test_a_vault_unpacked_inside_the_workspace_but_outside_its_notes_imports(ws):
    """Only memory/, bank/ and the root's files are the workspace's notes: a vault unpacked in
    ws/inbox/ is a source like any other (it was refused as "read there already", which it is not)."""
    vault = ws / "inbox" / "vault"
    vault.mkdir(parents=True)
    (vault / "Boat.md").write_text("# Boat\n\nThe boat is moored at pier 4.\n", encoding="utf-8")
    proc = run_mem("import", "obsidian", "inbox/vault", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert any("pier 4" in p.read_text(encoding="utf-8") for p in (ws / "bank").rglob("*.md"))


@pytest.mark.parametrize("page", ["..", "@...", "-/-"])
def test_a_note_to_a_page_name_without_a_letter_is_refused(ws, page):
    """`mem note --page ..` created bank/entities/entity.md."""
    before = files(ws)
    proc = run_mem("note", "Moved the meeting.", "--page", page, cwd=ws)
    assert proc.returncode == 2 and "names no entity" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert files(ws) == before


def test_get_never_reads_machine_local_state_or_hidden_files(ws):
    """`mem get` (and so the MCP `get` tool an agent calls, and `mem serve`'s file page) printed any
    file inside the workspace: the sync encryption key in .memory/sync/key, backups of legal pages,
    .git/config with a token. Now such a path, or a link to one, is refused (exit 2)."""
    from test_serve import Served

    (ws / ".memory" / "sync").mkdir(parents=True, exist_ok=True)
    (ws / ".memory" / "sync" / "key").write_text("SYNCKEY0123456789\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[remote]\n\turl = https://me:TOKEN42@example.org/x\n")
    (ws / "memory" / "key.md").symlink_to(ws / ".memory" / "sync" / "key")
    for ref in (".memory/sync/key", ".git/config", "memory/key.md", "memory/../.memory/sync/key#L1"):
        proc = run_mem("-w", ws, "get", ref)
        assert proc.returncode == 2 and "SYNCKEY" not in proc.stdout and "TOKEN42" not in proc.stdout, (ref, proc.stdout)
        assert "error:" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert run_mem("-w", ws, "get", "memory.md").returncode == 0
    server = Served(ws)
    try:
        page = server.get("/file?path=.memory/sync/key")
        assert page.status_code == 400 and "SYNCKEY" not in page.text
    finally:
        server.stop()


@pytest.mark.parametrize("rel,args", [("memory.md", ["core", "append", "- Likes tea."]), ("memory.md", ["core", "show"]),
                                      ("bank/entities/Peter.md", ["note", "--page", "Peter", "hello"])])
def test_a_folder_where_a_file_belongs_is_named_as_a_folder(ws, rel, args):
    """A folder named memory.md answered `error: Is a directory (4)`: a file descriptor's number, not the path."""
    (ws / rel).unlink(missing_ok=True)
    (ws / rel).mkdir()
    proc = run_mem("-w", ws, *args)
    assert proc.returncode == 4 and f"{rel} is a folder, not a file" in proc.stderr, proc.stderr
    assert "hint:" in proc.stderr and not any((ws / rel).iterdir())


def test_check_names_a_folder_or_pipe_where_a_markdown_file_belongs(ws):
    """A folder named memory.md (or a daily log's name, with notes inside) or a pipe named x.md was
    left out of the index without a word: `mem check` said 0 errors, 0 warnings."""
    import os

    (ws / "memory.md").unlink()
    (ws / "memory.md").mkdir()
    (ws / "memory" / "2026-11-30.md").mkdir(parents=True)
    (ws / "memory" / "2026-11-30.md" / "inside.md").write_text("# hidden\n", encoding="utf-8")
    os.mkfifo(ws / "bank" / "pipe.md")
    proc = run_mem("-w", ws, "check")
    out = proc.stdout + proc.stderr
    for rel in ("memory.md", "memory/2026-11-30.md", "bank/pipe.md"):
        assert f"{rel}: warning" in out and "not-a-file" in out, out
    assert "a folder, not a Markdown file" in out and "(a pipe, socket or device)" in out
