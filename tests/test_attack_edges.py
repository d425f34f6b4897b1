"""A hostile QA pass at the edges: a damaged index page, filter-only JSON, a changed file-size
limit, a `.memory` kept elsewhere. Real processes, real SQLite, real files."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import mem_env, run_json, run_mem, write

NOTES = "# 2026-11-02\n## Retain\n- W @Peter: Moved to Lisbon in November.\n- Peter called about the flat.\n"


def _indexed(ws: Path) -> Path:
    write(ws, "memory/2026-11-02.md", NOTES)
    write(ws, "memory.md", "# Core\n- Prefers tea.\n")
    run_mem("index", cwd=ws, check=0)
    return ws / ".memory" / "index.sqlite"


def _damage_table(index: Path, table: str) -> None:
    """Overwrite the root page of `table` with garbage: the file still opens, reading the table fails."""
    con = sqlite3.connect(index)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    con.close()
    with open(index, "r+b") as fh:
        fh.seek((root - 1) * page)
        fh.write(b"\xa5" * page)


def test_a_damaged_page_inside_the_index_is_an_error_with_a_hint_not_a_traceback(tmp_path):
    index = _indexed(tmp_path)
    _damage_table(index, "facts")
    proc, data = run_json("recall", "Lisbon", cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 5, (proc.returncode, proc.stderr)
    assert data["error"] == "IndexUnavailable" and "mem index --rebuild" in data["hint"], data
    assert "damaged" in proc.stderr and "mem index --rebuild" in proc.stderr, proc.stderr


def test_index_rebuild_sets_an_index_with_a_damaged_page_aside_and_recall_answers_again(tmp_path):
    index = _indexed(tmp_path)
    _damage_table(index, "facts")
    proc = run_mem("index", "--rebuild", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "index.sqlite.corrupt-" in proc.stderr, proc.stderr
    assert list(index.parent.glob("index.sqlite.corrupt-*"))
    proc, data = run_json("recall", "Lisbon", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "memory/2026-11-02.md#L3" in [r["source"] for r in data["results"]], data


def test_mcp_recall_on_a_damaged_index_page_says_how_to_repair_it(tmp_path):
    from test_mcp import call, session

    index = _indexed(tmp_path)
    _damage_table(index, "facts")

    async def script(s):
        return await call(s, "recall", query="Lisbon")
    result = session(tmp_path, script)
    assert result.is_error
    assert "damaged" in result.content[0].text and "mem index --rebuild" in result.content[0].text, result.content


def test_recall_json_by_filters_alone_carries_every_documented_field(tmp_path):
    """docs/cli.md documents best_score, floor, below_floor, calibrated and calibration for every
    answer; a listing by filters (no query words, or only dates) has no scores to read them from."""
    _indexed(tmp_path)
    for args in (["--entity", "Peter"], ["what did I do on 2026-11-02"]):
        proc, data = run_json("recall", *args, cwd=tmp_path)
        assert proc.returncode == 0 and data["mode"] == "filter" and data["results"], (args, data, proc.stderr)
        assert {k: data.get(k, "absent") for k in ("best_score", "floor", "below_floor", "calibrated", "calibration")} \
            == {"best_score": None, "floor": None, "below_floor": 0, "calibrated": False, "calibration": None}, data


def test_a_changed_max_file_bytes_applies_to_files_already_indexed_or_refused(tmp_path):
    """Raising the limit indexes a file it had refused, without the file being touched (and
    lowering it refuses one it had indexed): the refusal is the limit's, not the file's."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n- The quokka lives on Rottnest.\n" + "- filler line\n" * 200)
    write(tmp_path, "memtool.toml", "[index]\nmax_file_bytes = 1000\n")
    proc, data = run_json("recall", "quokka", cwd=tmp_path)
    assert data["results"] == [] and any("could not be indexed" in w for w in data["warnings"]), data
    write(tmp_path, "memtool.toml", "[index]\nmax_file_bytes = 100000\n")
    proc, data = run_json("recall", "quokka", cwd=tmp_path)
    assert [r["source"] for r in data["results"]] == ["memory/2026-11-02.md#L2"], (data, proc.stderr)
    proc, data = run_json("check", cwd=tmp_path)
    assert not [d for d in data["diagnostics"] if d["code"] == "too-large"], data
    write(tmp_path, "memtool.toml", "[index]\nmax_file_bytes = 1000\n")
    proc, data = run_json("check", cwd=tmp_path)
    size = (tmp_path / "memory" / "2026-11-02.md").stat().st_size
    assert [d["message"] for d in data["diagnostics"] if d["code"] == "too-large"] == [
        f"file is {size:,} bytes, over the limit of 1,000 (index.max_file_bytes); not indexed"], data
    proc, data = run_json("recall", "quokka", cwd=tmp_path)
    assert data["results"] == [], data


