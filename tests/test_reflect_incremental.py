"""Reflect proportional to what is new (issue 19, item 5): a run replays or reuses what the last run
recorded in `.memory/local.sqlite`, and its Markdown is byte for byte what a run without that record
writes. Each test keeps two copies of one workspace, changes both alike, drops the record in one,
and compares."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import mem_env, run_mem, write

from memtool.memory import Memory
from memtool.reflect import consolidation, ledger, postings, rules
from memtool.reflect.cache import KEY
from memtool.workspace import Workspace


def reflect(ws: Path) -> dict:
    mem = Memory(Workspace(ws), embedder="none")
    try:
        return mem.reflect(force=True)
    finally:
        mem.close()


def drop_record(ws: Path) -> None:
    """What deleting the cache does (the rest of the local state stays: seen facts, decisions)."""
    conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE k = ?", (KEY,))
    conn.close()


def markdown(ws: Path) -> dict[str, str]:
    """Every bank page, with the journal's clock readings (its stamp and the run's duration) blanked."""
    out = {}
    for p in sorted((ws / "bank").rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        text = re.sub(r"^## .* — reflect$", "## STAMP — reflect", text, flags=re.M)
        out[str(p.relative_to(ws))] = re.sub(r"the run took [\d.]+ s", "the run took T s", text)
    return out


def comparable(result: dict) -> str:
    result = {k: v for k, v in result.items() if k not in ("seconds", "reused")}
    result["entry"] = re.sub(r"the run took [\d.]+ s", "", re.sub(r"^## .*\n", "", result["entry"] or ""))
    return json.dumps(result, sort_keys=True, ensure_ascii=False)


def twins(tmp_path: Path, ws: Path) -> tuple[Path, Path]:
    """`ws` after runs until one replays the last, and a copy of it (a run that created a page that
    changes what names its entity is followed by one that recomputes every entity)."""
    reflect(ws)
    assert reflect(ws)["reused"]["replayed"] or reflect(ws)["reused"]["replayed"]
    twin = tmp_path / "twin"
    shutil.copytree(ws, twin)
    return ws, twin


def both(a: Path, b: Path) -> dict:
    """Reflect in `a` with its record and in `b` without; their output must be the same."""
    drop_record(b)
    got, full = reflect(a), reflect(b)
    assert not full["reused"]["replayed"] and not full["reused"]["entity_pages"]
    assert comparable(got) == comparable(full)
    assert markdown(a) == markdown(b)
    return got


def change_both(a: Path, b: Path, rel: str, text: str) -> None:
    for ws in (a, b):
        write(ws, rel, text)


def test_reflect_with_nothing_new_replays_the_last_plan_and_writes_what_a_full_run_writes(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    got = both(a, b)
    assert got["reused"]["replayed"] and got["reused"]["entity_pages"] > 0
    assert not got["changed"] and got["pages"] and all(p["action"] in ("unchanged", "skipped") for p in got["pages"])


def test_reflect_after_new_facts_recomputes_only_the_entities_they_touch(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-11-30.md", "# 2026-11-30\n\n- @Peter still prefers concise replies on WhatsApp.\n"
                                              "- Met @Quinn at the café.\n- @Quinn sent the slides.\n")
    got = both(a, b)
    assert not got["reused"]["replayed"]
    assert got["reused"]["entity_pages"] > 0 and got["reused"]["entity_pages_made"] >= 2  # Peter, Quinn
    assert "Quinn" in {p["entity"] for p in got["pages"] if p["action"] == "create"}


def test_a_changed_fact_and_a_hand_edit_outside_the_block_are_picked_up(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    log = next(p for p in sorted((a / "memory").glob("*.md"), reverse=True) if "@Peter" in p.read_text(encoding="utf-8"))
    old = next(line for line in log.read_text(encoding="utf-8").splitlines() if "@Peter" in line and "O(" not in line)
    change_both(a, b, str(log.relative_to(a)), log.read_text(encoding="utf-8").replace(old, old.rstrip() + " Changed later."))
    got = both(a, b)
    assert got["reused"]["entity_pages"] > 0 and "Peter" in {p["entity"] for p in got["pages"] if p["action"] == "update"}
    assert "Changed later." in (a / "bank/entities/Peter.md").read_text(encoding="utf-8")

    page = a / "bank/entities/Peter.md"
    hand = "\n# Peter\n\nPlays chess with @Ravi.\nRuns with @Ravi on Sundays.\n"
    change_both(a, b, "bank/entities/Peter.md", page.read_text(encoding="utf-8").replace("\n# Peter\n", hand, 1))
    got = both(a, b)
    assert not got["reused"]["replayed"] and not got["reused"]["entity_pages"]  # a bank page: every entity again
    assert "Plays chess with @Ravi." in page.read_text(encoding="utf-8")


def test_a_new_supersession_marks_the_older_fact_on_a_page_whose_files_did_not_change(tmp_path, example_ws):
    write(example_ws, "memory/2026-09-01.md", "# 2026-09-01\n\n- @Zed lives in Berlin with @Yara.\n"
                                              "- @Yara plays chess on Sundays.\n- @Zed works at Acme.\n")
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-11-29.md", "# 2026-11-29\n\n- @Zed now lives in Lisbon.\n")
    got = both(a, b)
    assert got["consolidation"]["superseded"] and got["reused"]["entity_pages"] > 0
    assert "superseded by" in (a / "bank/entities/Yara.md").read_text(encoding="utf-8")


def test_an_opinion_moved_by_new_evidence_updates_the_pages_of_other_entities_it_names(tmp_path, example_ws):
    write(example_ws, "memory/2026-09-02.md", "# 2026-09-02\n\n## Retain\n"
                                              "- O(c=0.6) @Kai: The pasta of @Lena is the best pasta in town.\n"
                                              "- W @Lena: Cooks on Fridays.\n")
    a, b = twins(tmp_path, example_ws)
    before = (a / "bank/entities/Lena.md").read_text(encoding="utf-8")
    change_both(a, b, "memory/2026-11-28.md", "# 2026-11-28\n\n- @Kai: the pasta there is the best pasta in town.\n")
    got = both(a, b)
    assert got["reused"]["entity_pages"] > 0 and got["opinion_moves"]
    after = (a / "bank/entities/Lena.md").read_text(encoding="utf-8")
    assert "c=0.60" in before and "c=0.64" in after


def test_rebuilding_the_index_keeps_the_replay_and_the_pages(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    mem = Memory(Workspace(a), embedder="none")
    try:
        mem.index(rebuild=True)
    finally:
        mem.close()
    got = both(a, b)
    assert got["reused"]["replayed"] and not got["changed"]


def test_a_run_killed_anywhere_leaves_no_record_that_hides_work(tmp_path, example_ws):
    for i in range(28):  # enough entities that a run takes a moment
        write(example_ws, f"memory/2026-08-{1 + i % 28:02d}.md",
              "".join(f"- @Person{i}-{j} met @Person{i}-{(j + 1) % 3} about project {j}.\n" for j in range(3)))
    a, b = twins(tmp_path, example_ws)
    for n, delay in enumerate((0.4, 0.8, 1.2, 1.6)):
        change_both(a, b, f"memory/2026-11-{20 + n}.md", f"# day\n\n- @Person{n}-1 moved the meeting to room {n}.\n")
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=a, env=mem_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    drop_record(b)
    reflect(a), reflect(b)
    assert pages(a) == pages(b)  # the journals differ: the killed runs may have written entries
    assert all(f"room {n}" in (a / f"bank/entities/Person{n}-1.md").read_text(encoding="utf-8") for n in range(4))


def pages(ws: Path) -> dict[str, str]:
    return {k: v for k, v in markdown(ws).items() if not k.endswith("journal.md")}


def test_forgetting_a_fact_leaves_no_copy_in_the_reflect_record(example_ws):
    write(example_ws, "memory/2026-09-03.md", "# 2026-09-03\n\n## Retain\n"
                                              '- O(c=0.95) @Mira: Says "Zwieback-7" is her secret word.\n')
    reflect(example_ws)
    local = example_ws / ".memory" / "local.sqlite"
    conn = sqlite3.connect(local)
    assert "Zwieback-7" in conn.execute("SELECT v FROM meta WHERE k = ?", (KEY,)).fetchone()[0]
    conn.close()
    mem = Memory(Workspace(example_ws), embedder="none")
    try:
        assert mem.forget('"Zwieback-7" is her', confirm=True)["forgotten"]
    finally:
        mem.close()
    assert b"Zwieback-7" not in local.read_bytes()
    assert reflect(example_ws)["reused"]["replayed"] is False


def test_item5_forgetting_drops_the_word_postings_and_the_next_run_rebuilds_them_quietly(example_ws):
    reflect(example_ws)
    assert posted(example_ws)[1]
    mem = Memory(Workspace(example_ws), embedder="none")
    try:
        assert mem.forget("Prefers concise replies", confirm=True)["forgotten"]
    finally:
        mem.close()
    assert posted(example_ws) == ({}, {}, {})
    write(example_ws, "memory/2026-11-29.md", "# 2026-11-29\n\n- @Peter asked about the roadmap.\n")
    got = reflect(example_ws)
    assert "notice" not in got["reused"] and posted(example_ws)[1] == oracle(example_ws)


# --- item 5, second part: word postings kept per file (memtool.reflect.postings) ---------------------

POSTING_TABLES = ("posted_files", "fact_words", "word_postings")


def damage_local(ws: Path, statement: str) -> None:
    """Run `statement` on the workspace's local state, as a hand or a bad disk might."""
    conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
    with conn:
        conn.execute(statement)
    conn.close()


