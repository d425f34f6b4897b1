"""`mem reflect` (entity pages and journal): hand-written text is sacred, runs are idempotent and exclusive."""

import json
import re

import pytest
from conftest import mem_env, run_json, run_mem, write

from memtool import blocks
from memtool.document import split_lines
from memtool.memory import Memory
from memtool.workspace import Workspace


def markdown(ws):
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*.md") if ".memory" not in p.parts}


@pytest.fixture
def mem(example_ws):
    return Memory(Workspace(example_ws), embedder="none")


def test_pages_get_blocks_that_cite_real_lines(mem, example_ws):
    result = mem.reflect(force=True)
    assert result["changed"] and {p["entity"] for p in result["pages"]} >= {"Peter", "warelay", "Tom"}
    page = (example_ws / "bank/entities/Peter.md").read_text(encoding="utf-8")
    block = blocks.find(page, "entity")
    assert block and not block.edited
    cites = re.findall(r"— \[([^\]]+)#L(\d+)(?:-L(\d+))?\]\(<?([^)>]+)>?\)", block.body)
    assert len(cites) >= 8
    for path, a, _, link in cites:
        lines = split_lines((example_ws / path).read_text(encoding="utf-8"))
        assert lines[int(a) - 1].strip(), (path, a)
        assert (example_ws / "bank/entities" / link).resolve() == (example_ws / path).resolve()  # an editor can follow it
    assert "bank/journal.md" not in block.body
    journal = (example_ws / "bank/journal.md").read_text(encoding="utf-8")
    assert "— reflect" in journal and "Peter" in journal


def test_hand_written_text_survives_ten_runs(mem, example_ws):
    path = example_ws / "bank/entities/Peter.md"
    original = path.read_text(encoding="utf-8")
    for i in range(10):
        mem.retain(f"W @Peter: fact number {i} for the page", None)
        mem.reflect(force=True)
        text = path.read_text(encoding="utf-8")
        block = blocks.find(text, "entity")
        assert text[: block.start] == original + "\n", "text before the block is untouched"
        assert text[block.end:] == ""
    assert "fact number 9" in blocks.find(path.read_text(encoding="utf-8"), "entity").body


def test_second_run_changes_nothing_and_dry_run_writes_nothing(mem, example_ws):
    mem.reflect(force=True)
    before = markdown(example_ws)
    again = mem.reflect(force=True)
    assert not again["changed"] and markdown(example_ws) == before
    mem.retain("W @Tom: Tom opened a fourth store.", None)
    before = markdown(example_ws)
    dry = mem.reflect(dry_run=True, force=True)
    assert dry["entry"].startswith("## ") and "[DRY RUN]" in dry["entry"] and "Tom" in dry["entry"]
    assert markdown(example_ws) == before


def test_edits_inside_a_block_are_kept_until_force(mem, example_ws):
    mem.reflect(force=True)
    path = example_ws / "bank/entities/Tom.md"
    text = path.read_text(encoding="utf-8")
    block = text.index("<!-- memtool:begin entity")
    first_fact = text.index("\n- ", block) + 1  # a line inside the generated block
    edited = text[:first_fact] + "- (my best client) " + text[first_fact + 2:]
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    mem.retain("W @Tom: Tom switched to Zammad cloud.", None)
    result = mem.reflect(force=True)
    assert {p["path"]: p["action"] for p in result["pages"]}["bank/entities/Tom.md"] == "skipped"
    assert path.read_text(encoding="utf-8") == edited
    proc = run_mem("reflect", "--force", cwd=example_ws)
    assert proc.returncode == 0 and "left alone" in proc.stderr
    forced = mem.reflect(force=True, overwrite_edits=True)
    assert {p["path"]: p["action"] for p in forced["pages"]}["bank/entities/Tom.md"] == "update"
    assert "Zammad cloud" in path.read_text(encoding="utf-8")
    assert list((example_ws / ".memory" / "backups").glob("bank/entities/Tom.md.*")), "replaced text is backed up"


