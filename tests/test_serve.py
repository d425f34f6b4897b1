"""`mem serve`: a real server process on 127.0.0.1 and real HTTP requests (httpx)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import mem_env, run_json, run_mem, write

from memtool.reflect import decisions, opinions
from memtool.web import guard, views
from test_review import LOGS


class Served:
    def __init__(self, ws):
        self.proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "serve", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mem_env())
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.proc.stderr.read()
        self.base, _, self.token = self.url.partition("/?token=")
        self.port = int(self.base.rsplit(":", 1)[1])
        self.cookie = {guard.cookie_name(self.port): self.token}

    def get(self, path: str, **kw) -> httpx.Response:
        return httpx.get(self.base + path, cookies=kw.pop("cookies", self.cookie), timeout=30, **kw)

    def post(self, path: str, **kw) -> httpx.Response:
        return httpx.post(self.base + path, cookies=kw.pop("cookies", self.cookie), timeout=30, **kw)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("serve") / "ws"
    for rel, text in LOGS.items():
        write(ws, rel, text)
    write(ws, "memory/2026-11-21.md", "# 2026-11-21\n\n## Retain\n- O(c=0.6) @Kenji: Kenji is a patient teacher.\n"
                                      "- W @Kenji: Kenji is a patient teacher of German to the new team.\n"
                                      "- W @Anna @Kenji: Anna and Kenji plan a <script>alert(1)</script> workshop.\n")
    run_mem("-w", ws, "reflect", "--force", check=0)
    return ws


@pytest.fixture
def served(workspace):
    server = Served(workspace)
    server.ws = workspace
    yield server
    server.stop()


def test_20_a_request_without_the_token_is_refused(served):
    for path in ("/", "/review", "/static/htmx.min.js", "/file?path=memory/2026-11-02.md"):
        answer = served.get(path, cookies={})
        assert answer.status_code == 401 and "token" in answer.text, path
    assert served.get("/", cookies={guard.cookie_name(served.port): "guessed"}).status_code == 401
    assert httpx.get(served.base + "/?token=guessed").status_code == 401


def test_20_the_token_in_the_address_becomes_a_strict_cookie_and_leaves_the_address(served):
    answer = httpx.get(served.base + "/timeline?token=" + served.token + "&until=2026-11-30")
    assert answer.status_code == 303 and answer.headers["location"] == "/timeline?until=2026-11-30"
    cookie = answer.headers["set-cookie"]
    assert served.token in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = served.get("/")
    assert page.status_code == 200 and "access-control-allow-origin" not in page.headers
    assert "script-src 'self'" in page.headers["content-security-policy"] and page.headers["x-frame-options"] == "DENY"
    assert httpx.options(served.base + "/", headers={"Origin": "http://evil.example"}, cookies=served.cookie).status_code == 405


def _opened(ws, tmp_path):
    """`mem serve --open` with a stand-in browser that notes the command line it was started with."""
    seen = tmp_path / "argv"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$*" > {seen}\n', encoding="utf-8")
    browser.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(ws), "serve", "--port", "0", "--open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mem_env(BROWSER=str(browser)))
    url = proc.stdout.readline().strip()
    for _ in range(100):
        if seen.exists():
            break
        time.sleep(0.1)
    return proc, url, seen.read_text(encoding="utf-8")


def test_open_never_puts_the_token_on_a_command_line(workspace, tmp_path):
    """--open started the browser with the address, token and all: on its command line, where every
    local user reads it (`ps`), against the promise of the Security section (qa39). The browser now
    gets a file only this user can read, which goes on to the address."""
    proc, url, argv = _opened(workspace, tmp_path)
    try:
        token = url.partition("?token=")[2]
        assert token and token not in argv, argv
        opener = Path(argv.removeprefix("file://"))
        assert opener.is_file() and opener.stat().st_mode & 0o077 == 0 and url in opener.read_text(encoding="utf-8")
        # the file's page is another site to the browser: the first answer moves on itself (a redirect of a
        # cross-site navigation would not carry the strict cookie), and sets the cookie
        first = httpx.get(url, headers={"Sec-Fetch-Site": "cross-site"})
        assert first.status_code == 200 and 'http-equiv="refresh" content="0;url=/"' in first.text
        assert token in first.headers["set-cookie"] and "SameSite=strict" in first.headers["set-cookie"]
        assert "script-src 'self'" in first.headers["content-security-policy"]
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        proc.wait(15)
        proc.stdout.close()
        proc.stderr.close()
    assert not opener.exists()  # gone with the server


def test_20_a_foreign_host_is_refused(served):
    for host in ("evil.example", f"evil.example:{served.port}", f"127.0.0.1:{served.port + 1}", "rebind.attacker.test"):
        answer = served.get("/", headers={"Host": host})
        assert answer.status_code == 403 and "Host" in answer.text, host
    assert served.get("/", headers={"Host": f"localhost:{served.port}"}).status_code == 200


def test_20_a_foreign_origin_on_post_is_refused_and_writes_nothing(served):
    item = run_json("-w", served.ws, "review", "list")[1]["items"][0]["id"]
    form = {"action": "keep"}
    for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://127.0.0.1:{served.port + 1}"}, {}):
        answer = served.post(f"/review/{item}", data=form, headers=headers)
        assert answer.status_code == 403, headers
    assert served.post(f"/review/{item}", data=form, headers={"Origin": served.base}, cookies={}).status_code == 401
    assert not (served.ws / decisions.PAGE).exists()
    answer = served.post(f"/review/{item}", data=form, headers={"Origin": served.base, "HX-Request": "true"})
    assert answer.status_code == 200 and "decided: keep" in answer.text and "bank/decisions.md#L5" in answer.text
    assert f"keep {item}" in (served.ws / decisions.PAGE).read_text()
    wrong = served.post(f"/review/{item}", data={"action": "link"}, headers={"Origin": served.base})
    assert wrong.status_code == 400 and "hint:" in wrong.text


def test_20_serve_listens_on_loopback_only(served):
    listening = [line.split()[1] for line in open("/proc/net/tcp").read().splitlines()[1:] if line.split()[3] == "0A"]
    ours = [a for a in listening if int(a.split(":")[1], 16) == served.port]
    assert ours == ["0100007F:" + f"{served.port:04X}"]


def test_20_pages_answer_from_the_facade(served):
    found = served.get("/search?q=Kenji+languages", headers={"HX-Request": "true"})
    assert found.status_code == 200 and "memory/2026-11-20.md#L4" in found.text and "<html" not in found.text
    assert "&lt;script&gt;" in served.get("/?q=workshop").text  # notes are text, never markup
    cited = served.get("/file?path=memory/2026-11-20.md&lines=4")
    assert cited.status_code == 200 and 'class="cited"' in cited.text and "vscode://file" in cited.text
    for path in ("/timeline", "/entities", "/entity/Kenji", "/review", "/journal", "/status"):
        assert served.get(path).status_code == 200, path
    assert "confidence-data" in served.get("/entity/Kenji").text
    bad = served.get("/timeline?as_of=last+week")
    assert bad.status_code == 400 and "YYYY-MM-DD" in bad.text
    outside = served.get("/file?path=../../etc/passwd")
    assert outside.status_code == 400 and "root:" not in outside.text


def test_20_views_are_pure_and_bounded():
    heat = views.heat_map([("2026-11-02", "world", 1), ("2026-11-02", "log", 9), ("2026-11-20", "world", 2),
                           ("2027-06-01", "world", 1)], days=30, today="2026-11-25")
    assert heat["until"] == "2026-11-25" and heat["later"] == "2026-12-25" and len(heat["days"]) == 30
    cells = {r["kind"]: {c["day"]: c["level"] for c in r["cells"]} for r in heat["rows"]}
    assert cells["all"]["2026-11-02"] == 4 and 0 < cells["world"]["2026-11-20"] < 4 and cells["all"]["2026-11-03"] == 0
    html = views.render_markdown("# T\n\n- a\n- b <b>x</b> [d](../memory/2026-11-02.md)\n", "bank/p.md", (4, 4))
    assert html.count('class="cited"') == 1 and "&lt;b&gt;" in html and 'href="/file?path=memory/2026-11-02.md"' in html
    assert views.line_span("L4-L6") == (4, 6) and views.line_span("6-4") is None and views.line_span("x") is None



def test_20_the_timeline_at_the_ends_of_the_calendar_is_a_page_not_a_500(served):
    """until=0001-01-01 (or a log dated 0001) put the window's first days before year 1: OverflowError, a 500
    and a traceback on the server's stderr; a log dated 9999-12-31 did the same for the 'later' link."""
    for until in ("0001-01-01", "0001-03-01", "9999-12-30", "9999-12-31"):
        assert served.get(f"/timeline?until={until}").status_code == 200, until
    heat = views.heat_map([("0001-01-03", "world", 1), ("9999-12-31", "world", 1)], days=30, until="9999-12-30")
    assert heat["later"] == "9999-12-31" and heat["days"][-1] == "9999-12-30"
    heat = views.heat_map([("0001-01-03", "world", 1), ("9999-12-31", "world", 1)], days=30, until="0001-01-02")
    assert heat["days"][0] == "0001-01-01" and len(heat["days"]) == 30 and heat["earlier"] is None


