"""The facade: every operation the CLI, the MCP server and the read server offer, one method each,
handing over to the module that does the work (no SQL here, no pipeline logic): memtool.freshness
(the index in step), memtool.recall (the pipeline), memtool.reading, memtool.episodes,
memtool.writing, memtool.summarize, memtool.reflect, memtool.health, memtool.sync.engine."""

from __future__ import annotations

import os
from datetime import date

from memtool import core_memory, health, reading, retain_log, writing
from memtool.changes import ChangeFeed
from memtool.config import Config
from memtool.dates import parse_since
from memtool.embedding import Embedding
from memtool.episodes import report as episodes_report
from memtool.errors import UsageError
from memtool.freshness import SETTLE_BY_STAT_MAX, Freshness
from memtool.indexer import IndexReport, Progress
from memtool.recall import MAX_K, RecallResult, build_query, listed, resolve_mode
from memtool.recall import run as run_recall
from memtool.records import Diagnostic
from memtool.store import Filters, Store
from memtool.store.local import LocalState, LocalStateFile
from memtool.summarize import recap
from memtool.workspace import Workspace, discover


class Memory:
    """One workspace and its index.

    `track_access` (default: the config's `recall.track_access`) records which facts recalls
    return, for stability; benchmarks turn it off."""

    def __init__(self, workspace: Workspace, config: Config | None = None, embedder: str | None = None,
                 track_access: bool | None = None):
        self.ws = workspace
        self.config = (config or Config.load(workspace.config_path)).with_env()
        self.notices: list[str] = list(self.config.warnings)  # things to tell the user (e.g. a recovered index)
        self.embedding = Embedding(embedder or self.config.embedder, self.config)
        self.freshness = Freshness(workspace, self.config, self.embedding, self.notices)
        self.local_file = LocalStateFile(workspace.state_dir / "local.sqlite")
        self.track_access = self.config.track_access if track_access is None else track_access

    @classmethod
    def open(cls, workspace: str | os.PathLike | None = None, embedder: str | None = None) -> "Memory":
        """The workspace named by `-w`, `MEM_WORKSPACE` or the current directory's ancestry."""
        return cls(discover(workspace), embedder=embedder)

    def close(self) -> None:
        self.freshness.close()
        self.local_file.close()

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
               embed_progress: Progress | None = None) -> RecallResult:
        """Ranked, cited facts for `query`: lexical (BM25) and semantic (vectors) fused, then filtered.

        `as_of` answers as of a date: only facts written by then, and none that a fact written by
        then had superseded (see `mem reflect`)."""
        mode = resolve_mode(mode, self.embedding.name, self.config.recall_mode)
        q = build_query(query, k=k, since=since, until=until, kinds=kinds, entities=entities, budget=budget,
                        fields=fields, tags=tags, today=today or date.today(), mode=mode, as_of=as_of)
        self.refresh(progress, embed=q.wants_vectors, embed_progress=embed_progress)
        warnings = self.notices + q.notices + health.warnings(self.ws, self.store, self.freshness.unlisted)
        return run_recall(q, store=self.store, local=self.local_file, embedding=self.embedding, notices=self.notices,
                          warnings=warnings, track_access=self.track_access)

    def list_facts(self, kinds=(), entities=(), since: str | None = None, k: int = MAX_K) -> list[dict]:
        """Facts matching filters only, newest first, as recall results (no refresh: callers refresh first)."""
        filters = Filters(kinds=list(kinds), since=parse_since(since, date.today()) if since else None,
                          entities=[self.store.entity_match(e) for e in entities])
        return [h.to_result() for h in listed(self.store, self.local_file, filters, k, self.notices)]

    def episodes(self, query: str, k: int = 30, since: str | None = None, until: str | None = None) -> dict:
        """Recall hits grouped by day, bucketed by kind, with each day's relevant sections quoted."""
        return episodes_report(self.recall(query, k=k, since=since, until=until),
                               read_lines=lambda path: reading.lines(self.ws, path),
                               because=lambda text: reading.because(self.ws, text))

    def about(self, entity: str, k: int = 20) -> dict:
        """An entity's page (if any), aliases and the facts that mention it, newest first."""
        name = entity.lstrip("@").strip()
        if not name:
            raise UsageError("the entity name is empty", "e.g. mem about Peter")
        result = self.recall("", entities=[name], k=k)
        page = reading.entity_page(self.ws, self.store, name)
        return {"entity": page["entity"], "aliases": page["aliases"], "page": page["page"], "facts": result.results,
                "warnings": result.warnings}

    def entity_names(self) -> list[str]:
        """Every entity the index knows (page names, else their most common spelling), A to Z."""
        return sorted((name for name, _ in self.store.entity_counts(1)), key=str.casefold)

    # --- reading ----------------------------------------------------------------------------------

    def get(self, ref: str, max_lines: int = 200, follow: bool = True) -> dict:
        """Numbered lines of a workspace file: `path`, `path#L3` or `path#L3-L9` (see `reading.get`)."""
        return reading.get(self.ws, ref, max_lines, follow)

    def tier_lookup(self):
        """A function path → that file's trust tier as it stands now (see `reading.tier_lookup`)."""
        return reading.tier_lookup(self.ws, self.store, self.config)

    def opinions(self, entity: str | None = None, k: int = 50) -> dict:
        """Opinions with confidence (moved by evidence since the last explicit c=…), trend and evidence."""
        from memtool.reflect import opinions  # loaded where used: a recall needs none of reflect

        return opinions.listing(self.opinion_threads(entity), entity, k)

    def opinion_threads(self, entity: str | None = None):
        """Every opinion thread (see `memtool.reflect.opinions`), optionally only those about one entity."""
        from memtool import reflect

        return reflect.opinion_threads(self.store, entity, refresh=self.refresh)

    def summarize(self, target: str, lang: str = "auto", model: str | None = None) -> dict:
        """A 3-5 sentence recap of a day or of a query's episodes by a local model (Ollama)."""
        return recap(self.ws, self.config, target, lambda query: self.episodes(query, k=20), self.tier_lookup(),
                     lang=lang, model=model)

    # --- writing (memtool.writing, memtool.retain_log) --------------------------------------------

    def retain(self, bullet: str, day: date | None = None) -> dict:
        """Append a Retain bullet (or a plain log line) to a day's log; returns where it landed."""
        return writing.retain(self.ws, bullet, day)

    def retained_gone(self, fresh: bool = False) -> list[dict]:
        """Lines `mem retain` wrote that are no longer in their files (see `memtool.retain_log`)."""
        return [e.to_dict() for e in retain_log.vanished(self.ws, fresh=fresh)]

    def restore_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Put vanished retained lines back at the end of their files (all, or those `refs` name)."""
        return retain_log.restore(self.ws, list(refs))

    def acknowledge_retained(self, refs: list[str] | tuple = ()) -> list[dict]:
        """Accept vanished retained lines as deleted on purpose; they are not reported again."""
        return retain_log.acknowledge(self.ws, list(refs))

    def core_read(self) -> dict:
        return writing.core_read(self.ws, self.config.core_max_chars)

    def core_append(self, text: str) -> dict:
        """Append to memory.md (size-limited)."""
        return self._core_edit(lambda current: core_memory.append(current, text))

    def core_replace(self, old: str, new: str) -> dict:
        """Replace the one occurrence of `old` in memory.md (the previous file is backed up)."""
        return self._core_edit(lambda current: core_memory.replace(current, old, new))

    def core_insert(self, line: int, text: str) -> dict:
        """Insert before 1-based `line` of memory.md (size-limited)."""
        return self._core_edit(lambda current: core_memory.insert(current, line, text))

    def _core_edit(self, change) -> dict:
        return writing.core_edit(self.ws, change, self.config.core_max_chars)

    # --- reflect ------------------------------------------------------------------------------------

    def reflect(self, dry_run: bool = False, force: bool = False, since: str | None = None,
                overwrite_edits: bool = False, review: bool | None = None, time_limit: float | None = None) -> dict:
        """Consolidate, then write entity pages (generated blocks only), opinions and a journal entry.

        `dry_run` writes nothing; `force` ignores the gates; `since` limits pages to entities with
        facts from that time on; `overwrite_edits` regenerates blocks a person edited.
        """
        from memtool import reflect

        return reflect.run(reflect.Sources(ws=self.ws, config=self.config, store=self.store, open_local=lambda: self.local,
                                           refresh=self.refresh, facts=self.list_facts, tier_lookup=self.tier_lookup,
                                           vectors_usable=self.vectors_usable),
                           dry_run=dry_run, force=force, since=since, overwrite_edits=overwrite_edits, review=review,
                           time_limit=time_limit)

    # --- sync (memtool.sync.engine: ~20 ms to import, so only when used) ----------------------------

    def sync(self, remote: str | None = None, progress: dict | None = None) -> dict:
        """One three-way sync round with `remote` (else the bound or configured one).

        `progress` maps "upload" / "download" to a `progress(done, total)` callback."""
        return _sync().run(self.ws, remote, endpoint_url=self.config.sync_endpoint_url, region=self.config.sync_region,
                           configured=self.config.sync_remote, progress=progress)

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


def _sync():
    from memtool.sync import engine

    return engine
