"""Trust tiers and the egress gate: which text may leave the process, and to where.

    global, normal   may go to any configured provider
    work             only to a loopback provider, or one named in `[trust] work_providers`
    private          only to a provider whose host resolves to loopback addresses only
    legal            never leaves the process

A file's tier is the strictest of its front matter and every `[trust]` glob that matches it; an
unreadable or unknown `trust:` value counts as `legal`. Text that cites a source (`path.md#L4`)
is at least as strict as that source. `check_egress` is the one gate every provider calls before
sending text; callers ask `allows` first so that they can withhold and say so.

Pure, except `destination`, which may resolve a host name. Top-level rather than inside
`memtool.reflect`: the indexer, the embedders, summarize and the chat client use it as much as reflect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from memtool.errors import EgressRefused
from memtool.value import FrozenValue

# The one list of tiers, from most to least shareable, with how strict each is (global = normal).
_RANK = {"global": 0, "normal": 0, "work": 1, "private": 2, "legal": 3}
TIERS = tuple(_RANK)
LEGAL = STRICTEST = "legal"  # never leaves the process, never folded, superseded or rewritten
# Compiled by `re` on first use (its cache): a recall reads neither front matter nor citations.
_TRUST_LINE = r"""(?i)^\s*-?\s*["']?trust["']?\s*:\s*(.*?)\s*$"""
_CITATION = r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)#L\d+"
# `trust` as a key in any other form: a flow mapping (`{trust: legal}`, `{"trust": "legal"}`), `=`, a fullwidth colon
_TRUST_KEY = r"""(?i)(?:^|[{,])\s*-?\s*["']?trust["']?\s*[:\uff1a=]"""
_LEADING_BLOCK_LINES = 100  # how far an unclosed or misplaced front matter block is searched for `trust:`


def rank(tier: str) -> int:
    return _RANK.get(tier, _RANK[STRICTEST])


def strictest(tiers: Iterable[str]) -> str:
    """The strictest of `tiers` (normal for none)."""
    best = "normal"
    for tier in tiers:
        tier = tier if tier in _RANK else STRICTEST
        if rank(tier) > rank(best):
            best = tier
    return best


def parse_value(value) -> str | None:
    """A front matter `trust:` value as a tier, or None when it is not exactly one of TIERS."""
    if isinstance(value, str):
        v = value.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1].strip()
        if v.lower() in TIERS:
            return v.lower()
    return None


def declared(lines: list[str], front_matter_end: int) -> tuple[str, str | None]:
    """(tier, problem) a file declares in its leading `---` block; problem is None when it is clean.

    Fails closed: every `trust:` line in the block counts (the strictest wins), an unreadable value
    is `legal`, and a block that is not valid front matter (after blank lines, or never closed)
    still declares the tier it names.
    """
    start = 0
    while start < len(lines) and not lines[start].strip().lstrip("\ufeff").strip():
        start += 1
    if start >= len(lines) or lines[start].strip().lstrip("\ufeff").strip() != "---":
        return "normal", None
    end = next((n for n in range(start + 1, min(len(lines), start + _LEADING_BLOCK_LINES))
                if lines[n].strip() in ("---", "...")), None)
    stop = end if end is not None else min(len(lines), start + _LEADING_BLOCK_LINES)
    values = [m.group(1) if (m := re.match(_TRUST_LINE, lines[n])) else lines[n].strip()
              for n in range(start + 1, stop) if re.search(_TRUST_KEY, lines[n])]
    if not values:
        return "normal", None
    tiers = [parse_value(v) for v in values]  # a line in another form is unreadable: legal
    tier = strictest(t or STRICTEST for t in tiers)
    if None in tiers:
        bad = next(v for v, t in zip(values, tiers) if t is None)
        return tier, f"trust {bad!r} is not one of {', '.join(TIERS)}; treated as {tier} (the strictest)"
    if front_matter_end == 0:
        where = "never closed" if end is None else "not on the first line"
        return tier, f"trust: in a '---' block that is {where}; treated as {tier}"
    if len(values) > 1:
        return tier, f"trust: given {len(values)} times; treated as {tier} (the strictest)"
    return tier, None


def glob_tier(path: str, globs: dict[str, list[str]]) -> str:
    """The strictest `[trust]` tier whose globs match `path` (normal for none), in any case: a glob
    `bank/legal/*` also holds `bank/Legal/…`, as a case-insensitive disk (macOS, Windows) opens it."""
    folded = path.casefold()
    return strictest(tier for tier in TIERS if any(fnmatchcase(folded, g.casefold()) for g in globs.get(tier, ())))


def file_tier(path: str, declared_tier: str, globs: dict[str, list[str]]) -> str:
    """A file's tier: the strictest of what it declares and the `[trust]` globs that match it."""
    return strictest((declared_tier or "normal", glob_tier(path, globs)))


