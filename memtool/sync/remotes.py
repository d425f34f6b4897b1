"""Where a memory syncs to: a folder or S3-compatible storage, behind one small protocol.

Layout on every remote (under the folder or `s3://bucket/prefix/`):

    manifest.json            the current state; replaced only by compare-and-swap on its ETag
    encryption.json          present when the remote is encrypted (see encryption.py); never replaced
    objects/<ab>/<sha256>    immutable revisions, named by the SHA-256 of their bytes

A revision is uploaded before any manifest names it, so an interrupted upload is never referenced.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

from memtool.errors import ProviderUnavailable, UsageError, WorkspaceError
from memtool.safe_writes import create_whole, remove_stale_temp, replace_atomically
from memtool.workspace import home_path

NOT_MODIFIED = object()
_REV = re.compile(r"[0-9a-f]{64}")


# The most bytes sync reads of one revision (a Markdown file, sealed when encrypted): a crafted or
# damaged object on the remote is refused by its announced size, never read whole into memory.
MAX_OBJECT_BYTES = 64 * 2**20
# The most bytes of `manifest.json` (a format-1 manifest holds every file's entry; a sharded root one
# line per shard) and of a small named object such as `encryption.json` (a few hundred bytes).
MAX_MANIFEST_BYTES = MAX_OBJECT_BYTES
MAX_NAMED_BYTES = 2**16


class OversizeObject(ProviderUnavailable):
    """A revision on the remote is larger than MAX_OBJECT_BYTES (`size`): it is never read; the round
    leaves its path alone and names it."""

    def __init__(self, message: str, hint: str | None = None, size: int = 0):
        super().__init__(message, hint)
        self.size = size


def _oversize(rev: str, size: int, url: str) -> OversizeObject:
    return OversizeObject(f"revision {rev[:12]} on {url} is {size:,} bytes, over the limit of {MAX_OBJECT_BYTES:,} "
                          "for one file", "the remote copy is damaged or not memtool's", size)


def _too_big(what: str, url: str, size: int, limit: int) -> WorkspaceError:
    return WorkspaceError(f"{what} on {url} is {size:,} bytes or more, over the limit of {limit:,}; it was not read "
                          "and nothing was changed here",
                          "the remote was changed by hand or is not memtool's; point sync at a folder or prefix "
                          "used only by memtool")


def _too_big_to_publish(url: str, size: int) -> WorkspaceError:
    return WorkspaceError(f"the new manifest for {url} would be {size:,} bytes, over the limit of "
                          f"{MAX_MANIFEST_BYTES:,} every replica reads; nothing was published",
                          "a format-1 remote keeps every entry in one manifest: clone it into a new workspace "
                          "and sync that to a new remote (sharded, see docs/sync.md)")


class DamagedObject(ProviderUnavailable):
    """A revision the manifest names is missing on the remote, or its bytes do not match its hash."""


class StaleManifest(Exception):
    """The manifest changed since it was read: the compare-and-swap was rejected."""


class Remote(Protocol):
    url: str

    def read_manifest(self, etag: str | None = None) -> tuple[bytes, str] | object | None:
        """(bytes, etag); NOT_MODIFIED when `etag` still matches; None when there is no manifest yet."""

    def write_manifest(self, data: bytes, etag: str | None) -> str:
        """Replace the manifest if its ETag is still `etag` (None: only if none exists); the new ETag.

        Raises StaleManifest otherwise."""

    def put_object(self, rev: str, data: bytes, replace: bool = False) -> None:
        """Store an immutable revision (a no-op when it is already there, unless `replace`: a repair)."""

    def get_object(self, rev: str) -> bytes:
        """The bytes of a revision."""

    def sweep_temp(self) -> int:
        """Remove temp files that killed uploads left on the remote; how many."""

    def list_objects(self) -> list[tuple[str, float]]:
        """(revision, age in seconds) of every stored revision (for `mem sync gc`)."""

    def delete_object(self, rev: str) -> None:
        """Delete a revision (only `mem sync gc` does, for revisions no manifest names)."""
    def read_named(self, name: str) -> bytes | None:
        """A small object at the top of the remote (e.g. `encryption.json`); None when there is none."""

    def create_named(self, name: str, data: bytes) -> bool:
        """Create a small object at the top of the remote, never replacing one; False if it exists."""


def object_key(rev: str) -> str:
    return f"objects/{rev[:2]}/{rev}"


def open_remote(url: str, *, endpoint_url: str | None = None, region: str | None = None) -> Remote:
    """A remote for `url`: `s3://bucket/prefix` or a folder path (absolute, ~ or relative)."""
    if url.startswith("s3://"):
        return S3Remote(url, endpoint_url=endpoint_url, region=region)
    if "://" in url and not url.startswith("file://"):
        raise UsageError(f"unsupported remote {url!r}",
                         "use a folder path (e.g. /mnt/disk/memory) or s3://bucket/prefix")
    return FolderRemote(home_path(url[len("file://"):] if url.startswith("file://") else url))


_BY_HAND = "the remote folder was changed by hand; point sync at a folder used only by memtool"


class Oversize(Exception):
    """A remote file larger than the limit its reader set (`args[0]`: its size)."""


class NotAFile(OSError):
    """Something other than a regular file where a folder remote keeps one (a FIFO, a device, a folder)."""


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """A folder remote's file; NotAFile for anything else: whoever writes the remote could put a FIFO
    there (a read would block the round, and the sync lock, forever) or a link to /dev/zero. With
    `limit`, a file larger than that is Oversize (nothing of it read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # opening a FIFO does not wait
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotAFile(f"{path} is not a regular file")
        if limit is not None and status.st_size > limit:
            raise Oversize(status.st_size)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1) if limit is not None else f.read()
        if limit is not None and len(data) > limit:  # grown since the stat
            raise Oversize(len(data))
        return data
    finally:
        os.close(fd)


