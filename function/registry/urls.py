"""URLs in messages: an origin without its userinfo, and any text with the userinfo cut out.

A URL a site sends back (a `next` link, a redirect's `Location`, an error that names the URL it
failed on) may carry `user:token@` before its host, and a message goes into a condition anyone
who can read the object sees. Every URL the registry code quotes goes through `origin` (or
`without_userinfo` for text that may hold one), and neither raises on a malformed URL.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

_USERINFO: Final = re.compile(r"(?i)((?:\b[a-z][a-z0-9+.-]{0,31}:)?//)[^/?#\s]*@")
"""`scheme://` (or a scheme-relative `//`) and what follows up to the last `@` of the authority:
the userinfo."""
_MAX_ORIGIN: Final = 100


def without_userinfo(text: str) -> str:
    """`text` with the userinfo of every URL in it removed (`https://u:t@h/` is `https://h/`)."""
    return _USERINFO.sub(r"\1", text)


def origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, without userinfo and cut short; empty when it has none.

    A URL `urlsplit` cannot read (`http://[::1`) is quoted as text, its userinfo removed.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return without_userinfo(url)[:_MAX_ORIGIN]
    if not parts.scheme:
        return ""
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}"[:_MAX_ORIGIN]


def same_origin(first: str, other: str) -> bool:
    """Whether both URLs name the same scheme, userinfo, host and port (False: one is malformed)."""
    try:
        a, b = urlsplit(first), urlsplit(other)
    except ValueError:
        return False
    return (a.scheme, a.netloc.lower()) == (b.scheme, b.netloc.lower())
