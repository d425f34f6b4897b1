"""A local stand-in for an Ollama server (only what memtool calls): POST /api/embed, /api/chat and
/api/generate.

Embeddings are deterministic hashed bags of words, so similar wording gives similar vectors.
It records every request body it received (`requests`: (path, body) pairs, whatever the path), counts
the texts it embedded, can pretend a model is missing, and can be stopped to simulate an outage.
It listens on 127.0.0.1 unless told otherwise (a test's own network namespace may give it another
address; see tests/netns.py). Lives in tests/, never in the package.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODELS = {"toy-a": 64, "toy-b": 32}


def toy_vector(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
        vec[h % dim] += 1.0
    if not any(vec):
        vec[0] = 1.0
    return vec


class OllamaStub:
    def __init__(self, bind: str = "127.0.0.1"):
        self.requests: list[tuple[str, object]] = []  # every (path, body) received, in order
        self.embedded: list[str] = []
        self.chats: list[dict] = []  # the requests /api/chat received
        self.chat_mode = "ok"  # ok | slow | malformed | empty
        self.chat_reply = None  # a function(request body) -> reply text, instead of the canned recap
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/api/version":
                    return self._send(200, {"version": "0.0.0-stub"})
                self._send(404, {"error": "not found"})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                stub.requests.append((self.path, body))
                if not isinstance(body, dict):
                    return self._send(400, {"error": "not JSON"})
                if self.path == "/api/chat":
                    return self._chat(body)
                if self.path == "/api/generate":
                    return self._send(200, {"model": body.get("model"), "response": "A recap.", "done": True})
                if self.path != "/api/embed":
                    return self._send(404, {"error": "not found"})
                model = body.get("model", "").split(":")[0]
                if model not in MODELS:
                    return self._send(404, {"error": f"model '{model}' not found, try pulling it first"})
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts)
                stub.embedded.extend(texts)
                self._send(200, {"model": model, "embeddings": [toy_vector(t, MODELS[model]) for t in texts]})

            def _chat(self, body):
                stub.chats.append(body)
                if stub.chat_mode == "slow":
                    import time

                    time.sleep(3)
                if stub.chat_mode == "malformed":
                    data = b"{this is not json"
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    return self.wfile.write(data)
                text = "" if stub.chat_mode == "empty" else "Lena flew to Marrakech for Andy's birthday [2026-11-27]."
                if stub.chat_reply is not None:
                    text = stub.chat_reply(body)
                self._send(200, {"model": body.get("model"), "created_at": "2026-11-30T00:00:00Z",
                                 "message": {"role": "assistant", "content": text}, "done": True})

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer((bind, 0), Handler)
        self.url = f"http://{bind}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def sent_text(self) -> str:
        """Everything any request carried, as one string (to search for markers)."""
        return "\n".join(json.dumps(body, ensure_ascii=False) if not isinstance(body, str) else body
                         for _, body in self.requests)
