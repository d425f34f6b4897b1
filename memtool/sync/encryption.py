"""Client-side encryption of a sync remote: keys, the marker that makes it mandatory, and a remote
wrapper that seals everything before it leaves this machine.

    encryption.json          the marker (plain JSON): scheme, cipher, how the key is derived (scrypt
                             parameters and salt, or "key file"), and a key check
    manifest.json            AES-256-GCM of the manifest JSON (associated data "manifest")
    objects/<ab>/<name>      AES-256-GCM of a revision; <name> = HMAC-SHA256(name key, SHA-256 of the
                             bytes), so equal texts cannot be confirmed by whoever holds the remote

A sealed blob is `MAGIC | 12-byte random nonce | ciphertext | 16-byte tag`. The body and name keys
are derived by HKDF-SHA256 from one 32-byte master key: scrypt of a passphrase with the marker's
salt, or the random key in a key file. Everything above the wrapper (the round, the base, the local
manifest cache) sees plaintext and the plain SHA-256 revisions, exactly as with a plaintext remote.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import NamedTuple

from memtool.errors import ExitStatus, MemError, WorkspaceError
from memtool.sync.remotes import NOT_MODIFIED, DamagedObject, Remote

MARKER = "encryption.json"
SCHEME = "memtool-sealed/1"
CIPHER = "AES-256-GCM"
MAGIC = b"MSEAL1"
KEY_PREFIX = "memtool-sync-key-1:"
# scrypt at N=2^17, r=8 needs 128 MiB and ~0.5 s on a laptop core (measured): once per machine, since
# the derived key is kept in .memory/sync/key afterwards. Bounds refuse a marker that asks for more.
SCRYPT = {"n": 2 ** 17, "r": 8, "p": 1}
SCRYPT_MAX = {"n": 2 ** 20, "r": 16, "p": 4}
SCRYPT_MAX_MEMORY = 2 ** 30  # 128·r·N bytes: a marker asking for more is refused (hashlib stops below 2 GiB anyway)
MIN_PASSPHRASE = 10
_CHECK = b"memtool sync key check"


class SyncKeyError(MemError):
    """The remote is encrypted and the key is missing or wrong, or its encryption cannot be used."""

    exit_code = ExitStatus.SYNC_BLOCKED

    def __init__(self, message: str, hint: str | None = None, wants_passphrase: bool = False, new: bool = False):
        super().__init__(message, hint)
        self.wants_passphrase = wants_passphrase  # a passphrase (prompted for on a terminal) would do
        self.new = new  # the passphrase would create the remote's key (ask twice)


class Keys(NamedTuple):
    master: bytes
    body: bytes
    name: bytes


def keys_of(master: bytes) -> Keys:
    return Keys(master, _hkdf(master, b"memtool-sync body key"), _hkdf(master, b"memtool-sync name key"))


def _hkdf(master: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(master)


# --- sealing (pure) ------------------------------------------------------------------------------


def seal(key: bytes, data: bytes, context: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    return MAGIC + nonce + AESGCM(key).encrypt(nonce, data, context)


def unseal(key: bytes, blob: bytes, context: bytes) -> bytes | None:
    """The plaintext, or None when `blob` was not sealed under `key` for `context` (or was changed)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 12 + 16:
        return None
    nonce = blob[len(MAGIC):len(MAGIC) + 12]
    try:
        return AESGCM(key).decrypt(nonce, blob[len(MAGIC) + 12:], context)
    except InvalidTag:
        return None


def object_name(keys: Keys, rev: str) -> str:
    """The name a revision is stored under: keyed, so it says nothing about the text to anyone else."""
    return hmac.new(keys.name, rev.encode(), hashlib.sha256).hexdigest()


# --- the marker and the key ------------------------------------------------------------------------


def passphrase_key(passphrase: str, kdf: dict) -> bytes:
    salt = base64.b64decode(kdf["salt"])
    try:
        return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=kdf["n"], r=kdf["r"], p=kdf["p"],
                              maxmem=129 * kdf["r"] * kdf["n"] + (1 << 20), dklen=32)
    except (MemoryError, ValueError) as exc:  # OpenSSL says "malloc failure" as a ValueError
        raise SyncKeyError(f"this machine could not derive the key: scrypt needs {128 * kdf['r'] * kdf['n'] // 2**20:,} MiB "
                           f"of memory ({str(exc)[:80]}); nothing was written",
                           "free some memory and try again, or use the key file instead of the passphrase "
                           "(mem sync key --show on a machine that has it)") from None


def new_passphrase_kdf() -> dict:
    return {"name": "scrypt", **SCRYPT, "salt": base64.b64encode(os.urandom(16)).decode()}


