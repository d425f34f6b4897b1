"""What a reflect run works with, passed in by the facade: the Markdown, the index, the machine-local
state, the configuration, and the few facade operations it needs (refresh, facts by filter, trust
tiers, whether stored vectors can be used). Data flows down: nothing in `memtool.reflect` calls back
into `Memory`."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Callable

from memtool.config import Config
from memtool.store import Store
from memtool.store.local import LocalState
from memtool.workspace import Workspace


@dataclass(frozen=True)
class Sources:
    ws: Workspace  # the Markdown: reads, locks, atomic writes, backups
    config: Config
    store: Store  # the index
    open_local: Callable[[], LocalState]  # `.memory/local.sqlite`, opened (and created) on first use only
    refresh: Callable[[], object]  # brings the index in step with the Markdown
    facts: Callable[..., list[dict]]  # (kinds=, entities=, since=, k=) → facts as recall results, newest first
    tier_lookup: Callable[[], Callable[[str], str]]  # a new path → trust tier function (it remembers per path)
    vectors_usable: Callable[[], str | None]  # None when stored vectors can be compared, else why not
    # Entered while a model answers: in `mem mcp` other calls read and write meanwhile (see runner._run)
    model_wait: Callable[[], AbstractContextManager] = nullcontext

    @property
    def local(self) -> LocalState:
        return self.open_local()
