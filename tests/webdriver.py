"""A small W3C WebDriver client over HTTP (httpx) for Debian's `chromium` + `chromium-driver`:
enough for the browser journeys of `mem serve` without another dependency. chromedriver listens
on 127.0.0.1 only and is stopped with the session."""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C web element reference key
CHROMIUM = ("chromium", "chromium-browser")


def missing() -> str | None:
    """Why headless Chromium cannot run here (None: it can)."""
    if not shutil.which("chromedriver"):
        return "chromedriver is not installed (Debian: apt-get install chromium chromium-driver; .ci/run does so as root)"
    if not any(shutil.which(b) for b in CHROMIUM):
        return "chromium is not installed (Debian: apt-get install chromium chromium-driver)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    def __init__(self, width: int = 1280, height: int = 900):
        port = _free_port()
        self.driver = subprocess.Popen(["chromedriver", f"--port={port}", "--allowed-ips=127.0.0.1"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        binary = next(shutil.which(b) for b in CHROMIUM if shutil.which(b))
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": binary, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                       f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"]}}}}
        deadline = time.time() + 20
        while True:
            try:
                reply = self.http.post("/session", json=caps)
                break
            except httpx.TransportError:
                if time.time() > deadline:
                    self.driver.kill()
                    raise
                time.sleep(0.1)
        value = reply.json()["value"]
        if "sessionId" not in value:
            self.driver.kill()
            raise RuntimeError(f"chromedriver refused a session: {value}")
        self.session = f"/session/{value['sessionId']}"

    def _call(self, method: str, path: str, body: dict | None = None):
        reply = self.http.request(method, self.session + path, json=body if method == "POST" else None)
        value = reply.json()["value"]
        if reply.status_code >= 400:
            raise RuntimeError(f"{path}: {value.get('message', value)}")
        return value

    def get(self, url: str) -> None:
        self._call("POST", "/url", {"url": url})

    @property
    def url(self) -> str:
        return self._call("GET", "/url")

    def js(self, script: str, *args):
        return self._call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css: str, timeout: float = 10.0) -> str:
        """The first element matching `css`, waiting up to `timeout` seconds for it."""
        deadline = time.time() + timeout
        while True:
            found = self._call("POST", "/elements", {"using": "css selector", "value": css})
            if found:
                return found[0][ELEMENT]
            if time.time() > deadline:
                raise AssertionError(f"no element {css!r} on {self.url}")
            time.sleep(0.1)

    def wait(self, condition: str, timeout: float = 10.0) -> None:
        """Until the JavaScript expression `condition` is true."""
        deadline = time.time() + timeout
        while not self.js(f"return !!({condition});"):
            if time.time() > deadline:
                raise AssertionError(f"timed out waiting for {condition} on {self.url}")
            time.sleep(0.1)

    def click(self, element: str) -> None:
        self._call("POST", f"/element/{element}/click", {})

    def type(self, element: str, text: str) -> None:
        self._call("POST", f"/element/{element}/value", {"text": text})

    def text(self, element: str) -> str:
        return self._call("GET", f"/element/{element}/text")

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._call("GET", "/screenshot")))

    def quit(self) -> None:
        try:
            self.http.delete(self.session)
        except httpx.HTTPError:
            pass
        self.http.close()
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
            self.driver.wait()
