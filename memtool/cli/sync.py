"""`mem sync …`: the sync sub-app (thin wrappers over `Memory.sync_*`) and how its reports read."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import shlex
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from memtool.cli import render
from memtool.cli.call import memory
from memtool.cli.common import JsonOpt
from memtool.cli.render import escape
from memtool.errors import ExitStatus, UsageError
from memtool.retain_log import removed_note


class _SyncGroup(TyperGroup):
    """`mem sync [REMOTE]` runs a sync; `mem sync status|resolve|off|on|restore` are subcommands."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["run", *args]
        return super().parse_args(ctx, args)


sync_app = typer.Typer(cls=_SyncGroup, help="Three-way sync with a folder or S3 remote; nothing is ever silently dropped.\n\n"
                       "mem sync [REMOTE] runs a sync (same as mem sync run [REMOTE]).", no_args_is_help=False)


@sync_app.command("run")
def sync_run(
    remote: Optional[str] = typer.Argument(None, help="A folder or s3://bucket/prefix (default: the bound remote, else [sync] remote in memtool.toml).", show_default=False),
    encrypt: bool = typer.Option(False, "--encrypt", help="Encrypt a new remote (bodies, manifest, names); from then on it is always encrypted. The key: [sync] key_file, else a passphrase (prompt or $MEM_SYNC_PASSPHRASE)."),
    json_: bool = JsonOpt,
) -> None:
    """Sync with a remote: pull, push, merge; overlapping edits become conflicts that wait for you.

    Exit code 9 when conflicts are waiting, 8 when sync is off or bound elsewhere, the remote went
    backwards, or its key is missing or wrong; 6 when the remote cannot be reached or a file's copy
    there is damaged or over the size limit (64 MiB; named, every other file synced);
    4 when this machine could not write a file (named; every other file synced).

    Example: mem sync /mnt/nas/memory --encrypt   (later just: mem sync)
    """
    mem = memory("none")
    with render.progress_bar("uploading") as up, render.progress_bar("downloading") as down:
        report = with_passphrase(lambda passphrase: mem.sync(remote, progress={"upload": up, "download": down},
                                                             encrypt=encrypt, passphrase=passphrase))
    if json_:
        render.emit_json(report)
    else:
        _show_report(report)
    if report["conflicts"]:
        raise typer.Exit(ExitStatus.CONFLICTS)
    if report["damaged"] or report["oversize"]:
        raise typer.Exit(ExitStatus.PROVIDER)
    if report["failed"]:
        raise typer.Exit(ExitStatus.REFUSED)


def with_passphrase(call):
    """`call(None)`; when an encrypted remote wants a passphrase and a person is at the terminal, ask
    for it (twice for a new key) and call again."""
    import sys

    from memtool.sync.encryption import SyncKeyError

    try:
        return call(None)
    except SyncKeyError as exc:
        if not exc.wants_passphrase or not sys.stdin.isatty():
            raise
        render.err.print(escape(exc.message))
        import getpass

        passphrase = getpass.getpass("new sync passphrase: " if exc.new else "sync passphrase: ")
        if exc.new and getpass.getpass("again: ") != passphrase:
            raise SyncKeyError("the two passphrases differ; nothing was written", "run the command again") from None
        return call(passphrase)


def _show_report(report: dict) -> None:
    """What a sync round did (one line of counts), then what it kept, refused, deferred, found damaged
    or left in conflict."""
    counts = ", ".join(f"{len(report[k])} {k}" for k in ("pulled", "pushed", "merged", "deleted", "tombstoned",
                                                        "repaired") if report[k])
    if report["new_conflicts"]:
        counts += (", " if counts else "") + f"{len(report['new_conflicts'])} new conflict(s)"
    counts = counts or ("nothing else to do" if report["conflicts"] or report["damaged"] or report["oversize"]
                        or report["failed"] else "nothing to do")
    render.err.print(f"synced with {escape(report['remote'])}: {counts} ({report['files']} files, "
                     f"{sum(report['requests'].values())} requests, {report['seconds']:.2f} s)")
    _show_notes(report)


def _show_notes(report: dict) -> None:
    """The warnings of a round (`mem sync` and `mem sync clone`): kept, refused, not synced, deferred,
    damaged, conflicts."""
    for note in report["kept"]:
        render.warn(note)
    for note in report["refused"]:
        render.warn(f"refused from the remote's manifest: {note} (nothing written here for it; "
                    "the rest of the round went ahead)")
    for note in report["collisions"]:
        render.warn(f"not synced: {note} (on macOS and Windows the two would be one file, one overwriting the other; "
                    "rename one of them where it was written, then mem sync)")
    for note in report["not_synced"]:
        render.warn(f"not synced: {note} (this machine does not publish it; rename the file or fix the link)")
    for path in report["deferred"]:
        render.warn(f"{path} changed during the sync; the next sync merges it")
    if report.get("removed_elsewhere"):
        render.warn(escape(removed_note(report["removed_elsewhere"])))
    for path in report["damaged"]:
        render.warn(f"the remote's copy of {path} is missing or damaged (its bytes do not match their hash); "
                    "every other file synced; a machine holding the right version repairs it on its next sync")
    for note in report["oversize"]:
        render.warn(f"not synced: {note}")
    for note in report["failed"]:
        render.warn(f"not written here: {note} (every other file synced; the next mem sync tries it again)")
    if report["conflicts"]:
        render.warn(f"{len(report['conflicts'])} conflict(s) wait for you: " + ", ".join(report["conflicts"])
                    + " (see: mem sync status, then mem sync resolve PATH --keep local|remote|both)")


