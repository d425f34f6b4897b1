"""Proposals of `mem reflect` ([reflect] propose_typed): a local model (the Ollama stand-in, on
loopback) suggests typed facts for untyped log lines and a week's observation; they wait in the
review queue and reach the Markdown only through a person's decision."""

from __future__ import annotations

import json
import socket
from datetime import date, timedelta

import pytest

import netns
from conftest import mem_env, run_json, run_mem, write
from ollama_stub import OllamaStub

TODAY = date.today()
LAST_WEEK = TODAY - timedelta(days=TODAY.weekday() + 7)  # Monday of the last complete week
DAY = (LAST_WEEK + timedelta(days=2)).isoformat()
PRIVATE_DAY = (LAST_WEEK + timedelta(days=3)).isoformat()
LEGAL_DAY = (LAST_WEEK + timedelta(days=4)).isoformat()
CONFIG = ("[llm]\nmodel = \"toy-chat\"\n\n[reflect]\npropose_typed = true\nmin_new_facts = 0\n\n"
          "[trust]\nlegal = [\"memory/" + LEGAL_DAY + ".md\"]\n")
LOG = f"# {DAY}\n\nMet Peter at the station; he moved to Lisbon in May.\n\n- Bought oat milk and coffee beans today.\n"


def _ws(tmp_path, config: str = CONFIG):
    ws = tmp_path / "ws"
    write(ws, "memtool.toml", config)
    write(ws, f"memory/{DAY}.md", LOG)
    write(ws, f"memory/{PRIVATE_DAY}.md", f"---\ntrust: private\n---\n# {PRIVATE_DAY}\n\nFERRITINMARK blood test came back low again.\n")
    write(ws, f"memory/{LEGAL_DAY}.md", f"# {LEGAL_DAY}\n\nLEGALMARK the settlement talks with the landlord failed.\n")
    return ws


def _reply(body: dict) -> str:
    """A well-behaved model: a W fact for the Peter note, none for the shopping line, a week's observation."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if "observation" in system and "one week" in system:
        return json.dumps({"observation": "S: A week of errands and catching up with Peter."})
    if "Peter" in user:
        return json.dumps({"fact": "W @Peter: Moved to Lisbon in May."})
    return json.dumps({"fact": None})


@pytest.fixture
def stub():
    server = OllamaStub()
    server.chat_reply = _reply
    yield server
    server.stop()


def _reflect(ws, stub_url: str):
    return run_json("-w", ws, "reflect", "--force", env=mem_env(OLLAMA_HOST=stub_url))


def _sent(stub, since: int = 0, lines_only: bool = False) -> str:
    """The notes (user messages) the model received from the `since`-th chat on (with `lines_only`,
    only those asking for a typed fact, not a week's observation)."""
    return "\n".join(c["messages"][1]["content"] for c in stub.chats[since:]
                     if not lines_only or c["messages"][1]["content"].startswith("Note ("))


def _snapshot(ws) -> dict:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in (ws / "memory").rglob("*.md")}


def _queue(ws, status: str = "open") -> list[dict]:
    proc, data = run_json("-w", ws, "review", "list", "--status", status)
    assert proc.returncode == 0, proc.stderr
    return [i for i in data["items"] if i["kind"] in ("typed-fact", "observation")]