def test_a_folder_where_the_index_belongs_is_named_with_what_to_do(tmp_path):
    _indexed(tmp_path)
    index = tmp_path / ".memory" / "index.sqlite"
    for extra in index.parent.glob("index.sqlite*"):
        extra.unlink()
    index.mkdir()
    proc = run_mem("recall", "Lisbon", cwd=tmp_path)
    assert proc.returncode == 4 and "a folder has its name" in proc.stderr, proc.stderr
    assert "chmod" not in proc.stderr, "permissions are not the problem"


def test_a_state_folder_kept_elsewhere_through_a_symbolic_link_works(tmp_path):
    """`.memory/` is machine-local and derived: linking it to another disk (out of a synced folder)
    must not make every command refuse its own state files as 'outside the workspace'."""
    ws, elsewhere = tmp_path / "ws", tmp_path / "state"
    elsewhere.mkdir()
    write(ws, "memory.md", "# Core\n- Prefers tea.\n")
    (ws / ".memory").symlink_to(elsewhere, target_is_directory=True)
    left = elsewhere / ".local.sqlite.abcd1234.tmp"  # what a killed write left: reflect sweeps it
    left.write_bytes(b"")
    os.utime(left, (time.time() - 3600, time.time() - 3600))
    env = mem_env(MEM_EMBEDDER="none")
    for args in (["retain", "W @Peter: Moved to Lisbon.", "--date", "2026-11-02"], ["index"], ["check"], ["status"],
                 ["core", "append", "- Likes rain."], ["reflect", "--force"]):
        proc = run_mem(*args, cwd=ws, env=env)
        assert proc.returncode == 0, (args, proc.stderr)
    proc, data = run_json("recall", "Lisbon", cwd=ws, env=env)
    assert proc.returncode == 0 and [r["source"] for r in data["results"]] == ["memory/2026-11-02.md#L4"], (data, proc.stderr)
    assert (elsewhere / "retained.jsonl").is_file() and (elsewhere / "index.sqlite").is_file() and not left.exists()
    (ws / "memory" / "2026-11-02.md").write_text("# 2026-11-02\n", encoding="utf-8")  # an editor dropped the line
    proc = run_mem("check", "--restore", cwd=ws, env=env)
    assert proc.returncode == 0 and "Lisbon" in (ws / "memory" / "2026-11-02.md").read_text(), proc.stderr


