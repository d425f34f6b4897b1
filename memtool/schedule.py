"""Crontab lines for the jobs memtool runs unattended. Pure.

Cron starts jobs with a bare environment (no PATH beyond /usr/bin:/bin, no virtualenv, no shell
profile), so a line naming plain `mem` fails with "mem: not found". These lines name the program
and the workspace by absolute path, so they run under `env -i` as they do at a prompt.
"""

from __future__ import annotations

from pathlib import Path, PurePath

from memtool.errors import UsageError


def mem_command(argv0: str, executable: str) -> list[str]:
    """The absolute command that runs this memtool: the `mem` script itself when that is what is
    running, else this interpreter with `-m memtool` (e.g. under `python -m memtool`)."""
    script = Path(argv0)
    if PurePath(argv0).name in ("mem", "mem.exe") and script.is_file():
        return [str(script.resolve())]
    return [str(Path(executable).absolute()), "-m", "memtool"]


def cron_lines(command: list[str], workspace: Path, sync_remote: str | None) -> list[dict]:
    """One entry per job: when it runs, the crontab line, and what it does."""
    import shlex  # only to write a schedule: every `mem` command imports this module

    if any(c in part for part in [*command, str(workspace)] for c in "\r\n"):
        raise UsageError(f"{str(workspace)!r} holds a line break: a crontab line cannot name it",
                         "rename the workspace's folder (or the program's) without line breaks")
    base = " ".join(shlex.quote(part) for part in [*command, "-w", str(workspace)])
    jobs = [{"job": "reflect", "when": "30 3 * * *", "command": f"{base} reflect",
             "about": "every night at 03:30: consolidate, entity pages, opinions, journal"}]
    if sync_remote:
        jobs.append({"job": "sync", "when": "*/15 * * * *", "command": f"{base} sync",
                     "about": f"every 15 minutes with {sync_remote} (exit 9 while conflicts wait, so cron mails you)"})
    for job in jobs:  # cron ends a command at an unescaped `%` (the rest goes to its stdin)
        job["line"] = f"{job['when']}  {job['command'].replace('%', chr(92) + '%')}"
    return jobs
