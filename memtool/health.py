"""Health: what `mem status` reports and `mem check` lists, and the warnings every read carries
(files that could not be indexed or read, retained lines that are gone)."""

from __future__ import annotations

import os
from pathlib import Path

from memtool import TYPE_CHECKING, __version__, retain_log, trust
from memtool.analyzer import ANALYZER_VERSION
from memtool.errors import ProviderUnavailable, WorkspaceError
from memtool.freshness import Freshness
from memtool.store import DRIVER, SCHEMA_VERSION, Store
from memtool.store.local import LocalStateFile
from memtool.workspace import Workspace

if TYPE_CHECKING:
    from memtool.records import Diagnostic


def warnings(ws: Workspace, store: Store, unlisted: list) -> list[str]:
    """What every read says about the index's health."""
    out = []
    bad = len(store.paths_with_status("unreadable"))
    if bad:
        out.append(f"{bad} file(s) could not be indexed and are not searched; run 'mem check' for details")
    stale = len(store.paths_with_status("stale"))
    if stale:
        out.append(f"{stale} file(s) cannot be read now; their facts from the last read are kept and marked"
                   " stale; run 'mem check' for details")
    gone = retain_log.vanished(ws)
    if gone:
        out.append(f"{len(gone)} line(s) written by mem ({', '.join(sorted({e.by for e in gone}))}) are gone from "
                   f"{', '.join(sorted({e.path for e in gone}))} (saved over by an editor?); 'mem check --restore' puts "
                   "them back, 'mem check --ack' accepts the deletion")
    for p in _unreadable(unlisted):
        out.append(f"cannot read {p.path} ({p.reason}); facts from an earlier read are kept, marked stale;"
                   " run 'mem check'")
    out.extend(f"{p.path}: {p.reason}" for p in sorted(unlisted) if p.code == "bad-name")
    return out


def status(fresh: Freshness, local: LocalStateFile, probe: bool = True) -> dict:
    """Counts, index health, and which providers are in effect and answer (refreshing first)."""
    report = fresh.refresh()
    ws, store, config, embedding = fresh.ws, fresh.store, fresh.config, fresh.embedding
    stats = store.stats()
    for p in fresh.unlisted:
        stats["diagnostics"]["errors" if p.code == "unreadable" else "warnings"] += 1
    stats["stale_files"] = store.paths_with_status("stale")
    stats["unreadable"] = sorted(store.paths_with_status("unreadable") + [p.path for p in _unreadable(fresh.unlisted)])
    stats["warnings"] = warnings(ws, store, fresh.unlisted)
    size = sum(p.stat().st_size for p in ws.state_dir.glob("index.sqlite*") if p.exists())
    vectors = store.vectors
    problem = embedding.unusable(store)
    if problem is None and probe and embedding.embedder is not None:
        try:
            embedding.embedder.probe()
        except ProviderUnavailable as exc:
            problem = f"{exc.message}; {exc.hint}"
    embedded = vectors.count()
    from memtool.llm import OllamaChat  # status only, as the link check's wiki_links: not on every read

    llm = OllamaChat(config.llm_model, work_providers=config.work_providers)
    missing, withheld = embedding.gaps(store)
    llm_version = llm.probe() if probe else None
    stats.update({
        "workspace": str(ws.root),
        "index": {"path": str(ws.index_path), "bytes": size, "schema": SCHEMA_VERSION, "driver": DRIVER,
                  "fresh": True, "indexed_at": store.meta("indexed_at"),
                  "refreshed_files": report.parsed + report.removed + report.unreadable},
        "embedder": {"name": embedding.name, "fingerprint": vectors.fingerprint(), "answers": problem is None,
                     "problem": problem, "vectors": embedded, "missing": missing, "withheld": withheld,
                     "vector_search": vectors.search_path()},
        "search": {"lexical": True, "semantic": problem is None, "default_mode": config.recall_mode},
        "llm": {"provider": "ollama", "host": trust.shown(llm.host), "local": llm.local, "model": llm.model,
                "answers": llm_version is not None, "version": llm_version,
                "used_by": "mem summarize, mem reflect --review"},
        "memory": _local_summary(ws, local),
        "retained_gone": [e.to_dict() for e in retain_log.vanished(ws)],
        "versions": {"memtool": __version__, "schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION,
                     "sqlite": store.sqlite_version(), "sqlite_vec": vectors.version()},
    })
    if stats["memory"].get("problem"):
        stats["warnings"].append(stats["memory"]["problem"])
    return stats