def test_a_state_file_linked_out_of_the_state_folder_is_still_refused(tmp_path):
    write(tmp_path, "memory.md", "# Core\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_text("", encoding="utf-8")
    (tmp_path / ".memory").mkdir()
    (tmp_path / ".memory" / "retained.jsonl").symlink_to(outside)
    proc = run_mem("retain", "W x: y", cwd=tmp_path)
    assert proc.returncode != 0 and "outside" in proc.stderr, proc.stderr
    assert outside.read_text() == ""


def test_a_misspelt_option_of_a_text_command_is_refused_not_written_down(tmp_path):
    """retain, note, forget and core take text that may start with '-' ("- Prefers tea."); a word
    shaped like a long option they do not take is a typo: refused, and nothing is written."""
    write(tmp_path, "memory.md", "# Core\n- Prefers tea.\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.md")}
    for args in (["retain", "--dryrun"], ["retain", "--dat", "2026-11-02", "W x: y"], ["note", "--dry-run"],
                 ["core", "append", "--dry-run"], ["forget", "--confirm"], ["retain", "--dryrun", "--json"]):
        proc = run_mem(*args, cwd=tmp_path)
        assert proc.returncode == 2 and "No such option" in proc.stderr and "after --" in proc.stderr, (args, proc.stderr)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.md")} == before
    assert "--date" in run_mem("retain", "--dat", "2026-11-02", "W x: y", cwd=tmp_path).stderr  # the close match
    run_mem("retain", "--date", "2026-11-02", "--", "--dryrun", cwd=tmp_path, check=0)  # after --: text
    run_mem("core", "append", "- Likes rain.", cwd=tmp_path, check=0)
    assert "- --dryrun\n" in (tmp_path / "memory" / "2026-11-02.md").read_text()
    assert "- Likes rain." in (tmp_path / "memory.md").read_text()
    # quoted text that begins like an option is text: a word holding a space is never an option typed
    run_mem("note", "--max-old-space-size=4096 fixes the node OOM", cwd=tmp_path, check=0)
    assert "--max-old-space-size=4096 fixes the node OOM" in "".join(
        p.read_text() for p in (tmp_path / "memory").glob("*.md"))


def test_embed_on_read_seconds_that_is_not_a_number_is_refused(tmp_path):
    write(tmp_path, "memory.md", "# Core\n- Prefers tea.\n")
    for value in ("nan", "true", "-1"):
        write(tmp_path, "memtool.toml", f"[index]\nembed_on_read_seconds = {value}\n")
        proc = run_mem("recall", "tea", cwd=tmp_path)
        assert proc.returncode == 4 and "index.embed_on_read_seconds must be a number" in proc.stderr, (value, proc.stderr)