def test_i7_proposals_wait_in_the_queue_and_an_accept_writes_the_typed_line(stub, tmp_path):
    ws = _ws(tmp_path)
    before = _snapshot(ws)
    proc, data = _reflect(ws, stub.url)
    assert proc.returncode == 0, proc.stderr
    report = data["consolidation"]["proposals"]
    assert report["proposed"] == 2 and report["observation"] and report["rejected"] == 0, report
    assert _snapshot(ws) == before  # proposed only: no daily log changed
    items = {i["kind"]: i for i in _queue(ws)}
    fact, week = items["typed-fact"], items["observation"]
    assert fact["actions"] == ["accept", "dismiss"] and fact["b"]["content"] == "W @Peter: Moved to Lisbon in May."
    assert fact["a"]["source"] == f"memory/{DAY}.md#L3" and week["b"]["content"].startswith("S: ")
    # Accept the fact: the typed line is appended to that day's Retain section, citing its source.
    proc, done = run_json("-w", ws, "review", "decide", fact["id"], "accept")
    assert proc.returncode == 0, proc.stderr
    text = (ws / f"memory/{DAY}.md").read_text()
    assert text.startswith(LOG)  # the person's lines are untouched
    assert text[len(LOG):] == f"\n## Retain\n- W @Peter: Moved to Lisbon in May. [from:: memory/{DAY}.md#L3]\n"
    assert done["written"]["source"] == f"memory/{DAY}.md#L8"
    decisions = (ws / "bank/decisions.md").read_text()
    assert f"accept {fact['id']}: `memory/{DAY}.md#L3` → `memory/{DAY}.md#L8` [kind:: typed-fact]" in decisions
    # Dismiss the observation with an edit? Refused: an edited text goes only with accept.
    proc = run_mem("-w", ws, "review", "decide", week["id"], "dismiss", "--text", "S: no")
    assert proc.returncode == 2 and "only with accept" in proc.stderr
    # The accepted fact is a world fact, and stays one after a rebuild; nothing is proposed again.
    run_mem("-w", ws, "index", "--rebuild", check=0)
    _, found = run_json("-w", ws, "recall", "Peter Lisbon", "--kind", "world")
    assert [r["source"] for r in found["results"]] == [f"memory/{DAY}.md#L8"]
    assert {i["id"] for i in _queue(ws, "decided")} == {fact["id"]}
    asked = len(stub.chats)
    (ws / ".memory" / "local.sqlite").unlink()  # even a machine that never asked honours the decision
    proc, again = _reflect(ws, stub.url)
    assert proc.returncode == 0 and "Met Peter" not in _sent(stub, asked, True) and "oat milk" in _sent(stub, asked, True)
    assert fact["id"] not in {i["id"] for i in _queue(ws)}


def test_i7_an_edited_accept_writes_the_edit_and_a_dismiss_is_honoured(stub, tmp_path):
    ws = _ws(tmp_path)
    _reflect(ws, stub.url)
    items = {i["kind"]: i for i in _queue(ws)}
    proc = run_mem("-w", ws, "review", "decide", items["observation"]["id"], "accept", "--text", "Just a week")
    assert proc.returncode == 2 and "typed fact" in proc.stderr  # an untyped edit is refused, nothing written
    assert not (ws / "bank/decisions.md").exists()
    proc, done = run_json("-w", ws, "review", "decide", items["observation"]["id"], "accept",
                          "--text", "S: Errands, and Peter's news.")
    assert proc.returncode == 0, proc.stderr
    path, line = done["written"]["source"].split("#L")
    assert path == f"memory/{PRIVATE_DAY}.md"
    written = (ws / path).read_text().splitlines()[int(line) - 1]
    assert written.startswith("- S: Errands, and Peter's news. [week:: ")
    run_mem("-w", ws, "review", "decide", items["typed-fact"]["id"], "dismiss", check=0)
    # A dismissed line is never proposed again, even by a machine that never examined it.
    (ws / ".memory" / "local.sqlite").unlink()
    asked = len(stub.chats)
    proc, data = _reflect(ws, stub.url)
    assert proc.returncode == 0, proc.stderr
    assert "Met Peter" not in _sent(stub, asked, True) and "oat milk" in _sent(stub, asked, True) and not _queue(ws)


def test_i7_legal_lines_never_reach_the_model_and_the_observation_stays_within_its_log(stub, tmp_path):
    ws = _ws(tmp_path)
    proc, data = _reflect(ws, stub.url)
    assert proc.returncode == 0, proc.stderr
    sent = _sent(stub)
    assert "LEGALMARK" not in sent and "Met Peter" in sent
    week = next(i for i in _queue(ws) if i["kind"] == "observation")
    # The week's last log is the private one: the observation goes there, drawn from notes it may hold.
    assert week["b"]["key"] == f"memory/{PRIVATE_DAY}.md"


