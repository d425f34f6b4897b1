"""Freshness: the one owner of "bring the index in step with the Markdown".

`index` (everything, on request), `refresh` (what every read does first), `follow` and `settle`
(file events instead of a stat of every file), `watch` (the loop of a long-running process) all
end in one path: scan (all files, or those events name), plan against the index's file table,
apply under the index lock, then collect the vectors no fact refers to any more. Opening the index
(and setting aside a damaged one) lives here too, since every path starts there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext

from memtool import TYPE_CHECKING, index_plan
from memtool.analyzer import ANALYZER_VERSION
from memtool.config import Config, env_choice
from memtool.embedding import Embedding
from memtool.errors import Busy, MemError, ProviderUnavailable
from memtool.kinds import PARSER_VERSION
from memtool.scan_aside import STAT_CHECKS, ScanAside
from memtool.store import Store
from memtool.workspace import Workspace

if TYPE_CHECKING:  # file events (and `threading`) only for long-running processes: `follow`
    from typing import TypeVar

    from memtool.changes import ChangeFeed

    T = TypeVar("T")

TEXT_VERSION = f"{ANALYZER_VERSION}.{PARSER_VERSION}"  # a change to either rebuilds the index
SIZE_LIMIT = "max_file_bytes"  # meta key: the [index] max_file_bytes the files were last judged by
EMBED_LOCK = "embed"  # held while a process embeds: a second one answers with what is there instead
SETTLE_BY_STAT_MAX = 5000  # files: a stat of each (~9 µs) is cheaper than waiting for a marker event (~50 ms)
ASIDE_MIN_FILES = 10_000  # from here a read's stat check runs in a child process beside the query (`checked_read`)


class Scan:
    """What a look at the file system found: path → (size, mtime_ns, ctime_ns), for all files (`paths` None)
    or for those named, and the files it could not read. A plain class (see timeframe._Atom)."""

    __slots__ = ("files", "paths", "unreadable")

    def __init__(self, files: dict, paths: set[str] | None, unreadable: list[str]):
        self.files, self.paths, self.unreadable = files, paths, unreadable

    def plan(self, stored: dict) -> index_plan.IndexPlan:
        """What to do, against the index's file table (pure: cheap to compute again under the lock)."""
        if self.paths is not None:
            stored = {p: stored[p] for p in self.paths if p in stored}
        return index_plan.plan(self.files, stored, self.unreadable)


