"""`mem forget`: the lines go, and no byte of their text stays in the workspace, .memory/ or the remote."""

import json
import os

import pytest

from conftest import run_json, run_mem, write

from memtool.forget import parse_target, strip_lines
from memtool.sections import lines_keepends

PHONE = "+49 171 2345678"
NEEDLES = [PHONE.encode(), b"2345678"]

JONAS = """---
aliases: [Jo]
---
# Jonas

- W @Jonas: Works at the harbour office in Hamburg.
- W @Jonas: Phone +49 171 2345678 (mobile, evenings only).
- O(c=0.7) @Jonas: Prefers calls to long messages.
"""


def _bytes_found(root) -> list[str]:
    """Every file under `root` (raw bytes, SQLite files and their -wal/-shm included) holding a needle."""
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            data = open(os.path.join(dirpath, name), "rb").read()
            if any(n in data for n in NEEDLES):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def _workspace_holding_the_phone(ws, remote):
    write(ws, "bank/entities/Jonas.md", JONAS)
    write(ws, "memory.md", "# Core\n\n- Jonas: +49 171 2345678\n")
    write(ws, "memory/2026-11-19.md", "# 2026-11-19\n\nMet @Jonas at the harbour; he gave me his number.\n")
    run_mem("-w", ws, "retain", f"W @Jonas: Call him on {PHONE} after six.", "--date", "2026-11-20", check=0)
    run_mem("-w", ws, "retain", "B @Jonas: Helped him move the boat.", "--date", "2026-11-20", check=0)
    run_mem("-w", ws, "core", "append", "- Likes tea.", check=0)  # a backup of memory.md now holds the phone
    run_mem("-w", ws, "reflect", "--force", check=0)  # reflect's `seen` table, entity page, journal
    run_mem("-w", ws, "recall", "2345678", check=0)  # the access log
    run_mem("-w", ws, "sync", remote, check=0)


