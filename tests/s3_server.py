"""A real S3-speaking server for tests (moto's server mode) and a TCP proxy that can cut the line.

moto implements the S3 REST API over HTTP, including conditional writes (If-Match / If-None-Match)
and conditional reads (304); memtool talks to it with boto3 exactly as it would to AWS, R2 or MinIO.
"""

from __future__ import annotations

import socket
import threading


def start_s3():
    """(server, endpoint_url): a moto S3 server on a free local port."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


S3_ENV = {"AWS_ACCESS_KEY_ID": "memtool-test", "AWS_SECRET_ACCESS_KEY": "memtool-test-secret",
          "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


class CuttableProxy:
    """Forwards TCP connections to `target`; `cut()` drops every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.bytes_up = 0
        self._cut = threading.Event()
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self._cut.is_set():
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._socks += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        try:
            while not self._cut.is_set():
                data = src.recv(65536)
                if not data:
                    break
                if up:
                    self.bytes_up += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        self._cut.set()
        with self._lock:
            for s in self._socks:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def restore(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()
