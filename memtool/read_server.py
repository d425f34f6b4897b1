"""A running `mem watch` answers other `mem recall` processes over a local socket.

A `mem recall` process pays for its start-up on every call: the interpreter, numpy and the
embedding model, the vectors, a stat of every file. `mem watch` has all of that loaded and its
index current, so it listens on `.memory/read.sock` (a Unix socket only this user can open) and
`mem recall` asks it first. The answer is the one the command would have computed itself: the
request carries everything that shapes it (arguments, memtool version, the embedder and
`MEM_*` settings, the config file's stat), and the server declines anything that differs
from what it runs with. Anything else (no server, a stale socket, busy, declined, an error, a
timeout) makes the client answer in-process, exactly as without a server: errors included.

Wire format: one JSON object per line each way. Request `{"v", "memtool", "env", "config",
"embedder", "args"}`; reply `{"ok": true, "result": …, "terms": […]}` or
`{"ok": false, "declined": reason}`.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

PROTOCOL = 1
SOCKET_NAME = "read.sock"
CONNECT_TIMEOUT = 0.5
REPLY_TIMEOUT = 60.0  # a first search may load the vectors; after that answers take milliseconds
BUSY_WAIT = 1.0  # a server that is re-indexing longer than this declines (the client answers itself)
MAX_REQUEST = 1 << 20


def _fingerprint(root: Path, embedder: str | None) -> dict:
    """What besides the arguments shapes an answer: version, settings from the environment, config file."""
    from memtool import __version__

    try:
        st = os.stat(root / "memtool.toml")
        config = [st.st_size, st.st_mtime_ns]
    except OSError:
        config = None
    env = {k: v for k, v in os.environ.items() if k.startswith("MEM_") and k != "MEM_WORKSPACE"}
    return {"v": PROTOCOL, "memtool": __version__, "env": env, "config": config, "embedder": embedder}


def socket_path(state_dir: Path) -> Path:
    return state_dir / SOCKET_NAME


def ask(root: Path, embedder: str | None, args: dict) -> dict | None:
    """The server's reply to a recall with `args`, or None when the caller should answer itself."""
    path = socket_path(root / ".memory")
    if not hasattr(socket, "AF_UNIX") or not path.exists():
        return None
    request = dict(_fingerprint(root, embedder), args=args)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(str(path))
            sock.settimeout(REPLY_TIMEOUT)
            sock.sendall(json.dumps(request).encode() + b"\n")
            reply = json.loads(_read_line(sock))
    except (OSError, ValueError):
        return None  # no server, a stale socket, a timeout, a garbled reply: answer in-process
    if not isinstance(reply, dict) or not reply.get("ok") or not isinstance(reply.get("result"), dict):
        return None
    return reply


def _read_line(sock) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > 64 * MAX_REQUEST:
            raise ValueError("reply too large")
    return data


class ReadServer:
    """Serves `mem recall` from a long-running process's `Memory`, one request at a time.

    `lock` is held around each answer; the watch loop holds it around each round of re-indexing.
    """

    def __init__(self, mem, lock: threading.Lock, embedder: str | None):
        self.mem = mem
        self.lock = lock
        self.path = socket_path(mem.ws.state_dir)
        self.expected = _fingerprint(mem.ws.root, embedder)
        self._sock = None
        self._thread = None

    def start(self) -> str | None:
        """Listen; None on success, else why reads are not served (the watch goes on regardless)."""
        if not hasattr(socket, "AF_UNIX"):
            return "this platform has no Unix sockets"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            if _answers(self.path):
                return "another process already serves reads for this memory"
            self.path.unlink(missing_ok=True)  # left behind by a process that was killed
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created private to this user
        try:
            sock.bind(str(self.path))
        except OSError as exc:
            sock.close()
            return f"cannot listen on {self.path} ({exc})"
        finally:
            os.umask(old)
        sock.listen(16)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="memtool-read-server", daemon=True)
        self._thread.start()
        return None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self.path.unlink(missing_ok=True)

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    conn.settimeout(5.0)
                    request = json.loads(_read_line(conn)[:MAX_REQUEST])
                    conn.settimeout(REPLY_TIMEOUT)
                    conn.sendall(json.dumps(self.answer(request)).encode() + b"\n")
                except (OSError, ValueError):
                    continue  # the client went away or sent garbage; it answers itself

    def answer(self, request: dict) -> dict:
        from memtool.errors import MemError

        if not isinstance(request, dict) or not isinstance(request.get("args"), dict):
            return {"ok": False, "declined": "malformed request"}
        mismatch = [k for k in self.expected if request.get(k) != self.expected[k]]
        if mismatch:
            return {"ok": False, "declined": f"different {', '.join(mismatch)}"}
        args = request["args"]
        if set(args) - RECALL_ARGS:
            return {"ok": False, "declined": "unknown arguments"}
        if not self.lock.acquire(timeout=BUSY_WAIT):
            return {"ok": False, "declined": "busy re-indexing"}
        try:
            result = self.mem.recall(**args)
        except MemError as exc:  # the client answers itself and reports it as the command always does
            return {"ok": False, "declined": exc.message}
        except Exception as exc:  # never let one request take the watcher down
            return {"ok": False, "declined": f"{type(exc).__name__}: {exc}"}
        finally:
            self.lock.release()
        return {"ok": True, "result": result.to_dict(), "terms": result.terms}


RECALL_ARGS = {"query", "k", "since", "until", "as_of", "kinds", "entities", "budget", "mode"}


def _answers(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(str(path))
        return True
    except OSError:
        return False
