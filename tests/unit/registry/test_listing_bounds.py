"""OrasLister's bound across a sync's filters, against a stand-in registry (no oras, no network).

Each filter's listing is bounded on its own (catalog, tag lists, tags of one repository; the
registry tier checks those against real registries). A source has up to 100 filters, so one sync
is bounded as a whole too: past `max_tags` tags the lister makes no further call and gives the
listing up, saying how far it got, instead of handing the composer more than it can compose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from function.registry.credentials import Credential
from function.registry.listing import (
    MAX_SYNC_TAGS,
    ListingAnswer,
    ListingRequest,
    RepositoryQuery,
)
from function.registry.oras import OrasInspector
from function.registry.oras_listing import OrasLister
from tests.cases import Case, table

REG = "registry.example.com"


@dataclass(frozen=True)
class StandIn(OrasInspector):
    """A registry holding `repositories` (name to tags), answering as `oras repo ls/tags` print.

    `asked` records every call made, in order.
    """

    repositories: Mapping[str, Sequence[str]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    async def run(
        self,
        args: Sequence[str],
        registry: str,
        credential: Credential | None,
        deadline: float,
        *,
        what: str,
        max_bytes: int,
        cut: bool = False,
        within: str = "",
    ) -> bytes:
        """The catalog or a repository's tags, one a line."""
        del registry, credential, deadline, what, cut, within
        await asyncio.sleep(0)  # a real call yields to the others waiting on the gate
        self.asked.append(" ".join(args[:2]))
        if list(args[:2]) == ["repo", "ls"]:
            lines: Sequence[str] = list(self.repositories)
        else:
            lines = self.repositories[args[2].removeprefix(f"{REG}/")]
        return "".join(f"{line}\n" for line in lines).encode()[: max_bytes + 1]


def registry(repositories: int, tags: int, prefix: str = "amd/aim-m") -> dict[str, list[str]]:
    return {f"{prefix}{r:03}": [f"1.{n}.0" for n in range(tags)] for r in range(repositories)}


def wildcard(pattern: str) -> RepositoryQuery:
    return RepositoryQuery(REG, pattern, wildcard=True)


def listed(
    stand_in: StandIn, queries: Sequence[RepositoryQuery], max_tags: int = MAX_SYNC_TAGS
) -> ListingAnswer:
    lister = OrasLister(stand_in, max_tags=max_tags, indexes={})
    return asyncio.run(lister.list_images(ListingRequest("src", tuple(queries))))


@dataclass(frozen=True)
class Bound(Case):
    repositories: dict[str, list[str]]
    queries: tuple[RepositoryQuery, ...]
    max_tags: int
    given_up: bool


BOUNDS = [
    Bound(
        "one-filter-within",
        "one wildcard of 10 repositories x 50 tags, under the bound: listed in full",
        registry(10, 50),
        (wildcard("amd/aim-*"),),
        max_tags=1000,
        given_up=False,
    ),
    Bound(
        "filters-add-up",
        "three filters of 400 tags each are each within the bound, but not together: the bound "
        "is the sync's, not each filter's",
        registry(3, 400),
        tuple(RepositoryQuery(REG, f"amd/aim-m{r:03}") for r in range(3)),
        max_tags=1000,
        given_up=True,
    ),
    Bound(
        "exactly-the-bound",
        "a listing of exactly max_tags tags is whole, not given up",
        registry(10, 100),
        (wildcard("amd/aim-*"),),
        max_tags=1000,
        given_up=False,
    ),
    Bound(
        "one-wildcard-past",
        "one wildcard whose repositories hold more than the bound is given up too",
        registry(20, 100),
        (wildcard("amd/aim-*"),),
        max_tags=1000,
        given_up=True,
    ),
]


@table(BOUNDS)
def test_a_sync_s_tags_are_bounded_across_its_filters(case: Bound) -> None:
    """Under the bound the answers are whole; past it there are none, only how far it got."""
    stand_in = StandIn(repositories=case.repositories)
    answer = listed(stand_in, case.queries, case.max_tags)

    assert answer.calls == len(stand_in.asked)
    if not case.given_up:
        assert answer.stopped is None
        read = sum(len(r.tags) for a in answer.answers for r in a.repositories)
        assert read == sum(len(t) for t in case.repositories.values())
        return
    assert answer.answers == (), "nothing of a listing given up reaches the composer"
    stopped = answer.stopped
    assert stopped is not None
    assert stopped.registries == (REG,)
    assert stopped.tags > case.max_tags
    assert stopped.repositories == sum(c.startswith("repo tags") for c in stand_in.asked)
    assert stopped.calls == len(stand_in.asked)
    assert f"the {case.max_tags:,} tags one sync reads" in stopped.past
    assert stopped.setting == "--registry-listing-max-tags"


def test_past_the_bound_no_further_call_is_made() -> None:
    """A registry of 100 repositories x 100 tags under a bound of 1,000 tags costs a few calls
    past the bound (those already under way), not the other ninety tag lists."""
    stand_in = StandIn(repositories=registry(100, 100))
    answer = listed(stand_in, [wildcard("amd/aim-*")], max_tags=1000)

    assert answer.stopped is not None
    tag_lists = sum(c.startswith("repo tags") for c in stand_in.asked)
    assert 11 <= tag_lists <= 11 + 4, f"{tag_lists} tag lists: 11 pass the bound, 4 run at once"