def test_i7_private_lines_never_reach_a_remote_model(tmp_path):
    """The 'remote' stand-in is on 10.200.0.1 inside the test's own network namespace."""
    ws = _ws(tmp_path)
    reply = json.dumps({"fact": "W @Peter: Moved to Lisbon in May."})
    result = netns.run(tmp_path, [{"args": ["-w", str(ws), "reflect", "--force", "--json"],
                                   "env": {"OLLAMA_HOST": "{remote}"}}], chat_reply=reply)
    run = result["runs"][0]
    assert run["returncode"] == 0, run["stderr"]
    report = json.loads(run["stdout"])["consolidation"]["proposals"]
    assert report["local"] is False and report["withheld"] >= 1 and report["asked"] >= 1, report
    sent = netns.sent(result, "remote")
    assert "Met Peter" in sent  # normal text is asked about
    assert "FERRITINMARK" not in sent and "LEGALMARK" not in sent


def test_i7_a_model_that_is_down_is_named_and_nothing_is_written(tmp_path):
    ws = _ws(tmp_path)
    before = _snapshot(ws)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    proc, data = _reflect(ws, f"http://127.0.0.1:{port}")
    assert proc.returncode == 0, proc.stderr  # docs/cli.md: reflect degrades, the rest of the run stands
    assert "proposals: Ollama is not reachable" in proc.stderr
    assert data["consolidation"]["proposals"]["proposed"] == 0 and data["pages"] is not None
    assert _snapshot(ws) == before and not _queue(ws) and not (ws / "bank/decisions.md").exists()


def test_i7_malformed_model_output_proposes_nothing(stub, tmp_path):
    ws = _ws(tmp_path)
    before = _snapshot(ws)
    stub.chat_reply = lambda body: 'Sure! {"fact": "Peter moved"} or {"observation": "a nice week"}'
    proc, data = _reflect(ws, stub.url)
    assert proc.returncode == 0, proc.stderr
    report = data["consolidation"]["proposals"]
    assert report["rejected"] == report["asked"] >= 2 and report["proposed"] == 0, report
    assert "malformed" in proc.stderr
    assert _snapshot(ws) == before and not _queue(ws)


def test_i7_proposals_stay_off_unless_configured(stub, tmp_path):
    ws = _ws(tmp_path, config="[reflect]\nmin_new_facts = 0\n")
    proc, data = _reflect(ws, stub.url)
    assert proc.returncode == 0 and data["consolidation"]["proposals"] is None and not stub.chats
    write(ws, "memtool.toml", "[reflect]\npropose_typed = true\n")
    proc = run_mem("-w", ws, "reflect", "--force")
    assert proc.returncode == 4 and "propose_typed needs" in proc.stderr and "[llm]" in proc.stderr


def test_i7_each_run_sends_at_most_propose_lines_new_lines(stub, tmp_path):
    ws = _ws(tmp_path, config=CONFIG.replace("propose_typed = true\n", "propose_typed = true\npropose_lines = 1\n"))
    _, first = _reflect(ws, stub.url)
    _, second = _reflect(ws, stub.url)
    lines = [c["messages"][1]["content"] for c in stub.chats if c["messages"][1]["content"].startswith("Note (")]
    assert first["consolidation"]["proposals"]["asked"] == 2  # one line, and the week's observation once
    assert second["consolidation"]["proposals"]["asked"] == 1 and len(lines) == len(set(lines)) == 2


