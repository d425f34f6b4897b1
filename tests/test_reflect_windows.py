"""Entity windows kept between `mem reflect` runs (memtool.reflect.windows): each entity's newest facts,
brought up to date from the changed files. After every kind of change, a run with them writes what a
run from scratch writes, and every kept window equals the entity's listing made afresh."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import mem_env, run_mem, write
from test_reflect_incremental import both, change_both, comparable, drop_record, markdown, reflect, twins
from test_reflect_incremental import pages as written

from memtool.memory import Memory
from memtool.reflect import listing, pages, windows
from memtool.store.local import REFLECT_WINDOWS
from memtool.workspace import Workspace

K = 3  # a page's facts in these tests: small, so that facts leave windows


@pytest.fixture
def spied(monkeypatch):
    """Small windows, and which entities each run listed afresh and which it brought up to date."""
    monkeypatch.setattr(pages, "LISTED", K)
    seen = {"afresh": set(), "windowed": set()}
    entity_facts, bring = listing.entity_facts, windows.bring_up_to_date

    def listed(store, names, k, *args, **kwargs):
        seen["afresh"].update(names)
        return entity_facts(store, names, k, *args, **kwargs)

    def brought(src, names, changed, k, out, *rest):
        bring(src, names, changed, k, out, *rest)
        seen["windowed"].update(out.now)

    monkeypatch.setattr(listing, "entity_facts", listed)
    monkeypatch.setattr(windows, "bring_up_to_date", brought)

    def take() -> dict[str, set[str]]:
        out = {k: set(v) for k, v in seen.items()}
        for v in seen.values():
            v.clear()
        return out

    return take


def against_scratch(a: Path, b: Path, spied) -> dict[str, set[str]]:
    """Reflect in `a` with its record and windows and in `b` from scratch; the same output. Returns
    which entities `a`'s run listed afresh and which it brought up to date."""
    drop_record(b)
    spied()
    got = reflect(a)
    seen = spied()
    full = reflect(b)
    spied()
    assert not full["reused"]["entity_pages"]
    assert comparable(got) == comparable(full)
    assert markdown(a) == markdown(b)
    return seen


def local(ws: Path) -> sqlite3.Connection:
    return sqlite3.connect(ws / ".memory" / "local.sqlite")


def windows_agree(ws: Path) -> set[str]:
    """Every kept window equals the entity's listing made afresh (ids included); returns their names."""
    conn = local(ws)
    try:
        kept = dict(conn.execute("SELECT entity, facts FROM reflect_windows"))
    finally:
        conn.close()
    mem = Memory(Workspace(ws), embedder="none")
    try:
        for name, text in kept.items():
            found = json.loads(text)
            where, facts = windows._decoded(found, mem.store.place_offsets(found["paths"]), set())
            ids = mem.store.ids_at(found["paths"])
            assert [f["id"] for f in facts] == [ids[(p, o)] for _, p, o in where.values()], name
            got = facts
            assert got == listing.entity_facts(mem.store, [name], K)[name], name
    finally:
        mem.close()
    return set(kept)


def days(ws: Path) -> None:
    write(ws, "bank/entities/Zed.md", "---\naliases: [Zeddy]\n---\n# Zed\n\nA neighbour.\n")
    for day, text in [("2026-09-01", "- @Kai met @Lena at the market.\n- @Zed lives in Berlin with @Lena.\n"),
                      ("2026-09-03", "- Zeddy fixed the bike of @Kai.\n- O(c=0.7) @Kai: chess on Sundays is best.\n"),
                      ("2026-09-05", "- @Lena works at Acme with @Kai.\n- @Kai and Zeddy went sailing.\n"),
                      ("2026-09-07", "- @Lena cooked for @Zed.\n- @Mo called @Kai.\n- @Mo called @Lena.\n")]:
        write(ws, f"memory/{day}.md", f"# {day}\n\n{text}")


