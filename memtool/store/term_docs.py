"""`term_docs`: how many facts hold each term of the full-text index, kept by the writer.

FTS5 answers this too (its `fts5vocab` 'row' table), but by walking the term's whole posting list:
41–54 ms of CPU (up to ~200 ms of wall on a busy machine) of a one-shot recall at 10^6 facts, where
a common word is in ~15 % of them (docs/benchmarks-history.md, "Term counts kept in the index"). The table
holds exactly what that vocabulary says (`doc` of every term over `facts_fts`'s two columns), one
primary-key lookup a term.

The facts' rows enter and leave the full-text index per file; the same rows go into two scratch
FTS5 tables of the connection (`temp`, contentless, the same tokenizer: FTS5 itself splits the
text, so the counts cannot differ from its own), and before a transaction commits the scratch
tables' vocabularies are added to and taken from `term_docs` in one pass (`fold`). Temp tables
roll back with the transaction, so an aborted write leaves no delta behind. A full build counts
the whole vocabulary once instead (`schema.count_term_docs`).
"""

from __future__ import annotations

from memtool.store.schema import FTS_TOKENIZE

_SCRATCH = [f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{t} USING fts5(terms, ctx_terms, content='', detail='none',"
            f" tokenize='{FTS_TOKENIZE}')" for t in ("df_added", "df_removed")]
_SCRATCH += [f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{t}_terms USING fts5vocab(temp, {t}, row)"
             for t in ("df_added", "df_removed")]
_UPSERT = ("INSERT INTO term_docs(term, n) SELECT term, {sign}doc FROM temp.{table}_terms WHERE true"
           " ON CONFLICT(term) DO UPDATE SET n = n + excluded.n")


class TermCountsOutOfStep(Exception):
    """`term_docs` disagreed with the full-text index (a count went below zero)."""


class TermDocs:
    """The deltas of one writing connection, folded into `term_docs` before each commit."""

    def __init__(self, conn):
        self.conn = conn
        self.pending = False  # rows went into the scratch tables in this transaction

    def _scratch(self) -> None:
        if not self.pending:  # made again after a rollback, which takes back their creation too
            for sql in _SCRATCH:
                self.conn.execute(sql)
            self.pending = True

    def added(self, path: str) -> None:
        """The facts of `path`, just put into the full-text index."""
        self._scratch()
        self.conn.execute("INSERT INTO temp.df_added(terms, ctx_terms) SELECT terms, ctx_terms FROM facts WHERE path = ?",
                          (path,))

    def removed(self, path: str) -> None:
        """The facts of `path`, about to leave the full-text index."""
        self._scratch()
        self.conn.execute("INSERT INTO temp.df_removed(terms, ctx_terms) SELECT terms, ctx_terms FROM facts"
                          " WHERE path = ?", (path,))

    def fold(self) -> None:
        """Add the scratch tables' counts to `term_docs` (dropping terms no fact holds any more) and
        empty them. Raises TermCountsOutOfStep when a count would go below zero."""
        if not self.pending:
            return
        self.conn.execute(_UPSERT.format(sign="", table="df_added"))
        self.conn.execute(_UPSERT.format(sign="-", table="df_removed"))
        gone = "SELECT term FROM temp.df_removed_terms"
        if self.conn.execute(f"SELECT 1 FROM term_docs WHERE n < 0 AND term IN ({gone}) LIMIT 1").fetchone():
            raise TermCountsOutOfStep()
        self.conn.execute(f"DELETE FROM term_docs WHERE n = 0 AND term IN ({gone})")
        self.discard()

    def discard(self) -> None:
        """Forget the deltas (a full recount replaces them)."""
        if self.pending:
            for table in ("df_added", "df_removed"):
                self.conn.execute(f"INSERT INTO temp.{table}({table}) VALUES ('delete-all')")
        self.pending = False

    def rolled_back(self) -> None:
        self.pending = False
