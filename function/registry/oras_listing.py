"""The production `Lister`: `oras repo ls` (the registry's catalog) and `oras repo tags`.

It shares the inspector's oras binary, registries spoken to over HTTP, mirrors and credential
handling (`OrasInspector.run`). Registries whose catalog is closed list a wildcard's namespace
through their site's API instead (`RepositoryIndex`: Docker Hub's repository API, GitHub's
packages API), unless a mirror serves them: a mirror is asked for its catalog. A sync has one
deadline for all its calls; a few run at once, so one slow registry costs one sync its deadline
and never holds up other XRs' inspections beyond that. A sync also has one bound on the tags it
reads across all its filters (`max_tags`): a listing that grows past it is given up, so what a
sync holds and composes is bounded however many filters it has.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from function.registry.github_listing import GitHubPackagesIndex
from function.registry.hub_listing import DockerHubIndex
from function.registry.inspect import FailureKind
from function.registry.listing import (
    MAX_NAME,
    MAX_REPOSITORIES,
    MAX_SYNC_TAGS,
    MAX_TAG_LISTS,
    MAX_TAGS,
    ListingAnswer,
    ListingError,
    ListingRequest,
    ListingStopped,
    QueryAnswer,
    RepositoryIndex,
    RepositoryQuery,
    RepositoryTags,
    matches,
    valid_repositories,
    valid_tags,
)
from function.registry.oras import OrasError, OrasInspector
from function.registry.reference import DOCKER_HUB

DEFAULT_TIMEOUT_S: Final = 90.0
"""Crossplane gives a whole reconcile 2 minutes, the function's calls included: a listing that
took them all would be cut off by Crossplane, nothing of it recorded, and the next reconcile
would list again at once. 90 s leaves the compose steps around it their budget."""
CONCURRENCY: Final = 4
GHCR: Final = "ghcr.io"
MAX_TAGS_FLAG: Final = "--registry-listing-max-tags"
TIMEOUT_FLAG: Final = "--registry-listing-timeout"
# Registries that serve the Registry API's catalog to nobody (a mirror of them may: it is asked).
_NO_CATALOG: Final = frozenset({DOCKER_HUB, GHCR})


def site_indexes() -> dict[str, RepositoryIndex]:
    """The sites' own listings of the registries without a catalog: Docker Hub's and GitHub's."""
    return {DOCKER_HUB: DockerHubIndex(), GHCR: GitHubPackagesIndex()}


@dataclass
class _Sync:
    """One sync's deadline, its share of calls at a time, and what it has read so far."""

    deadline: float
    gate: asyncio.Semaphore
    max_tags: int
    calls: int = 0
    repositories: int = 0
    tags: int = 0

    @property
    def stopped(self) -> bool:
        """More tags read than the sync may hold: no further call is made."""
        return self.tags > self.max_tags


