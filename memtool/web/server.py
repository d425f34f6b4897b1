"""Running `mem serve`: a socket on 127.0.0.1 (never another address), a fresh random token, the
address printed on stdout, then uvicorn until interrupted."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from memtool.errors import UsageError

HOST = "127.0.0.1"
OPENER_SECONDS = 60  # the browser --open starts has this long to read the file that carries the token


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port); a clear error when taken."""
    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range", "use 1-65535, or 0 for any free port")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port} ({exc.strerror})",
                         "pick another --port, or --port 0 for any free one") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(mem, port: int = 0, open_browser: bool = False) -> None:
    """Serve `mem` on 127.0.0.1 until interrupted; the first stdout line is the address with its token."""
    import uvicorn

    from memtool.web.app import build_app

    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    url = f"http://{HOST}:{port}/?token={token}"
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    sys.stderr.write("mem serve: loopback only; anyone with this address can read and decide. Ctrl-C stops.\n")
    config = uvicorn.Config(build_app(mem, token, port), log_level="warning", access_log=False,
                            server_header=False, date_header=False, lifespan="off")
    private = tempfile.mkdtemp(prefix="mem-serve-") if open_browser else None  # mode 0700
    try:
        if private:
            import threading
            import webbrowser

            webbrowser.open(opener(url, Path(private)).as_uri())
            later = threading.Timer(OPENER_SECONDS, shutil.rmtree, (private, True))  # gone after a minute, though the server runs on
            later.daemon = True
            later.start()
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if private:
            shutil.rmtree(private, ignore_errors=True)


def opener(url: str, folder: Path) -> Path:
    """A file only this user can read that takes a browser to `url`: the browser is started with the
    file's name on its command line, where every local user could read the token (`ps`), not `url`."""
    from html import escape

    path = folder / "open.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={escape(url)}">'
                f'<title>mem serve</title><p><a href="{escape(url)}">Open your memory</a></p>\n')
    return path