def drop_derived(ws: Path) -> None:
    """What a run from scratch lacks: the record and the word postings (seen facts and decisions stay)."""
    conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE k IN (?, ?)", (KEY, postings.META))
        for table in POSTING_TABLES:
            conn.execute(f"DELETE FROM {table}")
    conn.close()


def posted(ws: Path) -> tuple[dict, dict, dict]:
    """The postings as stored: per file its rows (rowid, key, words); per word (n, sorted keys)."""
    conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
    try:
        files: dict = {}
        for rowid, path, key, words in conn.execute("SELECT rowid, path, key, words FROM fact_words ORDER BY rowid"):
            files.setdefault(path, []).append((rowid, key, words))
        words = {w: (n, sorted((keys or "").split()) if keys is not None else None)
                 for w, n, keys in conn.execute("SELECT word, n, keys FROM word_postings")}
        return files, words, dict(conn.execute("SELECT path, digest FROM posted_files"))
    finally:
        conn.close()


def oracle(ws: Path) -> dict:
    """The postings made in memory from every fact, for each word: (n, sorted keys)."""
    mem = Memory(Workspace(ws), embedder="none")
    try:
        facts = consolidation.load_facts(mem.store, mem.config.trust_globs)
    finally:
        mem.close()
    keys: dict[str, list[str]] = defaultdict(list)
    for f in facts:
        for w in consolidation.word_set(f["content"]):
            keys[w].append(f["key"])
    return {w: (len(ks), sorted(ks) if len(ks) <= rules.MAX_POSTING else None) for w, ks in keys.items()}