@dataclass(frozen=True)
class OrasLister:
    """Lists repositories and tags with `inspector`'s oras, within `timeout_s` per sync.

    A sync reads at most `max_tags` tags across all its filters; past them it makes no further
    call and answers `ListingAnswer.stopped`. `indexes` lists the repositories of registries
    without a catalog, by registry (as image references name it: `docker.io`); None is
    `site_indexes()` for every such registry that has no mirror. Tests give stand-ins here;
    nothing a user writes reaches it.
    """

    inspector: OrasInspector
    timeout_s: float = DEFAULT_TIMEOUT_S
    indexes: Mapping[str, RepositoryIndex] | None = None
    max_tags: int = MAX_SYNC_TAGS

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Answer every query of one sync, at most `CONCURRENCY` oras calls at a time."""
        sync = _Sync(
            time.monotonic() + self.timeout_s, asyncio.Semaphore(CONCURRENCY), self.max_tags
        )
        answers = await asyncio.gather(*(self._answer(q, sync) for q in request.queries))
        if not sync.stopped:
            return ListingAnswer(request.source, tuple(answers), sync.calls)
        stopped = ListingStopped(
            registries=tuple(sorted({q.registry for q in request.queries})),
            repositories=sync.repositories,
            tags=sync.tags,
            calls=sync.calls,
            past=f"the {self.max_tags:,} tags one sync reads across all its filters",
            setting=MAX_TAGS_FLAG,
        )
        return ListingAnswer(request.source, (), sync.calls, stopped)

    async def _answer(self, query: RepositoryQuery, sync: _Sync) -> QueryAnswer:
        """The query's answer; once the sync is stopped, an empty one nobody uses."""
        try:
            if not query.wildcard:
                one = await self._tags(query, query.repository, sync)
                if one is None:
                    return QueryAnswer(query)
                tags, note = one
                return QueryAnswer(query, (RepositoryTags(query.repository, tags),), message=note)
            names, notes = await self._catalog(query, sync)
            chosen = [n for n in names if matches(query.repository, n) and n not in query.exclude]
            if len(chosen) > MAX_TAG_LISTS:
                notes.append(
                    f"{len(chosen)} repositories match; the tags of the first {MAX_TAG_LISTS} "
                    "were listed (narrow the wildcard)"
                )
                chosen = chosen[:MAX_TAG_LISTS]
            listed = await asyncio.gather(*(self._tags(query, name, sync) for name in chosen))
        except (OrasError, ListingError) as e:
            return QueryAnswer(query, failure=e.kind, message=e.message)
        except _Stopped:
            return QueryAnswer(query)
        read = [(name, one) for name, one in zip(chosen, listed, strict=True) if one is not None]
        notes += [note for _, (_, note) in read if note]
        repositories = tuple(RepositoryTags(name, tags) for name, (tags, _) in read)
        return QueryAnswer(query, repositories, message="; ".join(notes))

    async def _catalog(self, query: RepositoryQuery, sync: _Sync) -> tuple[list[str], list[str]]:
        index = self._index(query.registry)
        if index is not None:
            async with sync.gate:
                if sync.stopped:
                    raise _Stopped
                found = await index.repositories(query, sync.deadline)
            sync.calls += found.pages
            return list(found.names), [found.note] if found.note else []
        if self._host(query.registry) in _NO_CATALOG:
            msg = (
                f"{query.registry} does not list its repositories to clients (no catalog API), "
                "so a wildcard cannot be matched there; name each repository "
                "(org/aim-qwen) in a filter of its own"
            )
            raise OrasError(FailureKind.ERROR, msg)
        limit = MAX_REPOSITORIES * (MAX_NAME + 1)
        async with sync.gate:
            if sync.stopped:
                raise _Stopped
            sync.calls += 1
            out = await self._run(
                ["repo", "ls", self._host(query.registry)],
                query,
                sync,
                what=f"while listing the repositories of {query.registry}",
                max_bytes=limit,
            )
        names = list(valid_repositories(_lines(out, limit)))
        notes = []
        if len(out) > limit or len(names) > MAX_REPOSITORIES:
            notes.append(f"the catalog was read up to {MAX_REPOSITORIES} repositories")
            names = names[:MAX_REPOSITORIES]
        return names, notes

    async def _tags(
        self, query: RepositoryQuery, repository: str, sync: _Sync
    ) -> tuple[tuple[str, ...], str] | None:
        """The repository's tags and what was cut of them; None once the sync is stopped."""
        limit = MAX_TAGS * 129
        async with sync.gate:
            if sync.stopped:
                return None
            sync.calls += 1
            out = await self._run(
                ["repo", "tags", f"{self._host(query.registry)}/{repository}"],
                query,
                sync,
                what=f"while listing the tags of {query.registry}/{repository}",
                max_bytes=limit,
            )
        tags = valid_tags(_lines(out, limit))
        note = ""
        if len(out) > limit or len(tags) > MAX_TAGS:
            tags, note = tags[:MAX_TAGS], f"{repository}: only its first {MAX_TAGS} tags were read"
        sync.repositories += 1
        sync.tags += len(tags)
        return tags, note

    async def _run(
        self, args: list[str], query: RepositoryQuery, sync: _Sync, *, what: str, max_bytes: int
    ) -> bytes:
        """What oras printed, cut at `max_bytes`; a call past the deadline names the flag."""
        return await self.inspector.run(
            args,
            query.registry,
            query.credential,
            sync.deadline,
            what=what,
            max_bytes=max_bytes,
            cut=True,
            within=self._within,
        )

    @property
    def _within(self) -> str:
        """The time a sync's calls run out of, for the error past it."""
        return f"the sync's {self.timeout_s:g} s ({TIMEOUT_FLAG})"

    def _index(self, registry: str) -> RepositoryIndex | None:
        if self.indexes is not None:
            return self.indexes.get(registry)
        if registry in self.inspector.mirrors:
            return None
        return site_indexes().get(registry)

    def _host(self, registry: str) -> str:
        return self.inspector.mirrors.get(registry, registry)


class _Stopped(Exception):  # noqa: N818 - an outcome, not a fault
    """The sync stopped before this query's catalog was read."""


def _lines(out: bytes, limit: int) -> list[str]:
    """The complete lines of `out`; an answer cut at `limit` loses its partial last line."""
    text = out.decode(errors="replace")
    lines = text.splitlines()
    if len(out) > limit and not text.endswith("\n") and lines:
        lines.pop()
    return lines