class FolderRemote:
    """A folder (a mounted disk, a network share): atomic renames, CAS under a lock file."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.url = str(self.root)

    def _check(self) -> None:
        if not self.root.is_dir():
            parent = self.root.parent
            if not parent.is_dir():
                raise ProviderUnavailable(f"remote folder {self.root} does not exist and neither does its parent",
                                          "mount the disk or create the folder, then sync again")
            self.root.mkdir(exist_ok=True)

    def read_manifest(self, etag: str | None = None):
        self._check()
        try:
            data = read_regular(self.root / "manifest.json", MAX_MANIFEST_BYTES)
        except FileNotFoundError:
            return None
        except NotAFile:
            raise WorkspaceError(f"the manifest on {self.url} is not a regular file", _BY_HAND) from None
        except Oversize as exc:
            raise _too_big("the manifest", self.url, exc.args[0], MAX_MANIFEST_BYTES) from None
        tag = hashlib.sha256(data).hexdigest()[:32]
        return NOT_MODIFIED if tag == etag else (data, tag)

    def write_manifest(self, data: bytes, etag: str | None) -> str:
        from filelock import FileLock

        if len(data) > MAX_MANIFEST_BYTES:
            raise _too_big_to_publish(self.url, len(data))
        self._check()
        with FileLock(str(self._lock_file()), timeout=60):
            try:
                current = hashlib.sha256(read_regular(self.root / "manifest.json", MAX_MANIFEST_BYTES)).hexdigest()[:32]
            except FileNotFoundError:
                current = None
            except (NotAFile, Oversize):  # replaced by something else since it was read: not the version read
                raise StaleManifest() from None
            if current != etag:
                raise StaleManifest()
            replace_atomically(self.root / "manifest.json", data)
        return hashlib.sha256(data).hexdigest()[:32]

    def _lock_file(self) -> Path:
        """The manifest's lock file, made if missing; refused when it is anything but a regular file: a
        link planted there was opened (and, by filelock 3.12, truncated) through the link."""
        path = self.root / ".manifest.lock"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), 0o644)
        except OSError:  # a link (O_NOFOLLOW) or a folder: refused below; anything else as it is
            if not os.path.islink(path) and not os.path.isdir(path):
                raise
            fd = None
        try:
            if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode):
                raise WorkspaceError(f"{path} is not a regular file (a link, a folder or a FIFO); nothing was published",
                                     f"{_BY_HAND}; remove that entry and sync again")
        finally:
            if fd is not None:
                os.close(fd)
        return path

    def put_object(self, rev: str, data: bytes, replace: bool = False) -> None:
        self._check()
        target = self.root / object_key(rev)
        if replace or not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(target, data)

    def sweep_temp(self) -> int:
        if not self.root.is_dir():
            return 0
        return len(remove_stale_temp(self.root, recursive=False)) + len(remove_stale_temp(self.root / "objects"))

    def list_objects(self) -> list[tuple[str, float]]:
        out, now = [], time.time()
        for path in (self.root / "objects").glob("*/*") if (self.root / "objects").is_dir() else ():
            if path.is_file() and _REV.fullmatch(path.name):
                out.append((path.name, now - path.stat().st_mtime))
        return out

    def delete_object(self, rev: str) -> None:
        (self.root / object_key(rev)).unlink(missing_ok=True)
    def read_named(self, name: str) -> bytes | None:
        self._check()
        try:
            return read_regular(self.root / name, MAX_NAMED_BYTES)
        except FileNotFoundError:
            return None
        except NotAFile:
            raise WorkspaceError(f"{name} on {self.url} is not a regular file", _BY_HAND) from None
        except Oversize as exc:
            raise _too_big(name, self.url, exc.args[0], MAX_NAMED_BYTES) from None

    def create_named(self, name: str, data: bytes) -> bool:
        self._check()
        return create_whole(self.root / name, data)

    def get_object(self, rev: str) -> bytes:
        try:
            return read_regular(self.root / object_key(rev), MAX_OBJECT_BYTES)
        except Oversize as exc:
            raise _oversize(rev, exc.args[0], self.url) from None
        except (FileNotFoundError, NotADirectoryError, NotAFile):  # or a folder, a FIFO, a device there
            raise DamagedObject(f"revision {rev[:12]} is missing from {self.url}",
                                "the remote folder was changed by hand; sync cannot read it") from None


class S3Remote:
    """S3-compatible storage (AWS S3, Cloudflare R2, MinIO) with conditional writes for the manifest.

    Credentials come from the standard AWS sources (environment, ~/.aws); the endpoint from config
    `[sync] endpoint_url` or $AWS_ENDPOINT_URL."""

    def __init__(self, url: str, *, endpoint_url: str | None = None, region: str | None = None):
        parsed = urlparse(url)
        if not parsed.netloc:
            raise UsageError(f"{url!r} names no bucket", "write it as s3://bucket/prefix")
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/")
        self.endpoint_url = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        self.url = f"s3://{self.bucket}/{self.prefix}"  # the identity; the endpoint may change (e.g. a new R2 URL)
        self._where = self.url + (f" at {self.endpoint_url}" if self.endpoint_url else "")
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise UsageError("the S3 remote needs boto3, which is not installed",
                             "pip install 'memtool[s3]'") from None
        from botocore.exceptions import BotoCoreError

        attempts = os.environ.get("AWS_MAX_ATTEMPTS", "3").strip()
        if not attempts.isdigit():
            raise UsageError(f"AWS_MAX_ATTEMPTS={attempts!r} is not a number of attempts", "e.g. AWS_MAX_ATTEMPTS=3, or unset it")
        try:
            self._client = boto3.client(
                "s3", endpoint_url=self.endpoint_url, region_name=region or os.environ.get("AWS_REGION"),
                config=Config(retries={"max_attempts": int(attempts), "mode": "standard"},
                              connect_timeout=10, read_timeout=30, max_pool_connections=16))
        except (BotoCoreError, ValueError) as exc:  # an endpoint or region that is no such thing
            raise UsageError(f"cannot reach {self.url} as set up: {_first_line(exc)}",
                             "check [sync] endpoint_url and region in memtool.toml, and AWS_ENDPOINT_URL, AWS_REGION") from None

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _call(self, what: str, fn, **kwargs):
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in (304, 409, 412) or code in ("NoSuchKey", "PreconditionFailed", "NotModified"):
                raise  # answers the callers handle (not modified, stale, no such key), not failures
            raise ProviderUnavailable(f"S3 {what} failed on {self._where}: {code or status}",
                                      "check the bucket, the endpoint and the AWS credentials") from None
        except BotoCoreError as exc:
            raise ProviderUnavailable(f"S3 {what} failed on {self._where}: {exc}",
                                      "check the network, the endpoint and the AWS credentials") from None

    def _body(self, what: str, response, limit: int | None = None) -> bytes:
        """A response's bytes (with `limit`, at most one more than that: an endpoint sending more than
        it announced is Oversize); a stream cut short (the network, or an endpoint sending less than
        it announced) is the same failure as a request that does not answer."""
        from botocore.exceptions import BotoCoreError

        try:
            if limit is None:
                return response["Body"].read()
            data = response["Body"].read(limit + 1)
            if len(data) > limit:
                raise Oversize(len(data))
            announced = response.get("ContentLength")
            if isinstance(announced, int) and announced != len(data):  # read(amt) does not check it
                raise ProviderUnavailable(f"S3 {what} failed on {self._where}: {len(data):,} of the {announced:,} "
                                          "bytes announced arrived", "check the network and the endpoint, then sync again")
            return data
        except BotoCoreError as exc:
            raise ProviderUnavailable(f"S3 {what} failed on {self._where}: {exc}",
                                      "check the network and the endpoint, then sync again") from None

    @staticmethod
    def _status(exc) -> int | None:
        return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")

    def read_manifest(self, etag: str | None = None):
        from botocore.exceptions import ClientError

        kwargs = {"IfNoneMatch": etag} if etag else {}
        try:
            response = self._call("read", self._client.get_object, Key=self._key("manifest.json"), **kwargs)
        except ClientError as exc:
            if self._status(exc) == 304 and etag:
                return NOT_MODIFIED
            if self._status(exc) == 304:  # "not modified" since no version named: nothing to go on
                raise ProviderUnavailable(f"the S3 endpoint for {self._where} answered 304 (not modified) to a read "
                                          "of the manifest that named no version", "check [sync] endpoint_url and "
                                          "any proxy or cache in between") from None
            if self._status(exc) == 404:
                return None
            raise
        tag = self._etag(response)
        return self._bounded("the manifest", response, MAX_MANIFEST_BYTES), tag

    def _etag(self, response) -> str:
        """The ETag of an answer about the manifest; an endpoint that sends none cannot do the
        compare-and-swap sync relies on."""
        tag = response.get("ETag")
        if not isinstance(tag, str) or not tag:
            if "Body" in response:
                response["Body"].close()
            raise ProviderUnavailable(f"the S3 endpoint for {self._where} answered without an ETag for the manifest",
                                      "sync needs ETags and conditional writes (AWS S3, R2, MinIO have them); check "
                                      "[sync] endpoint_url and any proxy in between")
        return tag

    def _bounded(self, what: str, response, limit: int) -> bytes:
        """A small object's bytes, refused (unread) when its announced size or what is sent exceeds `limit`."""
        size = response.get("ContentLength")
        try:
            if isinstance(size, int) and size > limit:
                response["Body"].close()
                raise Oversize(size)
            return self._body("read", response, limit)
        except Oversize as exc:
            raise _too_big(what, self.url, exc.args[0], limit) from None

    def write_manifest(self, data: bytes, etag: str | None) -> str:
        from botocore.exceptions import ClientError

        if len(data) > MAX_MANIFEST_BYTES:
            raise _too_big_to_publish(self.url, len(data))
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            response = self._call("manifest write", self._client.put_object, Key=self._key("manifest.json"),
                                  Body=data, ContentType="application/json", **condition)
        except ClientError as exc:
            if self._status(exc) in (412, 409):
                raise StaleManifest() from None
            raise
        return self._etag(response)

    def put_object(self, rev: str, data: bytes, replace: bool = False) -> None:
        from botocore.exceptions import ClientError

        condition = {} if replace else {"IfNoneMatch": "*"}
        try:
            self._call("upload", self._client.put_object, Key=self._key(object_key(rev)), Body=data, **condition)
        except ClientError as exc:
            if self._status(exc) not in (412, 409):  # 412: already there, and revisions never change
                raise

    def sweep_temp(self) -> int:
        return 0  # an S3 PUT is atomic: nothing is staged

    def list_objects(self) -> list[tuple[str, float]]:
        out, now = [], time.time()
        pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self._key("objects/"))
        try:
            for page in pages:
                for item in page.get("Contents", []):
                    name = item["Key"].rsplit("/", 1)[-1]
                    if _REV.fullmatch(name):
                        out.append((name, now - item["LastModified"].timestamp()))
        except Exception as exc:  # botocore's errors, raised while paging
            raise ProviderUnavailable(f"S3 listing failed on {self._where}: {exc}",
                                      "check the bucket, the endpoint and the AWS credentials") from None
        return out

    def delete_object(self, rev: str) -> None:
        self._call("delete", self._client.delete_object, Key=self._key(object_key(rev)))
    def read_named(self, name: str) -> bytes | None:
        from botocore.exceptions import ClientError

        try:
            return self._bounded(name, self._call("read", self._client.get_object, Key=self._key(name)), MAX_NAMED_BYTES)
        except ClientError as exc:
            if self._status(exc) == 404:
                return None
            raise

    def create_named(self, name: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._call("write", self._client.put_object, Key=self._key(name), Body=data, IfNoneMatch="*")
        except ClientError as exc:
            if self._status(exc) in (412, 409):
                return False
            raise
        return True

    def get_object(self, rev: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            response = self._call("download", self._client.get_object, Key=self._key(object_key(rev)))
        except ClientError:
            raise DamagedObject(f"revision {rev[:12]} is missing from {self.url}",
                                "the bucket was changed by hand; sync cannot read it") from None
        size = response.get("ContentLength")
        if isinstance(size, int) and size > MAX_OBJECT_BYTES:
            response["Body"].close()
            raise _oversize(rev, size, self.url)
        try:
            return self._body("download", response, MAX_OBJECT_BYTES)
        except Oversize as exc:  # more than the response announced
            raise _oversize(rev, exc.args[0], self.url) from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