def test_generated_blocks_are_not_indexed(mem):
    mem.reflect(force=True)
    hits = mem.recall("Fastest code reviewer", k=20).results
    assert hits and all(not (h["source"].startswith("bank/entities/Peter.md") and "Generated" in h["content"]) for h in hits)
    assert all("— `memory/" not in h["content"] for h in hits)


def test_concurrent_runs_never_interleave(example_ws):
    ws = Workspace(example_ws)
    with ws.lock("reflect"):
        proc, data = run_json("reflect", "--force", cwd=example_ws, env=mem_env())
    assert proc.returncode == 7 and "another mem reflect or mem forget is running" in proc.stderr
    assert data["error"] == "Busy"
    assert run_mem("reflect", "--force", cwd=example_ws).returncode == 0


def test_new_entities_get_new_pages(example_ws, mem):
    write(example_ws, "memory/2026-11-30.md", "# 2026-11-30\n## Retain\n- W @Zoe-K: Zoe joined the warelay team.\n"
                                              "- O(c=0.6) @Zoe-K: Zoe writes very clear tickets.\n")
    result = mem.reflect(force=True)
    assert {p["path"]: p["action"] for p in result["pages"]}["bank/entities/Zoe-K.md"] == "create"
    text = (example_ws / "bank/entities/Zoe-K.md").read_text(encoding="utf-8")
    assert text.startswith("# Zoe-K\n") and "c=0.60" in text


def test_opinion_trajectory_follows_the_rule_across_runs(tmp_path):
    from memtool.reflect.opinions import update

    ws = tmp_path / "w"
    write(ws, "memory/2026-10-01.md", "# 2026-10-01\n## Retain\n- O(c=0.9) @Rex: Rex prefers morning walks in the park.\n"
                                      "- W @Rex: Rex is a beagle.\n")
    mem = Memory(Workspace(ws), embedder="none")
    mem.reflect(force=True)
    [o] = mem.opinions(entity="Rex")["opinions"]
    assert o["confidence"] == 0.9 and o["trend"] == "→"
    write(ws, "memory/2026-10-02.md", "# 2026-10-02\n- @Rex loved his morning walks in the park again.\n")
    write(ws, "memory/2026-10-03.md", "# 2026-10-03\n- @Rex morning walks in the park: happiest dog.\n")
    write(ws, "memory/2026-10-04.md", "# 2026-10-04\n- @Rex did not enjoy the morning walks in the park today.\n")
    result = mem.reflect(force=True)
    [o] = mem.opinions(entity="Rex")["opinions"]
    assert abs(o["confidence"] - round(update(0.9, 2, 1), 3)) < 1e-9 and len(o["contradicting"]) == 1
    assert result["opinion_moves"] and result["opinion_moves"][0]["from"] == 0.9
    assert "moved 0.90 →" in (ws / "bank/journal.md").read_text(encoding="utf-8")
    write(ws, "memory/2026-10-05.md", "# 2026-10-05\n## Retain\n- O(c=0.4) @Rex: Rex prefers evening walks in the park now.\n")
    mem.reflect(force=True)
    [o] = [x for x in mem.opinions(entity="Rex")["opinions"] if "evening" in x["statement"]]
    assert o["anchor"] == 0.4 and o["confidence"] == 0.4, "a person's new number is an anchor"
    assert "c=0.40" in (ws / "bank/opinions.md").read_text(encoding="utf-8")