def test_check_names_an_unreadable_file_once_with_its_own_reason(tmp_path):
    """A daily log replaced by a symbolic link loop: one diagnostic, saying 'symbolic link loop', not
    also 'its folder cannot be read' (the folder reads fine)."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n- The quokka smiles.\n")
    run_mem("index", cwd=tmp_path, check=0)
    log = tmp_path / "memory" / "2026-11-02.md"
    log.unlink()
    log.symlink_to("2026-11-02.md")
    proc, data = run_json("check", cwd=tmp_path)
    about = [d["message"] for d in data["diagnostics"] if d["path"] == "memory/2026-11-02.md"]
    assert len(about) == 1 and "link loop" in about[0] and "folder" not in about[0], about
    proc, data = run_json("recall", "quokka", cwd=tmp_path)
    assert [r.get("stale") for r in data["results"]] == [True], data


def test_decomposed_accents_in_mentions_and_tags_are_part_of_the_name(tmp_path):
    """Text pasted from macOS file names or PDFs may spell ü as u + U+0308 (NFD): '@Müller' is the
    entity Müller (not 'Mu'), '#Café' the tag café, found by the composed spelling people type."""
    import unicodedata

    nfd = lambda s: unicodedata.normalize("NFD", s)
    write(tmp_path, "memory/2026-11-02.md", f"# 2026-11-02\n## Retain\n- W @{nfd('Müller')}: Lives in Köln. #{nfd('Café')}\n")
    proc, data = run_json("recall", "--entity", "Müller", cwd=tmp_path)
    assert [r["entities"] for r in data["results"]] == [["Müller"]], (data, proc.stderr)
    proc, data = run_json("recall", "--tag", "café", cwd=tmp_path)
    assert [r["source"] for r in data["results"]] == ["memory/2026-11-02.md#L3"], data
    proc, data = run_json("about", "Müller", cwd=tmp_path)
    assert [f["source"] for f in data["facts"]] == ["memory/2026-11-02.md#L3"], data


def test_a_note_to_a_page_memtool_never_indexes_is_refused_with_the_reason(tmp_path):
    """bank/.hidden.md was written and never recallable; bank/journal.md and bank/decisions.md were
    refused as 'ends inside a block' though they did not exist."""
    write(tmp_path, "memory.md", "# Core\n")
    for page in ("bank/.hidden.md", "bank/journal.md", "bank/decisions.md", "bank/.notes/x.md"):
        proc = run_mem("note", "--page", page, "Jonas moved the meeting.", cwd=tmp_path)
        assert proc.returncode == 2 and "is not indexed" in proc.stderr, (page, proc.stderr)
        assert not (tmp_path / page).exists(), page
    run_mem("note", "--page", "bank/world.md", "Jonas moved the meeting.", cwd=tmp_path, check=0)


def test_a_workspace_named_memory_does_not_make_its_parent_folder_a_workspace(tmp_path):
    """README: `mem init ~/memory && cd ~/memory`. Run later from ~/projects/x, `mem` took ~ for a
    workspace (its memory/ folder looked like daily logs): retain wrote ~/memory/<day>.md beside
    the real workspace's files and status counted memory.md and SOUL.md as daily logs."""
    home = tmp_path / "home"
    (home / "projects" / "x").mkdir(parents=True)
    run_mem("init", home / "memory", check=0)
    before = sorted(p.relative_to(home) for p in home.rglob("*") if ".memory" not in p.parts)
    for args in (["retain", "W @Anna: From a project folder."], ["status"], ["recall", "Anna"]):
        proc = run_mem(*args, cwd=home / "projects" / "x")
        assert proc.returncode == 3, (args, proc.stdout, proc.stderr)
        assert f"mem -w {home / 'memory'}" in proc.stderr, proc.stderr
    assert sorted(p.relative_to(home) for p in home.rglob("*") if ".memory" not in p.parts) == before
    assert not (home / ".memory").exists()
    proc, data = run_json("status", cwd=home / "memory" / "memory")  # inside the workspace: found as before
    assert proc.returncode == 0 and data["workspace"] == str((home / "memory").resolve()), data


def test_a_file_name_that_is_not_utf8_is_named_not_a_traceback_in_every_command(tmp_path):
    """One file with a Latin-1 name (an old zip, a Windows share) made index, recall, check and
    status end in a UnicodeEncodeError traceback: the whole workspace was unusable."""
    write(tmp_path, "bank/world.md", "- The quokka smiles.\n")
    write(tmp_path, "memory.md", "# Core\n")
    (tmp_path / "bank").joinpath(os.fsdecode(b"caf\xe9.md")).write_text("- The wombat digs.\n", encoding="utf-8")
    (tmp_path / "bank").joinpath(os.fsdecode(b"dir\xff")).mkdir()
    (tmp_path / "bank").joinpath(os.fsdecode(b"dir\xff"), "inner.md").write_text("- The numbat eats.\n", encoding="utf-8")
    for args in (["index"], ["status"]):
        proc = run_mem(*args, cwd=tmp_path)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
    proc, data = run_json("recall", "quokka", cwd=tmp_path)
    assert [r["source"] for r in data["results"]] == ["bank/world.md#L1"], (data, proc.stderr)
    assert any("bank/caf\\xe9.md" in w and "not valid UTF-8" in w for w in data["warnings"]), data["warnings"]
    proc, data = run_json("check", cwd=tmp_path)
    assert sorted(d["path"] for d in data["diagnostics"] if d["code"] == "bad-name") == \
        ["bank/caf\\xe9.md", "bank/dir\\xff"], data