def test_item5_rounds_of_appends_edits_and_deletions_give_what_a_run_from_scratch_gives(tmp_path, example_ws):
    write(example_ws, "memory/2026-09-02.md", "# 2026-09-02\n\n## Retain\n"
                                              "- O(c=0.6) @Kai: The pasta of @Lena is the best pasta in town.\n"
                                              "- W @Lena: Cooks on Fridays.\n")
    write(example_ws, "memory/2026-09-05.md", "# 2026-09-05\n\n- @Kai: the pasta there is the best pasta in town.\n"
                                              "- @Zed lives in Berlin with @Yara.\n- Bought a new kettle.\n")
    a, b = twins(tmp_path, example_ws)
    evidence = "- @Kai: the pasta there is the best pasta in town.\n"
    rounds = [
        ("memory/2026-11-27.md", lambda t: "# 2026-11-27\n\n- @Zed now lives in Lisbon.\n- @Kai: the pasta there is "
                                           "really the best pasta in town.\n- Bought a new kettle.\n"),  # new file
        ("memory/2026-09-02.md", lambda t: t.replace("Cooks on Fridays.", "Cooks on Fridays and Sundays.")),  # an edit
        ("memory/2026-09-05.md", lambda t: t.replace(evidence, "") + "- @Lena opened a second café.\n"),  # evidence gone
        ("memory/2026-11-27.md", lambda t: t.replace("- Bought a new kettle.\n", "") + "- @Yara plays chess.\n"),
        ("memory/2026-09-05.md", None),  # a whole file deleted
        ("memory/2026-11-28.md", lambda t: "# 2026-11-28\n\n- @Kai: the pasta there is the best pasta in town.\n"),
    ]
    for n, (rel, change) in enumerate(rounds):
        before, _, _ = posted(a)
        for ws in (a, b):
            if change is None:
                (ws / rel).unlink()
            else:
                write(ws, rel, change((ws / rel).read_text(encoding="utf-8") if (ws / rel).exists() else ""))
        drop_derived(b)
        got, full = reflect(a), reflect(b)
        assert comparable(got) == comparable(full), f"round {n}"
        assert markdown(a) == markdown(b), f"round {n}"
        assert "notice" not in got["reused"]
        if not got["consolidation"]["examined"]:  # nothing new (a deletion): postings wait for the next new fact
            continue
        assert full["reused"]["notice"] == postings.REBUILT  # b had lost its postings
        files, words, digests = posted(a)
        assert words == oracle(a), f"round {n}"
        assert {p: [r[1:] for r in rows] for p, rows in files.items()} == \
            {p: [r[1:] for r in rows] for p, rows in posted(b)[0].items()}, f"round {n}"
        kept = [p for p in before if p != rel and p in files]
        assert kept and all(files[p] == before[p] for p in kept)  # unchanged files: the very same rows
        assert set(digests) == set(files)