def test_kill_during_a_run_leaves_files_whole_and_a_rerun_finishes(example_ws):
    import signal
    import subprocess
    import sys
    import time

    for i in range(28):  # enough entities that a run takes a moment
        write(example_ws, f"memory/2026-09-{1 + i % 28:02d}.md",
              "".join(f"- @Person{i}-{j} met @Person{i}-{(j + 1) % 3} about project {j}.\n" for j in range(3)))
    for delay in (0.3, 0.6, 0.9):
        proc = subprocess.Popen([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=example_ws, env=mem_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for page in (example_ws / "bank" / "entities").glob("*.md"):
            text = page.read_text(encoding="utf-8")
            if "memtool:begin" in text:
                block = blocks.find(text, "entity")
                assert block is not None and not block.edited, f"half-written {page.name}"
    proc, data = run_json("reflect", "--force", cwd=example_ws)
    assert proc.returncode == 0, proc.stderr
    again = run_json("reflect", "--force", cwd=example_ws)[1]
    assert not again["changed"]
    assert "Person3-1" in (example_ws / "bank/entities/Person3-1.md").read_text(encoding="utf-8")


def test_journal_suggests_but_never_writes_memory_md(mem, example_ws):
    before = (example_ws / "memory.md").read_bytes()
    result = mem.reflect(force=True)
    assert result["suggestions"] and all(s["source"] for s in result["suggestions"])
    assert "Suggested for memory.md" in (example_ws / "bank/journal.md").read_text(encoding="utf-8")
    assert (example_ws / "memory.md").read_bytes() == before


def test_every_opinion_forms_a_thread_not_only_the_newest_thousand(tmp_path):
    ws = tmp_path / "w"
    lines = "\n".join(f"- O(c=0.6) @Owner{i}: Likes the colour number {i} best." for i in range(1100))
    write(ws, "memory/2025-01-01.md", "# 2025-01-01\n\n## Retain\n" + lines + "\n")
    write(ws, "memory/2025-02-01.md", "# 2025-02-01\n\n## Retain\n- O(c=0.7) @Late: Prefers tea.\n")
    mem = Memory(Workspace(ws), embedder="none")
    threads = mem.opinion_threads()
    assert len(threads) == 1101
    assert {o.entity for o in threads} >= {"Owner0", "Owner1099", "Late"}
    mem.close()


def test_14_10_reflect_output_reads_right(tmp_path):
    from conftest import mem_env, run_json, write

    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-01.md", "## Retain\n- O(c=0.9) @Peter: Peter likes green tea a lot.\n"
                                      "- W @Peter: Peter lives in Lisbon.\n- W [[Brandt Logistik]]: Ships from Leipzig.\n")
    write(ws, "memory/2026-11-05.md", "## Retain\n- O(c=0.3) @Peter: Peter likes green tea a lot less now.\n"
                                      "- W @Peter: Peter flies to Porto on Dec 18, 2026.\n"
                                      "- O(c=0.95) @Peter: Peter prefers short WhatsApp messages.\n"
                                      "- W @Brandt-Logistik: Brandt Logistik has a new depot.\n"
                                      "- W @Brandt-Logistik: Brandt Logistik works with Peter.\n")
    write(ws, "memory/2026-11-06.md", "## Retain\n- W @Peter: Peter bought a bike.\n")
    write(ws, "bank/entities/Deal.md", "---\ntrust: legal\n---\n# Deal\n")
    write(ws, "memory/2026-11-07.md", "---\ntrust: legal\n---\n## Retain\n- W @Deal: Clause 4 signed.\n"
                                      "- W @Deal: Clause 5 open.\n- W @Deal: Clause 6 struck.\n")
    env = mem_env(TZ="Europe/Berlin")
    proc, first = run_json("-w", ws, "reflect", "--force", env=env)
    assert proc.returncode == 0, proc.stderr
    peter = (ws / "bank/entities/Peter.md").read_text(encoding="utf-8")
    assert "`mem reflect --overwrite-edits`" in peter and "until `mem reflect --force`" not in peter
    facts = [l for l in peter.splitlines() if l.startswith("- 2026-")]
    assert [l[2:12] for l in facts] == sorted((l[2:12] for l in facts), reverse=True)  # by the day written
    assert any(l.startswith("- 2026-11-05 (about 2026-12-18): ") for l in facts), facts
    older = next(l for l in peter.splitlines() if "likes green tea a lot." in l and "less" not in l)
    assert "c=0.90" in older  # a replaced opinion keeps its own c, not the newer bullet's
    opinions = (ws / "bank/opinions.md").read_text(encoding="utf-8")
    assert "2026-12-18" not in opinions and "last updated 2026-11-05" in opinions
    brandt = next((ws / "bank/entities").glob("Brandt*.md")).read_text(encoding="utf-8")
    assert "Brandt-Logistik (" not in brandt and "Brandt Logistik (" not in brandt  # not its own relative
    entry = first["entry"]
    assert entry.startswith("## 2026-") and ("CET" in entry.splitlines()[0] or "+0100" in entry.splitlines()[0])
    assert "edited by hand" not in entry and "legal page(s) alone" in entry
    assert "Peter prefers short WhatsApp messages." in entry
    write(ws, "memory/2026-11-08.md", "## Retain\n- W @Peter: Peter sold the bike.\n")
    _, second = run_json("-w", ws, "reflect", "--force", env=env)
    assert "Peter prefers short WhatsApp messages." not in second["entry"]  # suggested once, then counted
    assert "earlier suggestion(s) for memory.md still apply" in second["entry"]
    _, third = run_json("-w", ws, "reflect", "--force", env=env)
    assert not third["changed"] and all(p["action"] in ("unchanged", "skipped") for p in third["pages"])


def test_14_10_quotes_end_at_a_whole_word():
    from memtool.reflect.journal import quote

    text = "Tom called about the January workshop and asked for a retainer for the whole of 2027"
    quoted = quote(text, 40)
    assert quoted.endswith("…") and len(quoted) <= 41 and text.startswith(quoted[:-1]) and text[len(quoted) - 1] == " "
    assert quote("short", 40) == "short"


def _obsidian_unresolved(ws) -> list[str]:
    """Obsidian's rule: [[Target]] resolves to a file named Target.md anywhere in the vault (any case)."""
    from memtool.retain import wiki_links

    names = {p.stem.casefold() for p in ws.rglob("*.md") if ".memory" not in p.parts}
    return [t for p in ws.rglob("*.md") if ".memory" not in p.parts
            for t in wiki_links(p.read_text(encoding="utf-8")) if t.split("/")[-1].casefold() not in names]


def test_14_8_new_pages_are_named_as_links_are_written(tmp_path):
    from conftest import run_json, write

    ws = tmp_path / "vault"
    write(ws, "memory/2026-11-01.md", "- Call with [[Anna Müller]] about the lease.\n- [[Anna Müller]] sent the contract.\n"
                                      "- [[Brandt Logistik]] ships Tuesday.\n- Invoice for [[Brandt Logistik]].\n")
    assert sorted(_obsidian_unresolved(ws)) == ["Anna Müller", "Brandt Logistik"]
    proc, data = run_json("-w", ws, "reflect", "--force")
    assert proc.returncode == 0, proc.stderr
    created = sorted(p["path"] for p in data["pages"] if p["action"] == "create" and "entities" in p["path"])
    assert created == ["bank/entities/Anna Müller.md", "bank/entities/Brandt Logistik.md"]
    assert (ws / "bank/entities/Anna Müller.md").read_text(encoding="utf-8").startswith("# Anna Müller\n")
    assert _obsidian_unresolved(ws) == []  # every link people wrote now opens its page
    _, again = run_json("-w", ws, "reflect", "--force")
    assert all(p["action"] == "unchanged" for p in again["pages"]), again["pages"]  # settled after one run
    _, check = run_json("-w", ws, "check")
    assert not [d for d in check["diagnostics"] if d["code"] == "link-by-alias"]


def test_14_8_a_link_that_only_an_alias_resolves_is_reported(example_ws):
    from conftest import run_json

    _, check = run_json("-w", example_ws, "check")
    found = [d for d in check["diagnostics"] if d["code"] == "link-by-alias"]
    assert [(d["path"], d["line"]) for d in found] == [("memory/2026-10-12.md", 14)]
    assert "Anna-Mueller.md" in found[0]["message"] and "'Anna Müller.md'" in found[0]["message"]


def test_an_entity_whose_name_is_too_long_for_a_file_name_gets_no_page_and_reflect_completes(tmp_path):
    """@ZZZ… (300 characters) ended every `mem reflect` with 'File name too long' (exit 4) after writing
    some pages and before the journal: one name stopped the nightly run for good."""
    ws = tmp_path / "ws"
    long_name, accented = "Z" * 300, "é" * 130  # 300 and 260 bytes
    write(ws, "memory/2026-11-20.md", "## Retain\n" + "".join(
        f"- W @{long_name}: long {n}.\n- W @{accented}: accented {n}.\n- W @Anna: short {n}.\n" for n in range(3)))
    proc = run_mem("-w", ws, "reflect", "--force", check=0)
    assert "too long for a file name" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in (ws / "bank" / "entities").iterdir()) == ["Anna.md"]
    journal = (ws / "bank" / "journal.md").read_text(encoding="utf-8")
    assert "Made no page for 2 entities whose name is too long for a file name" in journal
    assert long_name not in journal  # named, shortened


