"""A running `mem watch` answers other `mem recall` processes over a local socket.

A `mem recall` process pays for its start-up on every call: the interpreter, numpy and the
embedding model, the vectors. `mem watch` has all of that loaded, so it listens on
`.memory/read.sock` (a Unix socket owned by this user, mode 0600) and `mem recall` asks it
first. The answer is the one the command would have computed itself:

- the request carries everything besides the Markdown that shapes an answer (arguments, the
  memtool code's identity, `MEM_*`, `OLLAMA_HOST` and `TZ`, the `--embedder` option, the config
  file's stat, today's date), and the server declines anything that differs from its own;
- before answering, the server makes sure every save made before the request is seen (file
  events arrive a few milliseconds after a save: it waits for a marker event that follows them,
  else checks every file), and it reports only warnings raised by this answer;
- it declines a degraded answer (e.g. the embedding provider is down), which the command may
  get right on its own.

Anything else (no server, a stale socket, one not owned by this user, busy, declined, an error, a
timeout, a suspended server that accepts but never acknowledges) makes the client answer
in-process, exactly as without a server: errors included.

Wire format: one JSON object per line each way. Request `{"v", "code", "env", "config", "embedder",
"today", "args"}`; the server acknowledges with `{"ack": true}` at once, then replies
`{"ok": true, "result": …, "terms": […]}` or `{"ok": false, "declined": reason}`.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import ExitStack
from pathlib import Path

from memtool import __version__
from memtool.errors import Busy, MemError

# socket, struct and threading are imported where used: a `mem recall` with no server around
# should not pay for them (~12 ms)

PROTOCOL = 2
SOCKET_NAME = "read.sock"
CONNECT_TIMEOUT = 0.5
ACK_TIMEOUT = 2.0  # a server that does not take the request by then (suspended, busy) is skipped
REPLY_TIMEOUT = 60.0  # a first search may load the vectors; after that answers take milliseconds
BUSY_WAIT = 1.0  # a server that is re-indexing longer than this declines (the client answers itself)
MAX_LINE = 64 << 20
ENV_KEYS = ("OLLAMA_HOST", "TZ")  # besides MEM_*: where the model answers, what "today" is


def _code_identity() -> list:
    """The installed memtool: its version and the newest source file (an upgrade or an edit differs)."""
    package = Path(__file__).parent
    newest = max((p.stat().st_mtime_ns for p in package.rglob("*.py")), default=0)
    return [__version__, str(package), newest]


def _fingerprint(root: Path, embedder: str | None) -> dict:
    """What besides the arguments and the Markdown shapes an answer."""
    from datetime import date

    try:
        st = os.stat(root / "memtool.toml")
        config = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    except OSError:
        config = None
    env = {k: v for k, v in os.environ.items()
           if (k.startswith("MEM_") and k != "MEM_WORKSPACE") or k in ENV_KEYS}
    return {"v": PROTOCOL, "code": _code_identity(), "env": env, "config": config, "embedder": embedder,
            "today": date.today().isoformat()}


def socket_path(state_dir: Path) -> Path:
    return state_dir / SOCKET_NAME


def ask(root: Path, embedder: str | None, args: dict) -> dict | None:
    """The server's reply to a recall with `args`, or None when the caller should answer itself."""
    path = socket_path(root / ".memory")
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None  # not a socket this user created: never trust its answers
    import socket

    request = dict(_fingerprint(root, embedder), args=args)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(str(path))
            if not _same_user(sock):
                return None
            sock.sendall(json.dumps(request).encode() + b"\n")
            reader = _Lines(sock)
            sock.settimeout(ACK_TIMEOUT)
            if json.loads(reader.line()) != {"ack": True}:
                return None
            sock.settimeout(REPLY_TIMEOUT)
            reply = json.loads(reader.line())
    except (OSError, ValueError):
        return None  # no server, a stale socket, a timeout, a garbled reply: answer in-process
    if not isinstance(reply, dict) or not reply.get("ok") or not isinstance(reply.get("result"), dict):
        return None
    return reply


def _same_user(sock) -> bool:
    """Whether the peer runs as this user (where the platform can tell; the socket's owner was checked)."""
    import socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