def test_memory_and_bank_folders_linked_elsewhere_are_read_and_written_there(tmp_path):
    """The scan follows a linked memory/ or bank/ (a synced folder elsewhere), but reading refused
    its files as 'outside the workspace': recall, check and retain all ended with exit 2."""
    ws, logs, pages = tmp_path / "ws", tmp_path / "synced" / "logs", tmp_path / "synced" / "pages"
    write(ws, "memory.md", "# Core\n")
    write(logs, "2026-11-02.md", "# 2026-11-02\n- The quokka smiles.\n")
    write(pages, "world.md", "- The wombat digs.\n")
    secret = write(tmp_path, "secret.md", "- The numbat hides.\n")
    (logs / "escape.md").symlink_to(secret)  # a link inside the linked folder that leads out of it
    (ws / "memory").symlink_to(logs, target_is_directory=True)
    (ws / "bank").symlink_to(pages, target_is_directory=True)
    for word, source in (("quokka", "memory/2026-11-02.md#L2"), ("wombat", "bank/world.md#L1")):
        proc, data = run_json("recall", word, cwd=ws)
        assert proc.returncode == 0 and [r["source"] for r in data["results"]] == [source], (data, proc.stderr)
    proc, data = run_json("recall", "numbat", cwd=ws)
    assert proc.returncode == 0 and data["results"] == [], data
    proc, data = run_json("retain", "W: Written through the link.", "--date", "2026-11-02", cwd=ws)
    assert proc.returncode == 0 and data["source"] == "memory/2026-11-02.md#L5", (data, proc.stderr)
    assert "- W: Written through the link.\n" in (logs / "2026-11-02.md").read_text()
    run_mem("get", "bank/world.md#L1", cwd=ws, check=0)
    proc = run_mem("get", "memory/escape.md", cwd=ws)
    assert proc.returncode == 2 and "outside the workspace" in proc.stderr, proc.stderr
    proc, data = run_json("check", cwd=ws)
    assert proc.returncode == 0, data


def test_saves_in_a_linked_memory_folder_raise_events(tmp_path):
    """mem mcp and mem watch follow file events; a memory/ linked to a synced folder was scanned
    but not watched, so their reads missed edits there for up to a minute."""
    from memtool.changes import ChangeFeed

    ws, logs = tmp_path / "ws", tmp_path / "synced"
    write(ws, "memory.md", "# Core\n")
    write(logs, "2026-11-02.md", "- one\n")
    (ws / "memory").symlink_to(logs, target_is_directory=True)
    feed = ChangeFeed(ws)
    try:
        assert feed.take() is None  # the first take asks for a full check
        write(ws, "memory/2026-11-02.md", "- one\n- two\n")
        seen: set = set()
        deadline = time.monotonic() + 10
        while "memory/2026-11-02.md" not in seen and time.monotonic() < deadline:
            seen |= feed.take() or set()
            time.sleep(0.02)
        assert "memory/2026-11-02.md" in seen, seen
    finally:
        feed.close()


def test_mcp_core_resource_says_why_memory_md_cannot_be_read(tmp_path):
    from mcp.shared.exceptions import MCPError
    from test_mcp import session

    write(tmp_path, "memory.md", b"caf\xe9\n")

    async def script(s):
        try:
            await s.read_resource("memory://core")
        except MCPError as exc:
            return str(exc)
        return "read"
    said = session(tmp_path, script)
    assert "memory.md is not valid UTF-8" in said, said


def test_a_workspace_option_naming_a_file_says_to_name_its_folder(tmp_path):
    write(tmp_path, "memory.md", "# Core\n")
    proc = run_mem("-w", "memory.md", "status", cwd=tmp_path)
    assert proc.returncode == 3 and "mem init memory.md" not in proc.stderr, proc.stderr
    assert f"e.g. {tmp_path.resolve()}" in proc.stderr, proc.stderr


