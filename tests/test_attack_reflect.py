"""Hostile entity names and note content reaching `mem reflect` (qc39)."""

from __future__ import annotations

from conftest import run_mem, write


def test_cli_reflect_names_each_entity_a_taken_file_name_leaves_without_a_page(empty_ws):
    write(empty_ws, "memory/2026-11-30.md", "# 2026-11-30\n\n" + "".join(
        f"- W [[{n}]]: fact {i} about it\n" for n in ("a/b", "a:b", "a?b") for i in (1, 2)))
    proc = run_mem("reflect", "--since", "30d", cwd=empty_ws, check=0)
    taken = [line for line in proc.stderr.splitlines() if "same file name" in line]
    assert len(taken) == 2 and len(set(taken)) == 2, proc.stderr  # one line each, and each says which
    assert any("'a:b'" in line for line in taken) and any("'a?b'" in line for line in taken), taken
