"""The pages of a registry site's own web API (Docker Hub's, GitHub's), read within bounds.

Docker Hub and ghcr.io close the Registry API's catalog; their sites list a namespace's
repositories instead, in JSON pages. A page is fetched in a worker thread with the standard
library's HTTP client (so the function's proxy and certificate environment applies), read up to
`MAX_PAGE_BYTES` and within the sync's deadline, and every way it can go wrong becomes a
`ListingError` in words for a condition: the site's own message on a refusal, when to try again
on a rate limit. Redirects are not followed and a `next` link is followed only on the origin of
the first page, so a token sent to the API is never sent anywhere else. A URL is quoted as its
origin without userinfo (`function/registry/urls.py`), and a link that is no URL is a
`ListingError` naming where the site put it.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import http.client
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol
from urllib.parse import urljoin, urlsplit

from pydantic import JsonValue

from function.registry.inspect import FailureKind
from function.registry.listing import (
    MAX_REPOSITORIES,
    ListingError,
    Repositories,
    RepositoryQuery,
    valid_repositories,
)
from function.registry.urls import origin, same_origin, without_userinfo
from function.rules import jsontext

MAX_PAGE_BYTES: Final = 2 << 20
"""One page of 100 entries is some hundred KiB on either site; more is no page of theirs."""
MAX_PAGES: Final = 20
"""Pages read of one namespace: `MAX_REPOSITORIES` at 100 a page, and room for short pages."""
PAGE_SIZE: Final = 100
"""Entries asked for per page; both sites give at most 100."""
USER_AGENT: Final = "function-aim (AIMClusterModelSource listing)"
_MAX_ERROR_BYTES: Final = 64 << 10
_MAX_MESSAGE: Final = 300
_MAX_RETRY_DIGITS: Final = 10
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True)
class Page:
    """A page as the site answered it: its JSON body and its headers (names in lower case)."""

    body: JsonValue
    headers: Mapping[str, str]


class PageReader(Protocol):
    """The repository names on one page and the next page's URL (None: the last page).

    Raises `ListingError` when the page is not shaped as the site's list.
    """

    def __call__(self, page: Page) -> tuple[list[str], str | None]:
        """Read `page`."""
        ...


def namespace_of(query: RepositoryQuery, site: str, example: str) -> str:
    """The namespace a wildcard lists: its first segment, which must hold no `*`.

    Raises:
        ListingError: the wildcard does not start with a namespace.
    """
    first, sep, _ = query.repository.partition("/")
    if not sep or "*" in first or not first:
        msg = (
            f"{site} lists repositories one namespace at a time, so a wildcard there starts "
            f"with its namespace, without `*` ({example})"
        )
        raise ListingError(FailureKind.ERROR, msg)
    return first


async def read_pages(  # noqa: PLR0913 - what one listing needs
    first_url: str,
    headers: Mapping[str, str],
    deadline: float,
    *,
    site: str,
    reader: PageReader,
    link: str,
    secret: str = "",
) -> Repositories:
    """Every repository on the pages from `first_url` on, within the bounds.

    Pages past `MAX_PAGES` or `MAX_REPOSITORIES` are not read, and the answer says so. `link`
    names where a page gives the next one's URL, for the error when it is no URL.

    Raises:
        ListingError: a page failed (see `fetch_page`), was not the site's list, or linked to
            another origin or to no URL at all.
    """
    names: list[str] = []
    url: str | None = first_url
    pages = 0
    while url is not None and pages < MAX_PAGES and len(names) < MAX_REPOSITORIES:
        if pages and not same_origin(first_url, url):
            msg = (
                f"{site} linked its next page to {origin(url)}, another site than "
                f"{origin(first_url)}; it was not followed"
            )
            raise ListingError(FailureKind.ERROR, msg)
        page = await fetch_page(url, headers, deadline, site=site, secret=secret)
        pages += 1
        found, following = reader(page)
        names += valid_repositories(found)
        url = _next_url(url, following, site, link) if following is not None else None
    if url is None:
        return Repositories(tuple(names[:MAX_REPOSITORIES]), pages=pages)
    note = (
        f"{site} was read up to {min(len(names), MAX_REPOSITORIES)} repositories "
        f"({pages} pages), in the order it lists them; a wildcard matches among those only, "
        "so name repositories past them in filters of their own"
    )
    return Repositories(tuple(names[:MAX_REPOSITORIES]), note, pages)


def _next_url(url: str, following: str, site: str, link: str) -> str:
    """The next page's URL, `following` read relative to `url`.

    Raises:
        ListingError: `following` is no URL (`http://[::1`, a port out of range).
    """
    try:
        joined = urljoin(url, following)
        _ = urlsplit(joined).port  # raises for a port that is no number, or out of range
    except ValueError as e:
        msg = (
            f"{site} gave a next page that is no URL in {link} "
            f"({_words(repr(following), '')[:100]}: {e}); the listing stopped there"
        )
        raise ListingError(FailureKind.ERROR, msg) from None
    return joined


async def fetch_page(
    url: str, headers: Mapping[str, str], deadline: float, *, site: str, secret: str = ""
) -> Page:
    """GET `url` and parse its JSON, by `deadline` (`time.monotonic()`).

    `secret` (a token in `headers`) is cut out of anything the site says back.

    Raises:
        ListingError: refused (401, 403, 404), rate limited (429, or GitHub's 403 with no
            requests left), any other status, unreachable, past the deadline, larger than
            `MAX_PAGE_BYTES`, or not JSON.
    """
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        scheme = ""
    if scheme not in {"http", "https"}:
        msg = f"{site}: {_words(repr(url), '')[:100]} is not an http(s) URL"
        raise ListingError(FailureKind.ERROR, msg)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ListingError(FailureKind.TIMEOUT, f"no answer from {site} within the sync's time")
    fetch = functools.partial(_get, url, headers, deadline, site, secret)
    try:
        return await asyncio.wait_for(asyncio.to_thread(fetch), timeout=remaining)
    except TimeoutError:
        msg = f"no answer from {site} within the sync's time (--registry-listing-timeout)"
        raise ListingError(FailureKind.TIMEOUT, msg) from None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects become errors: a token goes to the API's own origin only."""

    def redirect_request(  # noqa: PLR0913, PLR0917 - urllib's signature
        self,
        req: urllib.request.Request,
        fp: object,
        code: int,
        msg: str,
        headers: object,
        newurl: str,
    ) -> None:
        del req, fp, code, msg, headers, newurl


