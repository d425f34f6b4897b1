"""Hostile files and paths: a diagnostic each, never a crash, nothing changed on disk."""

from conftest import run_json, run_mem, write

from memtool.errors import UsageError
from memtool.workspace import Workspace


def snapshot(ws):
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".memory" not in p.parts}


def test_bad_files_give_diagnostics_and_the_rest_still_works(example_ws):
    write(example_ws, "memory/2026-11-30.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    write(example_ws, "memory/2026-11-26.md", "Grüße aus Köln\n".encode("latin-1"))
    write(example_ws, "memory/2026-11-25.md", "")
    write(example_ws, "memory/2025-13-45.md", "- misnamed but searchable: Zebrafisch\n")
    write(example_ws, "memory/notes.md", "- not a day\n")
    write(example_ws, "bank/huge.md", "- " + "huge " * 1_300_000 + "\n")
    write(example_ws, "bank/entities/Broken.md", "---\naliases: [x\ntrust: top-secret\n")
    before = snapshot(example_ws)

    proc, report = run_json("index", cwd=example_ws)
    assert proc.returncode == 0 and report["unreadable"] == 3, proc.stderr

    proc, check = run_json("check", cwd=example_ws)
    assert proc.returncode == 1
    codes = {(d["path"], d["code"]) for d in check["diagnostics"]}
    assert ("memory/2026-11-30.md", "binary") in codes
    assert ("memory/2026-11-26.md", "not-utf8") in codes
    assert ("bank/huge.md", "too-large") in codes
    assert ("memory/2025-13-45.md", "bad-daily-name") in codes
    assert ("memory/notes.md", "bad-daily-name") in codes
    assert ("bank/entities/Broken.md", "frontmatter-unclosed") in codes

    proc, found = run_json("recall", "Zebrafisch", cwd=example_ws)
    assert proc.returncode == 0 and found["results"][0]["source"] == "memory/2025-13-45.md#L1"
    assert any("could not be indexed" in w for w in found["warnings"])
    human = run_mem("recall", "Marrakech", cwd=example_ws, check=0)
    assert "could not be indexed" in human.stderr
    assert snapshot(example_ws) == before


def test_retain_refuses_to_touch_a_non_utf8_day(example_ws):
    write(example_ws, "memory/2026-11-30.md", "Grüße\n".encode("latin-1"))
    before = snapshot(example_ws)
    proc = run_mem("retain", "S: hello", "--date", "2026-11-30", cwd=example_ws)
    assert proc.returncode == 4 and "UTF-8" in proc.stderr
    assert snapshot(example_ws) == before


def test_paths_outside_the_workspace_are_refused(example_ws):
    ws = Workspace(example_ws)
    for bad in ["../outside.md", "/etc/passwd", "memory/../../x.md", ""]:
        try:
            ws.resolve(bad)
        except UsageError as exc:
            assert "outside" in exc.message or "invalid" in exc.message
        else:
            raise AssertionError(bad)
    (example_ws.parent / "secret.md").write_text("- Geheimnis\n", encoding="utf-8")
    (example_ws / "memory" / "link.md").symlink_to(example_ws.parent / "secret.md")
    proc, found = run_json("recall", "Geheimnis", cwd=example_ws)
    assert proc.returncode == 0 and found["results"] == []


def test_broken_config_is_a_clear_error(example_ws):
    write(example_ws, "memtool.toml", "[index\nmax_file_bytes = ")
    proc = run_mem("recall", "Peter", cwd=example_ws)
    assert proc.returncode == 4 and "memtool.toml" in proc.stderr and "hint:" in proc.stderr


def test_an_unknown_embedder_in_the_config_names_the_file(example_ws):
    """A misspelt [embedder] provider said only "unknown embedder", not where it was set."""
    write(example_ws, "memtool.toml", '[embedder]\nprovider = "nanoe6"\n')
    proc = run_mem("recall", "Peter", cwd=example_ws)
    assert proc.returncode == 4 and "memtool.toml: embedder.provider" in proc.stderr and "nanoe6" in proc.stderr
    assert "Traceback" not in proc.stderr