_SAVE_DURING_RUN = """
import pathlib, runpy, sys
from memtool.reflect import pages

ws = pathlib.Path(sys.argv[1])
planned = pages.core_suggestions  # called once every page is planned, before any is written


def a_person_saves_meanwhile(*args, **kw):
    out = planned(*args, **kw)
    tom = ws / "bank/entities/Tom.md"
    tom.write_text(tom.read_text(encoding="utf-8") + "My line, saved while reflect ran.\\n", encoding="utf-8")
    (ws / "bank/entities/Nadia.md").write_text("# Nadia\\n\\nMy own page, made while reflect ran.\\n", encoding="utf-8")
    return out


pages.core_suggestions = a_person_saves_meanwhile
sys.argv = ["mem", "-w", str(ws), "reflect", "--force", "--json"]
runpy.run_module("memtool", run_name="__main__")
"""


def test_a_page_saved_or_created_while_reflect_runs_is_kept_and_named(example_ws, tmp_path):
    """A person saves an entity page, and creates another, after reflect planned them and before it
    writes: both saves stand byte for byte, the run names the pages, and the next run writes its block
    around the person's text."""
    import json
    import subprocess
    import sys

    run_mem("reflect", "--force", cwd=example_ws, check=0)
    write(example_ws, "memory/2026-12-01.md", "## Retain\n- W @Tom: Tom opened a fourth store in Gohlis.\n"
          "- W @Nadia: Nadia joined Hoshi Labs.\n- B @Nadia: I met Nadia at the meetup.\n")
    script = tmp_path / "save_during_run.py"
    script.write_text(_SAVE_DURING_RUN, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), str(example_ws)], capture_output=True, text=True,
                          env=mem_env(), timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    tom, nadia = example_ws / "bank/entities/Tom.md", example_ws / "bank/entities/Nadia.md"
    assert tom.read_text(encoding="utf-8").endswith("My line, saved while reflect ran.\n")
    assert "fourth store" not in tom.read_text(encoding="utf-8")
    assert nadia.read_text(encoding="utf-8") == "# Nadia\n\nMy own page, made while reflect ran.\n"
    actions = {p["path"]: (p["action"], p["reason"]) for p in json.loads(proc.stdout)["pages"]}
    assert actions["bank/entities/Tom.md"][0] == actions["bank/entities/Nadia.md"][0] == "skipped", actions
    assert "saved while mem reflect ran" in proc.stderr and "bank/entities/Nadia.md" in proc.stderr
    assert "saved while this run went on" in (example_ws / "bank/journal.md").read_text(encoding="utf-8")
    run_mem("reflect", "--force", cwd=example_ws, check=0)
    text = tom.read_text(encoding="utf-8")
    assert "fourth store" in text and "My line, saved while reflect ran.\n" in text
    assert nadia.read_text(encoding="utf-8").startswith("# Nadia\n\nMy own page, made while reflect ran.\n")
    assert "Nadia joined Hoshi Labs" in nadia.read_text(encoding="utf-8")


