"""ghcr.io's repositories of an owner, from GitHub's packages API: what wildcards match there.

ghcr.io serves no catalog, so a wildcard on `ghcr.io` (`amd/aim-*`) lists its owner's container
packages as the AIM operator does: `GET https://api.github.com/orgs/<owner>/packages?
package_type=container&per_page=100`, with the password of the source's ghcr.io pull secret as a
bearer token (GitHub lists packages only to a token with `read:packages`, public ones too). An
owner that is no organization is asked for as a user (`/users/<owner>/packages`). Pages follow
the `Link` header's `rel="next"`; each package's `name` is a repository under the owner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from function.registry.api_pages import PAGE_SIZE, Page, namespace_of, read_pages
from function.registry.inspect import FailureKind
from function.registry.listing import ListingError, Repositories, RepositoryQuery

GITHUB_API: Final = "https://api.github.com"
API_VERSION: Final = "2022-11-28"
SITE: Final = "GitHub's packages API"
_NEXT: Final = re.compile(r'<([^<>]{1,2000})>\s*;\s*rel="?next"?')


@dataclass(frozen=True)
class GitHubPackagesIndex:
    """Lists a GitHub owner's container packages through the packages API at `api`.

    `api` is GitHub's unless a test gives its stand-in; no user object can set it, so the token
    goes to GitHub only.
    """

    api: str = GITHUB_API

    async def repositories(self, query: RepositoryQuery, deadline: float) -> Repositories:
        """The owner's packages (`owner/name`), within the bounds of `read_pages`."""
        owner = namespace_of(query, "ghcr.io", "ghcr.io/amd/aim-*")
        token = query.credential.password if query.credential is not None else ""
        if not token:
            msg = (
                "GitHub lists ghcr.io packages only to a token: give the source a pull secret "
                "(spec.imagePullSecrets) with a ghcr.io login whose password is a GitHub token "
                "with the read:packages scope"
            )
            raise ListingError(FailureKind.UNAUTHORIZED, msg)
        headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": API_VERSION,
        }
        query_string = f"package_type=container&per_page={PAGE_SIZE}"
        found: Repositories | None = None
        for kind in ("orgs", "users"):
            url = f"{self.api}/{kind}/{quote(owner, safe='')}/packages?{query_string}"
            try:
                found = await read_pages(
                    url,
                    headers,
                    deadline,
                    site=SITE,
                    reader=lambda page: _read(page, owner),
                    link='its `Link` header (rel="next")',
                    secret=token,
                )
            except ListingError as e:
                if e.kind is not FailureKind.NOT_FOUND or kind == "users":
                    raise _explained(e, owner) from None
                continue
            break
        return found or Repositories(())


def _read(page: Page, owner: str) -> tuple[list[str], str | None]:
    """The names on one page of `GET /orgs/<owner>/packages`, and its `Link: rel="next"`."""
    if not isinstance(page.body, list):
        msg = f"{SITE}'s answer is not its package list (a JSON list of packages)"
        raise ListingError(FailureKind.ERROR, msg)
    names = [
        f"{owner}/{entry['name']}"
        for entry in page.body
        if isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and entry.get("package_type", "container") == "container"
    ]
    link = _NEXT.search(page.headers.get("link", ""))
    return [n.lower() for n in names], link.group(1) if link else None


def _explained(error: ListingError, owner: str) -> ListingError:
    """The error, with what to check for a refusal of the packages API."""
    hint = {
        FailureKind.UNAUTHORIZED: (
            "the ghcr.io pull secret's password must be a GitHub token with the read:packages "
            "scope (authorized for the organization's SSO, if it has one)"
        ),
        FailureKind.NOT_FOUND: (
            f"GitHub knows no organization or user {owner!r} whose packages this token may see"
        ),
    }.get(error.kind)
    if hint is None:
        return error
    return ListingError(error.kind, f"{error.message}; {hint}", status=error.status)