def test_reflect11_windows_brought_up_to_date_equal_listings_afresh_through_hostile_changes(tmp_path, example_ws,
                                                                                             spied):
    days(example_ws)
    a, b = twins(tmp_path, example_ws)
    assert {"Kai", "Lena", "Zed"} <= windows_agree(a)
    spied()

    # new facts, newer than every window's: they join the windows' heads, older ones leave
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- @Kai sold the boat.\n- Zeddy bought it from @Lena.\n")
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Lena", "Zed"} <= seen["windowed"] and not {"Kai", "Lena", "Zed"} & seen["afresh"]
    assert "sold the boat" in (a / "bank/entities/Kai.md").read_text()
    windows_agree(a)

    # new facts older than some windows' facts: put in order, and left out where the window is full
    change_both(a, b, "memory/2020-01-02.md", "# 2020-01-02\n\n- @Kai and @Mo met first.\n- @Mo moved to Graz.\n")
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Mo"} <= seen["windowed"]
    windows_agree(a)

    # a line inserted above a window's fact: its file changed, so those windows are listed afresh
    for ws in (a, b):
        log = ws / "memory/2026-12-01.md"
        log.write_text(log.read_text().replace("- @Kai sold", "- Rain all day.\n- @Kai sold"))
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Lena"} <= seen["afresh"] and not {"Kai", "Lena"} & seen["windowed"]
    windows_agree(a)

    # a file deleted and another renamed
    for ws in (a, b):
        (ws / "memory/2026-09-07.md").unlink()
        (ws / "memory/2026-09-05.md").rename(ws / "memory/2026-09-06.md")
    both(a, b)
    windows_agree(a)

    # the index rebuilt (every id new), then new facts
    mem = Memory(Workspace(a), embedder="none")
    try:
        mem.index(rebuild=True)
    finally:
        mem.close()
    change_both(a, b, "memory/2026-12-02.md", "# 2026-12-02\n\n- @Kai painted the fence with @Lena.\n")
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Lena"} <= seen["windowed"]
    windows_agree(a)

    # a window kept by a run of an older format, and a damaged one: listed afresh
    conn = local(a)
    with conn:
        conn.execute("UPDATE reflect_windows SET facts = '{\"paths\": 3' WHERE entity = 'Lena'")
    conn.close()
    change_both(a, b, "memory/2026-12-03.md", "# 2026-12-03\n\n- @Kai and @Lena walked to Zeddy.\n")
    seen = against_scratch(a, b, spied)
    assert "Lena" in seen["afresh"] and {"Kai", "Zed"} <= seen["windowed"]
    windows_agree(a)
    conn = local(a)
    with conn:
        tag = json.loads(conn.execute("SELECT v FROM meta WHERE k = ?", (REFLECT_WINDOWS,)).fetchone()[0])
        conn.execute("UPDATE meta SET v = ? WHERE k = ?", (json.dumps(dict(tag, format=0)), REFLECT_WINDOWS))
    conn.close()
    change_both(a, b, "memory/2026-12-04.md", "# 2026-12-04\n\n- @Kai fed the cat of @Lena.\n")
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Lena"} <= seen["afresh"] and not seen["windowed"]
    windows_agree(a)

    # a bank page's aliases changed, and a hand edit outside a block: every entity listed afresh
    for ws in (a, b):
        page = ws / "bank/entities/Zed.md"
        page.write_text(page.read_text().replace("[Zeddy]", "[Zeddy, Zedster]"))
    change_both(a, b, "memory/2026-12-05.md", "# 2026-12-05\n\n- Zedster lent @Kai a ladder.\n")
    seen = against_scratch(a, b, spied)
    assert not seen["windowed"]
    windows_agree(a)
    for ws in (a, b):
        page = ws / "bank/entities/Kai.md"
        page.write_text(page.read_text() + "\nMy own note: @Kai likes tea.\n")
    seen = against_scratch(a, b, spied)
    assert not seen["windowed"]
    windows_agree(a)
    change_both(a, b, "memory/2026-12-06.md", "# 2026-12-06\n\n- @Kai drank tea with @Lena.\n")
    seen = against_scratch(a, b, spied)
    assert {"Kai", "Lena"} <= seen["windowed"]
    windows_agree(a)