def test_markers_shown_in_a_code_fence_are_text_and_broken_markers_stop_the_page(example_ws):
    """A person shows the block format in a code fence: reflect writes its real block, never the
    example. A half-deleted marker (an end line gone) leaves the page alone, loudly, even with
    --overwrite-edits: no second block, no text swallowed."""
    run_mem("reflect", "--force", cwd=example_ws, check=0)
    tom = example_ws / "bank/entities/Tom.md"
    example = ("How the block looks:\n\n```markdown\n<!-- memtool:begin entity -->\nmy example\n"
               "<!-- memtool:end entity -->\n```\n\n")
    text = tom.read_text(encoding="utf-8").replace("# Tom\n", "# Tom\n\n" + example, 1)
    tom.write_text(text, encoding="utf-8")
    write(example_ws, "memory/2026-12-01.md", "## Retain\n- W @Tom: Tom opened a fourth store in Gohlis.\n"
          "- W @Kenji: Kenji moved to Osaka.\n")
    run_mem("reflect", "--force", cwd=example_ws, check=0)
    after = tom.read_text(encoding="utf-8")
    assert example in after and after.count("memtool:begin entity") == 2 and "fourth store" in after
    assert not blocks.find(after, "entity").edited
    assert any("my example" in h["content"] for h in run_json("recall", "my example", "--min-score", "0",
                                                                 cwd=example_ws)[1]["results"])

    kenji = example_ws / "bank/entities/Kenji.md"
    broken = kenji.read_text(encoding="utf-8").replace("<!-- memtool:end entity -->\n", "") + "My note below.\n"
    kenji.write_text(broken, encoding="utf-8")
    for args in (["--force"], ["--force", "--overwrite-edits"]):
        proc = run_mem("reflect", *args, cwd=example_ws, check=0)
        assert kenji.read_text(encoding="utf-8") == broken
        assert "bank/entities/Kenji.md" in proc.stderr and "has no '<!-- memtool:end entity -->' line" in proc.stderr
    assert "cannot place their generated block" in (example_ws / "bank/journal.md").read_text(encoding="utf-8")

    tom = example_ws / "bank/entities/Tom.md"  # no block, and a code fence never closed: a block added would be code
    open_fence = "# Tom\n\nMy snippet:\n\n```\nnever closed\n"
    tom.write_text(open_fence, encoding="utf-8")
    for _ in range(2):
        proc = run_mem("reflect", "--force", cwd=example_ws, check=0)
        assert tom.read_text(encoding="utf-8") == open_fence and "never closed" in proc.stderr, proc.stderr


