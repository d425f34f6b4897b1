"""A local language model through Ollama, for recaps (`mem summarize`) and the model review of
`mem reflect --review`. Optional: everything else works without it, and its absence is reported
with how to enable it."""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Callable

from memtool import trust
from memtool.errors import ProviderUnavailable

DEFAULT_MODEL = "llama3.2"
DEFAULT_TIMEOUT = 60.0


def json_object(answer: str) -> dict | None:
    """The JSON object in a model's answer (from its first `{` to its last `}`), else None."""
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(answer[start:end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


class OllamaChat:
    """`chat(system, user) -> text` against an Ollama server (OLLAMA_HOST, default 127.0.0.1:11434)."""

    name = "ollama"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None,
                 work_providers: tuple = (), waiting: Callable[[], AbstractContextManager] = nullcontext):
        self.model = model or DEFAULT_MODEL
        self.waiting = waiting  # entered while the answer is awaited (`mem mcp`: other calls run meanwhile)
        self.host = host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.destination = trust.destination(self.host, work_providers)

    @property
    def local(self) -> bool:
        """Whether the server's host resolves to loopback only (private text may only go there)."""
        return self.destination.loopback

    def probe(self, timeout: float = 0.5) -> str | None:
        """The server's version if it answers within `timeout`, else None.

        A bare HTTP/1.0 request over a socket: `mem status` must stay fast, and urllib alone costs
        ~40 ms to import. (An https host is probed with urllib.)
        """
        import json
        import socket
        from urllib.parse import urlsplit

        if trust.url_problem(self.host) is not None:
            return None
        url = urlsplit(self.destination.url)
        try:
            if url.scheme == "https":
                import urllib.request

                with urllib.request.urlopen(f"{self.destination.url}/api/version", timeout=timeout) as response:
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

    def chat(self, system: str, user: str, *, tier: str) -> str:
        """The model's answer to `user` (text of trust tier `tier`) under the `system` prompt.
        Raises EgressRefused, before anything is sent, when `tier` may not go to this server."""
        unusable(self.host)
        trust.check_egress([(system, "normal"), (user, tier)], self.destination)
        import httpx
        import ollama

        hint = (f"install and start Ollama, run 'ollama pull {self.model}', or point OLLAMA_HOST at a server;"
                " recall and everything else work without it")
        try:
            client = ollama.Client(host=self.destination.url, timeout=self.timeout, follow_redirects=False)
            with self.waiting():
                response = client.chat(model=self.model, messages=[{"role": "system", "content": system},
                                                                   {"role": "user", "content": user}])
        except httpx.TimeoutException:
            raise ProviderUnavailable(f"Ollama at {trust.shown(self.host)} did not answer within {self.timeout:.0f}s", hint) from None
        except (httpx.HTTPError, ConnectionError) as exc:
            raise ProviderUnavailable(f"Ollama is not reachable at {trust.shown(self.host)} ({_first_line(exc)})", hint) from None
        except ollama.ResponseError as exc:
            raise ProviderUnavailable(f"Ollama refused: {_first_line(exc)}", hint) from None
        except Exception as exc:  # a malformed answer: the ollama package fails to parse it
            raise ProviderUnavailable(f"Ollama at {trust.shown(self.host)} sent an answer memtool cannot read ({_first_line(exc)})",
                                      hint) from None
        try:
            text = response["message"]["content"]
        except (KeyError, TypeError):
            text = None
        if not isinstance(text, str) or not text.strip():
            raise ProviderUnavailable(f"Ollama at {trust.shown(self.host)} returned no text for model {self.model!r}", hint)
        return text.strip()


def unusable(host: str) -> None:
    """Raise ProviderUnavailable, before anything is imported or sent, when `host` (OLLAMA_HOST) does
    not parse: the `ollama` package would fail with a traceback at import."""
    problem = trust.url_problem(host)
    if problem is not None:
        raise ProviderUnavailable(f"the Ollama address {trust.shown(host)!r} cannot be used ({problem})",
                                  "set OLLAMA_HOST to http://HOST:PORT, e.g. http://127.0.0.1:11434, or unset it")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
