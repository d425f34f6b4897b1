"""Defects a hostile QA pass left: input that was half-applied, silently reread as something else, or
written past a limit. Each is refused up front, with a reason and a hint, and nothing changes."""

import os

import pytest
from conftest import mem_env, run_json, run_mem


@pytest.mark.parametrize("link", ["memtool.toml", "bank", "SOUL.md"])
def test_init_refuses_a_dangling_link_before_creating_anything(tmp_path, link):
    """`mem init` wrote memory/, bank/, memory.md... and then stopped at memtool.toml -> nowhere."""
    ws = tmp_path / "brain"
    ws.mkdir()
    (ws / link).symlink_to(tmp_path / "missing")
    proc = run_mem("init", ws)
    assert proc.returncode != 0 and "does not exist; nothing was created" in proc.stderr, proc.stderr
    assert f"rm {ws / link}" in proc.stderr
    assert sorted(os.listdir(ws)) == [link] and not (tmp_path / "missing").exists()
    (ws / link).unlink()
    assert run_mem("init", ws).returncode == 0 and (ws / "memtool.toml").is_file()


def test_init_refuses_a_link_out_of_the_workspace_before_creating_anything(tmp_path):
    ws = tmp_path / "brain"
    ws.mkdir()
    (ws / "SOUL.md").symlink_to(tmp_path / "elsewhere" / "SOUL.md")
    (tmp_path / "elsewhere").mkdir()
    proc = run_mem("init", ws)
    assert proc.returncode != 0 and "nothing was created" in proc.stderr, proc.stderr
    assert sorted(os.listdir(ws)) == ["SOUL.md"] and not os.listdir(tmp_path / "elsewhere")
