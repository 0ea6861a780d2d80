"""The plan's registry lines: what a source's listing found, what failed, what was given up."""

from __future__ import annotations

from dataclasses import dataclass

from aim_plan.report import data, text
from aim_plan.rounds import Plan
from aim_plan.world import World
from function.registry.inspect import FailureKind
from function.registry.listing import (
    ListingAnswer,
    ListingRequest,
    ListingStopped,
    QueryAnswer,
    RepositoryQuery,
    RepositoryTags,
)
from tests.cases import Case, table

QUERY = RepositoryQuery("ghcr.io", "amd/aim-*", wildcard=True)
FOUND = RepositoryTags("amd/aim-llama", ("1.0", "1.1"))
FAILED = QueryAnswer(QUERY, failure=FailureKind.UNREACHABLE, message="connection refused")
STOPPED = ListingStopped(("ghcr.io",), 10, 5000, 12, "the 5000 tags", "--registry-listing-max-tags")


@dataclass(frozen=True)
class Listed(Case):
    """A source's listing and the line the page prints for it."""

    answer: ListingAnswer
    line: str


LISTINGS = [
    Listed(
        "listed",
        "every query answered: the repositories and tags found are counted",
        ListingAnswer("src", (QueryAnswer(QUERY, repositories=(FOUND,)),)),
        "registry: source src listed: 1 repositories, 2 tags",
    ),
    Listed(
        "partly",
        "one query failed and another found images: the failure is named beside the count",
        ListingAnswer("src", (QueryAnswer(QUERY, repositories=(FOUND,)), FAILED)),
        "registry: source src partly listed: 1 repositories, 2 tags; "
        "ghcr.io/amd/aim-*: RegistryUnreachable: connection refused",
    ),
    Listed(
        "failed",
        "nothing found and a query failed: the source failed, with the registry's words",
        ListingAnswer("src", (FAILED,)),
        "registry: source src failed: 0 repositories, 0 tags; "
        "ghcr.io/amd/aim-*: RegistryUnreachable: connection refused",
    ),
    Listed(
        "given-up",
        "a listing past a bound is given up whole: the bound and the flag that raises it",
        ListingAnswer("src", (), stopped=STOPPED),
        "registry: source src: RegistryTooLarge: given up past the 5000 tags "
        "(--registry-listing-max-tags)",
    ),
]


@table(LISTINGS)
def test_a_source_s_listing_is_one_line_saying_what_it_found_or_why_not(case: Listed) -> None:
    """A user reading the page learns whether a source's images were listed, partly or not at
    all, and what to change, without the registry's credentials."""
    plan = Plan(World())
    plan.registry.sources[ListingRequest("src", (QUERY,))] = case.answer
    lines = text(data(plan, [], [])).splitlines()
    assert [line for line in lines if line.startswith("registry:")] == [case.line]


def test_two_plans_asking_one_source_alike_list_it_once() -> None:
    """The same listing asked twice (the baseline and the change of --against, two requests
    for one source) is one entry in the data, not two."""
    plan = Plan(World())
    answer = ListingAnswer("src", (QueryAnswer(QUERY, repositories=(FOUND,)),))
    plan.registry.sources[ListingRequest("src", (QUERY,))] = answer
    plan.registry.sources[ListingRequest("src", (QUERY, QUERY))] = answer
    assert len(data(plan, [], [])["registry"]["sources"]) == 1