def test_item5_word_postings_lost_or_damaged_are_rebuilt_with_a_notice_and_the_same_pages(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    damages = [
        "UPDATE word_postings SET n = n + 1 WHERE word = (SELECT MIN(word) FROM word_postings)",
        "UPDATE word_postings SET keys = 'ffffffffffffffff' WHERE word = 'room'",  # totals still add up
        "DELETE FROM fact_words WHERE rowid % 3 = 0",
        "UPDATE meta SET v = '{' WHERE k = 'reflect_postings'",
        "DROP TABLE word_postings",
        "DELETE FROM meta WHERE k = 'reflect_postings'",
    ]
    for n, damage in enumerate(damages):
        change_both(a, b, f"memory/2026-11-2{n}.md", f"# 2026-11-2{n}\n\n- @Peter asked about room {n}.\n")
        damage_local(a, damage)
        drop_derived(b)
        got, full = reflect(a), reflect(b)
        assert got["reused"]["notice"] == postings.REBUILT, damage
        assert comparable(got) == comparable(full) and markdown(a) == markdown(b), damage
        assert posted(a)[1] == oracle(a), damage
        assert "notice" not in reflect(a)["reused"]  # rebuilt once, then kept


def test_item5_the_cli_says_when_the_local_state_was_lost(example_ws):
    from conftest import run_mem

    run_mem("reflect", "--force", cwd=example_ws, check=0)
    (example_ws / ".memory" / "local.sqlite").unlink()
    write(example_ws, "memory/2026-11-29.md", "# 2026-11-29\n\n- @Peter asked about the roadmap.\n")
    proc = run_mem("reflect", "--force", cwd=example_ws, check=0)
    assert "word postings" in proc.stderr and "rebuilt" in proc.stderr
    again = run_mem("reflect", "--force", cwd=example_ws, check=0)
    assert "word postings" not in again.stderr


def test_item5_a_dry_run_stores_no_postings_and_a_real_run_does(example_ws):
    mem = Memory(Workspace(example_ws), embedder="none")
    try:
        assert mem.reflect(dry_run=True, force=True)["consolidation"]["examined"] > 0
    finally:
        mem.close()
    assert posted(example_ws) == ({}, {}, {})
    reflect(example_ws)
    files, words, _ = posted(example_ws)
    assert files and words == oracle(example_ws)


SHOWN = ("kind", "timestamp", "entities", "content", "source", "confidence", "superseded_by")  # what a page shows


def listings_agree(ws: Path) -> list[str]:
    """The one-pass listing of every entity's facts equals `mem recall --entity`'s listing of each
    (the fields a page shows): the names listed."""
    from memtool.reflect import listing, pages

    mem = Memory(Workspace(ws), embedder="none")
    try:
        mem.refresh()
        names = [name for name, _ in mem.store.entity_counts(pages.MIN_FACTS)]
        got = listing.entity_facts(mem.store, names, pages.LISTED)
        listing.complete(mem.store, [f for found in got.values() for f in found], mem.local.supersessions())
        got = {name: [{k: f[k] for k in SHOWN if k in f} for f in found] for name, found in got.items()}
        one_by_one = {name: [{k: f[k] for k in SHOWN if k in f} for f in mem.list_facts(entities=[name], k=pages.LISTED)]
                      for name in names}
        assert got == one_by_one
        return names
    finally:
        mem.close()


def test_item5_entity_pages_read_in_one_pass_equal_recalls_listing_through_renames_removals_and_hand_edits(
        tmp_path, example_ws):
    """Facts spread over several days naming several entities (by @mention, by [[link]], by an alias in
    plain words), a supersession, an opinion; then a page renamed with a new alias, an entity removed,
    and a block edited by hand: after each, the pages equal a run without the record, and the facts
    they are made from equal recall's listing of each entity."""
    write(example_ws, "bank/entities/Zed.md", "---\naliases: [Zeddy]\n---\n# Zed\n\nA neighbour.\n")
    for day, text in [("2026-09-01", "- @Zed lives in Berlin with @Yara.\n- @Yara plays chess with [[Zed]].\n"),
                      ("2026-09-03", "- Zeddy fixed the bike of @Yara.\n- O(c=0.7) @Yara: chess on Sundays is best.\n"),
                      ("2026-09-05", "- @Zed works at Acme with @Quinn.\n- @Quinn and Zeddy went sailing.\n")]:
        write(example_ws, f"memory/{day}.md", f"# {day}\n\n{text}")
    a, b = twins(tmp_path, example_ws)
    assert {"Zed", "Yara", "Quinn"} <= set(listings_agree(a))

    for day, text in [("2026-11-25", "- @Zed now lives in Lisbon.\n- @Quinn met Zeddy at the port.\n"),
                      ("2026-11-26", "- @Yara: chess on Sundays is still the best.\n- [[Zed]] called @Quinn.\n"),
                      ("2026-11-27b", "- @Yara and @Quinn cooked for Zeddy.\n")]:
        change_both(a, b, f"memory/{day}.md", f"# {day[:10]}\n\n{text}")
    got = both(a, b)
    assert got["consolidation"]["superseded"] and got["reused"]["entity_pages"] > 0
    assert {"Zed", "Yara", "Quinn"} <= {p["entity"] for p in got["pages"] if p["action"] == "update"}
    assert "superseded by" in (a / "bank/entities/Zed.md").read_text(encoding="utf-8")
    listings_agree(a)

    for ws in (a, b):  # renamed, with a new alias named in plain words
        (ws / "bank/entities/Zed.md").rename(ws / "bank/entities/Zed Okafor.md")
        page = ws / "bank/entities/Zed Okafor.md"
        page.write_text(page.read_text(encoding="utf-8").replace("[Zeddy]", "[Zeddy, Zed, Okafor]"), encoding="utf-8")
    change_both(a, b, "memory/2026-11-28b.md", "# 2026-11-28\n\n- Okafor fixed the boat of @Quinn.\n")
    got = both(a, b)
    assert "Okafor fixed the boat" in (a / "bank/entities/Zed Okafor.md").read_text(encoding="utf-8")
    listings_agree(a)

    for ws in (a, b):  # Yara removed: her lines and her page
        for log in (ws / "memory").glob("2026-*.md"):
            text = log.read_text(encoding="utf-8")
            log.write_text("".join(line for line in text.splitlines(True) if "Yara" not in line), encoding="utf-8")
        (ws / "bank/entities/Yara.md").unlink()
    got = both(a, b)
    assert "Yara" not in {p["entity"] for p in got["pages"]}
    assert "Yara" not in listings_agree(a)

    mem = Memory(Workspace(a), embedder="none")  # new ids for every fact
    try:
        mem.index(rebuild=True)
    finally:
        mem.close()
    change_both(a, b, "memory/2026-11-28c.md", "# 2026-11-28\n\n- @Quinn painted the boat with Okafor.\n")
    got = both(a, b)
    assert got["reused"]["entity_pages"] > 0 and "Okafor" in (a / "bank/entities/Quinn.md").read_text(encoding="utf-8")
    listings_agree(a)

    for ws in (a, b):  # a hand edit inside Quinn's block, then a new fact about Quinn
        page = ws / "bank/entities/Quinn.md"
        page.write_text(page.read_text(encoding="utf-8").replace("**Facts**", "**Facts, checked**"), encoding="utf-8")
    change_both(a, b, "memory/2026-11-29b.md", "# 2026-11-29\n\n- @Quinn sold the boat.\n")
    got = both(a, b)
    assert any(p["entity"] == "Quinn" and p["action"] == "skipped" for p in got["pages"])
    assert "**Facts, checked**" in (a / "bank/entities/Quinn.md").read_text(encoding="utf-8")
    listings_agree(a)


def test_item5_a_file_made_stricter_since_it_was_indexed_is_read_again_for_its_tier(example_ws):
    """Trust tiers skip re-reading a file only while its size and mtime are those the index read."""
    mem = Memory(Workspace(example_ws), embedder="none")
    try:
        mem.refresh()
        log = sorted((example_ws / "memory").glob("*.md"))[-1]
        rel = str(log.relative_to(example_ws))
        assert mem.tier_lookup()(rel) == "normal"
        log.write_text("---\ntrust: legal\n---\n" + log.read_text(encoding="utf-8"), encoding="utf-8")
        assert mem.tier_lookup()(rel) == "legal"  # not refreshed: the index still says normal
        mem.refresh()
        assert mem.tier_lookup()(rel) == "legal"
    finally:
        mem.close()


def test_reflect10_a_tier_lookup_reads_the_index_once_and_still_sees_a_file_changed_after(example_ws):
    """The index's records of all files are read at a lookup's first call: a file made stricter after
    that call, or a file the index did not hold then, is read from disk all the same."""
    mem = Memory(Workspace(example_ws), embedder="none")
    try:
        mem.refresh()
        logs = sorted((example_ws / "memory").glob("*.md"))
        tier_of = mem.tier_lookup()
        assert tier_of(str(logs[0].relative_to(example_ws))) == "normal"  # the records are read here
        log, rel = logs[-1], str(logs[-1].relative_to(example_ws))
        log.write_text("---\ntrust: legal\n---\n" + log.read_text(encoding="utf-8"), encoding="utf-8")
        (example_ws / "memory" / "2026-12-31.md").write_text("---\ntrust: private\n---\n- New.\n", encoding="utf-8")
        assert tier_of(rel) == "legal" and tier_of("memory/2026-12-31.md") == "private"
    finally:
        mem.close()


def test_item5_a_page_a_run_created_makes_the_next_run_recompute_what_it_names(tmp_path, example_ws):
    """A new entity page makes facts that name the entity in plain words its facts too: the run after
    the one that created it recomputes (it used to replay the older plan), and then agrees with a run
    without the record."""
    write(example_ws, "memory/2026-09-02.md", "# 2026-09-02\n\n## Retain\n"
                                              "- O(c=0.6) @Kai: The pasta of @Lena is the best pasta in town.\n"
                                              "- W @Lena: Cooks on Fridays.\n")
    first = reflect(example_ws)
    assert {"entity": "Lena", "path": "bank/entities/Lena.md", "action": "create", "reason": ""} in first["pages"]
    page = example_ws / "bank/entities/Lena.md"
    assert "from 2 facts" in page.read_text(encoding="utf-8")
    second = reflect(example_ws)
    assert not second["reused"]["replayed"]
    assert "from 4 facts" in page.read_text(encoding="utf-8")  # "Lena Vogt" (memory.md), "Lena's OK" (a log)
    assert reflect(example_ws)["reused"]["replayed"]
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-11-28.md", "# 2026-11-28\n\n- @Quinn met @Rita.\n- @Quinn and @Rita again.\n")
    got = both(a, b)
    assert {"Quinn", "Rita"} <= {p["entity"] for p in got["pages"] if p["action"] == "create"}
    assert reflect(a)["reused"]["replayed"]  # pages nothing else names by: the next run replays


def test_reflect4_item1_a_created_page_citing_a_page_the_run_rewrote_still_lets_the_next_run_replay(tmp_path,
                                                                                                   example_ws):
    """A page's facts are read without their text, by id. A run that creates `Nova`'s page, whose facts
    include a hand-written line of `Yara`'s page, and rewrites `Yara`'s block (the page is read again,
    its lines get new ids) changed nothing about what names Nova: the next run replays, and agrees with
    a run without the record."""
    write(example_ws, "bank/entities/Yara.md", "# Yara\n\n- @Nova painted the fence of @Yara.\n")
    write(example_ws, "memory/2026-09-01.md", "# 2026-09-01\n\n- @Yara plays chess.\n- @Yara lives in Porto.\n")
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-11-28.md", "# 2026-11-28\n\n- @Nova and @Yara cooked pasta.\n"
                                              "- @Yara thanked @Nova for the ladder.\n")
    got = both(a, b)
    actions = {p["entity"]: p["action"] for p in got["pages"]}
    assert actions.get("Nova") == "create" and actions.get("Yara") == "update", actions
    assert "painted the fence" in (a / "bank/entities/Nova.md").read_text(encoding="utf-8")
    assert reflect(a)["reused"]["replayed"]


