"""Version constraints of model sources: which tags a constraint lets into the catalog."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from function.rules import semver
from tests.cases import Case, table


@dataclass(frozen=True)
class Allows(Case):
    constraint: str
    tag: str
    allowed: bool


ALLOWS = [
    Allows(
        "partial-floor", "AIM's own normalisation: >=1.2 is >=1.2.0", ">=1.2", "1.2.0", allowed=True
    ),
    Allows(
        "v-prefix",
        "registries tag v1.9.9; the v is not part of the version",
        ">=1.2, <2",
        "v1.9.9",
        allowed=True,
    ),
    Allows(
        "upper-bound",
        "a comma joins bounds that must all hold",
        ">=1.2, <2",
        "2.0.0",
        allowed=False,
    ),
    Allows("short-tag", "a tag 1.1 reads as 1.1.0", ">=1.2", "1.1", allowed=False),
    Allows(
        "prerelease-hidden",
        "release candidates stay out unless the constraint names one",
        ">=1.2",
        "1.5.0-rc.1",
        allowed=False,
    ),
    Allows(
        "prerelease-named",
        "a bound naming a prerelease admits later ones of that release",
        ">=1.3.0-rc.1",
        "1.3.0-rc.2",
        allowed=True,
    ),
    Allows(
        "prerelease-other-release",
        "...but not prereleases of other releases",
        ">=1.3.0-rc.1",
        "1.4.0-rc.1",
        allowed=False,
    ),
    Allows(
        "prerelease-before-release",
        "1.3.0-rc.1 sorts before 1.3.0",
        "<1.3.0-rc.2",
        "1.3.0-rc.1",
        allowed=True,
    ),
    Allows(
        "numeric-prerelease-order",
        "rc.10 is after rc.9 (numbers compare as numbers)",
        ">1.0.0-rc.9",
        "1.0.0-rc.10",
        allowed=True,
    ),
    Allows("tilde", "~0.8 lets the patch grow", "~0.8", "0.8.5", allowed=True),
    Allows("tilde-ceiling", "~0.8 stops at the next minor", "~0.8", "0.9.0", allowed=False),
    Allows("tilde-major", "~1 is 1.x", "~1", "1.9.0", allowed=True),
    Allows(
        "caret-zero",
        "^0.2.3 stops at 0.3.0: below 1.0 a minor is breaking",
        "^0.2.3",
        "0.3.0",
        allowed=False,
    ),
    Allows("caret", "^1.2 stays within major 1", "^1.2", "1.9.0", allowed=True),
    Allows("caret-ceiling", "^1.2 stops at 2.0.0", "^1.2", "2.0.0", allowed=False),
    Allows("wildcard", "1.2.x is the 1.2 range", "1.2.x", "1.2.7", allowed=True),
    Allows("wildcard-outside", "1.2.x is the 1.2 range only", "1.2.x", "1.3.0", allowed=False),
    Allows("partial-equals", "=1.2 is the 1.2 range", "1.2", "1.2.9", allowed=True),
    Allows("greater-partial", ">1.2 means after every 1.2.x", ">1.2", "1.2.9", allowed=False),
    Allows("less-equal-partial", "<=1.2 includes every 1.2.x", "<=1.2", "1.2.9", allowed=True),
    Allows("star", "* allows every release", "*", "0.0.1", allowed=True),
    Allows(
        "or",
        "|| gives alternatives; spaces separate bounds",
        ">= 1.0 < 2 || ^3",
        "3.1.0",
        allowed=True,
    ),
    Allows("not-equal", "!= drops one version", "!=1.2.3", "1.2.3", allowed=False),
    Allows(
        "build-metadata",
        "build metadata does not order versions",
        "=1.2.3",
        "1.2.3+build.7",
        allowed=True,
    ),
]


@table(ALLOWS)
def test_constraint_allows(case: Allows) -> None:
    """A tag is let in exactly when its version satisfies the constraint, as Helm users expect."""
    version = semver.parse_version(case.tag)
    assert version is not None
    assert semver.parse_constraint(case.constraint).allows(version) is case.allowed


@dataclass(frozen=True)
class NoVersion(Case):
    tag: str


NO_VERSIONS = [
    NoVersion("latest", "the usual moving tag is no version", "latest"),
    NoVersion("branch", "CI tags name branches and commits", "main-abc123"),
    NoVersion("leading-zero", "SemVer forbids leading zeros", "01.2.3"),
    NoVersion("four-parts", "a fourth number is no SemVer", "1.2.3.4"),
    NoVersion("huge", "numbers past 9 digits are refused rather than trusted", "1234567890.0.0"),
]


@table(NO_VERSIONS)
def test_tags_that_are_no_version(case: NoVersion) -> None:
    """Tags that name no version are skipped when a filter has constraints."""
    assert semver.parse_version(case.tag) is None


@dataclass(frozen=True)
class Refused(Case):
    constraint: str
    says: str


REFUSED = [
    Refused(
        "garbage",
        "a typo is named with an example of what works",
        ">=one",
        "is not a version comparator",
    ),
    Refused(
        "empty-alternative", "`a ||` is a mistake, not 'anything'", ">=1.0 ||", "empty alternative"
    ),
    Refused("not-equal-range", "!=1.2 would need an OR inside an AND", "!=1.2", "excludes a range"),
    Refused("too-long", "constraints are bounded", ">=1.0 " * 100, "longer than"),
]


@table(REFUSED)
def test_constraints_refused_say_why(case: Refused) -> None:
    """A constraint that cannot be read is refused with words the user can act on."""
    with pytest.raises(semver.ConstraintError, match=case.says):
        semver.parse_constraint(case.constraint)