def test_schedule_escapes_a_percent_sign_cron_would_cut_the_command_at(tmp_path):
    ws = tmp_path / "100%mine"
    run_mem("init", ws, check=0)
    proc, data = run_json("-w", ws, "schedule")
    line = next(j["line"] for j in data["jobs"] if j["job"] == "reflect") if isinstance(data, dict) else ""
    assert "100\\%mine" in line and "100%mine" not in line.replace("\\%", ""), (data, proc.stderr)


def test_schedule_refuses_a_workspace_path_with_a_line_break(tmp_path):
    """The path was quoted across two lines: a crontab line cut in half, the rest a bad second entry (qa39)."""
    ws = tmp_path / "notes\nold"
    run_mem("init", ws, check=0)
    proc = run_mem("-w", ws, "schedule")
    assert proc.returncode == 2 and proc.stdout == "" and "line break" in proc.stderr and "hint:" in proc.stderr, proc


def test_a_file_where_the_state_folder_belongs_is_named_as_such(tmp_path):
    write(tmp_path, "memory.md", "# Core\n")
    (tmp_path / ".memory").write_text("not a folder\n", encoding="utf-8")
    for args in (["recall", "tea"], ["retain", "W: Likes tea."]):
        proc = run_mem(*args, cwd=tmp_path)
        assert proc.returncode == 4 and "a file stands where a folder belongs" in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "memory").exists()


def test_get_reads_a_line_named_as_mem_check_names_it(tmp_path):
    write(tmp_path, "memory/2026-11-24.md", "# 2026-11-24\n## Retain\n- X @Tom: Not a type.\n")
    proc, data = run_json("check", cwd=tmp_path)
    location = next(d["location"] for d in data["diagnostics"] if d["code"] == "bad-bullet")
    assert location == "memory/2026-11-24.md:3", data
    proc, data = run_json("get", location, cwd=tmp_path)
    assert proc.returncode == 0 and [line["n"] for line in data["lines"]] == [3], (data, proc.stderr)
    proc = run_mem("get", location, "--max-lines", "0", cwd=tmp_path)
    assert proc.returncode == 2 and "--max-lines must be at least 1" in proc.stderr, proc.stderr  # the option's name


@pytest.mark.parametrize("anchor", ["#Lx", "#", "#L2-", "#line3", "#L1-L2#L3"])
def test_get_says_a_line_reference_is_malformed_not_that_the_file_is_missing(tmp_path, anchor):
    """`mem get memory.md#Lx` said "memory.md#Lx is not a file in the workspace", of a file that is there."""
    write(tmp_path, "memory.md", "# Core\n- Prefers tea.\n- Likes Lisbon.\n")
    proc = run_mem("get", "memory.md" + anchor, cwd=tmp_path)
    assert proc.returncode == 2 and "not a file" not in proc.stderr, proc.stderr
    assert "names no lines of memory.md" in proc.stderr and "hint: use memory.md#L12 or memory.md#L12-L20" in proc.stderr
    assert "is not a file in the workspace" in run_mem("get", "nothere.md#L2", cwd=tmp_path).stderr