def test_reflect11_forgetting_drops_the_windows_and_the_next_runs_rebuild_them(tmp_path, example_ws, spied):
    days(example_ws)
    write(example_ws, "memory/2026-09-09.md", "# 2026-09-09\n\n- @Kai hid the key under the Zwieback-7 stone.\n")
    a, b = twins(tmp_path, example_ws)
    assert "Kai" in windows_agree(a)
    mem = Memory(Workspace(a), embedder="none")
    try:
        assert mem.forget("Zwieback-7 stone", confirm=True)["forgotten"]
    finally:
        mem.close()
    assert b"Zwieback-7" not in (a / ".memory/local.sqlite").read_bytes()
    conn = local(a)
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'reflect_windows'").fetchall()
    conn.close()
    (b / "memory/2026-09-09.md").write_text((a / "memory/2026-09-09.md").read_text())
    both(a, b)
    assert "Kai" in windows_agree(a)
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- @Kai found the key.\n")
    spied()
    seen = against_scratch(a, b, spied)
    assert "Kai" in seen["windowed"]
    windows_agree(a)


def test_reflect11_a_run_killed_while_saving_its_windows_leaves_none_that_the_next_run_trusts(tmp_path, example_ws,
                                                                                           spied, monkeypatch):
    days(example_ws)
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- @Kai sold the boat.\n")

    save = windows.save

    def killed(*args, **kwargs):
        save(*args, **kwargs)
        raise KeyboardInterrupt  # as a kill between the windows and the record: nothing after is written

    monkeypatch.setattr(windows, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        reflect(a)
    monkeypatch.undo()
    monkeypatch.setattr(pages, "LISTED", K)
    drop_record(b)
    reflect(a), reflect(b)
    assert written(a) == written(b)  # the journals differ: the killed run wrote its entry
    windows_agree(a)
    change_both(a, b, "memory/2026-12-02.md", "# 2026-12-02\n\n- @Kai bought a canoe.\n")
    drop_record(b)
    reflect(a), reflect(b)
    assert written(a) == written(b)
    windows_agree(a)


def test_reflect11_a_window_is_brought_up_to_date_only_from_its_own_record(tmp_path, example_ws):
    """Windows saved by one run and a record saved by another (a copy of the state from elsewhere) do
    not go together: every entity is listed afresh."""
    days(example_ws)
    a, b = twins(tmp_path, example_ws)
    other = tmp_path / "other"
    shutil.copytree(a, other)
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- @Kai sold the boat.\n")
    both(a, b)
    conn, old = local(a), local(other)
    with conn:
        conn.execute("UPDATE meta SET v = ? WHERE k = ?",
                     (old.execute("SELECT v FROM meta WHERE k = ?", (REFLECT_WINDOWS,)).fetchone()[0], REFLECT_WINDOWS))
    conn.close()
    old.close()
    change_both(a, b, "memory/2026-12-07.md", "# 2026-12-07\n\n- @Kai bought a canoe.\n")
    both(a, b)


@pytest.mark.parametrize("carried", [False, True])
def test_reflect11_a_fact_below_a_block_the_last_run_rewrote_is_cited_at_its_line_now(example_ws, carried):
    """A run's own page writes are not changes for the next run, but a generated block that grew
    moves the person's lines below it: a window keeping a fact from that page cites it where it is
    now (it cited the line it had before the block grew). Found by review of the windows."""
    env = mem_env(MEM_EMBEDDER="none")
    ws = example_ws

    def run(*args):
        run_mem("-w", ws, *args, env=env, check=0)

    run("index"); run("reflect", "--force")  # Tom.md gets its generated block
    tom = ws / "bank" / "entities" / "Tom.md"
    with tom.open("a", encoding="utf-8") as f:
        f.write("\n## Later\n\n- 2026-11-30: @Peter repaired the trailer hitch of Tom.\n")
    run("index"); run("reflect", "--force")  # a bank page changed: every entity, every window afresh
    write(ws, "memory/2026-11-30.md", "# 2026-11-30 Mon\n\n## Retain\n"
                                      "- O(c=0.7) @Tom: Tom knows more about cargo bikes than anyone in Leipzig.\n")
    run("index"); run("reflect", "--force")  # Tom's block grows by a line: the trailer line moves down
    if carried:  # a run in between that leaves Peter's window as it was, carried under its own name
        write(ws, "memory/2026-12-02.md", "# 2026-12-02 Wed\n\n## Retain\n- W @Kenji: Kenji moved his desk to the window.\n")
        run("index"); run("reflect", "--force")
    write(ws, "memory/2026-12-01.md", "# 2026-12-01 Tue\n\n## Retain\n- W @Peter: Peter booked his flight back to Lisbon.\n")
    run("index"); run("reflect", "--force")  # Peter's page made again from his window
    at = next(n for n, line in enumerate(tom.read_text(encoding="utf-8").splitlines(), 1) if "trailer hitch" in line)
    cited = [line for line in (ws / "bank" / "entities" / "Peter.md").read_text(encoding="utf-8").splitlines()
             if "trailer hitch" in line]
    assert cited and all(f"Tom.md#L{at}]" in line for line in cited), (at, cited)


def swap_ids(ws: Path, path: str) -> None:
    """Give the first two facts of `path` each other's ids, in every table that holds them: an index
    whose ids do not follow the places in a file (`mem index` never makes one; nothing may rely on it)."""
    conn = sqlite3.connect(ws / ".memory" / "index.sqlite")
    with conn:
        first, second = [i for (i,) in conn.execute("SELECT id FROM facts WHERE path = ? ORDER BY ord LIMIT 2",
                                                    (path,))]
        for table, column in [("facts", "id"), ("facts_fts", "rowid"), ("fact_entities", "fact_id"),
                              ("fact_tags", "fact_id")]:
            for was, becomes in [(first, -1), (second, first), (-1, second)]:
                conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (becomes, was))
    conn.close()


