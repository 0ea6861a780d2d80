"""What a registry listing is asked for and what it answers: repositories and their tags.

An AIMClusterModelSource asks once per sync, for all its filters together, so one reconcile makes
one round of registry calls; the answer says per filter what was found or why nothing was.
Everything a registry says is bounded here, so a registry with a million tags costs a bounded
amount of time and memory and is reported as cut, not trusted in full.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Final, Protocol

from function.registry.credentials import Credential
from function.registry.inspect import FailureKind

MAX_REPOSITORIES: Final = 1000
"""Repositories read from one catalog; a wildcard is matched against these only."""
MAX_TAG_LISTS: Final = 100
"""Repositories whose tags one wildcard filter lists."""
MAX_TAGS: Final = 5000
"""Tags read of one repository."""
MAX_SYNC_TAGS: Final = 1_000_000
"""Tags one sync reads across all its filters, by default (`--registry-listing-max-tags`).

The bounds above are each filter's; a source has up to 100 filters, so only this one bounds what
a sync holds and composes. Twice what one wildcard may read (`MAX_TAG_LISTS` x `MAX_TAGS`); a sync
over a million tags composes in well under a second (`benchmarks/model_source.py`), a small
share of the default compose budget.
"""
MAX_NAME: Final = 255
"""Repository names and tags longer than this are no registry's (tags are at most 128)."""
_TAG: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_REPOSITORY: Final = re.compile(
    r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"
)


@dataclass(frozen=True)
class RepositoryQuery:
    """One filter's question: the tags of `repository`, or of each repository matching it.

    `repository` holds `*` wildcards when `wildcard`; repositories named in `exclude` are not
    listed.
    """

    registry: str
    repository: str
    wildcard: bool = False
    exclude: frozenset[str] = frozenset()
    credential: Credential | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ListingRequest:
    """Every question of one sync of the source `source`."""

    source: str
    queries: tuple[RepositoryQuery, ...]


@dataclass(frozen=True)
class RepositoryTags:
    """A repository and the tags it has (those that are valid tags)."""

    repository: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class QueryAnswer:
    """What the registry answered to one query; `failure` set when it could not be listed."""

    query: RepositoryQuery
    repositories: tuple[RepositoryTags, ...] = ()
    failure: FailureKind | None = None
    message: str = ""
    """Why it failed, or what was cut short (`MAX_*`), in words for a condition."""


@dataclass(frozen=True)
class ListingStopped:
    """Why a sync's listing was given up before it was used, and how far it got.

    A source uses a whole listing or none: one that grew past a bound is not used in part (which
    filters' images would be left out would depend on which registry answered first), and the
    source keeps its models and its last sync's status.
    """

    registries: tuple[str, ...]
    """The registries the sync lists, as its filters name them."""
    repositories: int
    """Repositories whose tags were read."""
    tags: int
    """Tags read in all."""
    calls: int
    """Registry and API calls made (catalogs, pages of a site's list, tag lists)."""
    past: str
    """What the listing grew past, in words for a condition ("the 1000000 tags ...")."""
    setting: str
    """The function's flag that raises that bound."""


@dataclass(frozen=True)
class ListingAnswer:
    """The answers to a `ListingRequest`, one per query, in its order (none when `stopped`)."""

    source: str
    answers: tuple[QueryAnswer, ...]
    calls: int = 0
    """Registry and API calls the listing made."""
    stopped: ListingStopped | None = None
    """Set when the listing grew past a bound and is not to be used; `answers` is then empty."""

    def given_up(self, past: str, setting: str) -> ListingAnswer:
        """This listing as one not to be used, saying how far it got: past `past` (`setting`)."""
        repositories = [r for a in self.answers for r in a.repositories]
        stopped = ListingStopped(
            registries=tuple(sorted({a.query.registry for a in self.answers})),
            repositories=len(repositories),
            tags=sum(len(r.tags) for r in repositories),
            calls=self.calls,
            past=past,
            setting=setting,
        )
        return ListingAnswer(self.source, (), self.calls, stopped)


class ListingError(Exception):
    """A listing failed; `kind` says how, as a condition reason, and `message` in whose words."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None) -> None:
        """An error of `kind`, in words for a condition (no credential in them).

        `status` is the HTTP status that said so, when one did.
        """
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Repositories:
    """The repositories a registry's index listed (`namespace/name`), and what was cut, if any."""

    names: tuple[str, ...]
    note: str = ""
    pages: int = field(default=1, compare=False)
    """Pages the site answered them in (how far a listing got, when one is given up)."""


class RepositoryIndex(Protocol):
    """Lists a registry's repositories where its catalog is closed (Docker Hub, ghcr.io).

    Such sites list one namespace (an organization or user) at a time through their own web API,
    so a wildcard names its namespace without `*`.
    """

    async def repositories(self, query: RepositoryQuery, deadline: float) -> Repositories:
        """Up to `MAX_REPOSITORIES` of the namespace `query.repository` starts with.

        Raises:
            ListingError: the site refused, failed, ran past `deadline` (`time.monotonic()`), or
                answered something that is not its list.
        """
        ...


class Lister(Protocol):
    """Lists repositories and tags. Must not block the event loop; must time out."""

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Answer every query; registry problems are answers, not exceptions.

        A listing that grows past the sync's bound (`MAX_SYNC_TAGS`) stops there and answers
        `ListingAnswer.stopped` instead.
        """
        ...


def matches(pattern: str, repository: str) -> bool:
    """Whether `repository` matches a filter's `*` pattern (`*` spans `/` too, as AIM's does)."""
    # fnmatch also gives meaning to `?` and `[`; repository names hold neither, patterns may.
    escaped = re.sub(r"([?\[\]])", r"[\1]", pattern)
    return fnmatch.fnmatchcase(repository, escaped)


def valid_tags(lines: list[str]) -> tuple[str, ...]:
    """The tags among a registry's answer, without blanks and anything no tag could be."""
    return tuple(t for t in (line.strip() for line in lines) if _TAG.match(t))


def valid_repositories(lines: list[str]) -> tuple[str, ...]:
    """The repository names among a registry's answer."""
    return tuple(
        r for r in (line.strip() for line in lines) if len(r) <= MAX_NAME and _REPOSITORY.match(r)
    )