_OPENER: Final = urllib.request.build_opener(_NoRedirect)


def _get(url: str, headers: Mapping[str, str], deadline: float, site: str, secret: str) -> Page:
    """The blocking fetch, run in a worker thread; every socket wait ends by `deadline`."""
    # Only http(s): the URL is the index's own or a `next` link on its origin (`read_pages`).
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})  # noqa: S310
    refused: tuple[int, dict[str, str], bytes] | None = None
    try:
        try:
            with _OPENER.open(request, timeout=_left(deadline)) as response:
                raw = _read(response, MAX_PAGE_BYTES, deadline)
                answered = {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as e:
            with e:
                answered = {k.lower(): v for k, v in e.headers.items()} if e.headers else {}
                refused = (e.code, answered, _read(e.fp, _MAX_ERROR_BYTES, deadline))
    # ValueError: http.client refuses a URL with control characters, or a port it cannot read.
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
        reason = e.reason if isinstance(e, urllib.error.URLError) else e
        if isinstance(reason, TimeoutError):
            msg = f"no answer from {site} within the sync's time (--registry-listing-timeout)"
            raise ListingError(FailureKind.TIMEOUT, msg) from None
        msg = f"cannot reach {site}: {_words(str(reason), secret)}"
        raise ListingError(FailureKind.UNREACHABLE, msg) from None
    if refused is not None:
        raise _refusal(*refused, site, secret)
    if len(raw) > MAX_PAGE_BYTES:
        msg = (
            f"{site} answered more than {MAX_PAGE_BYTES >> 20} MiB for one page of "
            f"{PAGE_SIZE} entries; no list of theirs is this large"
        )
        raise ListingError(FailureKind.ERROR, msg)
    try:
        body = jsontext.loads(raw, max_bytes=MAX_PAGE_BYTES)
    except jsontext.JsonTextError as e:
        raise ListingError(FailureKind.ERROR, f"{site}'s answer {e}") from None
    return Page(body, answered)


def _read(stream: object, limit: int, deadline: float) -> bytes:
    """Up to `limit + 1` bytes of `stream`, a chunk at a time, stopping at `deadline`."""
    read = getattr(stream, "read1", None) or getattr(stream, "read", None)
    if read is None:
        return b""
    out = b""
    while len(out) <= limit:
        if time.monotonic() > deadline:
            raise TimeoutError
        chunk = read(min(1 << 16, limit + 1 - len(out)))
        if not chunk:
            break
        out += chunk
    return out


def _refusal(
    status: int, headers: Mapping[str, str], body: bytes, site: str, secret: str
) -> ListingError:
    words = _said(body, secret)
    said = f"HTTP {status}" + (f": {words}" if words else "")
    if status == 429 or (status == 403 and headers.get("x-ratelimit-remaining") == "0"):  # noqa: PLR2004
        msg = f"{site} is rate limiting this function ({said}); {_retry(headers)}"
        return ListingError(FailureKind.RATE_LIMITED, msg, status=status)
    if 300 <= status < 400:  # noqa: PLR2004
        where = origin(headers.get("location", "")) or "elsewhere"
        msg = f"{site} redirected ({said}) to {where}; redirects are not followed"
        return ListingError(FailureKind.ERROR, msg, status=status)
    kind = {
        401: FailureKind.UNAUTHORIZED,
        403: FailureKind.UNAUTHORIZED,
        404: FailureKind.NOT_FOUND,
    }.get(status, FailureKind.ERROR)
    return ListingError(kind, f"{site} refused ({said})", status=status)


def _retry(headers: Mapping[str, str]) -> str:
    """When the site says to try again: `Retry-After` (seconds or a date), or its reset time."""
    after = headers.get("retry-after", "").strip()
    seconds: int | None = None
    if after.isdigit() and len(after) <= _MAX_RETRY_DIGITS:
        seconds = int(after)
    elif after:
        try:
            when = email.utils.parsedate_to_datetime(after).timestamp()
            seconds = max(int(when - time.time()), 0)
        except (TypeError, ValueError, OverflowError):
            seconds = None
    reset = headers.get("x-ratelimit-reset", "").strip()
    if seconds is None and reset.isdigit() and len(reset) <= _MAX_RETRY_DIGITS:
        seconds = max(int(reset) - int(time.time()), 0)
    later = "the source lists again at its next sync (at most 5 minutes after a failed one)"
    if seconds is None:
        return f"it did not say when to retry; {later}"
    return f"retry after {seconds} s; {later}"


def _said(body: bytes, secret: str) -> str:
    """The site's own words: the `message` (or `detail`, `error`) of a JSON body, or its text."""
    text = body.decode(errors="replace")
    try:
        value = jsontext.loads(body, max_bytes=_MAX_ERROR_BYTES)
    except jsontext.JsonTextError:
        value = None
    if isinstance(value, dict):
        words = [value.get(k) for k in ("message", "detail", "error")]
        text = next((w for w in words if isinstance(w, str) and w.strip()), "")
    return _words(text, secret)


def _words(text: str, secret: str) -> str:
    """What a site or a socket said: one line, cut short, without the token or URL userinfo.

    An error may quote the URL it failed on, userinfo and all.
    """
    if secret:
        text = text.replace(secret, "<redacted>")
    return without_userinfo(" ".join(_CONTROL.sub(" ", text).split()))[:_MAX_MESSAGE]


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)