def test_reflect14_ids_from_places_equal_the_indexed_ids_and_a_file_whose_ids_do_not_follow_is_listed_afresh(
        tmp_path, example_ws, spied):
    days(example_ws)
    a, b = twins(tmp_path, example_ws)
    mem = Memory(Workspace(a), embedder="none")
    try:
        paths = {p for p, _ in mem.store.file_rows().items()}
        offsets = mem.store.place_offsets(paths)
        ids = mem.store.ids_at(paths)
        assert {p for p, _ in ids} == set(offsets)
        assert ids == {(p, o): low + o for p, (low, n) in offsets.items() for o in range(n)}
    finally:
        mem.close()
    spied()

    for ws in (a, b):  # Zed's window holds the first fact of this log
        swap_ids(ws, "memory/2026-09-03.md")
    mem = Memory(Workspace(a), embedder="none")
    try:
        assert "memory/2026-09-03.md" not in mem.store.place_offsets(["memory/2026-09-03.md", "memory/2026-09-05.md"])
        assert "memory/2026-09-05.md" in mem.store.place_offsets(["memory/2026-09-03.md", "memory/2026-09-05.md"])
    finally:
        mem.close()
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- Zeddy sold the boat to @Kai.\n")
    seen = against_scratch(a, b, spied)
    assert "Zed" in seen["afresh"] and "Zed" not in seen["windowed"] and "Kai" in seen["windowed"]
    assert "sold the boat" in (a / "bank/entities/Zed.md").read_text()


@pytest.mark.parametrize("damage", ["a file that is not a name", "a place past the file's facts",
                                    "a place not a number", "a file not listed"])
def test_reflect14_a_window_damaged_in_its_files_or_places_is_listed_afresh(tmp_path, example_ws, spied, damage):
    days(example_ws)
    a, b = twins(tmp_path, example_ws)
    conn = local(a)
    with conn:
        found = json.loads(conn.execute("SELECT facts FROM reflect_windows WHERE entity = 'Zed'").fetchone()[0])
        if damage == "a file that is not a name":
            found["paths"][found["facts"][0][1]] = 7
        elif damage == "a place past the file's facts":
            found["facts"][0][2] = 99
        elif damage == "a place not a number":
            found["facts"][0][2] += 0.5
        else:
            found["facts"][0][1] = len(found["paths"])
        conn.execute("UPDATE reflect_windows SET facts = ? WHERE entity = 'Zed'", (json.dumps(found),))
    conn.close()
    spied()
    change_both(a, b, "memory/2026-12-01.md", "# 2026-12-01\n\n- Zeddy sold the boat to @Kai.\n")
    seen = against_scratch(a, b, spied)
    assert "Zed" in seen["afresh"] and "Zed" not in seen["windowed"] and "Kai" in seen["windowed"]
    windows_agree(a)
