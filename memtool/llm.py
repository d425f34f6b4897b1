"""A local language model through Ollama, for recaps (`mem summarize`). Optional: everything else
works without it, and its absence is reported with how to enable it."""

from __future__ import annotations

import os

from memtool.errors import ProviderUnavailable

DEFAULT_MODEL = "llama3.2"
DEFAULT_TIMEOUT = 60.0


class OllamaChat:
    """`chat(system, user) -> text` against an Ollama server (OLLAMA_HOST, default 127.0.0.1:11434)."""

    name = "ollama"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None):
        self.model = model or DEFAULT_MODEL
        self.host = host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.timeout = timeout or DEFAULT_TIMEOUT

    @property
    def local(self) -> bool:
        """Whether the server is on this machine (private text may only go to a local model)."""
        host = self.host.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
        return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.startswith("127.")

    def probe(self, timeout: float = 0.5) -> str | None:
        """The server's version if it answers within `timeout`, else None.

        A bare HTTP/1.0 request over a socket: `mem status` must stay fast, and urllib alone costs
        ~40 ms to import. (An https host is probed with urllib.)
        """
        import json
        import socket
        from urllib.parse import urlsplit

        url = urlsplit(self.host if "://" in self.host else f"http://{self.host}")
        try:
            if url.scheme == "https":
                import urllib.request

                with urllib.request.urlopen(f"{self.host.rstrip('/')}/api/version", timeout=timeout) as response:
                    body = response.read()
            else:
                with socket.create_connection((url.hostname or "127.0.0.1", url.port or 11434), timeout=timeout) as sock:
                    sock.settimeout(timeout)
                    sock.sendall(f"GET /api/version HTTP/1.0\r\nHost: {url.hostname}\r\n\r\n".encode())
                    chunks = []
                    while chunk := sock.recv(65536):
                        chunks.append(chunk)
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                if b" 200 " not in head.split(b"\r\n", 1)[0]:
                    return None
            return str(json.loads(body.decode("utf-8")).get("version", "unknown"))
        except Exception:  # refused, timed out, not Ollama: all mean "does not answer"
            return None

    def chat(self, system: str, user: str) -> str:
        import httpx
        import ollama

        hint = (f"install and start Ollama, run 'ollama pull {self.model}', or point OLLAMA_HOST at a server;"
                " recall and everything else work without it")
        try:
            client = ollama.Client(host=self.host, timeout=self.timeout)
            response = client.chat(model=self.model, messages=[{"role": "system", "content": system},
                                                               {"role": "user", "content": user}])
        except httpx.TimeoutException:
            raise ProviderUnavailable(f"Ollama at {self.host} did not answer within {self.timeout:.0f}s", hint) from None
        except (httpx.HTTPError, ConnectionError) as exc:
            raise ProviderUnavailable(f"Ollama is not reachable at {self.host} ({_first_line(exc)})", hint) from None
        except ollama.ResponseError as exc:
            raise ProviderUnavailable(f"Ollama refused: {_first_line(exc)}", hint) from None
        except Exception as exc:  # a malformed answer: the ollama package fails to parse it
            raise ProviderUnavailable(f"Ollama at {self.host} sent an answer memtool cannot read ({_first_line(exc)})",
                                      hint) from None
        try:
            text = response["message"]["content"]
        except (KeyError, TypeError):
            text = None
        if not isinstance(text, str) or not text.strip():
            raise ProviderUnavailable(f"Ollama at {self.host} returned no text for model {self.model!r}", hint)
        return text.strip()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