class _Lines:
    """Newline-delimited messages from a socket."""

    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def line(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ValueError("connection closed")
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE:
                raise ValueError("message too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class ReadServer:
    """Serves `mem recall` from a long-running process's `Memory`, one request at a time.

    `lock` is held around each answer; the watch loop holds it around each round of re-indexing.
    """

    def __init__(self, mem, lock, embedder: str | None):
        self.mem = mem
        self.lock = lock
        self.path = socket_path(mem.ws.state_dir)
        self.embedder = embedder
        # what this process answers with: its code, settings and config file, whatever changes later
        self.expected = _fingerprint(mem.ws.root, embedder)
        self._sock = None
        self._inode = None
        # the name it is bound under first: never longer than read.sock (a socket's path is limited
        # to 107 bytes, and a pid has at most 7 digits)
        self._bound = self.path.with_name(f".r{os.getpid()}")
        self._thread = None
        self._held = ExitStack()

    def start(self) -> str | None:
        """Listen; None on success, else why reads are not served (the watch goes on regardless)."""
        import socket
        import threading

        if not hasattr(socket, "AF_UNIX"):
            return "this platform has no Unix sockets"
        try:  # one server per workspace, for as long as it runs
            self._held.enter_context(self.mem.ws.lock("read-server", busy="another process already serves reads"))
        except Busy:
            return "another process already serves reads for this memory"
        self.path.unlink(missing_ok=True)  # left behind by a process that was killed
        sock = self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # close() cleans up from here on
        old = os.umask(0o177)  # the socket is created private to this user
        try:  # bound under a name of this process's, then renamed: a stop at any point leaves nothing behind
            sock.bind(str(self._bound))
            self._inode = os.stat(self._bound).st_ino
            os.rename(self._bound, self.path)
            sock.listen(16)
        except OSError as exc:
            self._sock = None
            sock.close()
            self._bound.unlink(missing_ok=True)
            self._held.close()
            return f"cannot listen on {self.path} ({exc})"
        finally:
            os.umask(old)
        self._thread = threading.Thread(target=self._serve, args=(sock,), name="memtool-read-server", daemon=True)
        self._thread.start()
        return None

    def close(self) -> None:
        """Stop listening, wait for an answer in progress, remove the socket (if it is still ours)."""
        import socket

        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            sock.close()
            if self._thread is not None and self._thread.ident is not None:  # started (a stop may come first)
                self._thread.join(timeout=REPLY_TIMEOUT)
            try:
                if os.stat(self.path).st_ino == self._inode:
                    self.path.unlink()
            except OSError:
                pass
            self._bound.unlink(missing_ok=True)  # a stop between binding and renaming
        self._held.close()

    def _serve(self, sock) -> None:
        while self._sock is sock:
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed
            try:
                with conn:
                    conn.settimeout(5.0)
                    request = json.loads(_Lines(conn).line())
                    conn.sendall(b'{"ack": true}\n')
                    conn.settimeout(REPLY_TIMEOUT)
                    conn.sendall(json.dumps(self.answer(request)).encode() + b"\n")
            except Exception:  # the client went away or sent garbage; it answers itself
                continue

    def answer(self, request: dict) -> dict:
        if not isinstance(request, dict) or not isinstance(request.get("args"), dict):
            return {"ok": False, "declined": "malformed request"}
        from datetime import date

        expected = dict(self.expected, today=date.today().isoformat())
        mismatch = [k for k in expected if request.get(k) != expected[k]]
        if mismatch:
            return {"ok": False, "declined": f"different {', '.join(mismatch)}"}
        args = request["args"]
        if set(args) - RECALL_ARGS:
            return {"ok": False, "declined": "unknown arguments"}
        if not self.lock.acquire(timeout=BUSY_WAIT):
            return {"ok": False, "declined": "busy re-indexing"}
        try:
            before = list(self.mem.notices)
            self.mem.settle()  # every save before the request is seen, as by the command itself
            result = self.mem.recall(**args)
        except MemError as exc:  # the client answers itself and reports it as the command always does
            return {"ok": False, "declined": exc.message}
        except Exception as exc:  # never let one request take the watcher down
            return {"ok": False, "declined": f"{type(exc).__name__}: {exc}"}
        finally:
            self.lock.release()
        if result.degraded:
            return {"ok": False, "declined": f"degraded: {result.degraded}"}
        data = result.to_dict()
        data["warnings"] = [w for w in data["warnings"] if w not in before]  # only what this answer raised
        return {"ok": True, "result": data, "terms": result.terms}


RECALL_ARGS = {"query", "k", "since", "until", "as_of", "kinds", "entities", "budget", "mode", "fields", "tags",
               "min_score"}