def test_memtool_toml_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Windows editors may save a UTF-8 byte-order mark; Markdown files with one are accepted, the
    settings file was 'not valid TOML: Invalid statement (at line 1, column 1)'."""
    write(tmp_path, "memory.md", "# Core\n- Prefers tea.\n")
    write(tmp_path, "memtool.toml", b'\xef\xbb\xbf[recall]\r\nmode = "lexical"\r\n')
    proc, data = run_json("recall", "tea", cwd=tmp_path)
    assert proc.returncode == 0 and data["mode"] == "lexical", (data, proc.stderr)


def test_retain_and_note_refuse_a_file_holding_a_nul_byte_instead_of_writing_an_unrecallable_line(tmp_path):
    write(tmp_path, "memory/2026-11-02.md", b"# 2026-11-02\n- fact one\x00\n")
    write(tmp_path, "bank/world.md", b"- page fact\x00\n")
    write(tmp_path, "memory.md", b"# Core\n- tea\x00\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.md")}
    for args in (["retain", "--date", "2026-11-02", "W: After the NUL."], ["note", "--date", "2026-11-02", "After."],
                 ["note", "--page", "bank/world.md", "After."], ["core", "append", "- coffee"]):
        proc = run_mem(*args, cwd=tmp_path)
        assert proc.returncode == 4 and "contains a NUL byte" in proc.stderr, (args, proc.stderr)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.md")} == before


def test_mcp_tool_calls_sent_in_parallel_all_answer(tmp_path):
    """Clients send tool calls in parallel and the SDK runs each in a worker thread: against one
    Memory they failed with 'database is locked', a 30 s wait on the process's own index lock, or
    a bare 'Error executing tool recall'."""
    import asyncio

    from test_mcp import session

    write(tmp_path, "memory/2026-11-02.md", NOTES)

    async def script(s):
        calls = []
        for i in range(20):
            calls += [s.call_tool("recall", {"query": "Lisbon"}), s.call_tool("status", {}),
                      s.call_tool("retain", {"bullet": f"W @Peter: Parallel fact {i}.", "date": "2026-11-02"})]
        return await asyncio.gather(*calls)
    results = session(tmp_path, script)
    failed = [r.content[0].text for r in results if r.is_error]
    assert not failed, failed
    assert (tmp_path / "memory" / "2026-11-02.md").read_text().count("Parallel fact") == 20


def test_a_code_package_named_memory_does_not_make_a_project_a_workspace(tmp_path):
    """A project with a Python package memory/ (memory/__init__.py): mem run inside it took the
    project for a workspace, made .memory/ there and wrote daily logs into the package."""
    write(tmp_path, "memory/__init__.py", "")
    write(tmp_path, "memory/cache.py", "CACHE = {}\n")
    (tmp_path / "src").mkdir()
    proc = run_mem("retain", "W: Into the package?", cwd=tmp_path / "src")
    assert proc.returncode == 3 and ("holds __init__.py" in proc.stderr or "holds cache.py" in proc.stderr), proc.stderr
    assert sorted(p.name for p in (tmp_path / "memory").iterdir()) == ["__init__.py", "cache.py"]
    assert not (tmp_path / ".memory").exists()


def test_status_reports_a_damaged_local_state_instead_of_failing(tmp_path):
    """Recall answers without a damaged .memory/local.sqlite (and says so); status, the command
    one runs to see what is wrong, ended with that error and showed nothing else."""
    _indexed(tmp_path)
    local = tmp_path / ".memory" / "local.sqlite"
    local.write_bytes(b"not a database at all " * 2000)
    for extra in local.parent.glob("local.sqlite-*"):
        extra.unlink()
    proc, data = run_json("status", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert data["facts"] >= 2 and any("local.sqlite is damaged" in w for w in data["warnings"]), data


def test_forget_applies_its_plan_to_a_log_retain_appended_to_since(tmp_path):
    """forget refused a file `mem retain` had appended to between its plan and its write ('was
    changed by another program'), though every planned line was still where it was: concurrent
    retains made it fail. A file changed before its end is still refused."""
    from datetime import date

    from memtool import forget, writing
    from memtool.safe_writes import FileChanged
    from memtool.workspace import Workspace

    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n- secret code 1234\n- other line")  # no final newline
    ws = Workspace(tmp_path)
    planned = forget.plan(ws, forget.parse_target("secret code 1234"))
    writing.retain(ws, "W: Kept while forgetting.", date(2026, 11, 2))  # what another process does meanwhile
    forget.remove(ws, planned)
    assert (tmp_path / "memory" / "2026-11-02.md").read_text() == \
        "# 2026-11-02\n- other line\n\n## Retain\n- W: Kept while forgetting.\n"
    planned = forget.plan(ws, forget.parse_target("other line"))
    writing.retain(ws, "W: Another OTHER LINE.", date(2026, 11, 2))  # appended, holding the text forgotten
    for plan_ in (planned, forget.plan(ws, forget.parse_target("other line"))):
        text = (tmp_path / "memory" / "2026-11-02.md").read_text()
        if plan_ is not planned:
            write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n- new first line\n" + text.split("\n", 1)[1])  # an edit above
            text = (tmp_path / "memory" / "2026-11-02.md").read_text()
        try:
            forget.remove(ws, plan_)
            raise AssertionError("a plan was applied to a file it no longer describes")
        except FileChanged:
            pass
        assert (tmp_path / "memory" / "2026-11-02.md").read_text() == text


def test_a_query_of_many_kilobytes_is_searched_by_its_first_two_thousand_characters_with_a_warning(tmp_path):
    """A 117 KB query took 70 s: the bundled model embeds every window of a text, and nothing capped a
    query's length (an agent pasting a document into recall; over MCP it also held up every other call)."""
    from memtool.recall.query import MAX_QUERY_CHARS, shortened

    write(tmp_path, "memory/2026-11-02.md", "- Flight to Lisbon booked, window seat.\n")
    query = "Lisbon flight " + "word " * 12_000
    proc, data = run_json("-w", tmp_path, "recall", query, env=mem_env(MEM_EMBEDDER="none"))
    assert proc.returncode == 0, proc.stderr
    assert data["results"] and "Lisbon" in data["results"][0]["content"]
    assert f"the query is {len(query):,} characters long; searched its first 1,998" in data["warnings"]
    assert len(data["query"]) == 1_998 <= MAX_QUERY_CHARS
    assert shortened("abcdef gh", 4) == "abcd"  # no space in the kept part: cut where it falls
    assert shortened("abcd efgh", 7) == "abcd"


def test_daily_logs_beside_a_stray_file_still_mark_a_workspace(tmp_path):
    """A memory/ folder holding any file that was not Markdown stopped marking a workspace (meant for a
    code package named memory): a fresh clone with an editor's backup, a pasted picture or a
    Thumbs.db beside its daily logs was 'no memtool workspace'."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n- The quokka smiles.\n")
    for stray in ("2026-11-02.md~", "photo.png", "Thumbs.db"):
        (tmp_path / "memory" / stray).write_bytes(b"x")
    proc, data = run_json("status", cwd=tmp_path / "memory")
    assert proc.returncode == 0 and data["workspace"] == str(tmp_path.resolve()), (proc.stderr, data)


def test_a_linked_folder_that_holds_the_workspace_confines_nothing_and_is_refused(tmp_path):
    """`bank -> ..` (a link a cloned repository can carry): its paths were confined to the folder it
    points at, which holds the workspace and everything beside it, so `mem get bank/…` read any file
    there and the scan indexed every page under it."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-02.md", "# 2026-11-02\n- The quokka smiles.\n")
    write(tmp_path, "secret.md", "- The numbat's key is 4711.\n")
    (ws / "bank").symlink_to("..", target_is_directory=True)
    proc = run_mem("-w", ws, "get", "bank/secret.md")
    assert proc.returncode == 2 and "4711" not in proc.stdout, (proc.stdout, proc.stderr)
    proc, data = run_json("-w", ws, "recall", "numbat key", env=mem_env(MEM_EMBEDDER="none"))
    assert not any("secret" in r["source"] for r in data["results"]), data
    assert any("bank" in w and "holds the workspace" in w for w in data["warnings"]), data["warnings"]
    proc, data = run_json("-w", ws, "recall", "quokka", env=mem_env(MEM_EMBEDDER="none"))
    assert [r["source"] for r in data["results"]] == ["memory/2026-11-02.md#L2"], data