def test_a_disk_that_fills_during_reflect_is_one_error_and_the_next_run_finishes(example_ws, tmp_path, small_disk):
    """The disk fills (or a file size limit is hit) part way through a run: one `error:`/`hint:` and
    exit 4, never a traceback, never "local.sqlite is damaged" (moving it aside would throw away
    usage and decisions); every page old or new; with space again, the next run writes what a run
    with space wrote."""
    import os
    import resource
    import shutil
    import subprocess
    import sys

    reference = tmp_path / "reference"
    shutil.copytree(example_ws, reference)
    run_mem("reflect", "--force", cwd=reference, check=0)
    want = {k: v for k, v in markdown(reference).items() if k != "bank/journal.md"}
    mnt = small_disk
    for free_kib in (32, 128, 600):
        ws = mnt / "ws"
        shutil.rmtree(ws, ignore_errors=True)
        shutil.copytree(example_ws, ws)
        run_mem("index", cwd=ws, check=0)
        st = os.statvfs(mnt)
        with open(mnt / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kib * 1024))
        proc = run_mem("reflect", "--force", cwd=ws)
        assert proc.returncode in (0, 4) and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        if proc.returncode:
            assert "error:" in proc.stderr and "hint:" in proc.stderr and "damaged" not in proc.stderr, proc.stderr
        names = {"bank/opinions.md": "opinions", "bank/world.md": "world", "bank/experience.md": "experience"}
        for path, data in markdown(ws).items():
            block = blocks.find(data.decode(), names.get(path, "entity"))
            assert block is None or not block.edited, f"half-written {path}"
        (mnt / "filler").unlink()
        run_mem("reflect", "--force", cwd=ws, check=0)
        got = {k: v for k, v in markdown(ws).items() if k != "bank/journal.md"}
        assert got == want, sorted(k for k in got if got[k] != want.get(k))
    ws = tmp_path / "limited"
    shutil.copytree(example_ws, ws)
    run_mem("index", cwd=ws, check=0)
    for limit in (60_000, 250_000):
        proc = subprocess.run([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=ws, capture_output=True,
                              text=True, env=mem_env(), timeout=120,
                              preexec_fn=lambda n=limit: resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)))
        assert proc.returncode == 4 and "Traceback" not in proc.stderr and "damaged" not in proc.stderr, proc.stderr[-3000:]
        assert "error:" in proc.stderr and "hint:" in proc.stderr, proc.stderr