# --- reflect5: opinion evidence weighed only against what changed; entity listings in one pass ------

PEOPLE = ("Ana", "Ben", "Cleo", "Dov", "Eda", "Finn", "Gus", "Hana", "Ivo")


def evidence_ws(ws: Path) -> None:
    """Nine people, each with an opinion thread and facts for and against it over five days."""
    for n, day in enumerate(("2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04", "2026-10-05")):
        lines = []
        for i, p in enumerate(PEOPLE):
            topic = f"ferry to harbour {i}"
            if n == 0:
                lines.append(f"- O(c=0.7) @{p}: the {topic} is the best way to travel.")
            elif (n + i) % 3 == 0:
                lines.append(f"- @{p}: the {topic} is not the best way to travel.")
            else:
                lines.append(f"- @{p} took the {topic} again, the best way to travel.")
            lines.append(f"- @{p} met @{PEOPLE[(i + n + 1) % len(PEOPLE)]} for lunch on day {n}.")
        write(ws, f"memory/{day}.md", f"# {day}\n\n## Retain\n" + "\n".join(lines) + "\n")


def rounds_agree(a: Path, b: Path) -> dict:
    """Reflect in `a` with its record and in `b` from scratch (record dropped): the same output,
    and the one-pass listing of every entity equal to recall's."""
    got = both(a, b)
    names = listings_agree(a)
    from memtool.reflect import listing
    assert len(names) >= listing.AT_ONCE  # the one-pass lookup is the one compared
    return got