class Freshness:
    """Keeps one workspace's index current; `notices` collects what to tell the user (said once)."""

    def __init__(self, ws: Workspace, config: Config, embedding: Embedding, notices: list[str]):
        self.ws = ws
        self.config = config
        self.embedding = embedding
        self.notices = notices
        self.last_refresh: index_plan.IndexReport | None = None
        self.unlisted: list = []  # ScanProblems of the last full scan: what it left out, and why
        self._store: Store | None = None
        self._rebuilding = False  # `index(rebuild=True)` may set aside an index of a newer memtool
        self._states: tuple[int, dict] | None = None  # (data_version, file states) seen last
        self._feed: ChangeFeed | None = None  # while following file events (see `follow`)
        self.mapped = False  # read the index through a memory map (a process answering one read)
        self.scan_ahead: ScanAside | None = None  # a stat check started before the library loaded (`_scan`)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store, notice = Store.open_or_set_aside(self.ws.index_path, newer_too=self._rebuilding,
                                                          notices=self.notices)
            self._store.vectors.search_mode = self.config.vector_search
            if self.mapped:
                self._store.map_pages()
            if notice:
                self.notices.append(notice)
        return self._store

    def close(self) -> None:
        if self.scan_ahead is not None:
            self.scan_ahead.cancel()
            self.scan_ahead = None
        if self._feed is not None:
            self._feed.close()
            self.ws.written = None
            self._feed = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def notice(self, message: str) -> None:
        if message not in self.notices:  # a long-running process says each thing once
            self.notices.append(message)

    # --- bringing the index in step ---------------------------------------------------------

    def index(self, rebuild: bool = False, progress: index_plan.Progress | None = None,
              embed_progress: index_plan.Progress | None = None) -> index_plan.IndexReport:
        """Bring the index up to date (only changed files are read, only new text is embedded).

        `rebuild` re-reads every file; vectors are kept, since they are keyed by the text they embed.
        An index written by a newer memtool is set aside then (kept beside it) instead of refused.
        """
        self._rebuilding = rebuild
        report = self._in_step(rebuild, progress, None)
        if self.embedding.embedder is not None:
            self._embed_all(report, embed_progress)
        self._collect_garbage(sweep=rebuild and self.embedding.embedder is not None)
        self.store.vectors.approximate()  # the sign file follows the vectors (made, caught up, repaired)
        report.notices.extend(self.store.vectors.take_notices())
        return report

    def refresh(self, progress: index_plan.Progress | None = None, embed: bool = False,
                embed_progress: index_plan.Progress | None = None) -> index_plan.IndexReport:
        """What every read does first: a stat check and re-indexing of changed files.

        The stat check covers every file, or, while following file events (`follow`), only the
        files named by events since the last read. With `embed` (semantic reads), new records also
        get vectors, within the configured time budget.
        """
        paths = self._changed_paths()
        try:
            report = self._refreshed(progress, paths)
        except BaseException:
            if self._feed is not None:  # not done: check them (or everything) again next time
                for rel in paths or ():
                    self._feed.note(rel)
                if paths is None:
                    self._feed.request_full()
            raise
        return self._settled(report, embed, embed_progress)

    def checked_read(self, read: Callable[[], T], progress: index_plan.Progress | None = None) -> T:
        """`read()` from an index in step with the files: what `refresh()` then `read()` gives.

        In a workspace of `ASIDE_MIN_FILES` files or more (see $MEM_STAT_CHECK) the stat check runs
        in a child process while `read` runs (memtool.scan_aside; the check started ahead, if any).
        Its answer is kept only if the check found every file as the index has it, and no other
        process wrote the index meanwhile; otherwise the index is brought in step with what the
        check found and `read` runs again. So the answer always reflects the files as they were when
        the check finished, never an older index. A check whose unreadable files differ from those
        the read's warnings named runs `read` again too, for its warnings."""
        aside = self._scan_aside()
        if aside is None:
            self.refresh(progress)
            return read()
        try:
            version = self.store.state_version()
            stored = self._file_states()
            said = [p for p in self.unlisted if p.code == "unreadable"]  # what the read's warnings name
            answer = read()
            found = aside.result()
        except BaseException:
            aside.cancel()
            raise
        if found is None or self.store.state_version() != version or self.store.meta("fts_pending") is not None:
            self.refresh(progress)  # the child failed, or the index moved meanwhile: check here
            return read()
        files, problems = found
        self.unlisted = problems
        scan = Scan(files, None, [p.path for p in problems if p.code == "unreadable"])
        plan = scan.plan(stored)
        if plan.empty and sorted(said) == sorted(p for p in problems if p.code == "unreadable"):
            self.last_refresh = index_plan.IndexReport(files_seen=plan.unchanged)
            return answer
        if not plan.empty:
            self._settled(self._in_step(False, progress, None, scan))
        return read()

    def _scan_aside(self) -> ScanAside | None:
        """The stat check in a child process to run `read` beside, or None where the check comes
        first (`refresh`, which takes the check started ahead, if any): with $MEM_STAT_CHECK
        `ahead`, while following file events, before a rebuild, outside a one-shot read (`mapped`:
        the CLI's recall; never in a server such as `mem serve`), below `ASIDE_MIN_FILES` files,
        and when no check was started ahead and no core is free for the child (it would then only
        slow the query down)."""
        how = env_choice("MEM_STAT_CHECK", STAT_CHECKS, "a way to check the files", "auto")
        if how in ("inline", "ahead") or self._feed is not None or self.store.meta("analyzer_version") != TEXT_VERSION \
                or self._limit_changed():
            return None
        if how == "auto" and (not self.mapped or self.store.file_count() < ASIDE_MIN_FILES):
            return None  # mapped: a one-shot read (the CLI's recall)
        aside, self.scan_ahead = self.scan_ahead, None
        if aside is None and how == "auto" and not ScanAside.core_free():
            return None
        return aside or ScanAside.start(self.ws)

    def _settled(self, report: index_plan.IndexReport, embed: bool = False,
                 embed_progress: index_plan.Progress | None = None) -> index_plan.IndexReport:
        """After the index was brought in step: vectors no fact needs dropped, with `embed` new
        records embedded (within the configured time), the sign file caught up."""
        self.last_refresh = report
        changed = self._collect_garbage(sweep=False)
        if embed and self.embedding.unusable(self.store) is None and self.store.vectors.count_missing():
            from memtool import indexer  # the indexer (and the parser's records) only when there is work

            try:
                with self.ws.lock(EMBED_LOCK, busy="another process is embedding"):
                    changed += indexer.embed_pending(self.store, self.embedding.embedder, embed_progress,
                                                     globs=self.config.trust_globs,
                                                     seconds=self.config.embed_on_read_seconds).embedded
            except ProviderUnavailable:
                pass  # recall reports it as degraded
            except Busy:  # e.g. the first embedding of a big memory: answer now with what is there
                self.notice(f"another process (mem index or mem watch) is embedding; answering by words and"
                            f" the {self.store.vectors.count():,} vectors made so far")
        if changed:  # the sign file follows the vectors (only then: a lexical read never loads numpy)
            self.store.vectors.approximate()
            for message in self.store.vectors.take_notices():
                self.notice(message)
        return report

    def _refreshed(self, progress: index_plan.Progress | None, paths: set[str] | None) -> index_plan.IndexReport:
        """Nothing to do (decided without the lock, from the cached file table), else `_in_step`."""
        if self.store.meta("analyzer_version") != TEXT_VERSION or self._limit_changed():
            return self._in_step(False, progress, paths)
        scan = self._scan(paths)
        p = scan.plan(self._file_states())
        if p.empty and self.store.meta("fts_pending") is None:
            return index_plan.IndexReport(files_seen=p.unchanged)
        return self._in_step(False, progress, paths, scan)

    def _in_step(self, rebuild: bool, progress: index_plan.Progress | None, paths: set[str] | None,
                 scan: Scan | None = None) -> index_plan.IndexReport:
        """Re-index what changed, under the index lock: among all files, or only among `paths`.

        A `scan` already made is planned again against the file table as it stands under the lock
        (another process may have indexed meanwhile); the file system is not looked at twice."""
        from memtool import indexer  # not imported by a read whose files did not change

        with self.ws.lock("index"):
            notices = []
            built_with = self.store.meta("analyzer_version")
            if not rebuild and built_with != TEXT_VERSION:
                rebuild = True
                if built_with is not None or self.store.file_states():  # a new index is simply built
                    notices.append("the parser or text analyzer changed since this index was built; rebuilt it")
            if rebuild:
                paths, scan = None, None
                with self.store.transaction():
                    self.store.clear()
                    self.store.set_meta("analyzer_version", TEXT_VERSION)
            if self._limit_changed():  # files refused as too large, or indexed, may now be judged otherwise
                with self.store.transaction():
                    if self.store.judge_sizes_again(self.config.max_file_bytes):
                        paths, scan = None, None  # a full scan: the files marked may lie anywhere
                    self.store.set_meta(SIZE_LIMIT, str(self.config.max_file_bytes))
            p = (scan or self._scan(paths)).plan(self.store.file_states())
            report = indexer.apply(self.ws, self.store, p, self.config.max_file_bytes, progress)
            if rebuild or not p.empty:
                self.store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            self._states = None
        report.rebuilt = rebuild
        report.notices = notices
        return report

    def _limit_changed(self) -> bool:
        """Whether the files were judged by another [index] max_file_bytes than the configured one."""
        return self.store.meta(SIZE_LIMIT) != str(self.config.max_file_bytes)

    def _scan(self, paths: set[str] | None) -> Scan:
        """Stat every file (remembering what the scan left out), or only `paths`. For every file, a
        check started ahead (`scan_ahead`) gives its scan instead, once (if it failed, this process
        scans)."""
        problems: list = []
        if paths is not None:
            files = self.ws.stat_paths(paths, problems)
            return Scan(files, paths, [p.path for p in problems if p.code == "unreadable"])
        aside, self.scan_ahead = self.scan_ahead, None
        found = aside.result() if aside is not None else None
        files, self.unlisted = found if found is not None else (self.ws.scan(problems), problems)
        return Scan(files, None, [p.path for p in self.unlisted if p.code == "unreadable"])

    def _embed_all(self, report: index_plan.IndexReport, embed_progress: index_plan.Progress | None) -> None:
        """Give every record a vector (for `index`), saying in `report` what stood in the way."""
        from memtool import indexer

        embedder = self.embedding.embedder
        try:
            with self.ws.lock(EMBED_LOCK, busy="another process is embedding"):
                emb = indexer.embed_pending(self.store, embedder, embed_progress, globs=self.config.trust_globs)
        except Busy:
            report.notices.append("another process (mem index or mem watch) is embedding; it makes the"
                                  " vectors this run would have made")
            return
        except ProviderUnavailable as exc:
            report.degraded = f"{exc.message} ({exc.hint})"
            report.notices.append(f"no vectors made: {report.degraded}")
            return
        report.embedded, report.embed_seconds = emb.embedded, emb.seconds
        if not self.store.vectors.accelerated:
            report.notices.append(f"vector search uses the {self.store.vectors.search_path()}")
        if emb.dropped:
            report.notices.append(f"the embedding model changed: dropped {emb.dropped} old vectors and re-embedded")
        if emb.withheld:
            report.notices.append(f"{emb.withheld} record(s) withheld from the embedder at "
                                  f"{embedder.destination.url} by their trust tier; recall finds them by words")

    def _collect_garbage(self, sweep: bool) -> int:
        """Drop the vectors of facts just removed that no fact refers to any more (with `sweep`, every
        such vector: after a rebuild, which forgets what it removed); returns how many."""
        dropped = self.store.take_dropped_hashes()
        if sweep or dropped:
            with self.store.transaction():
                return self.store.vectors.gc(None if sweep else dropped)
        return 0

    def _file_states(self) -> dict:
        """The index's file table, re-read only when some connection has written to it since."""
        version = self.store.data_version()
        if self._states is None or self._states[0] != version:
            self._states = (version, self.store.file_states())
        return self._states[1]

    # --- file events -------------------------------------------------------------------------

    def follow(self, feed: ChangeFeed | None = None) -> str | None:
        """Follow file events from now on (long-running processes): reads then stat only the files
        events name, plus every file once a minute. Returns None, or why events cannot be used (reads
        then keep checking every file). `feed`: the events to follow (default: the workspace's)."""
        if self._feed is None:
            from memtool.changes import ChangeFeed

            self._feed = feed or ChangeFeed(self.ws.root)
            self.ws.written = self._feed.note
        return self._feed.problem

    def settle(self, stat_up_to: int = SETTLE_BY_STAT_MAX) -> None:
        """Make the next read see every save made before this call, even while following file events
        (which arrive a few milliseconds after a save): stat every file, or for a workspace of more
        than `stat_up_to` files, where that costs more, wait for the events to arrive (~50 ms)."""
        if self._feed is None:
            return
        if len(self._file_states()) > stat_up_to and self._feed.barrier():
            return
        self._feed.request_full()

    def _changed_paths(self) -> set[str] | None:
        """Files to stat-check on this read: those named by file events, or None for all of them."""
        if self._feed is None:
            return None
        paths = self._feed.take()
        if paths is None and self._feed.problem:
            self.notice(f"{self._feed.problem}; every read checks every file again")
        return paths

    def watch(self, interval: float = 2.0, on_change=None, rounds: int | None = None, on_round=None,
              lock=None) -> None:
        """Keep the index current, re-indexing and embedding what changed: as file events arrive
        (after `follow`), else with a stat check every `interval` seconds.

        `on_change(report)` is called after each round that changed something, `on_round()` after
        every round; `rounds` bounds the loop (None: until interrupted). `lock` (e.g. shared with a
        `ReadServer`) is held during each round.
        """
        done = 0
        while rounds is None or done < rounds:
            try:
                with lock or nullcontext():
                    report = self.refresh(embed=True)
            except (MemError, OSError) as exc:  # e.g. the index lock held elsewhere: say so, try again
                message = exc.message if isinstance(exc, MemError) else str(exc)
                self.notice(f"this round failed ({message}); trying again")
                report = index_plan.IndexReport()
            if on_change and (report.parsed or report.removed or report.unreadable or report.touched):
                on_change(report)
            if on_round:
                on_round()
            done += 1
            if rounds is None or done < rounds:
                if self._feed is not None and self._feed.active:
                    self._feed.wait(interval)
                else:
                    time.sleep(interval)