def new_marker(master: bytes, kdf: dict) -> bytes:
    keys = keys_of(master)
    marker = {"scheme": SCHEME, "cipher": CIPHER, "kdf": kdf,
              "check": base64.b64encode(seal(keys.body, _CHECK, b"check")).decode()}
    return json.dumps(marker, indent=1, sort_keys=True).encode() + b"\n"


def parse_marker(data: bytes, url: str) -> dict:
    """The marker, validated (it is untrusted: bounds keep a hostile one from asking for 100 GB of scrypt)."""
    try:
        marker = json.loads(data)
        if marker.get("scheme") != SCHEME or marker.get("cipher") != CIPHER:
            raise ValueError(f"scheme {marker.get('scheme')!r}")
        kdf = marker["kdf"]
        base64.b64decode(marker["check"], validate=True)
        if kdf.get("name") == "scrypt":
            if not all(isinstance(kdf.get(k), int) and 1 <= kdf[k] <= SCRYPT_MAX[k] for k in SCRYPT):
                raise ValueError("scrypt parameters out of bounds")
            if 128 * kdf["r"] * kdf["n"] > SCRYPT_MAX_MEMORY:
                raise ValueError(f"scrypt asks for {128 * kdf['r'] * kdf['n'] // 2**20:,} MiB of memory, over "
                                 f"{SCRYPT_MAX_MEMORY // 2**20:,}")
            if not 8 <= len(base64.b64decode(kdf["salt"], validate=True)) <= 64:
                raise ValueError("bad salt")
        elif kdf.get("name") != "key-file":
            raise ValueError(f"key derivation {kdf.get('name')!r}")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, RecursionError) as exc:
        raise SyncKeyError(f"the encryption marker on {url} is not one this memtool reads ({exc})",
                           "it may come from a newer memtool; update memtool on this machine") from None
    return marker


def fits(marker: dict, master: bytes) -> bool:
    """Whether `master` is the key the marker was made with."""
    return unseal(keys_of(master).body, base64.b64decode(marker["check"]), b"check") == _CHECK


def key_line(master: bytes) -> str:
    """The key as one line of text (a key file's content)."""
    return KEY_PREFIX + base64.urlsafe_b64encode(master).decode().rstrip("=")


def parse_key_line(text: str, where: str) -> bytes:
    line = text.strip()
    if line.startswith(KEY_PREFIX):
        body = line[len(KEY_PREFIX):]
        try:
            master = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except ValueError:
            master = b""
        if len(master) == 32:
            return master
    raise SyncKeyError(f"{where} does not hold a memtool sync key",
                       f"a key file holds one line starting with {KEY_PREFIX} (mem sync key --show prints it)")


def new_master() -> bytes:
    return os.urandom(32)


# --- the wrapper ------------------------------------------------------------------------------------


class SealedRemote:
    """A remote whose manifest and revisions are sealed with `keys`; the same protocol as its inner one."""

    encrypted = True

    def __init__(self, inner: Remote, keys: Keys):
        self.inner, self.keys = inner, keys
        self.url = inner.url

    def stored_name(self, rev: str) -> str:
        """The name `rev` has on the inner remote (for a garbage collector listing what is referenced)."""
        return object_name(self.keys, rev)

    def read_manifest(self, etag: str | None = None):
        got = self.inner.read_manifest(etag)
        if got is None or got is NOT_MODIFIED:
            return got
        data, tag = got
        plain = unseal(self.keys.body, data, b"manifest")
        if plain is None:
            raise WorkspaceError(f"the manifest on {self.url} does not decrypt with this memory's key",
                                 "someone without the key replaced it (or it was damaged); nothing was changed here")
        return plain, tag

    def write_manifest(self, data: bytes, etag: str | None) -> str:
        return self.inner.write_manifest(seal(self.keys.body, data, b"manifest"), etag)

    def put_object(self, rev: str, data: bytes, replace: bool = False) -> None:
        name = self.stored_name(rev)
        self.inner.put_object(name, seal(self.keys.body, data, name.encode()), replace)

    def get_object(self, rev: str) -> bytes:
        name = self.stored_name(rev)
        plain = unseal(self.keys.body, self.inner.get_object(name), name.encode())
        if plain is None:
            raise DamagedObject(f"revision {rev[:12]} on {self.url} does not decrypt",
                                "the remote copy is damaged; a machine holding the right version repairs it")
        return plain

    def sweep_temp(self) -> int:
        return self.inner.sweep_temp()

    def read_named(self, name: str) -> bytes | None:
        return self.inner.read_named(name)

    def create_named(self, name: str, data: bytes) -> bool:
        return self.inner.create_named(name, data)