def test_reflect5_evidence_verdicts_reused_give_what_a_run_from_scratch_gives(tmp_path, example_ws):
    """Opinion evidence is weighed only for facts of changed files and threads that changed; the
    rest comes from the last run's verdicts. Through new facts spread over days, an edited old line
    (its verdict flips), a deleted file of evidence, a thread with a new bullet, and an entity
    renamed with an alias, every run equals one without the record."""
    evidence_ws(example_ws)
    a, b = twins(tmp_path, example_ws)
    spread = {f"memory/2026-11-2{d}.md": f"# 2026-11-2{d}\n\n## Retain\n" + "".join(
        f"- @{p} took the ferry to harbour {i} again, the best way to travel.\n"
        if (i + d) % 2 else f"- @{p}: the ferry to harbour {i} is not the best way to travel.\n"
        for i, p in enumerate(PEOPLE) if (i + d) % 3) for d in range(4)}
    for rel, text in spread.items():
        change_both(a, b, rel, text)
    got = rounds_agree(a, b)
    assert got["reused"]["evidence_verdicts"] > 0  # the old days' verdicts were not compared again

    old = "- @Ben took the ferry to harbour 1 again, the best way to travel.\n"
    for ws in (a, b):  # an old line edited: its verdict flips (the file changed, so it is weighed again)
        log = ws / "memory/2026-10-02.md"
        text = log.read_text(encoding="utf-8")
        assert old in text
        log.write_text(text.replace(old, "- @Ben: the ferry to harbour 1 is not the best way to travel.\n"),
                       encoding="utf-8")
    before = (a / "bank/opinions.md").read_text(encoding="utf-8")
    got = rounds_agree(a, b)
    assert got["reused"]["evidence_verdicts"] > 0 and (a / "bank/opinions.md").read_text(encoding="utf-8") != before

    for ws in (a, b):  # a whole file of evidence deleted
        (ws / "memory/2026-10-04.md").unlink()
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] > 0

    # the verdicts damaged: weighed afresh, same output
    damage_local(a, "UPDATE meta SET v = json_set(v, '$.entities.Ben', json('[1, 2]')) WHERE k = 'reflect_weighed'")
    change_both(a, b, "memory/2026-11-24b.md", "# 2026-11-24\n\n## Retain\n- @Ben took the ferry to harbour 1 again.\n")
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] == 0

    mem = Memory(Workspace(a), embedder="none")  # every fact gets a new id; sources and verdicts stay
    try:
        mem.index(rebuild=True)
    finally:
        mem.close()
    change_both(a, b, "memory/2026-11-24c.md", "# 2026-11-24\n\n## Retain\n- @Gus: the ferry to harbour 6 is not the"
                                               " best way to travel.\n")
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] > 0

    change_both(a, b, "memory/2026-11-25.md", "# 2026-11-25\n\n## Retain\n- O @Cleo: the ferry to harbour 2 is the best"
                                              " way to travel, with a bike.\n- @Dov took the ferry to harbour 3 again.\n")
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] > 0  # Cleo's thread changed: weighed afresh

    for ws in (a, b):  # renamed, with an alias: every entity is recomputed, nothing is taken
        page = ws / "bank/entities/Eda.md"
        assert page.exists()
        text = page.read_text(encoding="utf-8")
        page.unlink()
        renamed = "---\naliases: [Eda, Lind]\n---\n" + text.replace("# Eda", "# Eda Lind", 1)
        write(ws, "bank/entities/Eda Lind.md", renamed)
    change_both(a, b, "memory/2026-11-26.md", "# 2026-11-26\n\n- Lind took the ferry to harbour 4 again, the best"
                                              " way to travel.\n")
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] == 0
    change_both(a, b, "memory/2026-11-27.md", "# 2026-11-27\n\n- @Eda: the ferry to harbour 4 is not the best way"
                                              " to travel.\n- @Ivo took the ferry to harbour 8 again.\n")
    assert rounds_agree(a, b)["reused"]["evidence_verdicts"] > 0


def test_reflect7_a_run_leaves_its_objects_to_reference_counting_and_the_collector_and_index_as_they_were(
        example_ws):
    """A run's ~10⁶ long-lived facts, word sets and listings hold no cycles: the cyclic collector,
    walking them again and again as they piled up, was ~0.8 s of a 5 s run at 10⁵ facts."""
    import gc

    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    mem = Memory(Workspace(example_ws), embedder="none")
    mem.index()  # a first build imports sqlite-utils, whose import the collector may run in
    gc.callbacks.append(count)
    try:
        assert gc.isenabled()
        first = mem.reflect(force=True)  # consolidates every fact, creates the entity pages
        assert first["pages"] and first["consolidation"]["examined"]
        assert len(collections) <= 1  # one, perhaps, as the collector comes back
        assert gc.isenabled()
        assert mem.store.conn.execute("PRAGMA mmap_size").fetchone()[0] == 0  # mapped for the run only
        gc.disable()
        try:
            mem.reflect(force=True)
            assert not gc.isenabled()  # as it was before the run
        finally:
            gc.enable()
    finally:
        gc.callbacks.remove(count)
        mem.close()