def _local_summary(ws: Workspace, local: LocalStateFile) -> dict:
    """Consolidation and sync state, read cheaply (nothing is created by asking)."""
    from memtool.sync.state import SyncState  # ~6 ms (socket, uuid): only `status` needs it

    sync = SyncState(ws)
    binding = sync.binding() or {}
    out = {"sync": {"remote": binding.get("remote"), "off": bool(sync.off()), "conflicts": len(sync.conflicts()),
                    "last_sync": (sync.last_sync() or {}).get("time"), "auto": _auto_status(ws)}}
    if local.exists() or local.logged():
        try:
            counts = local.counts()
        except WorkspaceError as exc:  # damaged: status reports everything else, and says so
            out["problem"] = f"{exc.message}; {exc.hint}"
            return out
        out["consolidation"] = {"folded": counts["folds"], "superseded": counts["supersede"],
                                "for_review": counts["review"], "used_facts": counts["usage"],
                                "recalls_logged": counts["access"]}
    return out


def _auto_status(ws: Workspace) -> dict | None:
    from memtool.sync.auto import auto_status

    return auto_status(ws)


def check(fresh: Freshness) -> list[Diagnostic]:
    """Every diagnostic of every indexed file (refreshing first), and every retained line that is gone."""
    from memtool.records import Diagnostic  # here, not at the top: every read imports this module

    fresh.refresh()
    ws, store = fresh.ws, fresh.store
    gone = [e.diagnostic() for e in retain_log.vanished(ws, fresh=True)]
    said = {p.path for p in fresh.unlisted if p.code == "unreadable"}  # the scan names why: said once, by it
    kept = [Diagnostic(*row) for row in store.diagnostics()]
    found = ([d for d in kept if not (d.code == "unreadable" and d.path in said)] + _unlisted_diagnostics(fresh.unlisted)
             + _access_diagnostics(ws, store) + _link_diagnostics(ws, store) + gone)
    return sorted(found, key=lambda d: (d.severity != "error", d.path, d.line))  # errors first


def _unreadable(unlisted: list) -> list:
    return sorted(p for p in unlisted if p.code == "unreadable")


def _unlisted_diagnostics(unlisted: list) -> list[Diagnostic]:
    from memtool.records import Diagnostic

    out = []
    for p in sorted(unlisted):
        if p.code == "unreadable":
            out.append(Diagnostic(p.path, 0, "error", "unreadable", f"cannot read it ({p.reason}); not indexed,"
                                  " facts from an earlier read are kept and marked stale"))
        else:
            out.append(Diagnostic(p.path, 0, "warning", p.code, p.reason))
    return out


def _vault_names(root: Path) -> set[str]:
    """Names (without `.md`, any case) of the Markdown files an editor sees: dot folders such as
    `.memory`, `.git` and `.obsidian` are skipped, as editors skip them."""
    names = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        names.update(f[:-3].casefold() for f in files if f.endswith(".md"))
    return names


def _link_diagnostics(ws: Workspace, store: Store) -> list[Diagnostic]:
    """`[[links]]` that reach an entity page only through its aliases: memtool follows them, but
    editors that resolve links by file name (Obsidian) do not."""
    from memtool import retain  # here, not at the top: every read imports this module
    from memtool.records import Diagnostic

    names = None  # file names in the vault, read only when a link reaches a page by an alias
    out, said = [], set()
    for path, line, content in store.facts_with_links():
        for target in retain.wiki_links(content):
            page = store.entity_page(target)
            if page is None or (path, target) in said:
                continue
            if names is None:
                names = _vault_names(ws.root)
            if target.casefold() in names:
                continue
            said.add((path, target))
            out.append(Diagnostic(path, line, "warning", "link-by-alias",
                                  f"[[{target}]] reaches {page['path']} only through its aliases; editors that"
                                  f" resolve links by file name (Obsidian) will not find it: rename the page to"
                                  f" '{target}.md' or write [[{Path(page['path']).stem}|{target}]]"))
    return out


def _access_diagnostics(ws: Workspace, store: Store) -> list[Diagnostic]:
    """Indexed files this user cannot read now, though unchanged since (chmod keeps the mtime)."""
    from memtool.records import Diagnostic

    out = []
    for path in store.paths_with_status("ok"):
        if not os.access(ws.root / path, os.R_OK):
            out.append(Diagnostic(path, 0, "error", "unreadable", "cannot read it now (permissions); its facts"
                                  " are from the last read, and changes will not be seen until it can be read"))
    return out
