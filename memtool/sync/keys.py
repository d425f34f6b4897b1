"""Where an encrypted remote's key comes from, and opening a remote with it, or refusing before
anything is written.

The key is looked for in this order: the key file named in memtool.toml (`[sync] key_file`), the
key this workspace kept after its first sync (`.memory/sync/key`), a passphrase (given by the CLI's
prompt or `MEM_SYNC_PASSPHRASE`), run through scrypt with the salt in the remote's marker. Each is
checked against the marker's key check; one that does not fit is an error, never skipped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from memtool.errors import UsageError
from memtool.safe_writes import create_whole
from memtool.sync import encryption as enc
from memtool.sync.remotes import Remote
from memtool.sync.state import SyncState

KEY_HINT = ("type the passphrase at the prompt, set MEM_SYNC_PASSPHRASE, or name the key file in memtool.toml "
            "([sync] key_file = \"~/.config/memtool/sync.key\"); on a machine that has it, mem sync key explains")


class Unlocked(NamedTuple):
    remote: Remote  # the sealed remote, or the plain one when the remote is not encrypted
    marker: bytes | None  # the marker's bytes (None: not encrypted)
    key: bytes | None
    source: str  # "plain", "key file", "saved", "passphrase"


def open_remote_keyed(remote: Remote, state: SyncState, *, encrypt: bool = False, key_file: Path | None = None,
                      passphrase: str | None = None) -> Unlocked:
    """`remote`, sealed when it is encrypted (or made encrypted with `encrypt` on its first use)."""
    binding = state.binding()
    bound_encrypted = bool(binding and binding.get("encrypted"))
    if binding and not bound_encrypted:
        if encrypt:
            raise UsageError(f"{remote.url} already holds an unencrypted memory; encryption is chosen when a remote "
                             "is first used", "see 'Encryption' in docs/sync.md for moving to an encrypted remote")
        return Unlocked(remote, None, None, "plain")
    data = state.marker() if bound_encrypted else None
    if data is None:
        data = remote.read_named(enc.MARKER)
    if data is None:
        if bound_encrypted:
            raise enc.SyncKeyError(f"{remote.url} has lost its encryption marker ({enc.MARKER}), but this workspace "
                                   "syncs it encrypted; nothing was sent",
                                   "someone changed the remote by hand; sync never falls back to plaintext")
        if not encrypt:
            return Unlocked(remote, None, None, "plain")
        return _create(remote, key_file, passphrase)
    marker = enc.parse_marker(data, remote.url)
    key, source = _unlock(marker, state, key_file, passphrase, remote.url)
    return Unlocked(enc.SealedRemote(remote, enc.keys_of(key)), data, key, source)


def _unlock(marker: dict, state: SyncState, key_file: Path | None, passphrase: str | None, url: str) -> tuple[bytes, str]:
    if key_file is not None:
        key = read_key_file(key_file)
        if not enc.fits(marker, key):
            raise enc.SyncKeyError(f"the key file {key_file} is not the key of {url}",
                                   "name the right key file in memtool.toml ([sync] key_file)")
        return key, "key file"
    saved = state.saved_key()
    if saved is not None:
        key = enc.parse_key_line(saved, str(state.key_path))
        if not enc.fits(marker, key):
            raise enc.SyncKeyError(f"the key kept in {state.key_path} is not the key of {url}",
                                   "the remote was made again with another key: move that file aside and sync "
                                   "with the new passphrase")
        return key, "saved"
    scrypt = marker["kdf"]["name"] == "scrypt"
    if passphrase is None:
        raise enc.SyncKeyError(f"{url} is encrypted and this machine has no key for it; nothing was written",
                               KEY_HINT if scrypt else "it was encrypted with a key file: copy that file here "
                               "and name it in memtool.toml ([sync] key_file)", wants_passphrase=scrypt)
    if not scrypt:
        raise enc.SyncKeyError(f"{url} was encrypted with a key file, not a passphrase; nothing was written",
                               "copy the key file here and name it in memtool.toml ([sync] key_file)")
    key = enc.passphrase_key(passphrase, marker["kdf"])
    if not enc.fits(marker, key):
        raise enc.SyncKeyError(f"wrong passphrase for {url}; nothing was written",
                               "type it again (it is case-sensitive), or check MEM_SYNC_PASSPHRASE", wants_passphrase=True)
    return key, "passphrase"


def _create(remote: Remote, key_file: Path | None, passphrase: str | None) -> Unlocked:
    """Make `remote` encrypted: only while it holds no memory yet; the marker is created, never replaced."""
    if remote.read_manifest() is not None:
        raise UsageError(f"{remote.url} already holds an unencrypted memory; --encrypt works only on a new, empty remote",
                         "sync to a new folder or prefix with --encrypt (see 'Encryption' in docs/sync.md)")
    if key_file is not None:
        kdf = {"name": "key-file"}
        if not key_file.exists():  # memtool.toml travels with the workspace: it never makes files elsewhere by itself
            raise enc.SyncKeyError(f"the key file {key_file} (memtool.toml: [sync] key_file) does not exist; "
                                   "nothing was written", "create it once with: mem sync key --create (a random "
                                   "key, mode 600), or name the key file you have in memtool.toml")
        key = read_key_file(key_file)
    elif passphrase is None:
        raise enc.SyncKeyError("--encrypt needs a passphrase or a key file; nothing was written",
                               "type one at the prompt, set MEM_SYNC_PASSPHRASE, or name a key file in memtool.toml "
                               "([sync] key_file; mem sync key --create makes it)",
                               wants_passphrase=True, new=True)
    else:
        if len(passphrase) < enc.MIN_PASSPHRASE:
            raise UsageError(f"the passphrase is too short ({len(passphrase)} characters; at least {enc.MIN_PASSPHRASE})",
                             "use a few unrelated words; whoever holds the remote can try guesses offline")
        kdf = enc.new_passphrase_kdf()
        key = enc.passphrase_key(passphrase, kdf)
    data = enc.new_marker(key, kdf)
    if not remote.create_named(enc.MARKER, data):  # another machine made it first: its key must fit
        data = remote.read_named(enc.MARKER) or b""
        marker = enc.parse_marker(data, remote.url)
        if not enc.fits(marker, key):
            raise enc.SyncKeyError(f"{remote.url} was just made encrypted by another machine, with another key",
                                   "sync again with that machine's passphrase or key file")
    return Unlocked(enc.SealedRemote(remote, enc.keys_of(key)), data, key, "key file" if key_file else "passphrase")


def create_key_file(path: Path) -> bool:
    """Make the key file `path` with a new random key (mode 600; a missing folder made with mode 700):
    what `mem sync key --create` asks for, the only way memtool writes a key file. An existing key
    file is kept, and read to check it holds a key. Returns whether it was created."""
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if create_whole(path, enc.key_line(enc.new_master()).encode() + b"\n", mode=0o600):
            return True
    read_key_file(path)
    return False


KEY_FILE_MAX = 4096  # a key file is one line of ~50 characters


def read_key_file(path: Path) -> bytes:
    """The key a key file holds (one line, see `enc.parse_key_line`). A file that is not a regular one
    (a link to /dev/zero was read until memory ran out, a named pipe blocked) or is far too long is refused."""
    return enc.parse_key_line(_key_file_text(path), str(path))


def _key_file_text(path: Path) -> str:
    import stat

    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise enc.SyncKeyError(f"the key file {path} is not a regular file", "name a key file in memtool.toml ([sync] key_file)")
        with path.open("rb") as f:
            data = f.read(KEY_FILE_MAX + 1)
        if len(data) > KEY_FILE_MAX:
            raise enc.SyncKeyError(f"{path} does not hold a memtool sync key (it is far too long)",
                                   f"a key file holds one line starting with {enc.KEY_PREFIX} (mem sync key --show prints it)")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise enc.SyncKeyError(f"the key file {path} (named in memtool.toml) does not exist; nothing was written",
                               "copy it from a machine that syncs this remote (mem sync key explains)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise enc.SyncKeyError(f"cannot read the key file {path}: {exc}", "check its permissions") from None
    return text