def test_reflect7_a_run_without_vectors_does_not_import_numpy(example_ws):
    run_mem("index", cwd=example_ws, check=0)  # a first build imports sqlite-utils, and it numpy
    code = ("import sys; from memtool.memory import Memory; from memtool.workspace import Workspace\n"
            "from pathlib import Path\nm = Memory(Workspace(Path(sys.argv[1])), embedder='none'); r = m.reflect(force=True); m.close()\n"
            "print(r['consolidation']['examined'], 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(example_ws)], env=mem_env(MEM_EMBEDDER="none"),
                         capture_output=True, text=True, check=True, cwd=example_ws).stdout.split()
    assert int(out[0]) > 0 and out[1] == "False"  # new facts were compared, by words alone


def test_review28_a_reads_mapping_ends_with_the_run_even_when_a_cursor_held_pages_meanwhile(example_ws):
    """SQLite ignores a change of `mmap_size` while a cursor of the connection holds mapped pages
    (another thread's read in `mem mcp`): reading the size back then took the run's mapping as the
    one to restore, for good. The size restored is the one asked for, so the next run ends it; a
    connection closed inside the block neither raises nor hides the block's own error."""
    Memory(Workspace(example_ws), embedder="none").index()
    store = Memory(Workspace(example_ws), embedder="none").store  # its pages read from the file
    size = lambda: store.conn.execute("PRAGMA mmap_size").fetchone()[0]  # noqa: E731
    assert size() == 0
    with store.pages_mapped():
        reading = store.conn.execute("SELECT content FROM facts")
        reading.fetchone()  # a read left open across the run's end
        assert size() > 0
    reading.close()
    with store.pages_mapped():
        pass
    assert size() == 0
    other = Memory(Workspace(example_ws), embedder="none")
    with pytest.raises(KeyError):
        with other.store.pages_mapped():
            other.store.close()
            raise KeyError("the run's own error")


# --- reflect12: consolidation's fact ledger kept per file (memtool.reflect.ledger) -----------------------


def drop_ledger(ws: Path) -> None:
    conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE k = ?", (ledger.META,))
        conn.execute("DELETE FROM reflect_ledger")
    conn.close()


def ledger_rows(local_path: Path) -> dict[str, tuple[str, list]]:
    conn = sqlite3.connect(local_path)
    try:
        rows = conn.execute("SELECT path, stamp, rows FROM reflect_ledger")
        return {p: (stamp, json.loads(text)) for p, stamp, text in rows}
    finally:
        conn.close()


def ledger_is_what_every_fact_makes(ws: Path, tmp_path: Path) -> None:
    """Each stored ledger entry that a run would take (its stamp is the index's now) equals the one made
    from every fact, and the facts the ledger gives (texts read) equal `load_facts`'s. (A page the
    run wrote after reading the ledger keeps its facts in the index under a new content hash: its
    entry is read again by the next run.)"""
    from memtool.store.local import LocalState

    scratch = tmp_path / "scratch.sqlite"
    scratch.unlink(missing_ok=True)
    mem = Memory(Workspace(ws), embedder="none")
    fresh = LocalState(scratch)
    try:
        ledger.facts(mem.store, fresh, mem.config.trust_globs, save=True)
        given = ledger.facts(mem.store, mem.local, mem.config.trust_globs, save=False)
        ledger.read_texts(given)
        expected = consolidation.load_facts(mem.store, mem.config.trust_globs)
    finally:
        fresh.close()
        mem.close()
    stored, made = ledger_rows(ws / ".memory" / "local.sqlite"), ledger_rows(scratch)
    assert set(stored) <= set(made)
    taken = [p for p in stored if stored[p][0] == made[p][0]]
    assert {p: stored[p] for p in taken} == {p: made[p] for p in taken}
    assert len(taken) >= len(made) // 2
    assert [{k: f[k] for k in e} for f, e in zip(given, expected)] == expected and len(given) == len(expected)


