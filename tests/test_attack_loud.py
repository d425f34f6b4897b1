"""Issue 13 C/E as a hostile user tries them: nothing dropped silently, no tracebacks, clear errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mem_env, run_json, run_mem, write
from memtool.document import parse

DEEP_LIST = "".join("  " * i + "- l%d\n" % i for i in range(10)) + "\nAfter: SENT here.\n"


# --- 13.8 deep nesting -------------------------------------------------------------------------

def test_13_8_a_deep_list_and_the_paragraph_after_it_are_indexed(empty_ws):
    write(empty_ws, "memory/2026-02-10.md", DEEP_LIST)
    write(empty_ws, "memory/2026-02-11.md", "> " * 25 + "QUOTEDEEP words\n\nAfter the quote PLAINAFTER.\n")
    proc, data = run_json("recall", "SENT", cwd=empty_ws)
    assert proc.returncode == 0, proc.stderr
    assert [r["source"] for r in data["results"]] == ["memory/2026-02-10.md#L12"]
    for word in ("l9", "QUOTEDEEP", "PLAINAFTER"):
        proc, data = run_json("recall", word, cwd=empty_ws)
        assert data["results"], (word, proc.stderr)


def test_13_8_nesting_past_what_the_parser_follows_is_indexed_and_reported_by_check(empty_ws):
    deep = "".join("  " * i + "- d%d\n" % i for i in range(45)) + "\nAfter: TAILWORD here.\n"
    write(empty_ws, "memory/2026-02-10.md", deep)
    write(empty_ws, "memory/2026-02-11.md", "> " * 200 + "QUOTEDEEP words\n")
    for word in ("d44", "TAILWORD", "QUOTEDEEP"):
        proc, data = run_json("recall", word, cwd=empty_ws)
        assert data["results"], (word, proc.stderr)
    proc, data = run_json("check", cwd=empty_ws)
    deep = {d["location"] for d in data["diagnostics"] if d["code"] == "too-deep"}
    assert {"memory/2026-02-10.md:47", "memory/2026-02-11.md:1"} <= deep, data
    assert any(loc.startswith("memory/2026-02-10.md:3") for loc in deep), data


_CONTAINERS = st.sampled_from(["> ", "- ", "* ", "1. ", "  ", "    ", ">", "+ "])


@st.composite  # headings (setext underlines) are context, not records: no "-" lines
def _nested_lines(draw):
    lines = []
    for n in range(draw(st.integers(1, 25))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(["", ">", "```", "***", "# H", "| a | b |", "|---|---|", "<div>"])))
            continue
        prefix = "".join(draw(st.lists(_CONTAINERS, max_size=draw(st.sampled_from([3, 12, 40, 90])))))
        lines.append(f"{prefix}word{n}x")
    return lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_nested_lines())
def test_13_8_every_line_of_random_nested_input_is_indexed_or_reported(lines):
    parsed = parse("memory/2026-02-10.md", "\n".join(lines) + "\n")
    reported = {d.line for d in parsed.diagnostics}
    for n, line in enumerate(lines, start=1):
        word = re.search(r"word\d+x", line)
        if not word:
            continue
        held = any(r.line_start <= n <= r.line_end and word[0] in r.content for r in parsed.records)
        assert held or n in reported, (n, line, parsed.records, parsed.diagnostics)


# --- 13.9 unreadable files and folders (as a non-root user) ------------------------------------

def _nobody_ids() -> tuple[int, int]:
    import pwd

    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("SKIPPED LOUDLY: no 'nobody' user to drop privileges to")
    return entry.pw_uid, entry.pw_gid


@pytest.fixture
def nobody_ws():
    """A workspace owned by `nobody` in a folder that user can reach, and a runner that runs `mem`
    as that user (permissions apply to it, unlike to root). The interpreter lives under /root
    (mode 700), so the runner shows it through a private mount namespace."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("SKIPPED LOUDLY: needs root with unshare and setpriv to run mem as an unprivileged user")
    uid, gid = _nobody_ids()
    base = Path(tempfile.mkdtemp(prefix="mem-nobody-", dir="/tmp"))
    base.chmod(0o755)
    ws = base / "ws"
    (base / "mnt").mkdir()
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "workspace", ws)
    pyroot = Path(sys.prefix).resolve()
    if not str(pyroot).startswith("/root/"):
        pyroot = None

    def run(*args, check=None):
        cmd = [sys.executable, "-m", "memtool", *map(str, args)]
        drop = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *cmd]
        if pyroot is not None:  # make /root traversable inside a private mount namespace only
            top = "/root/" + pyroot.relative_to("/root").parts[0]
            script = (f'mount --bind {top} "$0" && mount -t tmpfs -o mode=755 none /root && mkdir -p {top}'
                      f' && mount --bind "$0" {top} && exec "$@"')
            drop = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(base / "mnt"), *drop]
        proc = subprocess.run(drop, cwd=ws, capture_output=True, text=True, env=mem_env(), timeout=120)
        if check is not None:
            assert proc.returncode == check, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def chown():
        for p in [base / "mnt", ws, *ws.rglob("*")]:
            os.lchown(p, uid, gid)

    chown()
    probe = run("--version")
    if probe.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"SKIPPED LOUDLY: cannot run mem as nobody here: {probe.stderr.strip()[-300:]}")
    run.ws, run.chown = ws, chown
    yield run
    for p in [ws, *ws.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(base, ignore_errors=True)


def _json(proc):
    import json

    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def test_13_9_an_unreadable_daily_log_is_reported_and_keeps_its_stale_facts(nobody_ws):
    ws = nobody_ws.ws
    write(ws, "memory/2026-11-05.md", "## Retain\n- W @Peter: Keeps bees NEWHIDDEN in the garden.\n")
    nobody_ws("index", check=0)
    old = ws / "memory" / "2026-10-27.md"
    old.write_text(old.read_text(encoding="utf-8") + "\nA later line.\n", encoding="utf-8")
    new = write(ws, "memory/2026-11-30.md", "Brand new and NEVERREAD.\n")
    nobody_ws.chown()
    old.chmod(0)
    new.chmod(0)
    data = _json(nobody_ws("recall", "Marrakech", "--json", check=0))
    joined = " ".join(data["warnings"])
    assert "could not be indexed" in joined and "marked stale" in joined, data["warnings"]
    hits = [r for r in data["results"] if r["source"].startswith("memory/2026-10-27.md")]
    assert hits and all(r.get("stale") for r in hits), data["results"]
    check = _json(nobody_ws("check", "--json"))
    located = {d["path"]: d for d in check["diagnostics"] if d["code"] == "unreadable"}
    assert {"memory/2026-10-27.md", "memory/2026-11-30.md"} <= set(located), check
    status = _json(nobody_ws("status", "--json", check=0))
    assert status["stale_files"] == ["memory/2026-10-27.md"] and "memory/2026-11-30.md" in status["unreadable"]
    quiet = ws / "memory" / "2026-10-26.md"  # unchanged since indexed: chmod keeps the mtime
    quiet.chmod(0)
    check = _json(nobody_ws("check", "--json"))
    assert any(d["path"] == "memory/2026-10-26.md" and d["code"] == "unreadable" for d in check["diagnostics"]), check
    quiet.chmod(0o644)
    old.chmod(0o644)
    new.chmod(0o644)
    data = _json(nobody_ws("recall", "NEVERREAD", "--json", check=0))
    assert data["results"] and not data["warnings"], data
    data = _json(nobody_ws("recall", "later line", "--json", check=0))
    assert data["results"][0]["source"].startswith("memory/2026-10-27.md") and "stale" not in data["results"][0]


def test_13_9_an_unreadable_bank_folder_is_not_taken_for_deleted(nobody_ws):
    ws = nobody_ws.ws
    nobody_ws("index", check=0)
    before = _json(nobody_ws("recall", "Lisbon", "--json", "--kind", "page", check=0))["results"]
    assert before
    (ws / "bank").chmod(0)
    proc = nobody_ws("index", "--json")
    report = _json(proc)
    assert report["removed"] == 0 and report["unreadable"] >= 1, report
    data = _json(nobody_ws("recall", "Lisbon", "--json", "--kind", "page", check=0))
    assert [r["source"] for r in data["results"]] == [r["source"] for r in before]
    assert all(bool(r.get("stale")) == r["source"].startswith("bank/") for r in data["results"]), [(r["source"], r.get("stale")) for r in data["results"]]
    assert any(r["source"].startswith("bank/") for r in data["results"])
    assert any("cannot read bank" in w for w in data["warnings"]), data["warnings"]
    check = _json(nobody_ws("check", "--json"))
    assert any(d["path"] == "bank" and d["code"] == "unreadable" for d in check["diagnostics"]), check
    (ws / "bank").chmod(0o755)
    data = _json(nobody_ws("recall", "Lisbon", "--json", "--kind", "page", check=0))
    assert data["results"] and not any(r.get("stale") for r in data["results"]) and not data["warnings"]


# --- 13.10 symbolic links: loops, and links leading out of the workspace -----------------------

def test_13_10_a_symlink_loop_is_reported_not_a_traceback(example_ws):
    os.symlink("a.md", example_ws / "bank" / "b.md")
    os.symlink("b.md", example_ws / "bank" / "a.md")
    for args in (["recall", "Lisbon"], ["status"], ["index"], ["episodes", "Lisbon"], ["about", "Peter"]):
        proc = run_mem(*args, cwd=example_ws)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
    proc, data = run_json("check", cwd=example_ws)
    assert "Traceback" not in proc.stderr
    loops = {d["path"] for d in data["diagnostics"] if "loop" in d["message"]}
    assert loops == {"bank/a.md", "bank/b.md"}, data
    proc = run_mem("get", "bank/a.md", cwd=example_ws)
    assert proc.returncode == 4 and "error:" in proc.stderr and "loop" in proc.stderr and "Traceback" not in proc.stderr


def test_13_10_a_symlinked_file_outside_the_workspace_is_not_indexed_and_says_so(example_ws, tmp_path):
    outside = write(tmp_path, "elsewhere/secret.md", "OUTSIDEWORD lives here.\n")
    os.symlink(outside, example_ws / "bank" / "out.md")
    write(example_ws, "bank/inner.md", "INSIDEWORD lives here.\n")
    os.symlink("inner.md", example_ws / "bank" / "alias.md")
    proc, data = run_json("recall", "OUTSIDEWORD", cwd=example_ws)
    assert data["results"] == []
    proc, data = run_json("recall", "INSIDEWORD", cwd=example_ws)
    assert {r["source"].split("#")[0] for r in data["results"]} <= {"bank/inner.md", "bank/alias.md"} and data["results"]
    proc, data = run_json("check", cwd=example_ws)
    assert [d["code"] for d in data["diagnostics"] if d["path"] == "bank/out.md"] == ["outside-workspace"], data
    assert run_mem("get", "bank/out.md", cwd=example_ws).returncode == 2


def _inotify_watches(pid: int) -> int:
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as fh:
                total += sum(1 for line in fh if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts inotify watches in /proc")
def test_13_10_the_watcher_does_not_follow_folder_links_out_of_the_workspace(example_ws, tmp_path):
    import time

    big = tmp_path / "big"
    for i in range(300):
        (big / f"d{i}").mkdir(parents=True)
    os.symlink(big, example_ws / "bank" / "u")
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "-w", str(example_ws), "watch", "--interval", "30"],
                            env=mem_env(), stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not any("answering" in line or "not answering" in line for line in lines):
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        assert any("for changes" in line for line in lines), lines
        time.sleep(1.0)
        assert _inotify_watches(proc.pid) < 30
        write(example_ws, "bank/people/new.md", "NEWFOLDERWORD here.\n")  # a folder made after the start
        deadline = time.monotonic() + 10
        while True:
            r, data = run_json("recall", "NEWFOLDERWORD", cwd=example_ws)
            if data["results"]:
                break
            assert time.monotonic() < deadline, "a file in a new folder was not seen within 10 s"
            time.sleep(0.3)
        assert _inotify_watches(proc.pid) < 30
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


# --- 13.11 errors instead of tracebacks: full disk, read-only state, bad argv; get bounds bytes ---

def _clean_error(proc, code=4):
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr and "error:" in proc.stderr and "hint:" in proc.stderr, proc.stderr[-3000:]


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def test_13_11_a_full_disk_is_an_error_with_a_hint_and_leaves_no_empty_backup(small_disk):
    ws = small_disk / "ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "workspace", ws)
    run_mem("index", cwd=ws, check=0)
    before = {p: p.read_bytes() for p in ws.rglob("*.md")}
    filler = _fill(small_disk)
    for args in (["retain", "W: full disk"], ["core", "append", "- one more"], ["index", "--rebuild"], ["index"],
                 ["recall", "Lisbon"], ["status"], ["check"], ["reflect", "--force"]):
        proc = run_mem(*args, cwd=ws)
        if proc.returncode == 0:  # a read that needs no new space may still answer
            continue
        _clean_error(proc)
        assert "full" in proc.stderr, (args, proc.stderr)
    assert {p: p.read_bytes() for p in ws.rglob("*.md")} == before
    filler.unlink()
    proc, data = run_json("sync", "restore", cwd=ws)
    assert proc.returncode == 0 and all(b["size"] > 0 for b in data["backups"]), data
    assert not list((ws / ".memory").rglob("*.partial"))


def test_13_11_a_read_only_state_folder_is_an_error_with_a_hint(nobody_ws):
    ws = nobody_ws.ws
    nobody_ws("index", check=0)
    for p in [ws / ".memory", *(ws / ".memory").rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    before = {p: p.read_bytes() for p in ws.rglob("*.md")}
    for args in (["retain", "W: read only"], ["index"], ["index", "--rebuild"], ["recall", "Lisbon"]):
        proc = nobody_ws(*args)
        _clean_error(proc)
    assert {p: p.read_bytes() for p in ws.rglob("*.md")} == before


def test_13_11_arguments_that_are_not_utf8_are_a_usage_error(example_ws):
    for args in ([b"recall", b"caf\xe9"], [b"retain", b"W: \xff\xfe"], [b"-w", b"\xff", b"status"]):
        proc = subprocess.run([sys.executable.encode(), b"-m", b"memtool", *args], cwd=example_ws,
                              capture_output=True, env=mem_env(), timeout=60)
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 2 and "not valid UTF-8" in err and "Traceback" not in err, err[-2000:]


def test_13_11_get_bounds_the_characters_of_a_huge_line(example_ws):
    write(example_ws, "memory/2026-12-01.md", "start " + "x" * 20_000_000 + "\nsecond line\n")
    proc = run_mem("get", "memory/2026-12-01.md", "--max-lines", "1", cwd=example_ws)
    assert proc.returncode == 0 and len(proc.stdout) < 200_000, len(proc.stdout)
    assert "more characters]" in proc.stdout and "cut after" in proc.stderr
    proc, data = run_json("get", "memory/2026-12-01.md", cwd=example_ws)
    assert data["truncated"] and data["cut"]["line"] == 1 and len(proc.stdout) < 300_000


# --- 13.16 workers die with their parent ------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_13_16_index_workers_die_with_a_killed_parent(empty_ws):
    import signal
    import time

    body = "".join(f"- @Person{i}: line {i} about project {i % 7} and more words to parse.\n" for i in range(60))
    for d in range(1500):
        write(empty_ws, f"memory/{2000 + d // 365:04d}-{1 + d % 12:02d}-{1 + d % 28:02d}-{d}.md", body)
    proc = subprocess.Popen([sys.executable, "-m", "memtool", "reflect", "--force"], cwd=empty_ws, env=mem_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.02)
        assert workers, "the index run started no worker processes (too few files, or one core)"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)], "workers outlived their killed parent"
    finally:
        for w in workers:
            try:
                os.kill(w, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- 13.E small but real ----------------------------------------------------------------------

def test_13_E_misspelt_settings_are_named_with_a_close_match(example_ws):
    write(example_ws, "memtool.toml", "[index]\nmax_file_bytes = 5_000_000\nmax_file_byte = 10\n\n"
                                      "[reflct]\nmin_hours = 1\n\n[recall]\nmode = \"lexical\"\ntrack_acess = false\n")
    proc, data = run_json("recall", "Lisbon", cwd=example_ws)
    assert proc.returncode == 0
    warned = " | ".join(data["warnings"])
    assert "memtool.toml:3: unknown key index.max_file_byte (did you mean index.max_file_bytes?)" in warned, warned
    assert "memtool.toml:5: unknown section [reflct] (did you mean [reflect]?)" in warned, warned
    assert "memtool.toml:10: unknown key recall.track_acess (did you mean recall.track_access?)" in warned, warned
    assert "memtool.toml" in run_mem("status", cwd=example_ws).stderr
    assert "unknown key" in run_mem("check", cwd=example_ws).stderr
    write(example_ws, "memtool.toml", "embedder = \"none\"\n")
    proc = run_mem("status", cwd=example_ws)
    assert proc.returncode == 4 and "[embedder]" in proc.stderr and "Traceback" not in proc.stderr
    write(example_ws, "memtool.toml", (Path(__file__).resolve().parents[1] / "docs" / "configuration.md")
          .read_text(encoding="utf-8").split("```toml\n", 1)[1].split("```", 1)[0])
    proc, data = run_json("recall", "Lisbon", cwd=example_ws)
    assert not [w for w in data["warnings"] if "memtool.toml" in w], "the documented settings are all known"


def test_13_E_two_corrupt_indexes_set_aside_in_one_second_are_both_kept(example_ws):
    from memtool.memory import Memory
    from memtool.workspace import Workspace

    run_mem("index", cwd=example_ws, check=0)
    index = example_ws / ".memory" / "index.sqlite"
    for n in range(3):
        mem = Memory(Workspace(example_ws), embedder="none")
        mem.close()
        for suffix in ("-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
        index.write_bytes(b"garbage %d " % n * 4096)
        mem = Memory(Workspace(example_ws), embedder="none")
        mem.store  # opening finds it corrupt and sets it aside
        mem.close()
    kept = sorted(p.read_bytes()[:9] for p in (example_ws / ".memory").glob("index.sqlite.corrupt-*"))
    assert kept == [b"garbage 0", b"garbage 1", b"garbage 2"], kept


def test_13_E_an_as_of_that_is_not_a_date_names_as_of(example_ws):
    proc = run_mem("recall", "Lisbon", "--as-of", "last spring", cwd=example_ws)
    assert proc.returncode == 2 and "--as-of 'last spring'" in proc.stderr and "--until" not in proc.stderr, proc.stderr