def test_a3_forget_leaves_no_byte_of_the_text_anywhere(empty_ws, tmp_path):
    ws, remote = empty_ws, tmp_path / "remote"
    _workspace_holding_the_phone(ws, remote)
    assert _bytes_found(ws / ".memory") and _bytes_found(remote)  # the test can fail: the text was everywhere

    proc, result = run_json("-w", ws, "forget", PHONE, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert result["forgotten"] and {m["source"].split("#")[0] for m in result["matches"]} >= {
        "bank/entities/Jonas.md", "memory/2026-11-20.md", "memory.md"}
    run_mem("-w", ws, "sync", check=0)
    proc, gc = run_json("-w", ws, "sync", "gc", "--min-age", "0")
    assert proc.returncode == 0 and gc["deleted"], proc.stderr

    assert _bytes_found(ws) == [] and _bytes_found(remote) == []
    jonas = (ws / "bank/entities/Jonas.md").read_text(encoding="utf-8")
    assert jonas.startswith(JONAS.replace("- W @Jonas: Phone +49 171 2345678 (mobile, evenings only).\n", "")[:120])
    assert "Prefers calls to long messages." in jonas and "harbour office" in jonas
    assert "Helped him move the boat." in (ws / "memory/2026-11-20.md").read_text(encoding="utf-8")
    proc, found = run_json("-w", ws, "recall", "2345678")
    assert proc.returncode == 0 and found["results"] == []
    log = [json.loads(line) for line in (ws / ".memory/forgotten.jsonl").read_text().splitlines()]
    assert log and len(log[0]["sha256"]) == result["count"]  # hashes, never text
    proc = run_mem("-w", ws, "check")
    assert "2345678" not in proc.stdout + proc.stderr


def test_a3_forget_asks_and_changes_nothing_without_an_answer(example_ws):
    before = (example_ws / "memory/2026-11-27.md").read_bytes()
    proc = run_mem("-w", example_ws, "forget", "memory/2026-11-27.md#L9")
    assert proc.returncode == 2 and "--yes" in proc.stderr and "Marrakech" in proc.stdout
    assert (example_ws / "memory/2026-11-27.md").read_bytes() == before
    for bad in ("ab", "memory/2026-11-27.md#L900", "../x.md#L1"):
        proc = run_mem("-w", example_ws, "forget", bad, "--yes")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, bad
    assert (example_ws / "memory/2026-11-27.md").read_bytes() == before


def test_a3_forget_by_citation_keeps_every_other_byte(example_ws):
    path = example_ws / "memory/2026-11-27.md"
    lines = path.read_bytes().splitlines(keepends=True)
    proc, result = run_json("-w", example_ws, "forget", "memory/2026-11-27.md#L9", "--yes")
    assert proc.returncode == 0 and result["forgotten"], proc.stderr
    assert path.read_bytes() == b"".join(lines[:8] + lines[9:])


def test_a3_strip_lines_keeps_endings_and_reseals_generated_blocks():
    from memtool import blocks

    text = "a\r\nb\n" + blocks.render("entity", "- x 1\n- y 2\n") + "c"
    out = strip_lines(text, {2, 4})
    assert out.startswith("a\r\n<!-- memtool:begin entity") and out.endswith("c")
    assert not blocks.find(out, "entity").edited and "- x 1" not in out
    assert lines_keepends("a\rb\r\nc") == ["a\r", "b\r\n", "c"]
    assert parse_target("memory/x.md#L3-L5").end == 5 and parse_target("a phone").text == "a phone"


def test_forget_waits_for_a_reflect_run_going_on_and_changes_nothing_meanwhile(example_ws, tmp_path):
    """A reflect run holds its lock while it writes its record, windows and ledger: `mem forget` waits
    for it to end (else the run writes back entity names and sources of what was just purged)."""
    import subprocess
    import sys
    import time

    from conftest import mem_env

    run_mem("-w", example_ws, "index", check=0)
    path = example_ws / "memory/2026-11-27.md"
    before = path.read_bytes()
    held, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import pathlib, sys, time\nfrom memtool.workspace import Workspace\n"
        "with Workspace(pathlib.Path(sys.argv[1])).lock('reflect'):\n"
        "    pathlib.Path(sys.argv[2]).touch()\n"
        "    while not pathlib.Path(sys.argv[3]).exists():\n        time.sleep(0.05)\n"),
        str(example_ws), str(held), str(release)], env=mem_env())
    forget = None
    try:
        deadline = time.monotonic() + 60
        while not held.exists():
            assert holder.poll() is None and time.monotonic() < deadline, "the lock holder did not start"
            time.sleep(0.05)
        forget = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(example_ws), "forget",
                                   "memory/2026-11-27.md#L9", "--yes", "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mem_env())
        time.sleep(3)  # time enough for a forget that does not wait to have removed the line
        assert forget.poll() is None and path.read_bytes() == before
        release.touch()
        out, err = forget.communicate(timeout=60)
        assert forget.returncode == 0, err
        assert json.loads(out)["forgotten"] and path.read_bytes() != before
    finally:
        release.touch()
        for proc in (holder, forget):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.wait(timeout=30)


def test_forget_finds_the_text_however_its_letters_are_composed(empty_ws):
    """A line saved with decomposed letters (`u` + combining diaeresis, as some programs write) and CRLF
    endings: `mem forget` with the text as a person types it (composed, any case) removes it from the
    log, the generated pages, their backups and the index; recall, which matched it, no longer does."""
    import unicodedata

    ws = empty_ws
    street = "Müllerstraße 12"
    nfd = unicodedata.normalize("NFD", street)
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory/2026-11-10.md").write_bytes(
        f"## Retain\r\n- W @Jonas: Jonas wohnt in der {nfd}.\r\n- W @Jonas: Jonas rows on the Alster.\r\n".encode())
    run_mem("-w", ws, "reflect", "--force", check=0)
    write(ws, "memory/2026-11-11.md", "## Retain\n- W @Jonas: Jonas bought a kayak.\n")
    run_mem("-w", ws, "reflect", "--force", check=0)  # the pages' backups hold the street too
    assert run_json("-w", ws, "recall", street)[1]["results"]
    needle = "llerstra".encode()
    assert any(needle in p.read_bytes() for p in (ws / ".memory" / "backups").rglob("*") if p.is_file())

    proc, result = run_json("-w", ws, "forget", "MÜLLERSTRASSE 12", "--yes")
    assert proc.returncode == 0 and result["forgotten"], proc.stderr
    assert "memory/2026-11-10.md#L2" in {m["source"] for m in result["matches"]}
    left = [str(p) for p in ws.rglob("*") if p.is_file() and needle in p.read_bytes()]
    assert left == []
    assert run_json("-w", ws, "recall", street)[1]["results"] == []
    assert (ws / "memory/2026-11-10.md").read_bytes() == b"## Retain\r\n- W @Jonas: Jonas rows on the Alster.\r\n"