def test_i7_the_review_page_accepts_a_proposal_with_an_edited_text(stub, tmp_path):
    from test_serve import Served

    ws = _ws(tmp_path)
    _reflect(ws, stub.url)
    fact = next(i for i in _queue(ws) if i["kind"] == "typed-fact")
    served = Served(ws)
    try:
        page = served.get("/review")
        assert page.status_code == 200 and 'name="text" value="W @Peter: Moved to Lisbon in May."' in page.text
        answer = served.post(f"/review/{fact['id']}", headers={"Origin": served.base, "HX-Request": "true"},
                             data={"action": "accept", "text": "B @Peter: Met Peter; he lives in Lisbon now."})
    finally:
        served.stop()
    assert answer.status_code == 200 and "decided: accept" in answer.text, answer.text
    assert (ws / f"memory/{DAY}.md").read_text().endswith(
        f"- B @Peter: Met Peter; he lives in Lisbon now. [from:: memory/{DAY}.md#L3]\n")


def test_i7_model_answers_are_checked_before_anything_is_proposed():
    from memtool.reflect import proposals

    assert proposals.parse_typed('{"fact": "- O(c=0.8) @Peter: Prefers tea."}') == "O(c=0.8) @Peter: Prefers tea."
    assert proposals.parse_typed('{"fact": null}') == ""
    for bad in ('{"fact": "Peter prefers tea"}', '{"fact": "O(c=7): x"}', '{"fact": "W: a\\nB: b"}',
                '{"fact": "W: a\\u001b[2J"}', '{"decision": "merge"}', "W @Peter: Prefers tea.", '{"fact": 3}'):
        assert proposals.parse_typed(bad) is None, bad
    assert proposals.parse_observation('{"observation": "W: not an observation"}') is None
    assert proposals.week_before(date(2026, 12, 1)) == ("2026-W48", date(2026, 11, 23), date(2026, 11, 29))


def test_i7_an_agent_lists_and_dismisses_a_proposal_through_the_mcp_tool(stub, tmp_path):
    from test_mcp import answer, call, session

    ws = _ws(tmp_path)
    _reflect(ws, stub.url)
    before = _snapshot(ws)

    async def script(s):
        listed = answer(await call(s, "review"))
        fact = next(i for i in listed["items"] if i["kind"] == "typed-fact")
        wrong = await call(s, "review", action="decide", item=fact["id"], decision="dismiss", text="W: edited")
        return fact, wrong, answer(await call(s, "review", action="decide", item=fact["id"], decision="dismiss"))
    fact, wrong, done = session(ws, script)
    assert wrong.is_error and "only with accept" in wrong.content[0].text
    assert done["action"] == "dismiss" and done["written"] is None and _snapshot(ws) == before
    assert f"dismiss {fact['id']}:" in (ws / "bank/decisions.md").read_text()


@pytest.mark.parametrize("full", ["log", "decisions"])
def test_i7_an_accept_that_would_push_a_file_past_max_file_bytes_writes_nothing(stub, tmp_path, full):
    """Accepting a proposal appended its typed line (and the decision) past [index] max_file_bytes; with
    only bank/decisions.md full, the daily log got the line and the decision then had nowhere to go."""
    from test_attack_refusals import _pad

    from memtool.reflect import decisions

    ws = _ws(tmp_path)
    assert _reflect(ws, stub.url)[0].returncode == 0
    fact = {i["kind"]: i for i in _queue(ws)}["typed-fact"]
    write(ws, "memtool.toml", CONFIG + "\n[index]\nmax_file_bytes = 1000\n")
    if full == "log":
        _pad(ws / f"memory/{DAY}.md", 990)
    else:
        write(ws, decisions.PAGE, decisions.HEADER)
        _pad(ws / decisions.PAGE, 990)
    before = _snapshot(ws) | {"decisions": (ws / decisions.PAGE).read_bytes() if full == "decisions" else None}
    proc = run_mem("-w", ws, "review", "decide", fact["id"], "accept")
    assert proc.returncode == 4 and "over [index] max_file_bytes (1,000)" in proc.stderr, proc.stderr
    assert before == _snapshot(ws) | {"decisions": (ws / decisions.PAGE).read_bytes() if full == "decisions" else None}
    assert fact["id"] in {i["id"] for i in _queue(ws)}
