"""What a reflect run may reuse from the last one, kept in `.memory/local.sqlite` (a cache: deleting
it only makes the next run do the full work).

A run's output depends on the index (the Markdown as indexed: facts, pages, front matter,
`bank/decisions.md`, `memory.md`), on reflect's decisions in the local state (folds, supersessions,
review items, the facts examined), on the configuration and on the run's options. `signature`
hashes all of them. A completed run stores its signature, taken after its own Markdown was written
and indexed, with what a run on those same inputs would plan: every page unchanged (or left alone
for the same reason), the same opinions and suggestions. A later run whose signature matches
replays that plan instead of scanning every fact, fact page and opinion; what can change without
the Markdown changing (recall usage and stability, embedding counts) is still computed live.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date

from memtool import __version__
from memtool.reflect import pages
from memtool.reflect.sources import Sources

KEY = "reflect_cache"  # local meta key
FORMAT = 1  # bump when what a run plans from the same inputs changes
STATIC_ORIENT = ("facts", "kinds", "folders", "trust")  # orient figures fixed by the Markdown


def signature(src: Sources, since: str | None, overwrite_edits: bool) -> str:
    """A hash of everything a run's plan depends on (`since` is relative to today, so today counts)."""
    options = [FORMAT, __version__, repr(src.config), since, date.today().isoformat() if since else None,
               overwrite_edits]
    h = hashlib.blake2b(json.dumps(options).encode(), digest_size=16)
    h.update(src.store.files_signature().encode())
    h.update(src.local.decisions_signature().encode())
    return h.hexdigest()


def load(src: Sources, sig: str) -> dict | None:
    """The plan the last completed run left for inputs with this signature (None: none, or another)."""
    try:
        cached = json.loads(src.local.meta(KEY) or "null")
    except ValueError:
        return None
    return cached if isinstance(cached, dict) and cached.get("signature") == sig else None


def forget(src: Sources) -> None:
    """Drop the cached plan (a run that changes the inputs invalidates it before it writes anything)."""
    src.local.set_meta(KEY, "null")


def save(src: Sources, sig: str, plan: pages.Plan, orient: dict, skipped_legal: int, opinions: dict) -> None:
    """Remember what a run on the inputs of `sig` plans: pages that were written are up to date now."""
    src.local.set_meta(KEY, json.dumps({
        "signature": sig,
        "pages": [[p.entity, p.path, "unchanged" if p.action in ("create", "update") else p.action, p.reason]
                  for p in plan.pages],
        "facts": plan.facts, "held_back": plan.held_back, "suggestions": plan.suggestions,
        "orient": {k: orient[k] for k in STATIC_ORIENT}, "skipped_legal": skipped_legal, "opinions": opinions,
    }, ensure_ascii=False))


def plan_from(cached: dict) -> pages.Plan:
    """The cached plan (its consolidation part is filled in by the caller)."""
    return pages.Plan(pages=[pages.PagePlan(entity, path, action, reason=reason)
                             for entity, path, action, reason in cached["pages"]],
                      facts=cached["facts"], held_back=cached["held_back"], suggestions=cached["suggestions"])
