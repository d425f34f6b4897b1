"""A line `mem` wrote on this machine and another machine removed is no editor loss: `mem sync` says
so once, `mem check`/status/recall stay quiet, and `mem check --restore PATH#Lline` can still put it
back. Two real workspaces, a folder remote, real `mem` processes."""

from __future__ import annotations

import os

from conftest import mem_env, run_json, run_mem, write

ENV = mem_env(MEM_EMBEDDER="none")
DAY = "memory/2026-11-30.md"


def _pair(tmp_path):
    remote = tmp_path / "remote"
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    for ws in (a, b):
        (ws / "memory").mkdir(parents=True)
    write(a, "memory.md", "# Core memory\n\n- Works from Lisbon.\n")
    write(a, DAY, "# 2026-11-30\n\nWritten by hand.\n")
    run_mem("-w", a, "sync", remote, check=0, env=ENV)
    run_mem("-w", b, "sync", remote, check=0, env=ENV)
    return a, b


def _gone(ws) -> list[dict]:
    proc, status = run_json("-w", ws, "status", env=ENV)
    assert proc.returncode == 0, proc.stderr
    return status["retained_gone"]


def test_a_core_line_replaced_on_another_machine_is_said_by_sync_not_by_check(tmp_path):
    a, b = _pair(tmp_path)
    run_mem("-w", a, "core", "append", "- Prefers tea.", check=0, env=ENV)
    run_mem("-w", a, "sync", check=0, env=ENV)
    run_mem("-w", b, "sync", check=0, env=ENV)
    run_mem("-w", b, "core", "replace", "Prefers tea.", "Prefers coffee.", check=0, env=ENV)
    run_mem("-w", b, "sync", check=0, env=ENV)
    proc, report = run_json("-w", a, "sync", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert [(e["source"], e["text"]) for e in report["removed_elsewhere"]] == [("memory.md#L4", "- Prefers tea.")]
    assert "coffee" in (a / "memory.md").read_text() and "tea" not in (a / "memory.md").read_text()
    assert run_mem("-w", a, "check", env=ENV).returncode == 0
    assert _gone(a) == []
    recall = run_mem("-w", a, "recall", "coffee", env=ENV)
    assert recall.returncode == 0 and "gone" not in recall.stderr
    # said once: the next round is quiet
    again = run_mem("-w", a, "sync", env=ENV)
    assert again.returncode == 0 and "removed on another machine" not in again.stderr
    # a plain restore puts back only editor losses; naming the line brings it back
    run_mem("-w", a, "check", "--restore", env=ENV)
    run_mem("-w", a, "check", "--restore", "memory.md", env=ENV)  # a path names the file's editor losses only
    assert "tea" not in (a / "memory.md").read_text()
    proc = run_mem("-w", a, "check", "--restore", "memory.md#L4", env=ENV)
    assert proc.returncode == 0, proc.stderr
    text = (a / "memory.md").read_text()
    assert "- Prefers tea." in text and "- Prefers coffee." in text
    assert run_mem("-w", a, "check", env=ENV).returncode == 0


def test_a_log_line_deleted_on_another_machine_is_said_once_in_plain_text(tmp_path):
    a, b = _pair(tmp_path)
    run_mem("-w", a, "note", "Jonas moved the meeting to Friday.", "--date", "2026-11-30", check=0, env=ENV)
    run_mem("-w", a, "sync", check=0, env=ENV)
    run_mem("-w", b, "sync", check=0, env=ENV)
    text = (b / DAY).read_text()
    write(b, DAY, text.replace("- Jonas moved the meeting to Friday.\n", ""))
    run_mem("-w", b, "sync", check=0, env=ENV)
    proc = run_mem("-w", a, "sync", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert "1 line(s) this machine wrote were removed on another machine" in proc.stderr
    assert f"mem check --restore {DAY}#L5" in proc.stderr.replace("'", "")
    assert _gone(a) == [] and run_mem("-w", a, "check", env=ENV).returncode == 0


def test_a_stale_editor_save_here_is_still_reported_after_a_sync(tmp_path):
    a, b = _pair(tmp_path)
    stale = (a / "memory.md").read_bytes()
    run_mem("-w", a, "core", "append", "- Prefers tea.", check=0, env=ENV)
    (a / "memory.md").write_bytes(stale)  # an editor's old buffer saved over the append
    os.utime(a / "memory.md")
    run_mem("-w", b, "core", "append", "- Lives near the river.", check=0, env=ENV)
    run_mem("-w", b, "sync", check=0, env=ENV)
    proc, report = run_json("-w", a, "sync", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert report["removed_elsewhere"] == []
    assert [e["text"] for e in _gone(a)] == ["- Prefers tea."]
    assert run_mem("-w", a, "check", env=ENV).returncode == 1