def test_20_a_file_posted_as_a_decision_field_is_refused(served):
    """A multipart upload in the note field was written to bank/decisions.md as "UploadFile(filename=…)"."""
    decisions = served.ws / "bank" / "decisions.md"
    before = decisions.read_bytes() if decisions.exists() else None
    item = served.get("/review").text.split('hx-post="/review/', 1)[1].split('"', 1)[0]
    answer = served.post(f"/review/{item}", data={"action": "dismiss"}, files={"note": ("n.txt", b"abc")},
                         headers={"Origin": served.base})
    assert answer.status_code == 400 and "not a file" in answer.text
    assert (decisions.read_bytes() if decisions.exists() else None) == before


def test_a_citation_deep_in_a_long_file_opens_at_its_lines(tmp_path):
    """A daily log past what one read shows (100,000 characters): a citation of line 3000 opened the
    file's first ~1,500 lines, the cited line neither shown nor marked (qa39)."""
    lines = ["# 2026-11-01"] + [f"- line {i} of a long agent log, with a few more words to fill it" for i in range(2, 4001)]
    lines[2999] = "- W @Kenji: Kenji moved the CITEDWORD meeting to Friday."
    write(tmp_path / "ws", "memory/2026-11-01.md", "\n".join(lines) + "\n")
    server = Served(tmp_path / "ws")
    try:
        page = server.get("/file?path=memory/2026-11-01.md&lines=3000")
        assert page.status_code == 200
        assert '<li id="L3000" class="cited">' in page.text and "CITEDWORD" in page.text, page.text[:400]
        assert "lines 2900–" in page.text and "of 4000 are shown" in page.text
        whole = server.get("/file?path=memory/2026-11-01.md")  # no citation: the beginning, said so
        assert 'id="L2"' in whole.text and "CITEDWORD" not in whole.text and "lines 1–" in whole.text
    finally:
        server.stop()
    html = views.render_markdown("- a\n- b\n", "memory/x.md", (11, 11), start=10)
    assert '<li id="L10">' in html and '<li id="L11" class="cited">' in html


