"""BLAKE2b for content and key digests, without the OpenSSL library that `import hashlib` loads.

`hashlib` opens OpenSSL at import (~2.5 ms, a fiftieth of a one-shot `mem recall`) although every
digest on the read and index paths is BLAKE2b, which CPython bundles in its own `_blake2` module
(the very one `hashlib.blake2b` is). Digests are the same bytes either way."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without its bundled hashes
    from hashlib import blake2b

__all__ = ["blake2b"]
