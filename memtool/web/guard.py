"""Who may talk to `mem serve`, decided per request. Pure.

The server binds 127.0.0.1 only; on top of that every request must
- name the server by its own Host (`127.0.0.1:PORT` or `localhost:PORT`): a web page that rebinds
  its DNS name to 127.0.0.1 still sends its own name, and is refused (DNS rebinding);
- carry the random token, in the URL once (`?token=…`, then exchanged for a cookie and dropped from
  the address) or in that cookie (HttpOnly, SameSite=Strict): other local users and web pages do not
  know it;
- for anything but GET/HEAD, come from the server's own Origin (no cross-site form posts);
and nothing answers CORS preflights or sends CORS headers, so no other origin can read a page.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

SAFE = ("GET", "HEAD")
ALLOWED = ("GET", "HEAD", "POST")


@dataclass(frozen=True)
class Verdict:
    status: int  # 200: go on; 303: set the cookie and redirect to the address without the token
    reason: str = ""


def cookie_name(port: int) -> str:
    """One cookie per port: two servers on this machine never overwrite each other's token."""
    return f"mem_token_{port}"


def decide(method: str, host: str | None, origin: str | None, query_token: str | None, cookie_token: str | None,
           token: str, port: int) -> Verdict:
    """Whether a request may go on (see the module docstring)."""
    own_hosts = (f"127.0.0.1:{port}", f"localhost:{port}")
    if (host or "").lower() not in own_hosts:
        return Verdict(403, "foreign Host header (mem serve answers only to 127.0.0.1 and localhost)")
    if method not in ALLOWED:
        return Verdict(405, f"{method} is not served (no CORS)")
    if origin is not None and origin.lower() not in tuple(f"http://{h}" for h in own_hosts):
        return Verdict(403, "foreign Origin")
    if method not in SAFE and origin is None:
        return Verdict(403, "a change needs the page's own Origin header")
    if query_token is not None and hmac.compare_digest(query_token.encode(), token.encode()):
        return Verdict(303) if method in SAFE else Verdict(200)
    if cookie_token is not None and hmac.compare_digest(cookie_token.encode(), token.encode()):
        return Verdict(200)
    return Verdict(401, "no valid token: open the address `mem serve` printed (it carries the token)")