def test_forget_by_citation_takes_the_facts_copies_on_generated_pages_and_the_journal(example_ws):
    """`mem forget memory/…#L15` of a typed bullet (`W @Peter: …`) removed the line but kept its copies:
    bank/world.md lists it as `@Peter: …` (no type letter) and the journal quotes its start cut with
    `…`; the next reflect then backed the old page up, so the text stayed in .memory/backups too."""
    run_mem("-w", example_ws, "reflect", "--force", check=0)
    words = "works remote on warelay".encode()
    line = (example_ws / "memory/2026-10-02.md").read_text(encoding="utf-8").splitlines()[14]
    assert line == "- W @Peter: Peter lives in Hamburg (Ottensen) and works remote on warelay with me."
    assert words in (example_ws / "bank/world.md").read_bytes()
    assert "Hamburg (Ottensen) and works remote…" in (example_ws / "bank/journal.md").read_text(encoding="utf-8")

    proc, result = run_json("-w", example_ws, "forget", "memory/2026-10-02.md#L15", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert {"bank/world.md", "bank/journal.md"} <= {m["source"].split("#")[0] for m in result["matches"]}
    run_mem("-w", example_ws, "reflect", "--force", check=0)
    held = [str(p) for p in example_ws.rglob("*") if p.is_file() and (words in p.read_bytes()
                                                                       or b"(Ottensen) and works" in p.read_bytes())]
    assert held == []


def test_forget_by_text_takes_the_journal_quote_that_holds_its_start(example_ws):
    """The journal quotes a fact's start cut with `…`: forgetting the fact's text left
    `"@Peter: Peter lives in Hamburg (Ottensen) and works remote…"` in bank/journal.md."""
    run_mem("-w", example_ws, "reflect", "--force", check=0)
    text = "Peter lives in Hamburg (Ottensen) and works remote on warelay with me"
    proc, result = run_json("-w", example_ws, "forget", text, "--yes")
    assert proc.returncode == 0 and "bank/journal.md" in {m["source"].split("#")[0] for m in result["matches"]}
    assert [str(p) for p in example_ws.rglob("*") if p.is_file() and b"(Ottensen) and works" in p.read_bytes()] == []
    assert "Journal" in (example_ws / "bank/journal.md").read_text(encoding="utf-8")


def _forget_answered_after(ws, target: str, edit) -> tuple[int, bytes]:
    """Run `mem forget TARGET` on a terminal, call `edit()` once it asks, answer 'y': (exit, output)."""
    import pty
    import subprocess
    import sys
    import time

    from conftest import mem_env

    main, side = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "forget", target],
                            stdin=side, stdout=side, stderr=side, env=mem_env(MEM_EMBEDDER="none"))
    os.close(side)
    shown, deadline = b"", time.monotonic() + 60
    try:
        while b"Remove these lines" not in shown and time.monotonic() < deadline:
            shown += os.read(main, 4096)
        edit()
        os.write(main, b"y\n")
        code = proc.wait(timeout=60)
        try:
            while chunk := os.read(main, 4096):
                shown += chunk
        except OSError:  # the other end closed
            pass
    finally:
        proc.kill()
        proc.wait()
        os.close(main)
    return code, shown


def test_a_line_inserted_above_a_cited_one_while_forget_asks_removes_nothing(tmp_path):
    """`mem forget memory/…#L3` showed line 3 and asked; an editor inserted a line above meanwhile, and
    the answer 'y' removed the new line 3, the neighbour of the line shown (the removal re-read the
    citation). The lines shown are the lines removed, or nothing is."""
    day = tmp_path / "memory" / "2026-11-02.md"
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n\n- Call Jonas: +49 171 2345678.\n- Lunch with Ana.\n")
    edited = "# 2026-11-02\n\n- Inserted by an editor.\n- Call Jonas: +49 171 2345678.\n- Lunch with Ana.\n"
    code, shown = _forget_answered_after(tmp_path, "memory/2026-11-02.md#L3",
                                         lambda: day.write_text(edited, encoding="utf-8"))
    assert code == 4 and b"changed since they were listed" in shown, shown
    assert day.read_text(encoding="utf-8") == edited


