"""Issue 19 item 4: `term_docs` keeps FTS5's per-term document counts in the index, so recall's
rarity lookups are one primary-key read instead of a walk of the term's posting list."""

import os
import sqlite3

from conftest import edit, run_json, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtool.document import parse
from memtool.indexer import PARALLEL_MIN_FILES, fact_rows
from memtool.memory import Memory
from memtool.store import SCHEMA_VERSION
from memtool.workspace import Workspace


def vocabulary(conn) -> dict[str, int]:
    """What FTS5 itself says: facts holding each term, over both columns of `facts_fts`."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.check_terms USING fts5vocab(main, facts_fts, row)")
    return dict(conn.execute("SELECT term, doc FROM temp.check_terms"))


def kept(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT term, n FROM term_docs"))


def open_mem(ws) -> Memory:
    return Memory(Workspace(ws), embedder="none")


# Words whose FTS5 tokens are not simply the analyser's space-separated terms (NFKD gives `1⁄2` for
# `½`, split by FTS5 at the fraction slash), CJK bigrams, emoji, Cyrillic, Cherokee (whose casefold
# is upper-case), a German compound, and plain words shared by many lines.
WORDS = ["Häuser", "Haus", "Straße", "½", "①", "ﬁsh", "東京都庁", "🎉", "Москва", "ᏣᎳᎩ", "İstanbul", "ǅemal",
         "Steuerberaterin", "running", "issue", "server", "meeting", "the", "42", "x²", "naïve", "Ωmega"]
LINE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(lambda ws: "- " + " ".join(ws))
FILES = ["memory/2026-01-01.md", "memory/2026-01-02.md", "bank/entities/Anna.md", "bank/world.md"]
OPS = st.lists(st.tuples(st.sampled_from(["write", "append", "delete"]), st.sampled_from(FILES),
                         st.lists(LINE, max_size=5), st.sampled_from(["", "## Kontext ½ Häuser\n", "## 東京 issue\n"])),
               min_size=1, max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_4_term_docs_equal_the_fts5_vocabulary_after_random_edits(tmp_path_factory, ops):
    ws = tmp_path_factory.mktemp("df")
    mem = open_mem(ws)
    for op, rel, lines, heading in ops:
        edit(ws, op, rel, heading + "".join(f"{line}\n" for line in lines))
        mem.index()
        conn = mem.store.conn
        assert kept(conn) == vocabulary(conn)
        assert mem.store._fact_count() == conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
        terms = sorted(vocabulary(conn)) + ["absent", "1⁄2", "zz"]
        assert mem.store.term_counts(terms) == {t: vocabulary(conn).get(t, 0) for t in terms}
    mem.close()


def test_4_a_bulk_build_and_an_interrupted_one_count_like_fts5(tmp_path):
    ws = tmp_path / "w"
    for i in range(PARALLEL_MIN_FILES + 1):  # enough files for the bulk path (one FTS build at the end)
        write(ws, f"memory/2026-02-{1 + i % 28:02d}-{i}.md", f"- Eintrag {i} über Häuser ½ 東京 and issue {i % 5}\n")
    mem = open_mem(ws)
    mem.index()
    conn = mem.store.conn
    assert kept(conn) == vocabulary(conn) and kept(conn)["issue"] == PARALLEL_MIN_FILES + 1

    rel = "memory/2026-03-01.md"
    write(ws, rel, "- Pelikan am See\n")
    parsed = parse(rel, "- Pelikan am See\n")
    st_ = (ws / rel).stat()
    with mem.store.transaction():  # what a bulk run leaves behind when killed before its FTS build
        mem.store.clear()
        mem.store.begin_bulk()
        mem.store.put_file(parsed, st_.st_size, st_.st_mtime_ns, st_.st_ctime_ns, "x", "ok", fact_rows(parsed), fts=False)
    assert kept(conn) == vocabulary(conn) == {}  # nothing searchable yet, and nothing counted
    mem.index()
    assert kept(conn) == vocabulary(conn) and kept(conn)["pelikan"] == 1
    mem.close()


def test_4_a_write_rolled_back_leaves_no_count_behind(tmp_path):
    ws = tmp_path / "w"
    write(ws, "memory/2026-01-01.md", "- Walross im Zoo\n- Walross am Strand\n")
    mem = open_mem(ws)
    mem.index()
    store, before = mem.store, kept(mem.store.conn)
    try:
        with store.transaction():
            store.remove_file("memory/2026-01-01.md")
            raise RuntimeError("stopped half-way")
    except RuntimeError:
        pass
    assert kept(store.conn) == before == vocabulary(store.conn) and before["walross"] == 2
    write(ws, "memory/2026-01-02.md", "- Walross im Eis\n")
    mem.index()
    assert kept(store.conn) == vocabulary(store.conn) and kept(store.conn)["walross"] == 3
    mem.close()


def test_4_an_index_of_schema_6_is_upgraded_with_a_notice_and_not_re_read(example_ws):
    mem = open_mem(example_ws)
    mem.index()
    conn = mem.store.conn
    conn.execute("DROP TABLE term_docs")  # what schema 6 had: no such table
    conn.execute("PRAGMA user_version = 6")
    mem.close()
    again = open_mem(example_ws)
    assert again.store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 8
    assert f"upgraded the index from schema 6 to {SCHEMA_VERSION}" in again.notices
    assert kept(again.store.conn) == vocabulary(again.store.conn) and kept(again.store.conn)
    assert again.index().parsed == 0  # counted from the full-text index: no file read again
    again.close()


def test_4_a_missing_term_table_is_counted_again_and_said(example_ws):
    run_json("-w", example_ws, "index")
    index = example_ws / ".memory" / "index.sqlite"
    with sqlite3.connect(index) as conn:
        expected = vocabulary(conn)
        conn.execute("DROP TABLE term_docs")
    proc, data = run_json("-w", example_ws, "recall", "Kaution")
    assert proc.returncode == 0, proc.stderr
    assert any("term_docs) was missing; counted them again" in w for w in data["warnings"]), data["warnings"]
    with sqlite3.connect(index) as conn:
        assert kept(conn) == expected


def test_4_term_counts_out_of_step_are_never_a_silent_zero(tmp_path):
    ws = tmp_path / "w"
    write(ws, "memory/2026-01-01.md", "- Kranich im Moor\n- Kranich am Teich\n- Reiher am Teich\n")
    mem = open_mem(ws)
    mem.index()
    answer = [r["source"] for r in mem.recall("Kranich Teich", mode="lexical").results]
    conn = mem.store.conn
    conn.execute("DELETE FROM term_docs WHERE term = 'kranich'")  # damaged by hand
    mem.close()

    mem = open_mem(ws)
    assert mem.store.term_counts(["kranich", "teich"]) == {"kranich": 2, "teich": 2}
    assert any("out of step" in n and "mem index --rebuild" in n for n in mem.notices)
    result = mem.recall("Kranich Teich", mode="lexical")
    assert [r["source"] for r in result.results] == answer
    # Too low a count is found when facts leave: it would go below zero; counted again, and said.
    conn = mem.store.conn
    conn.execute("UPDATE term_docs SET n = 1 WHERE term = 'teich'")
    os.unlink(ws / "memory/2026-01-01.md")
    mem.index()
    assert kept(conn) == vocabulary(conn) == {}
    assert any("were out of step with its full-text index; counted them again" in n for n in mem.notices)
    mem.close()


def test_r27_a_memtool_that_does_not_count_terms_cannot_write_a_schema_7_index(tmp_path):
    """An older memtool's process still running after an upgrade (a `mem watch` started before
    `pip install -U`) would go on writing facts without counting their terms: counts too high are
    never noticed, and a word forgotten by `mem forget` would stay in the file as a term_docs row.
    A connection without memtool's function (Python's own sqlite3 here, like an older memtool's)
    cannot write a file's row; memtool's own writes go on."""
    ws = tmp_path / "w"
    write(ws, "memory/2026-01-01.md", "- Pinguin am Strand\n")
    write(ws, "memory/2026-01-02.md", "- Walross im Zoo\n")
    run_json("-w", ws, "index", "--json")
    old = sqlite3.connect(ws / ".memory" / "index.sqlite", isolation_level=None)
    try:
        for sql in ("DELETE FROM files WHERE path = 'memory/2026-01-01.md'",
                    "INSERT INTO files(path, size, mtime_ns, hash, status, n_records)"
                    " VALUES ('memory/x.md', 1, 1, 'h', 'ok', 0)"):
            try:
                old.execute(sql)
            except sqlite3.OperationalError as exc:
                assert "memtool_counts_terms" in str(exc)
            else:
                raise AssertionError(f"an older writer's {sql.split()[0]} went through")
    finally:
        old.close()
    (ws / "memory/2026-01-01.md").unlink()
    write(ws, "memory/2026-01-03.md", "- Kranich im Moor\n")
    run_json("-w", ws, "index", "--json")
    with open_mem(ws) as mem:
        conn = mem.store.conn
        assert kept(conn) == vocabulary(conn) and "pinguin" not in kept(conn) and kept(conn)["kranich"] == 1


def test_r27_a_writer_committing_during_a_lookup_is_not_counts_out_of_step(tmp_path):
    """A recall looking up a word that `mem watch` is committing at that moment (a note saved and
    recalled at once) read term_docs before the commit and the full-text index after it, and said
    the counts were out of step ("run 'mem index --rebuild'"). Both reads now see one moment."""
    import threading

    ws = tmp_path / "w"
    write(ws, "memory/2026-01-01.md", "- Kranich im Moor\n")
    with open_mem(ws) as writer:
        writer.index()
    words = [f"zbig{i}niew" for i in range(40)]
    done = threading.Event()

    def write_words():
        with open_mem(ws) as mem:
            for i, word in enumerate(words):
                write(ws, f"memory/2026-02-{i % 28 + 1:02d}.md", f"- {word} kam heute\n")
                mem.index()
        done.set()

    with open_mem(ws) as reader:
        thread = threading.Thread(target=write_words)
        thread.start()
        try:
            while not done.is_set():
                reader.store.term_counts(words)
        finally:
            thread.join()
        assert not [n for n in reader.store.notices if "out of step" in n], reader.store.notices
