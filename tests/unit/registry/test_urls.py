"""URLs quoted in messages (function/registry/urls.py): never their userinfo, never a raise."""

from __future__ import annotations

from dataclasses import dataclass

from function.registry.urls import origin, same_origin, without_userinfo
from tests.cases import Case, table

TOKEN = "ghp_0123456789abcdef"  # noqa: S105 - a made-up token, to search messages for


@dataclass(frozen=True)
class Quoted(Case):
    url: str
    origin: str


QUOTED = [
    Quoted("plain", "a URL without userinfo is quoted as scheme, host and port",
           "https://api.github.com:443/orgs/x/packages?page=2", "https://api.github.com:443"),
    Quoted("userinfo", "user and token before the host are left out (the issue's leak)",
           f"https://robot:{TOKEN}@evil.example/next", "https://evil.example"),
    Quoted("two-ats", "a raw `@` in the token: everything up to the last one is userinfo",
           f"http://u:{TOKEN}@x@evil.example:8080/", "http://evil.example:8080"),
    Quoted("malformed", "an unclosed IPv6 host is no URL urlsplit reads: quoted as text",
           f"http://u:{TOKEN}@[::1", "http://[::1"),
    Quoted("bad-port", "a port out of range is quoted as written, never parsed",
           "http://h:99999/x", "http://h:99999"),
    Quoted("relative", "a path alone has no origin", "/v2/next", ""),
    Quoted("huge", "a 1 MB URL is cut", "https://" + "h" * 1_000_000, "https://" + "h" * 92),
]  # fmt: skip


@table(QUOTED)
def test_an_origin_is_quoted_without_userinfo(case: Quoted) -> None:
    """What a listing error says of a URL a site sent back."""
    assert origin(case.url) == case.origin, case.reason
    assert TOKEN not in origin(case.url), case.reason


@dataclass(frozen=True)
class Text(Case):
    text: str
    want: str


TEXTS = [
    Text("error", "an error that names the URL it failed on",
         f'Get "https://robot:{TOKEN}@ghcr.io/token?scope=x": EOF',
         'Get "https://ghcr.io/token?scope=x": EOF'),
    Text("several", "each URL in the text loses its userinfo",
         f"from http://a:{TOKEN}@h1/ to ftp://b@h2/", "from http://h1/ to ftp://h2/"),
    Text("scheme-relative", "a link without its scheme still has an authority",
         f"<//robot:{TOKEN}@[::1/next>", "<//[::1/next>"),
    Text("no-url", "an `@` outside a URL is no userinfo", "robot@ghcr.io denied",
         "robot@ghcr.io denied"),
    Text("path-at", "an `@` after the host is a path's, kept", "https://h/p@1", "https://h/p@1"),
]  # fmt: skip


@table(TEXTS)
def test_text_loses_the_userinfo_of_every_url_in_it(case: Text) -> None:
    """What the registry code quotes of a site's, a socket's or oras's words."""
    assert without_userinfo(case.text) == case.want, case.reason


def test_a_malformed_url_is_never_of_the_same_origin() -> None:
    """Comparing origins never raises: a URL urlsplit cannot read is another origin."""
    assert same_origin("https://api.github.com/a", "https://API.github.com/b?page=2")
    assert not same_origin("https://api.github.com/a", "http://[::1")
    assert not same_origin("https://api.github.com/a", f"https://u:{TOKEN}@api.github.com/b")