def test_words_appended_to_a_last_line_without_its_break_while_forget_asks_are_not_removed_with_it(tmp_path):
    """The line listed was the file's last, without a line break; what an editor (or `printf >>`)
    appended meanwhile joined it, and 'y' removed the joined line: the appended words were lost, and
    purged from every copy memtool keeps."""
    day = tmp_path / "memory" / "2026-12-01.md"
    write(tmp_path, "memory/2026-12-01.md", "# 2026-12-01\n\n- my phone is 555-1234")

    def append():
        with open(day, "a", encoding="utf-8") as f:
            f.write(" and call Anna back about the lease\n")
    code, shown = _forget_answered_after(tmp_path, "555-1234", append)
    assert code == 4, shown
    assert "call Anna back about the lease" in day.read_text(encoding="utf-8")


def test_forget_refuses_a_file_grown_past_a_last_line_without_its_break_or_by_bytes_not_utf8(tmp_path):
    """The check between a plan and its removal: bytes after a last line without its break join that
    line; bytes that are not UTF-8 could not be rewritten (a traceback after other files were
    already stripped). Either way the file has changed, and no file is touched."""
    from memtool import forget as forgetting
    from memtool.safe_writes import FileChanged
    from memtool.workspace import Workspace

    write(tmp_path, "memory/2026-12-01.md", "- secret code 4711\n")
    write(tmp_path, "memory/2026-12-02.md", "# 2026-12-02\n\n- secret code 4711")
    ws = Workspace(tmp_path)
    for added in (b"1 more digits\n", b"\n- caf\xe9 latin-1\n"):
        plan = forgetting.plan(ws, forgetting.parse_target("secret code 4711"))
        before = {p: p.read_bytes() for p in (tmp_path / "memory").iterdir()}
        with open(tmp_path / "memory" / "2026-12-02.md", "ab") as f:
            f.write(added)
        with pytest.raises(FileChanged):
            forgetting.remove(ws, plan)
        assert (tmp_path / "memory" / "2026-12-01.md").read_bytes() == before[tmp_path / "memory" / "2026-12-01.md"]
        (tmp_path / "memory" / "2026-12-02.md").write_bytes(before[tmp_path / "memory" / "2026-12-02.md"])


def test_forget_confirmed_for_the_plan_listed_removes_those_lines(tmp_path):
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n\n- Call Jonas: +49 171 2345678.\n- Lunch with Ana.\n")
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    mem = Memory(Workspace(tmp_path), embedder="none")
    try:
        listed = mem.forget(PHONE)
        assert listed["plan"] == mem.forget(PHONE)["plan"] and listed["count"] == 1
        done = mem.forget(PHONE, confirm=True, plan=listed["plan"])
    finally:
        mem.close()
    assert done["forgotten"] and done["matches"] == listed["matches"]
    assert "2345678" not in (tmp_path / "memory" / "2026-11-02.md").read_text(encoding="utf-8")


def test_forgetting_a_cited_heading_leaves_other_headings_that_hold_its_text(tmp_path):
    """`mem forget memory/2026-12-02.md#L1 --yes` (the day's `# 2026-12-02`) also removed the
    journal's `## 2026-12-02 18:22 UTC … — reflect` headings: a cited line's text found elsewhere is
    taken for a generated copy of a fact, and a heading is none. The cited line goes, nothing else."""
    write(tmp_path, "memory/2026-12-02.md", "# 2026-12-02\n\n- Peter called about the flat.\n")
    journal = "# Journal\n\n## 2026-12-02 18:22 UTC (UTC+0000) — reflect\n\n- Nothing to consolidate.\n"
    write(tmp_path, "bank/journal.md", journal)
    proc, data = run_json("forget", "memory/2026-12-02.md#L1", "--yes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "bank/journal.md").read_text(encoding="utf-8") == journal
    assert (tmp_path / "memory/2026-12-02.md").read_text(encoding="utf-8") == "\n- Peter called about the flat.\n"
