"""The main journeys of `mem serve` in headless Chromium (Debian's chromium + chromium-driver,
driven over WebDriver by tests/webdriver.py): search and open a citation, the timeline, an entity
with its confidence chart, a review decision that lands in the Markdown and survives a rebuild.

Screenshots go to the test's temporary folder, and to $MEM_SCREENSHOTS (e.g. docs/img) when set.
Without Chromium the tests are skipped with the reason (`.ci/run` installs it when run as root)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from conftest import EXAMPLE, run_json, run_mem

import webdriver
from memtool.reflect import decisions
from test_serve import Served

pytestmark = pytest.mark.skipif(webdriver.missing() is not None,
                                reason=f"browser journeys skipped: {webdriver.missing()}")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("browser") / "ws"
    shutil.copytree(EXAMPLE, ws, ignore=shutil.ignore_patterns(".memory"))
    run_mem("-w", ws, "reflect", "--force", check=0)
    return ws


@pytest.fixture
def session(workspace, tmp_path):
    server = Served(workspace)
    browser = webdriver.Browser()
    shots = [tmp_path] + ([Path(os.environ["MEM_SCREENSHOTS"])] if os.environ.get("MEM_SCREENSHOTS") else [])

    def shot(name: str) -> None:
        time.sleep(0.3)  # let the last paint land
        for folder in shots:
            browser.screenshot(folder / f"{name}.png")

    try:
        browser.get(server.url)  # the token becomes a cookie; the address loses it
        browser.wait("location.pathname === '/' && !location.search.includes('token')")
        yield server, browser, shot
    finally:
        browser.quit()
        server.stop()


def test_20_journey_search_citation_timeline_and_entity_chart(session):
    server, b, shot = session
    b.type(b.find("input[name=q]"), "Peter Lisbon")
    b.wait("document.querySelectorAll('#results .fact').length > 0")
    assert "Lisbon" in b.text(b.find("#results"))
    shot("search")
    cite = b.find("#results .cite")
    source = b.text(cite)
    b.click(cite)
    b.wait("document.querySelector('.cited') !== null")
    assert b.url.startswith(server.base + "/file?path=") and source.split("#")[0] in b.text(b.find("h1"))
    assert b.js("return document.querySelector('.editors a').href").startswith("vscode://file/")
    shot("citation")

    b.get(server.base + "/timeline?until=2026-11-30")
    b.find("table.heat td.l1, table.heat td.l2, table.heat td.l3, table.heat td.l4")
    b.wait("document.querySelector('#as-of-facts [data-as-of]') !== null")  # the list for the newest day
    assert b.js("return document.querySelector('.heat-wrap').scrollLeft") > 0  # the newest days are in view
    b.js("const r = document.getElementById('as-of'); r.value = r.min; r.dispatchEvent(new Event('input'));"
         "r.dispatchEvent(new Event('change'));")
    first = b.js("return document.getElementById('as-of-label').textContent")
    b.wait(f"document.querySelector('#as-of-facts [data-as-of]').dataset.asOf === '{first}'")
    shot("timeline")
    b.click(b.find("table.heat tr:first-child td a"))
    b.wait("location.pathname === '/file'")
    assert "memory/" in b.text(b.find("h1"))

    b.get(server.base + "/entity/Peter")
    b.wait("document.querySelector('#confidence-chart canvas') !== null")
    assert int(b.js("return document.getElementById('confidence-chart').dataset.drawn")) >= 2
    assert b.js("return document.querySelectorAll('.u-legend .u-series').length") >= 2
    shot("entity")
    b.get(server.base + "/entities")
    b.find("#graph circle")
    shot("entities")


def test_20_journey_a_review_decision_lands_in_the_markdown_and_survives_a_rebuild(session, workspace):
    server, b, shot = session
    b.get(server.base + "/review")
    section = b.find("section.review.open")
    item = b.js("return arguments[0].id", {webdriver.ELEMENT: section})
    b.type(b.find(f"#{item} input[name=note]"), "checked in the browser")
    action = b.js(f"return document.querySelector('#{item} button').value")
    b.click(b.find(f"#{item} button"))
    b.wait(f"document.querySelector('#{item} .decided') !== null")
    page = (workspace / decisions.PAGE).read_text()
    assert f"{action} {item}" in page and "[note:: checked in the browser]" in page
    shot("review")
    run_mem("-w", workspace, "index", "--rebuild", check=0)
    b.get(server.base + "/review")
    assert f"decided: {action}" in b.text(b.find(f"#{item}"))
    _, listed = run_json("-w", workspace, "review", "list", "--status", "decided")
    assert item in [i["id"] for i in listed["items"]]


def test_open_from_the_file_mem_serve_hands_the_browser(workspace, tmp_path):
    """The browser `mem serve --open` starts gets a file, not the address with its token: from there
    the first page must still let it in (qa39: a redirect from a file lost the strict cookie, 401)."""
    from test_serve import _opened

    proc, url, argv = _opened(workspace, tmp_path)
    browser = webdriver.Browser()
    try:
        browser.get(argv)
        browser.wait("location.pathname === '/' && document.querySelector('input[name=q]') !== null")
        assert "token" not in browser.url and "refused" not in browser.text(browser.find("body"))
    finally:
        browser.quit()
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the file goes too
        proc.wait(15)
        proc.stdout.close()
        proc.stderr.close()