def cited_paths(text: str) -> set[str]:
    """Workspace paths that `text` cites as `path.md#L4` (derived pages, the journal, prompts)."""
    return {m.group(1) for m in re.finditer(_CITATION, text)}


def text_tier(own: str, text: str, tier_of: Callable[[str], str]) -> str:
    """The tier of `text` from a file of tier `own`: at least as strict as every source it cites."""
    return strictest([own, *(tier_of(p) for p in cited_paths(text))])


# --- destinations and the gate ---------------------------------------------------------------


class Destination(FrozenValue):
    """Where a provider sends text: `url` is exactly what the client connects to; `loopback`: the
    host resolves to loopback addresses only; `in_process`: nothing leaves (the embedded model)."""

    __slots__ = ("url", "loopback", "trusted_for_work", "in_process")

    def __init__(self, url: str, loopback: bool, trusted_for_work: bool = False, in_process: bool = False):
        self._set(url, loopback, trusted_for_work, in_process)

    def allows(self, tier: str) -> bool:
        return allows(self, tier)


IN_PROCESS = Destination("in-process", loopback=True, in_process=True)


def normalize(url: str, default_port: int = 11434) -> str:
    """`scheme://host:port[/path]` of a provider URL, without user info (what Ollama's client uses)."""
    from urllib.parse import urlsplit

    raw = url.strip()
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme, default_port) if "://" in raw else default_port
    host_text = f"[{host}]" if ":" in host else host
    path = parts.path.rstrip("/")
    return f"{parts.scheme or 'http'}://{host_text}:{port}{path}"


def loopback_address(host: str) -> str | None:
    """A loopback address `host` stands for, when every address it resolves to is loopback; else None."""
    import ipaddress
    import socket

    if not host:
        return None
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return None
    addresses = sorted({info[4][0].split("%", 1)[0] for info in infos})
    try:
        ok = bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)
    except ValueError:
        return None
    return addresses[0] if ok else None


def url_problem(url: str) -> str | None:
    """Why a provider URL (`http://host:port`, or `host:port` as OLLAMA_HOST may be written) cannot be
    parsed, as the `ollama` package would fail on it (a port that is no number or out of range, a
    broken IPv6 address), or None."""
    from urllib.parse import urlsplit

    raw = url.strip()
    try:
        urlsplit(raw if "://" in raw else f"http://{raw}").port
    except ValueError as exc:
        return str(exc)
    return None


def shown(url: str) -> str:
    """A provider URL as messages and `mem status` show it: without user info (a password in
    OLLAMA_HOST stays out of output that gets pasted into bug reports)."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep:
        scheme, rest = "", scheme
    netloc, slash, path = rest.partition("/")
    return f"{scheme}{sep}{netloc.rpartition('@')[2]}{slash}{path}"


def destination(url: str, work_providers: Iterable[str] = ()) -> Destination:
    """The destination a provider URL names (user info dropped: `http://127.0.0.1@host` is `host`).

    A host name that resolves to loopback only is replaced by that address, so the client connects
    to what was checked (no second lookup that could answer differently). A URL that does not parse
    (`url_problem`) is a destination nothing may go to but normal text; providers refuse it first."""
    from urllib.parse import urlsplit

    if url_problem(url) is not None:
        return Destination(shown(url), loopback=False)
    target = normalize(url)
    parts = urlsplit(target)
    trusted = target in {normalize(w) for w in work_providers}
    address = loopback_address(parts.hostname or "")
    if address is not None and address != parts.hostname:
        host = f"[{address}]" if ":" in address else address
        target = f"{parts.scheme}://{host}:{parts.port}{parts.path}"
    return Destination(target, loopback=address is not None, trusted_for_work=trusted)


def allows(dest: Destination, tier: str) -> bool:
    """Whether text of `tier` may go to `dest`."""
    if dest.in_process:
        return True
    if tier in ("global", "normal"):
        return True
    if tier == "work":
        return dest.loopback or dest.trusted_for_work
    if tier == "private":
        return dest.loopback
    return False  # legal, and anything unknown


def check_egress(texts: Iterable[tuple[str, str]], dest: Destination) -> None:
    """The gate: raise EgressRefused unless every (text, tier) may go to `dest`. Providers call it
    immediately before sending; nothing reaches the network past a refusal."""
    refused = sorted({tier for _, tier in texts if not allows(dest, tier)}, key=rank)
    if refused:
        raise EgressRefused(f"refused to send {', '.join(refused)} text to {dest.url}",
                            "legal text never leaves this machine; private and work text only go to a "
                            "loopback host (or, for work, one in [trust] work_providers)")
