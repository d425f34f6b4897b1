"""Docs are part of the product: the CLI reference matches `--help`, every command is documented."""

import subprocess
import sys

from conftest import ROOT

from memtool.cli.app import app


def test_cli_reference_matches_help():
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "cli_reference.py"), "--check"], capture_output=True)
    assert proc.returncode == 0, "docs/cli.md is out of date: run `python docs/cli_reference.py`"


def test_every_command_is_in_the_reference_with_an_example():
    sys.path.insert(0, str(ROOT / "docs"))
    import cli_reference

    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    names |= {g.name for g in app.registered_groups}
    names |= {f"{g.name} {c.name or c.callback.__name__}" for g in app.registered_groups
              for c in g.typer_instance.registered_commands}
    assert names <= set(cli_reference.COMMANDS), names - set(cli_reference.COMMANDS)
    commands = list(app.registered_commands) + [c for g in app.registered_groups for c in g.typer_instance.registered_commands]
    for c in commands:
        assert "Example" in (c.callback.__doc__ or ""), c.callback.__name__


def test_readme_commands_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_cmd = "python3 -m pip install -q -e '.[test]' && python3 -m pytest"
    assert test_cmd in readme and test_cmd in ci


def test_15_exit_code_table_matches_exit_status():
    import re

    from memtool.errors import ExitStatus

    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = doc.split("## Exit codes", 1)[1].split("\n\n")[2]
    rows = {(int(code), name) for code, names in re.findall(r"^\| (\d+) \| ([A-Z_, ]+) \|", table, re.M)
            for name in names.split(", ")}
    assert rows == {(s.value, n) for n, s in ExitStatus.__members__.items()}, rows


def test_recall_doc_sections_cited_by_the_code_exist():
    """A constant's comment or a test's docstring cites the section that measured it, by file and
    heading (`docs/recall-experiments.md, "Words beside the cosine"`): the heading must be there."""
    import re

    titles = {}
    for name in ("recall.md", "recall-experiments.md"):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        titles[name] = [re.sub(r"^#+\s*", "", line) for line in text.splitlines() if line.startswith("#")]
        titles[name] += re.findall(r"\*\*([^*]+)\*\*", text)  # a bold paragraph title is cited too
    cited = []
    files = [*(ROOT / "memtool").rglob("*.py"), *(ROOT / "memtool").rglob("*.txt"),
             *(ROOT / "bench").glob("*.py"), *(ROOT / "tests").glob("test_*.py")]
    for path in files:
        if path.name == "test_docs.py":
            continue
        flat = re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text(encoding="utf-8"))  # citations wrap lines
        for m in re.finditer(r"docs/(recall(?:-experiments)?\.md)[,\s(]*((?:\"[^\"]+\"[,\s]*)*)", flat):
            cited += [(path.name, m.group(1), q) for q in re.findall(r'"([^"]+)"', m.group(2))]
    missing = [c for c in cited if not any(t.startswith(c[2]) for t in titles[c[1]])]
    assert len(cited) > 20 and not missing, missing



def test_benchmark_doc_sections_cited_exist():
    """Code and docs cite a measurement by file and heading or session (`docs/benchmarks-history.md,
    "hyb10 session"`): the file named must hold a heading beginning so, or a bold paragraph title
    holding it, since the dated logs moved out of benchmarks.md."""
    import re

    headings, bolds = {}, {}
    for name in ("benchmarks.md", "benchmarks-history.md"):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        headings[name] = [re.sub(r"^#+\s*", "", line) for line in text.splitlines() if line.startswith("#")]
        bolds[name] = [re.sub(r"\s*\n\s*", " ", b) for b in re.findall(r"^\*\*(.+?)\*\*", text, re.M | re.S)]
    cited = []
    files = [*(ROOT / "memtool").rglob("*.py"), *(ROOT / "bench").glob("*.py"), *(ROOT / "tests").glob("test_*.py"),
             ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for path in files:
        if path.name == "test_docs.py":
            continue
        flat = re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text(encoding="utf-8"))
        for m in re.finditer(r"(benchmarks(?:-history)?\.md)(?:\]\([^)]*\))?[,\s(]*((?:\"[^\"]+\"[,\s]*)*)", flat):
            cited += [(path.name, m.group(1), q) for q in re.findall(r'"([^"]+)"', m.group(2))]
    missing = [c for c in cited if not any(h.startswith(c[2]) for h in headings[c[1]])
               and not any(c[2] in b for b in bolds[c[1]])]
    assert len(cited) > 15 and not missing, missing

def _github_anchors(path) -> set[str]:
    """The #anchors GitHub gives a Markdown file's headings (lower case, punctuation but - and _ dropped,
    spaces as -, a repeated heading numbered -1, -2 …), plus explicit <a name/id> anchors."""
    import re

    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    fenced = False
    for line in text.split("\n"):
        fenced ^= line.startswith("```")
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"`([^`]*)`", r"\1", m.group(1)))
            slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            seen[slug] = seen.get(slug, -1) + 1
            yield slug if seen[slug] == 0 else f"{slug}-{seen[slug]}"
    yield from re.findall(r'<a (?:name|id)="([^"]+)"', text)


def test_relative_links_in_the_docs_resolve():
    """Every relative link of README.md and docs/*.md names a file that exists and, for `#anchor`, a
    heading of that file: moving a section between files must move its links too."""
    import re

    broken, checked = [], 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        fenced = False
        for no, line in enumerate(doc.read_text(encoding="utf-8").split("\n"), start=1):
            fenced ^= line.startswith("```")
            if fenced:
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
                if re.match(r"[a-z]+:", target):
                    continue
                name, _, anchor = target.partition("#")
                dest = (doc.parent / name).resolve() if name else doc
                checked += 1
                if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in set(_github_anchors(dest))):
                    broken.append(f"{doc.relative_to(ROOT)}:{no}: {target}")
    assert checked > 50 and not broken, broken
