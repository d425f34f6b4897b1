"""The facade: every operation the CLI, the MCP server and the read server offer, one method each,
handing over to the module that does the work (no SQL here, no pipeline logic): memtool.freshness
(the index in step), memtool.recall (the pipeline), memtool.reading, memtool.episodes,
memtool.writing, memtool.summarize, memtool.reflect, memtool.health, memtool.sync.engine."""

from __future__ import annotations

import os
from contextlib import nullcontext
from datetime import date
from pathlib import Path

from memtool import TYPE_CHECKING, health, retain_log  # the rest where used: ~12 ms of a one-shot `mem recall` (forget, reading, …)
from memtool.config import Config
from memtool.dates import parse_since
from memtool.embedding import Embedding
from memtool.errors import UsageError, WorkspaceError
from memtool.freshness import SETTLE_BY_STAT_MAX, Freshness
from memtool.index_plan import IndexReport, Progress
from memtool.recall import MAX_K, LexicalWorker, Query, RecallResult, build_query, listed, record_access, resolve_mode
from memtool.recall import run as run_recall
from memtool.recall.expansion import RECALL
from memtool.recall.worker import cores
from memtool.store import Filters, Store
from memtool.store.local import LocalState, LocalStateFile
from memtool.workspace import Workspace, discover, home_path

if TYPE_CHECKING:  # the parser's record classes: not created by a read (see memtool.kinds); file events
    from contextlib import AbstractContextManager
    from typing import Callable

    from memtool.changes import ChangeFeed
    from memtool.records import Diagnostic
    from memtool.scan_aside import ScanAside