@sync_app.command("gc")
def sync_gc(
    remote: Optional[str] = typer.Argument(None, help="A folder or s3://bucket/prefix (default: the bound remote, else [sync] remote in memtool.toml).", show_default=False),
    min_age: float = typer.Option(600.0, "--min-age", help="Only revisions unnamed and older than this many seconds (younger ones may belong to a sync in flight on another machine).", min=0),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted; delete nothing."),
    json_: bool = JsonOpt,
) -> None:
    """Delete the revisions on the remote that its manifest no longer names (after mem forget and mem sync).

    Example: mem sync gc --min-age 0
    """
    report = memory("none").sync_gc(remote, min_age=min_age, dry_run=dry_run)
    if json_:
        render.emit_json(report)
        return
    gone = report["would_delete"] if dry_run else report["deleted"]
    render.err.print(f"{'would delete' if dry_run else 'deleted'} {len(gone)} old revision(s) on {escape(report['remote'])}; "
                     f"{report['kept']} named by the manifest kept"
                     + (f", {report['too_young']} younger than {min_age:g}s kept" if report["too_young"] else ""))


@sync_app.command("status")
def sync_status(json_: bool = JsonOpt) -> None:
    """Show the bound remote, the off switch, waiting conflicts (here and, as of the last sync, on other
    machines) and local changes not yet synced (no network).

    Example: mem sync status
    """
    data = memory("none").sync_status()
    if json_:
        render.emit_json(data)
    else:
        _show_status(data)


def _show_status(data: dict) -> None:
    """The bound remote, the switch, the last sync, local changes (20 of each) and waiting conflicts."""
    last = data["last_sync"] or {}
    print(f"remote:    {data['remote'] or '(none yet: the first mem sync REMOTE binds one)'}")
    print(f"device:    {data['device'] or '(created on the first sync)'}")
    print(f"sync:      {'OFF since ' + data['off']['since'] + ' (mem sync on)' if data['off'] else 'on'}")
    print(f"last sync: {last.get('time', 'never')}")
    print(f"local:     {len(data['local_changes'])} changed, {len(data['local_deletions'])} deleted since the last sync"
          f" ({data['files']} files)")
    for path in data["local_changes"][:20]:
        print(f"  changed  {path}")
    for path in data["local_deletions"][:20]:
        print(f"  deleted  {path}")
    for path, entry in sorted(data["oversize"].items()):
        print(f"  too big  {path}  (revision {entry['rev'][:12]} on the remote, {entry['size']:,} bytes: "
              f"mem sync resolve {path} --keep local)")
    print(f"conflicts: {len(data['conflicts'])}")
    for path, record in sorted(data["conflicts"].items()):
        print(f"  {path}  (remote version from {record['device']} in {record['copy']})")
    elsewhere = data["conflicts_elsewhere"]
    if elsewhere:
        print(f"conflicts on other machines: {len(elsewhere)} (as of the last sync; resolve there, or here with "
              "mem sync resolve PATH --keep local|remote|both)")
    for item in elsewhere:
        print(f"  {item['path']}  (on {item['device']} since {item['time']}; its version is revision "
              f"{item['rev'][:12]} on the remote)")


@sync_app.command("resolve")
def sync_resolve(
    path: str = typer.Argument(..., help="The conflicted file, as listed by mem sync status."),
    keep: str = typer.Option(..., "--keep", help="local, remote, or both (local lines, then the remote's)."),
    json_: bool = JsonOpt,
) -> None:
    """End a conflict, here or one another machine listed (then remote means its version); the version
    that loses is backed up; the next mem sync publishes the result.

    Example: mem sync resolve memory/2026-11-30.md --keep both
    """
    data = memory("none").sync_resolve(path, keep)
    if json_:
        render.emit_json(data)
    else:
        render.err.print(f"resolved {escape(data['resolved'])} (kept {keep}); backups: "
                         + (", ".join(data["backups"]) or "none") + "; run mem sync to publish")


