"""Docker Hub's repositories of a namespace, from its repository API: what wildcards match there.

Docker Hub serves no catalog, so a wildcard on `docker.io` (`amdenterpriseai/aim-*`) lists its
namespace as the AIM operator does: `GET https://hub.docker.com/v2/namespaces/<namespace>/
repositories?page_size=100`, following each page's `next` link, and reading `results[].name`.
It asks anonymously, which lists the namespace's public repositories (a private one is named in a
filter of its own; its tags are listed with the pull secret). Tags come from the registry, as
for any repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from function.registry.api_pages import PAGE_SIZE, Page, namespace_of, read_pages
from function.registry.inspect import FailureKind
from function.registry.listing import ListingError, Repositories, RepositoryQuery

DOCKER_HUB_API: Final = "https://hub.docker.com"
SITE: Final = "Docker Hub"


@dataclass(frozen=True)
class DockerHubIndex:
    """Lists a Docker Hub namespace through the repository API at `api`.

    `api` is Docker Hub's unless a test gives its stand-in; no user object can set it.
    """

    api: str = DOCKER_HUB_API

    async def repositories(self, query: RepositoryQuery, deadline: float) -> Repositories:
        """The namespace's repositories (`namespace/name`), within the bounds of `read_pages`."""
        namespace = namespace_of(query, SITE, "amdenterpriseai/aim-*")
        url = f"{self.api}/v2/namespaces/{quote(namespace, safe='')}/repositories"
        try:
            return await read_pages(
                f"{url}?page_size={PAGE_SIZE}",
                {"Accept": "application/json"},
                deadline,
                site=SITE,
                reader=lambda page: _read(page, namespace),
                link="the `next` field of its answer",
            )
        except ListingError as e:
            if e.kind is FailureKind.NOT_FOUND:
                msg = f"{e.message}; is {namespace!r} a Docker Hub user or organization?"
                raise ListingError(e.kind, msg, status=e.status) from None
            raise


def _read(page: Page, namespace: str) -> tuple[list[str], str | None]:
    """The names on one page of `GET /v2/namespaces/<ns>/repositories`, and its `next`."""
    body = page.body
    results = body.get("results") if isinstance(body, dict) else None
    following = body.get("next") if isinstance(body, dict) else None
    if not isinstance(results, list) or not isinstance(following, str | None):
        msg = (
            f"{SITE}'s answer is not its repository list (an object with a `results` list and a "
            "`next` link)"
        )
        raise ListingError(FailureKind.ERROR, msg)
    names = [
        f"{namespace}/{entry['name']}"
        for entry in results
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    ]
    return names, following or None