def test_20_a_path_too_long_for_the_file_system_is_an_error_page(served):
    """/file?path=xxxx… (5000 characters) raised OSError past the handler: a bare 500 and a traceback."""
    answer = served.get("/file?path=" + "x" * 5000)
    assert answer.status_code == 500 and "File name too long" in answer.text and "hint:" in answer.text

def test_20_confidence_series_replays_the_evidence_rule():
    o = opinions.Opinion("Kenji", "patient", "memory/2026-11-21.md#L4", "2026-11-21", 0.6, "memory/2026-11-21.md#L4",
                         set(), history=["memory/2026-11-01.md#L4"],
                         supporting=["memory/2026-11-22.md#L3", "memory/2026-11-25.md#L3"],
                         contradicting=["memory/2026-11-23.md#L3"])
    points = opinions.series(o, {"memory/2026-11-01.md#L4": 0.9, "memory/2026-11-21.md#L4": 0.6})
    assert [p["day"] for p in points] == ["2026-11-01", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-25"]
    assert [p["confidence"] for p in points[:2]] == [0.9, 0.6]
    assert points[-1]["confidence"] == round(o.confidence, 3)
    assert points[2]["why"] == "supporting" and points[2]["confidence"] > 0.6
    assert points[3]["why"] == "contradicting" and points[3]["confidence"] < points[2]["confidence"]


def test_20_cached_aggregates_follow_edits_on_disk(served):
    assert "Zoltan" not in served.get("/entities").text  # the aggregates are now cached
    before = served.get("/timeline?until=2026-12-03").text
    assert 'title="2026-12-03: 1 world"' not in before
    write(served.ws, "memory/2026-12-03.md", "# 2026-12-03\n\n## Retain\n- W @Zoltan @Kenji: Zoltan met Kenji.\n")
    assert 'title="2026-12-03: 1 world"' in served.get("/timeline?until=2026-12-03").text
    entities = served.get("/entities").text
    assert "/entity/Zoltan" in entities and ("Zoltan ↔ Kenji" in entities or "Kenji ↔ Zoltan" in entities)
    (served.ws / "memory/2026-12-03.md").unlink()
    assert "/entity/Zoltan" not in served.get("/entities").text


def test_20_review_decision_refreshes_the_header_counts(served):
    before = run_json("-w", served.ws, "review", "list", "--status", "all")[1]
    item = next(i for i in before["items"] if i["status"] == "open")
    page = served.get("/review").text
    assert f'id="review-counts" class="muted">{before["open"]} open, {before["decided"]} decided' in page
    answer = served.post(f"/review/{item['id']}", data={"action": "keep"}, headers={"Origin": served.base, "HX-Request": "true"})
    assert answer.status_code == 200 and "decided: keep" in answer.text
    _, found, counts = answer.text.partition('<span id="review-counts"')
    assert found and 'hx-swap-oob="true"' in counts  # htmx puts it in place of the header's counts
    assert f"{before['open'] - 1} open, {before['decided'] + 1} decided" in counts
    open_of_kind = sum(i["status"] == "open" for i in before["items"] if i["kind"] == item["kind"])
    assert f"{item['kind']}: {open_of_kind - 1} open" in counts
    assert f"{before['open'] - 1} open, {before['decided'] + 1} decided" in served.get("/review").text



def test_a_file_that_is_not_utf8_and_a_query_past_the_cap_are_4xx_pages_at_once(tmp_path):
    """/file?path= of a Latin-1 page answered 500 (as if the server had failed); a 3,000-word query
    held the one-at-a-time server for seconds (its first 2,000 characters embedded) to answer it."""
    from memtool.recall.query import MAX_QUERY_CHARS

    write(tmp_path / "ws", "memory/2026-11-01.md", "# 2026-11-01\n\n- W @Kenji: Kenji moved the meeting to Friday.\n")
    (tmp_path / "ws" / "bank").mkdir()
    (tmp_path / "ws" / "bank" / "latin.md").write_bytes("# Grüße\n".encode("latin-1"))
    server = Served(tmp_path / "ws")
    try:
        page = server.get("/file?path=bank/latin.md")
        assert page.status_code == 422 and "not valid UTF-8" in page.text and "hint:" in page.text, page.text[:300]
        words = " ".join(f"Kenji{i} meeting{i}" for i in range(1500))
        assert server.get("/search?q=Kenji").status_code == 200  # the model loaded
        started = time.monotonic()
        long = server.get("/search", params={"q": words}, headers={"HX-Request": "true"})
        took = time.monotonic() - started
        assert long.status_code == 400 and f"at most {MAX_QUERY_CHARS:,}" in long.text and "hint:" in long.text
        assert took < 1.0, took
        fits = server.get("/search", params={"q": "Kenji " + "x" * (MAX_QUERY_CHARS - 10)})
        assert fits.status_code == 200
    finally:
        server.stop()