@sync_app.command("clone")
def sync_clone(
    remote: str = typer.Argument(..., help="A folder or s3://bucket/prefix holding a memory."),
    directory: Path = typer.Argument(..., help="The new workspace: a folder that does not exist yet, or is empty."),
    key_file: Optional[Path] = typer.Option(None, "--key-file", help="The encrypted remote's key file (named in the new workspace's memtool.toml); else a passphrase (prompt or $MEM_SYNC_PASSPHRASE).", show_default=False),
    json_: bool = JsonOpt,
) -> None:
    """Start a second machine: a new workspace holding the remote's memory, bound to it, index built.

    Use this rather than mem init followed by mem sync, which would mix starter files into the memory.
    Exit code 6 when a file's copy on the remote is damaged (named; the clone holds every other file).

    Example: mem sync clone /mnt/nas/memory ~/memory
    """
    from memtool.memory import Memory

    with render.progress_bar("downloading") as down:
        report = with_passphrase(lambda passphrase: Memory.sync_clone(remote, directory, key_file=key_file,
                                                                      passphrase=passphrase, embedder="none",
                                                                      progress={"download": down}))
    if json_:
        render.emit_json(report)
    else:
        render.err.print(f"cloned {escape(report['remote'])} into {escape(report['workspace'])}: "
                         f"{len(report['pulled'])} files{', encrypted' if report['encrypted'] else ''}, "
                         f"{report['indexed']} indexed; later: mem -w {escape(shlex.quote(report['workspace']))} sync")
        _show_notes(report)
    if report["damaged"] or report["oversize"]:  # a file the remote could not give is missing here: as mem sync, exit 6
        raise typer.Exit(ExitStatus.PROVIDER)
    if report["failed"]:
        raise typer.Exit(ExitStatus.REFUSED)


@sync_app.command("key")
def sync_key(
    show: bool = typer.Option(False, "--show", help="Print the key itself (one line, a key file's content) on stdout."),
    create: bool = typer.Option(False, "--create", help="Create the key file memtool.toml names ([sync] key_file) with a new random key (mode 600), before the first mem sync REMOTE --encrypt; an existing one is kept."),
    json_: bool = JsonOpt,
) -> None:
    """How to bring the encrypted remote's key to a second machine (and, with --show, the key).

    Example: mem sync key --show > /media/usb/memory.key
    """
    if create and show:
        raise UsageError("--create and --show are two steps", "create the key file first, then show it")
    if create:
        made = memory("none").sync_key_create()
        if json_:
            render.emit_json(made)
        else:
            render.err.print(escape(f"{'created' if made['created'] else 'kept the existing key file'} "
                                    f"{made['key_path']}" + (" (a random key, mode 600): keep a copy somewhere safe; "
                                    "without it the encrypted remote cannot be read" if made["created"] else "")))
            print(made["key_path"])
        return
    data = memory("none").sync_key(show)
    if json_:
        render.emit_json(data)
    elif show:
        print(data["key"])
    else:
        _explain_key(data)


def _explain_key(data: dict) -> None:
    if not data["remote"]:
        render.err.print("not bound to a remote yet; mem sync REMOTE --encrypt makes a new remote encrypted")
        return
    if not data["encrypted"]:
        render.err.print(f"{escape(data['remote'])} is not encrypted (encryption is chosen when a remote is first "
                         "used: mem sync NEW-REMOTE --encrypt)")
        return
    where = f"in {data['key_path']}" if data["key_path"] else "nowhere on this machine (give the passphrase)"
    passphrase = ("  - type the same passphrase there: mem sync clone REMOTE DIR (or set MEM_SYNC_PASSPHRASE), or\n"
                  if data["kdf"] == "scrypt" else "")
    render.err.print(escape(f"{data['remote']} is encrypted ({data['kdf'] or '?'}); this machine's key is {where}.\n"
                            "To bring it to a second machine, either:\n" + passphrase +
                            "  - copy the key: mem sync key --show > FILE here, move FILE over a channel you trust "
                            "(a USB stick, scp; never the remote itself), chmod 600 it, and name it there in "
                            "memtool.toml: [sync] key_file = \"/path/to/FILE\"\n"
                            "Whoever holds the key (or the passphrase) and the remote can read the whole memory."))


@sync_app.command("off")
def sync_off(json_: bool = JsonOpt) -> None:
    """Switch sync off for this workspace; it stays off (across restarts) until mem sync on.

    Nothing already on the remote is deleted.

    Example: mem sync off
    """
    _switch(False, json_)


@sync_app.command("on")
def sync_on(json_: bool = JsonOpt) -> None:
    """Switch sync back on.

    Example: mem sync on
    """
    _switch(True, json_)


def _switch(on: bool, json_: bool) -> None:
    data = memory("none").sync_switch(on)
    if json_:
        render.emit_json(data)
    else:
        render.err.print("sync is on" if on else "sync is off until: mem sync on")


@sync_app.command("restore")
def sync_restore(
    backup: Optional[str] = typer.Argument(None, help="A backup id from the list; without it, list the backups.", show_default=False),
    json_: bool = JsonOpt,
) -> None:
    """List backed-up versions (overwritten, deleted or losing a conflict), or restore one.

    Example: mem sync restore memory/2026-11-30.md.20261130T071502Z-123456789
    """
    data = memory("none").sync_restore(backup)
    if json_:
        render.emit_json(data)
    elif backup is None:
        if not data["backups"]:
            render.err.print("no backups")
        for item in data["backups"]:
            print(f"{item['time']}  {item['size']:>8}  {item['id']}")
    else:
        render.err.print(f"restored {escape(data['restored'])}"
                         + (f"; the replaced version is in {data['backup']}" if data["backup"] else ""))
