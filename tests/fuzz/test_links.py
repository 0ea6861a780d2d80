"""Any next-page link a site sends is followed, refused or a listing error, and never quoted with
its userinfo (issue 46: a token in a link to another origin reached RegistrySynced, and
`http://[::1` raised ValueError out of RunFunction).

The RunFunction scenarios list through a stand-in lister, so the sites' readers are driven here:
GitHub's packages API (`Link` header) and Docker Hub's (`next` field), with every page fetch
answered in-process, the first page linking to a drawn URL.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Final
from unittest import mock

from hypothesis import example, given
from hypothesis import strategies as st

from function.registry import api_pages
from function.registry.credentials import Credential
from function.registry.github_listing import GitHubPackagesIndex
from function.registry.hub_listing import DockerHubIndex
from function.registry.listing import ListingError, RepositoryIndex, RepositoryQuery

TOKEN: Final = "tok3nInTheLink"  # noqa: S105 - a made-up token, to search messages for
GITHUB: Final = "https://api.github.com"
HUB: Final = "https://hub.docker.com"

_schemes = st.sampled_from(["http://", "https://", "ftp://", "", "//", "HTTPS://"])
_userinfo = st.sampled_from(["", f"robot:{TOKEN}@", f"{TOKEN}@", f"u:{TOKEN}@x@", f":{TOKEN}@"])
_hosts = st.sampled_from(
    ["api.github.com", "hub.docker.com", "evil.example", "[::1", "[::1]", "127.0.0.2:9",
     "h:99999", "h:x", "", "[", "exa mple"]
)  # fmt: skip
_paths = st.one_of(st.sampled_from(["/next?page=2", "", "/\x00", "/%zz", "?a=b#c"]), st.text())
links: Final = st.one_of(
    st.builds(lambda *parts: "".join(parts), _schemes, _userinfo, _hosts, _paths),
    st.text(max_size=200),
)
"""Next-page links as a site might send them: good ones, ones elsewhere, and malformed."""


def _pages(site: str, link: str) -> Any:
    """A `fetch_page` that answers the first page with a link to `link`, every other empty."""
    asked: list[str] = []

    async def fetch(url: str, headers: Mapping[str, str], deadline: float, **_: Any) -> Any:
        del headers, deadline
        asked.append(url)
        last = len(asked) > 1
        if site == "github":
            head = {} if last else {"link": f'<{link}>; rel="next"'}
            return api_pages.Page([] if last else [{"name": "aim-a"}], head)
        return api_pages.Page({"results": [{"name": "aim-a"}], "next": None if last else link}, {})

    return fetch


def _list(site: str, link: str) -> str | None:
    """The listing's error message, or None when it listed."""
    index: RepositoryIndex
    if site == "github":
        index = GitHubPackagesIndex(GITHUB)
        query = RepositoryQuery(
            "ghcr.io", "amd/aim-*", wildcard=True, credential=Credential("ghcr.io", "r", "t")
        )
    else:
        index = DockerHubIndex(HUB)
        query = RepositoryQuery("docker.io", "amd/aim-*", wildcard=True)
    with mock.patch.object(api_pages, "fetch_page", _pages(site, link)):
        try:
            asyncio.run(index.repositories(query, time.monotonic() + 10))
        except ListingError as e:
            return e.message
    return None


@given(site=st.sampled_from(["github", "docker-hub"]), link=links)
@example(site="github", link="http://[::1")
@example(site="docker-hub", link="http://[::1")
@example(site="github", link=f"https://robot:{TOKEN}@evil.example/next")
@example(site="docker-hub", link=f"https://robot:{TOKEN}@evil.example/next")
def test_any_next_link_is_listed_or_refused_without_its_userinfo(site: str, link: str) -> None:
    """Protects both findings for every link: only a `ListingError` (the source's condition) may
    come out of the listing, and its message never holds the link's token."""
    said = _list(site, link)
    assert said is None or TOKEN not in said, said