def test_reflect12_the_ledger_after_edits_deletions_renames_rebuilds_and_forgetting_gives_what_a_run_from_scratch_gives(
        tmp_path, example_ws):
    write(example_ws, "memory/2026-09-05.md", "# 2026-09-05\n\n- @Kai: the pasta there is the best pasta in town.\n"
                                              "- @Zed lives in Berlin with @Yara.\n- Bought a new kettle.\n")
    write(example_ws, "memory/2026-09-06.md", "# 2026-09-06\n\n- @Yara plays chess with @Zed.\n")
    a, b = twins(tmp_path, example_ws)
    assert ledger_rows(a / ".memory" / "local.sqlite")

    def rename(ws: Path) -> None:
        (ws / "memory/2026-09-06.md").rename(ws / "memory/2026-09-16.md")

    def rebuild(ws: Path) -> None:
        mem = Memory(Workspace(ws), embedder="none")
        try:
            mem.index(rebuild=True)
        finally:
            mem.close()

    def forget(ws: Path) -> None:
        mem = Memory(Workspace(ws), embedder="none")
        try:
            assert mem.forget("plays chess with", confirm=True)["forgotten"]
        finally:
            mem.close()
        assert not ledger_rows(ws / ".memory" / "local.sqlite")

    def older(ws: Path) -> None:
        conn = sqlite3.connect(ws / ".memory" / "local.sqlite")
        with conn:
            conn.execute("UPDATE meta SET v = ? WHERE k = ?",
                         (json.dumps({"format": 0, "version": "0.0.1"}), ledger.META))
        conn.close()

    def edit(ws: Path) -> None:  # a hand edit of a daily log line
        path = ws / "memory/2026-09-05.md"
        path.write_text(path.read_text(encoding="utf-8").replace("Berlin", "Hamburg"), encoding="utf-8")

    rounds = [("a hand edit", edit), ("a deleted file", lambda ws: (ws / "memory/2026-09-05.md").unlink()),
              ("a renamed file", rename), ("mem index --rebuild", rebuild), ("mem forget", forget),
              ("an older version's ledger", older)]
    for n, (what, change) in enumerate(rounds):
        for ws in (a, b):
            change(ws)
            write(ws, f"memory/2026-11-1{n}.md", f"# 2026-11-1{n}\n\n- @Zed now lives in Porto, round {n}.\n")
        drop_derived(b)
        drop_ledger(b)
        got, full = reflect(a), reflect(b)
        assert comparable(got) == comparable(full) and markdown(a) == markdown(b), what
        assert "notice" not in got["reused"] or what == "mem forget", what
        ledger_is_what_every_fact_makes(a, tmp_path)


def test_reflect12_a_damaged_or_stale_ledger_is_made_again_with_the_same_pages(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    first = sorted(ledger_rows(a / ".memory" / "local.sqlite"))[0]
    damages = [  # each file made again from the index, quietly (a key that is not its text's: see below)
        f"UPDATE reflect_ledger SET rows = '[[' WHERE path = '{first}'",
        f"UPDATE reflect_ledger SET rows = '[]' WHERE path = '{first}'",
        f"UPDATE reflect_ledger SET rows = '[[1, 2]]' WHERE path = '{first}'",
        "UPDATE reflect_ledger SET stamp = 'x'",
        f"DELETE FROM reflect_ledger WHERE path = '{first}'",
        "UPDATE meta SET v = '{' WHERE k = 'reflect_ledger'",
        "DROP TABLE reflect_ledger",
    ]
    for n, damage in enumerate(damages):
        change_both(a, b, f"memory/2026-11-2{n}.md", f"# 2026-11-2{n}\n\n- @Peter asked about room {n}.\n")
        damage_local(a, damage)
        drop_derived(b)
        drop_ledger(b)
        got, full = reflect(a), reflect(b)
        assert comparable(got) == comparable(full) and markdown(a) == markdown(b), damage
        ledger_is_what_every_fact_makes(a, tmp_path)


def test_reflect12_a_ledger_key_that_is_not_its_facts_text_is_found_out_and_the_run_reads_every_fact(
        tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    change_both(a, b, "memory/2026-11-20.md", "# 2026-11-20\n\n- @Peter asked about room 4.\n")
    conn = sqlite3.connect(a / ".memory" / "local.sqlite")
    with conn:  # every key of every file's facts swapped for another: the stamps still hold
        for path, rows in conn.execute("SELECT path, rows FROM reflect_ledger").fetchall():
            rows = json.loads(rows)
            for r in rows:
                r[1] = r[1][::-1]
            conn.execute("UPDATE reflect_ledger SET rows = ? WHERE path = ?", (json.dumps(rows), path))
    conn.close()
    drop_derived(b)
    drop_ledger(b)
    got, full = reflect(a), reflect(b)
    assert got["reused"]["notice"].startswith(ledger.REBUILT)
    assert comparable(got) == comparable(full) and markdown(a) == markdown(b)
    ledger_is_what_every_fact_makes(a, tmp_path)


def test_reflect12_a_run_killed_while_writing_leaves_a_ledger_that_gives_what_a_run_from_scratch_gives(
        tmp_path, example_ws):
    for i in range(28):
        write(example_ws, f"memory/2026-08-{1 + i % 28:02d}.md",
              "".join(f"- @Person{i}-{j} met @Person{i}-{(j + 1) % 3} about project {j}.\n" for j in range(3)))
    a, b = twins(tmp_path, example_ws)
    for n, delay in enumerate((0.3, 0.6, 0.9, 1.2, 1.5)):
        change_both(a, b, f"memory/2026-11-{20 + n}.md", f"# day\n\n- @Person{n}-1 moved the meeting to room {n}.\n")
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=a, env=mem_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    drop_derived(b)
    drop_ledger(b)
    reflect(a), reflect(b)
    assert pages(a) == pages(b)
    ledger_is_what_every_fact_makes(a, tmp_path)


def test_reflect12_a_hand_edited_file_whose_facts_come_back_under_the_same_ids_is_read_again(tmp_path, example_ws):
    a, b = twins(tmp_path, example_ws)
    for text in ("- Bought a new kettle.\n", "- Bought a new teapot.\n"):
        change_both(a, b, "memory/2026-11-30.md", f"# 2026-11-30\n\n{text}")  # the newest facts: their ids are reused
        drop_derived(b)
        drop_ledger(b)
        got, full = reflect(a), reflect(b)
        assert got["consolidation"]["examined"] == 1
        assert comparable(got) == comparable(full) and markdown(a) == markdown(b)
        ledger_is_what_every_fact_makes(a, tmp_path)