class Memory:
    """One workspace and its index.

    `track_access` (default: the config's `recall.track_access`) records which facts recalls
    return, for stability; benchmarks turn it off. `recall_expansion` is the multi-hop expansion
    recall runs (memtool.recall.expansion.RECALL; a benchmark sets variants to measure them).
    `recall_threads` (default: when the process may use more than one core) runs a hybrid recall's
    lexical side in a thread beside its semantic side (memtool.recall.worker): the same answers;
    a benchmark or a test turns it off to compare."""

    def __init__(self, workspace: Workspace, config: Config | None = None, embedder: str | None = None,
                 track_access: bool | None = None):
        self.ws = workspace
        self.config = (config or Config.load(workspace.config_path)).with_env()
        self.notices: list[str] = list(self.config.warnings)  # things to tell the user (e.g. a recovered index)
        self.embedding = Embedding(embedder or self.config.embedder, self.config)
        self.freshness = Freshness(workspace, self.config, self.embedding, self.notices)
        self.local_file = LocalStateFile(workspace.state_dir / "local.sqlite")
        self.track_access = self.config.track_access if track_access is None else track_access
        self.recall_expansion = RECALL
        self.recall_threads = cores() > 1
        self._lexical_worker = LexicalWorker()  # its thread starts with the first hybrid recall
        # Entered while summarize or reflect waits on a model: `mem mcp` lets other calls run meanwhile.
        self.model_wait: Callable[[], AbstractContextManager] = nullcontext

    @classmethod
    def open(cls, workspace: str | os.PathLike | None = None, embedder: str | None = None) -> "Memory":
        """The workspace named by `-w`, `MEM_WORKSPACE` or the current directory's ancestry."""
        return cls(discover(workspace), embedder=embedder)

    def read_once(self, scan: ScanAside | None = None) -> "Memory":
        """Tuned for a process that answers one read and exits (the CLI's `mem recall`): the index is
        read through a memory map (see `Store.map_pages`), `scan`, a stat check of this workspace
        started before the library loaded (`scan_aside.ahead`), stands for the read's own, and query
        vectors are kept in the local state for the next one (`Embedding.keep_queries`). Not for
        long-running processes."""
        self.freshness.mapped = True
        self.embedding.keep_queries(self.local_file)
        if scan is not None and scan.root != self.ws.root:
            scan.cancel()
        elif scan is not None:
            self.freshness.scan_ahead = scan
        return self

    def close(self) -> None:
        self._lexical_worker.close()
        self.freshness.close()
        self.local_file.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    # --- collaborators (also what reflect uses) -------------------------------------------------

    @property
    def store(self) -> Store:
        """The index, opened on first use (a damaged one is set aside and rebuilt)."""
        return self.freshness.store

    @property
    def local(self) -> LocalState:
        """Machine-local state (access log, stability, consolidation decisions), opened on first use."""
        return self.local_file.open()

    @property
    def embedder(self):
        """The configured embedder, or None for `none` (a UsageError for an unknown name)."""
        return self.embedding.embedder

    def vectors_usable(self) -> str | None:
        """None when semantic search can run; otherwise the reason it cannot."""
        return self.embedding.unusable(self.store)

    # --- keeping the index in step (memtool.freshness) ------------------------------------------

    def index(self, rebuild: bool = False, progress: Progress | None = None,
              embed_progress: Progress | None = None) -> IndexReport:
        """Bring the index up to date; `rebuild` re-reads every file (see `Freshness.index`)."""
        return self.freshness.index(rebuild, progress, embed_progress)

    def refresh(self, progress: Progress | None = None, embed: bool = False,
                embed_progress: Progress | None = None) -> IndexReport:
        """What every read does first: re-index what changed (see `Freshness.refresh`)."""
        return self.freshness.refresh(progress, embed, embed_progress)

    def follow(self, feed: ChangeFeed | None = None) -> str | None:
        """Follow file events from now on; None, or why they cannot be used (see `Freshness.follow`)."""
        return self.freshness.follow(feed)

    def settle(self, stat_up_to: int = SETTLE_BY_STAT_MAX) -> None:
        """Make the next read see every save made before this call (see `Freshness.settle`)."""
        self.freshness.settle(stat_up_to)

    def watch(self, interval: float = 2.0, on_change=None, rounds: int | None = None, on_round=None,
              lock=None) -> None:
        """Keep the index current until interrupted (see `Freshness.watch`)."""
        self.freshness.watch(interval, on_change, rounds, on_round, lock)

    # --- recall (memtool.recall) ------------------------------------------------------------------

    def recall(self, query: str, *, k: int = 10, since: str | None = None, until: str | None = None,
               as_of: str | None = None, kinds: list[str] | tuple = (), entities: list[str] | tuple = (),
               budget: int | None = None, mode: str | None = None, today: date | None = None,
               fields: list[str] | tuple = (), tags: list[str] | tuple = (), progress: Progress | None = None,
               embed_progress: Progress | None = None, min_score: float | None = None) -> RecallResult:
        """Ranked, cited facts for `query`: lexical (BM25) and semantic (vectors) fused, then filtered.

        `as_of` answers as of a date: only facts written by then, and none that a fact written by
        then had superseded (see `mem reflect`). Below `min_score` (default: the configured floor) the
        answer is "nothing relevant": no results, and the best score and how many fell below."""
        mode = resolve_mode(mode, self.embedding.name, self.config.recall_mode)
        q = build_query(query, k=k, since=since, until=until, kinds=kinds, entities=entities, budget=budget,
                        fields=fields, tags=tags, today=today or date.today(), mode=mode, as_of=as_of,
                        min_score=min_score)
        if q.wants_vectors:  # a read that embeds new records first checks the files itself
            if self.freshness.mapped:  # a one-shot read: the model may load while the files are checked
                self.embedding.embed_ahead(q.search_text)
            try:
                self.refresh(progress, embed=True, embed_progress=embed_progress)
                return self._recalled(q, self.track_access)
            finally:
                self.embedding.settle()
        self.embedding.end_aside()  # a child forked at start for the vectors (python -m memtool) is not needed
        result = self.freshness.checked_read(lambda: self._recalled(q, track_access=False), progress)
        if self.track_access:  # only the answer given is logged, not one the stat check replaced
            record_access(result, self.local_file, self.config.recall_floor, self.notices)
            result.warnings.extend(n for n in self.notices if n not in result.warnings)
        return result

    def _recalled(self, q: Query, track_access: bool) -> RecallResult:
        """`q` answered from the index as it is (the caller brought it in step)."""
        warnings = self.notices + q.notices + health.warnings(self.ws, self.store, self.freshness.unlisted)
        return run_recall(q, store=self.store, local=self.local_file, embedding=self.embedding, notices=self.notices,
                          warnings=warnings, track_access=track_access, floor=self.config.recall_floor,
                          expansion=self.recall_expansion,
                          worker=self._lexical_worker if self.recall_threads else None, tiers=self.tier_lookup)

    def list_facts(self, kinds=(), entities=(), since: str | None = None, k: int = MAX_K) -> list[dict]:
        """Facts matching filters only, newest first, as recall results (no refresh: callers refresh first)."""
        filters = Filters(kinds=list(kinds), since=parse_since(since, date.today()) if since else None,
                          entities=[self.store.entity_match(e) for e in entities])
        return [h.to_result() for h in listed(self.store, self.local_file, filters, k, self.notices)]

    def episodes(self, query: str, k: int = 30, since: str | None = None, until: str | None = None,
                 budget: int | None = None) -> dict:
        """Recall hits grouped by day, bucketed by kind, with each day's relevant sections quoted;
        with `budget`, said once and fitted to that many tokens (see `memtool.budget`)."""
        from memtool import budget as budgets, reading
        from memtool.episodes import report as episodes_report

        report = episodes_report(self.recall(query, k=k, since=since, until=until),
                                 read_lines=lambda path: reading.lines(self.ws, path),
                                 because=lambda text: reading.because(self.ws, text))
        return budgets.episodes(report, _budget(budget)) if budget is not None else report

    def about(self, entity: str, k: int = 20, budget: int | None = None) -> dict:
        """An entity's page (if any), aliases and the facts that mention it, newest first; with
        `budget`, the page without its generated blocks and the facts that fit."""
        name = entity.lstrip("@").strip()
        if not name:
            raise UsageError("the entity name is empty", "e.g. mem about Peter")
        from memtool import budget as budgets, reading

        result = self.recall("", entities=[name], k=k)
        page = reading.entity_page(self.ws, self.store, name)
        answer = {"entity": page["entity"], "aliases": page["aliases"], "page": page["page"], "facts": result.results,
                  "warnings": result.warnings}
        return budgets.about(answer, _budget(budget)) if budget is not None else answer

    def recent(self, days: int = 7, budget: int | None = None, today: date | None = None) -> dict:
        """What was added or changed in the last `days` days: facts grouped by day and file (cited),
        then bank pages and core memory changed since, newest first."""
        if not 1 <= days <= MAX_DAYS:
            raise UsageError(f"--days must be from 1 to {MAX_DAYS}, not {days}", "leave --days out for the default, 7")
        from memtool import budget as budgets, reading

        self.refresh()
        today = today or date.today()
        answer = reading.recent(self.list_facts(), self.store.file_states(),
                                parse_since(f"{days}d", today))
        return budgets.recent(answer, _budget(budget)) if budget is not None else answer

    def entities(self, query: str | None = None, k: int = 100) -> dict:
        """Entities the memory knows: name, aliases, how many facts mention them, their page; most
        mentioned first, optionally only those whose name or alias contains `query`."""
        if not 1 <= k <= MAX_K:
            raise UsageError(f"--k must be from 1 to {MAX_K}, not {k}", "leave --k out for the default")
        from memtool import reading

        self.refresh()
        return reading.entities(self.ws, self.store, query, k)

    def entity_names(self) -> list[str]:
        """Every entity the index knows (page names, else their most common spelling), A to Z."""
        return sorted((name for name, _ in self.store.entity_counts(1)), key=str.casefold)

    # --- reading ----------------------------------------------------------------------------------

    def get(self, ref: str, max_lines: int = 200, follow: bool = True) -> dict:
        """Numbered lines of a workspace file: `path`, `path#L3` or `path#L3-L9` (see `reading.get`)."""
        from memtool import reading

        return reading.get(self.ws, ref, max_lines, follow)

    def tier_lookup(self):
        """A function path → that file's trust tier as it stands now (see `reading.tier_lookup`)."""
        from memtool import reading

        return reading.tier_lookup(self.ws, self.store, self.config)

    def opinions(self, entity: str | None = None, k: int = 50) -> dict:
        """Opinions with confidence (moved by evidence since the last explicit c=…), trend and evidence."""
        if not 1 <= k <= MAX_K:
            raise UsageError(f"--k must be from 1 to {MAX_K}, not {k}", "leave --k out for the default")
        if entity is not None:
            entity = entity.strip().lstrip("@").strip()  # `@Peter`, as a mention is written
            if not entity:
                raise UsageError("--entity needs a name", "e.g. --entity Peter, or leave the option out")
        from memtool.reflect import opinions  # loaded where used: a recall needs none of reflect

        return opinions.listing(self.opinion_threads(entity, newest=k), entity, k)

    def opinion_threads(self, entity: str | None = None, newest: int | None = None):
        """Every opinion thread (see `memtool.reflect.opinions`), optionally only those about one entity;
        with `newest`, only that many of the most recently written (their evidence alone is read)."""
        from memtool import reflect
        from memtool.reflect.opinions import newest as newest_of

        pick = None if newest is None else lambda threads: newest_of(threads, newest)
        return reflect.opinion_threads(self.store, entity, refresh=self.refresh, pick=pick, tier_of=self.tier_lookup())

    def summarize(self, target: str, lang: str = "auto", model: str | None = None) -> dict:
        """A 3-5 sentence recap of a day or of a query's episodes by a local model (Ollama)."""
        from memtool.summarize import recap

        return recap(self.ws, self.config, target, lambda query: self.episodes(query, k=20), self.tier_lookup(),
                     lang=lang, model=model, waiting=self.model_wait)

    # --- writing (memtool.writing, memtool.retain_log) --------------------------------------------

    def note(self, text: str, page: str | None = None, day: date | None = None, repeat: float | None = None) -> dict:
        """Append free, untyped text to a day's log (today by default), or to the end of a bank page
        (`bank/…md`, or an entity's name: its page, created when it has none). `repeat`, for a write through
        MCP (None: a person's): seconds within which the same line, written through MCP before and still
        there, is answered instead of written again (0: always written)."""
        from memtool import reading, writing

        limit = self.config.max_file_bytes
        if page is None:
            return self._searchable(writing.note(self.ws, text, day, repeat, limit))
        return self._searchable(writing.note_page(self.ws, text, reading.page_for(self.ws, self.store, page), repeat,
                                                  limit))

    def retain(self, bullet: str, day: date | None = None, repeat: float | None = None) -> dict:
        """Append a Retain bullet (or a plain log line) to a day's log; returns where it landed
        (`repeat` as for `note`)."""
        from memtool import writing

        return self._searchable(writing.retain(self.ws, bullet, day, repeat, self.config.max_file_bytes))

    def _searchable(self, written: dict) -> dict:
        """A written line's answer, with `warnings` saying when its file is too large to be indexed."""
        size = self.ws.resolve(written["path"]).stat().st_size
        written["warnings"] = [] if size <= self.config.max_file_bytes else [
            f"{written['path']} has {size:,} bytes, over [index] max_file_bytes ({self.config.max_file_bytes:,}): "
            "it is not indexed, so recall will not find what was written; split the file or raise the limit"]
        return written

    def retained_gone(self, fresh: bool = False) -> list[dict]:
        """Lines `mem retain`, `note` or `core …` wrote that are no longer in their files (see `memtool.retain_log`)."""
        return [e.to_dict() for e in retain_log.vanished(self.ws, fresh=fresh)]

    def restore_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Put vanished retained lines back at the end of their files (all, or those `refs` name)."""
        return retain_log.restore(self.ws, list(refs), self.config.core_max_chars, self.config.max_file_bytes)

    def acknowledge_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Accept vanished retained lines as deleted on purpose; they are not reported again."""
        return retain_log.acknowledge(self.ws, list(refs))

    def core_read(self) -> dict:
        from memtool import writing

        return writing.core_read(self.ws, self.config.core_max_chars)

    def core_append(self, text: str, repeat: float | None = None) -> dict:
        """Append to memory.md (size-limited; `repeat` as for `note`)."""
        from memtool import core_memory

        return self._core_edit(lambda current, name: core_memory.append(current, text, name), "core append", repeat,
                               text)

    def core_replace(self, old: str, new: str) -> dict:
        """Replace the one occurrence of `old` in memory.md (the previous file is backed up)."""
        from memtool import core_memory

        return self._core_edit(lambda current, name: core_memory.replace(current, old, new, name), "core replace")

    def core_insert(self, line: int, text: str, repeat: float | None = None) -> dict:
        """Insert before 1-based `line` of memory.md (size-limited; `repeat` as for `note`)."""
        from memtool import core_memory

        return self._core_edit(lambda current, name: core_memory.insert(current, line, text, name), "core insert",
                               repeat, text)

    def _core_edit(self, change, by: str, repeat: float | None = None, adding: str = "") -> dict:
        from memtool import writing

        return writing.core_edit(self.ws, change, self.config.core_max_chars, by, repeat, adding,
                                 self.config.max_file_bytes)

    # --- forget (memtool.forget, memtool.purge) -----------------------------------------------------

    def forget(self, target: str, confirm: bool = False, plan: str | None = None, wait: bool = True) -> dict:
        """Lines holding a text (any case), or cited as `path#Lx[-Ly]`: listed with the plan's
        fingerprint, and with `confirm` removed from the Markdown and purged from the index, local
        state, backups and logs. `plan`: the fingerprint of the listing that was shown; the removal is
        refused, nothing changed, when the lines it would remove are no longer those. Without `wait`, a
        reflect run going on refuses it at once (`mem mcp`: the run may be this server's, waiting for its
        turn back from the model's answer)."""
        from memtool import forget as forgetting, purge

        parsed = forgetting.parse_target(target)
        if not confirm:
            planned = forgetting.plan(self.ws, parsed)
            return {"target": target, "count": planned.count, "matches": planned.matches(),
                    "plan": planned.fingerprint(), "forgotten": False}
        # Under reflect's lock: a run going on would otherwise write its record, windows and ledger
        # (entity names and sources of the facts read before) back after the purge, and its pages
        # between the plan and the removal.
        with self.ws.lock("reflect", busy=None if wait else "a mem reflect or mem forget is running in this "
                                                                "workspace; nothing was removed"):
            planned = forgetting.plan(self.ws, parsed)
            if plan is not None and planned.fingerprint() != plan:
                raise WorkspaceError("the lines to forget changed since they were listed (a file was edited "
                                     "meanwhile); nothing was removed",
                                     "list them again and check them before removing")
            out = {"target": target, "count": planned.count, "matches": planned.matches(),
                   "plan": planned.fingerprint(), "forgotten": False}
            if not planned.count:
                return out
            forgetting.remove(self.ws, planned)
            out["forgotten"] = True
            out["purged"] = self._purge(planned.needles)
            purge.log(self.ws, [m["source"] for m in out["matches"]], [m["text"] for m in out["matches"]])
        from memtool.sync.state import SyncState

        remote = (SyncState(self.ws).binding() or {}).get("remote")
        if remote:
            out["sync"] = f"run mem sync, then mem sync gc, to remove it from {remote} too"
        return out

    def _purge(self, needles: list[str]) -> dict:
        """Bring the index in step, then leave no copy of `needles` in it, local state or .memory/ files."""
        from memtool import purge

        self.refresh()
        done = {"index_wal_emptied": self.store.compact()}
        if self.local_file.exists() or self.local_file.logged():  # the log's keys are purged once folded in
            from memtool.store.local import fact_key

            live = {fact_key(path, content) for path, content in self.store.fact_texts()}
            done["local_wal_emptied"] = self.local.purge(live, needles)
        done.update(purge.state_files(self.ws, needles))
        return done
    # --- import (memtool.importing) ----------------------------------------------------------------

    def import_(self, fmt: str, source: str | os.PathLike, dry_run: bool = False, progress: Progress | None = None) -> dict:
        """Bring another tool's memory in (`fmt`: obsidian, basic-memory, chatgpt, claude-code): the
        source is only read; a second import adds nothing; `dry_run` writes nothing."""
        from datetime import datetime

        from memtool import importing

        return importing.run(self.ws, fmt, source, tz=datetime.now().astimezone().tzinfo,
                             max_bytes=self.config.max_file_bytes, dry_run=dry_run, progress=progress).to_dict()

    # --- reflect ------------------------------------------------------------------------------------

    def reflect(self, dry_run: bool = False, force: bool = False, since: str | None = None,
                overwrite_edits: bool = False, review: bool | None = None, time_limit: float | None = None) -> dict:
        """Consolidate, then write entity pages (generated blocks only), opinions and a journal entry.

        `dry_run` writes nothing; `force` ignores the gates; `since` limits pages to entities with
        facts from that time on (read first: a `since` that is no date is a UsageError before any
        gate or phase runs); `overwrite_edits` regenerates blocks a person edited.
        """
        from memtool import reflect

        if since:
            parse_since(since, date.today())
        return reflect.run(reflect.Sources(ws=self.ws, config=self.config, store=self.store, open_local=lambda: self.local,
                                           refresh=self.refresh, facts=self.list_facts, tier_lookup=self.tier_lookup,
                                           vectors_usable=self.vectors_usable, model_wait=self.model_wait),
                           dry_run=dry_run, force=force, since=since, overwrite_edits=overwrite_edits, review=review,
                           time_limit=time_limit)

    # --- the review queue (memtool.reflect.queue; decisions live in bank/decisions.md) ---------------

    def review_list(self, status: str = "open") -> dict:
        """Review items (`open`, `decided` or `all`) with their evidence, open ones first."""
        from memtool import reflect  # loaded where used: a recall needs none of reflect

        if status not in ("open", "decided", "all"):
            raise UsageError(f"unknown status '{status}'", "use open, decided or all")
        everything = reflect.queue.items(self.ws, self.local, self._facts_by_key)
        shown = [i for i in everything if status == "all" or (i["status"] == "open") == (status == "open")]
        _, problems = reflect.queue.standing(self.ws)
        return {"status": status, "items": shown, "open": sum(i["status"] == "open" for i in everything),
                "decided": sum(i["status"] != "open" for i in everything), "page": reflect.decisions.PAGE,
                "warnings": [f"{p.path}:{p.line}: {p.message}" for p in problems]}

    def review_show(self, item: str) -> dict:
        """One review item; a connection also lists facts that mention both entities."""
        from memtool import reflect  # loaded where used: a recall needs none of reflect

        found = reflect.queue.find(reflect.queue.items(self.ws, self.local, self._facts_by_key), item)
        if found["kind"] == "connection":
            self.refresh()
            found = dict(found, evidence=self.list_facts(entities=[found["a"]["name"], found["b"]["name"]], k=10))
        return found

    def review_decide(self, item: str, action: str, note: str = "", text: str | None = None) -> dict:
        """Decide a review item: one line appended to bank/decisions.md, and folds/supersessions updated;
        accepting a proposal also appends its typed line (or `text`, an edit of it) to its daily log."""
        from memtool import reflect  # loaded where used: a recall needs none of reflect

        found = reflect.queue.find(reflect.queue.items(self.ws, self.local, self._facts_by_key), item)
        return reflect.queue.decide(self.ws, self.local, found, action, note, text=text,
                                    max_bytes=self.config.max_file_bytes)

    def review_standing(self) -> tuple[dict, list]:
        """The decisions that stand in bank/decisions.md (item → Decision) and lines that do not parse."""
        from memtool import reflect  # loaded where used: a recall needs none of reflect

        return reflect.queue.standing(self.ws)

    def _facts_by_key(self) -> dict:
        from memtool import reflect  # loaded where used: a recall needs none of reflect

        self.refresh()
        return {f["key"]: f for f in reflect.consolidation.load_facts(self.store, self.config.trust_globs)}

    # --- sync (memtool.sync.engine: ~20 ms to import, so only when used) ----------------------------

    def sync(self, remote: str | None = None, progress: dict | None = None, encrypt: bool = False,
             passphrase: str | None = None) -> dict:
        """One three-way sync round with `remote` (else the bound or configured one); `encrypt` makes a
        new remote encrypted.

        `progress` maps "upload" / "download" to a `progress(done, total)` callback."""
        return _sync().run(self.ws, remote, endpoint_url=self.config.sync_endpoint_url, region=self.config.sync_region,
                           configured=self.config.sync_remote, progress=progress, encrypt=encrypt,
                           key_file=self.sync_key_file, passphrase=passphrase)

    @classmethod
    def sync_clone(cls, remote: str, dest: Path, key_file: Path | None = None, passphrase: str | None = None,
                   embedder: str | None = None, progress: dict | None = None) -> dict:
        """A new workspace at `dest` from the memory on `remote` (bound to it), its index built."""
        report = _sync().clone(remote, dest, key_file=key_file, passphrase=passphrase, progress=progress)
        mem = cls(Workspace(Path(report["workspace"])), embedder=embedder)
        try:
            report["indexed"] = mem.index().parsed
        finally:
            mem.close()
        return report

    def sync_auto(self, say, stop, interval: float | None = None) -> None:
        """Sync by itself until `stop` (a threading.Event) is set: push after edits settle, pull every
        `interval` seconds (else `[sync] interval`); see `memtool.sync.auto`."""
        from memtool.sync.auto import AutoSync

        AutoSync(self.ws, self.sync, interval or self.config.sync_interval, say, stop).loop()

    @property
    def sync_key_file(self):
        """The key file named in memtool.toml (`[sync] key_file`; relative to the workspace), or None."""
        if not self.config.sync_key_file:
            return None
        path = home_path(self.config.sync_key_file)
        return path if path.is_absolute() else self.ws.root / path

    def sync_key(self, show: bool = False) -> dict:
        return _sync().key_info(self.ws, self.sync_key_file, show)

    def sync_key_create(self) -> dict:
        """Create the key file memtool.toml names (`[sync] key_file`), a new random key; an existing one is kept."""
        return _sync().create_key(self.sync_key_file)

    def sync_gc(self, remote: str | None = None, min_age: float | None = None, dry_run: bool = False) -> dict:
        """Delete the revisions on the remote that its manifest no longer names (see `memtool.sync.gc`)."""
        return _sync().gc(self.ws, remote, endpoint_url=self.config.sync_endpoint_url, region=self.config.sync_region,
                          configured=self.config.sync_remote, min_age=min_age, dry_run=dry_run,
                          key_file=self.sync_key_file)

    def sync_status(self) -> dict:
        return _sync().status(self.ws)

    def sync_resolve(self, path: str, keep: str) -> dict:
        return _sync().resolve(self.ws, path, keep)

    def sync_switch(self, on: bool) -> dict:
        return _sync().set_off(self.ws, not on)

    def sync_restore(self, backup_id: str | None = None) -> dict:
        return _sync().restore(self.ws, backup_id)

    # --- status and check (memtool.health) ----------------------------------------------------------

    def status(self, probe: bool = True) -> dict:
        """Counts, index health, and which providers are in effect and answer."""
        return health.status(self.freshness, self.local_file, probe)

    def check(self) -> list[Diagnostic]:
        """Every diagnostic of every indexed file (refreshing first), and every retained line that is gone."""
        return health.check(self.freshness)


MAX_DAYS = 3650  # `recent` looks back at most ten years


def _budget(tokens: int) -> int:
    from memtool import budget as budgets

    if not budgets.MIN <= tokens <= budgets.MAX:
        raise UsageError(f"--budget must be from {budgets.MIN} to {budgets.MAX} tokens, not {tokens}",
                         "leave --budget out for the whole answer")
    return tokens


def _sync():
    from memtool.sync import engine

    return engine