def test_two_entities_whose_names_make_one_file_name_get_one_page_and_a_reason(tmp_path):
    """`[[Haus:Nord]]` and `[[Haus?Nord]]` both make `bank/entities/Haus-Nord.md`: the second plan wrote
    over the first in the same run; now the first keeps the page, the second is named as left out, and
    runs settle (nothing changes on the next one)."""
    ws = tmp_path / "ws"
    write(ws, "memory/2026-11-10.md", "- [[Haus:Nord]] roof repaired by Kestrel GmbH.\n"
                                      "- [[Haus:Nord]] boiler checked.\n"
                                      "- [[Haus?Nord]] the tenant Plover moved out.\n"
                                      "- [[Haus?Nord]] keys returned by Plover.\n")
    proc, data = run_json("reflect", "--force", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    plans = [(p["entity"], p["action"], p["reason"]) for p in data["pages"] if p["path"] == "bank/entities/Haus-Nord.md"]
    assert [a for _, a, _ in plans] == ["create", "skipped"], plans
    assert "another entity's page has the same file name" in plans[1][2] and "saved while" not in proc.stderr
    text = (ws / "bank/entities/Haus-Nord.md").read_text(encoding="utf-8")
    owner = plans[0][0]
    assert ("Kestrel" in text) == (owner == "Haus:Nord") and ("Plover" in text) == (owner == "Haus?Nord"), text
    assert "whose file name another entity's page has" in (ws / "bank/journal.md").read_text(encoding="utf-8")
    for _ in range(2):
        run_mem("reflect", "--force", cwd=ws, check=0)
    assert not run_json("reflect", "--force", cwd=ws)[1]["changed"]


@pytest.mark.parametrize("args", [[], ["--dry-run"], ["--force"], ["--json"]])
def test_a_since_that_is_no_date_is_a_usage_error_before_anything_runs(tmp_path, args):
    """`mem reflect --since garbage` answered "not yet" (exit 0) when the gates held, so the typo went
    unnoticed until a later run failed on it; with --force, consolidation ran first. Now: exit 2,
    the reason and a hint, and nothing written."""
    write(tmp_path, "memory/2026-11-02.md", "# 2026-11-02\n## Retain\n- W @Peter: Moved to Lisbon.\n"
                                            "- W @Peter: Works at the harbour.\n- W @Peter: Likes tea.\n")
    env = mem_env(MEM_EMBEDDER="none")
    run_mem("reflect", "--force", cwd=tmp_path, env=env, check=0)
    before = markdown(tmp_path)
    proc = run_mem("reflect", "--since", "garbage", *args, cwd=tmp_path, env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "--since 'garbage' is not a date or duration" in proc.stderr and "hint:" in proc.stderr
    assert markdown(tmp_path) == before
    if "--json" in args:
        assert json.loads(proc.stdout)["error"] == "UsageError"
