"""Wildcards on Docker Hub and ghcr.io: the sites' APIs, spoken by a local stand-in.

The stand-in (tests/registry/api_standin.py) serves recorded answers shaped as Docker Hub's
repository API and GitHub's packages API document theirs, and the hostile ones no test could get
from the real sites on demand: refusals, rate limits, floods of pages, huge and mistyped bodies.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import email.utils
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from devtools.cluster.registry import Registry
from devtools.tools import Tools
from function.api.modelsource import ClusterModelSourceStatus
from function.compose.modelsource import compose_model_source
from function.kube.contract import Composition, ListRegistry, Observed
from function.registry.api_pages import MAX_PAGE_BYTES, MAX_PAGES
from function.registry.credentials import Credential
from function.registry.github_listing import GitHubPackagesIndex
from function.registry.hub_listing import DockerHubIndex
from function.registry.inspect import FailureKind
from function.registry.listing import (
    MAX_REPOSITORIES,
    ListingAnswer,
    ListingError,
    Repositories,
    RepositoryIndex,
    RepositoryQuery,
)
from function.registry.oras import OrasInspector
from function.registry.oras_listing import OrasLister
from function.settings import Settings
from tests.cases import Case, table
from tests.registry.api_standin import ApiStandIn, Received, Reply, start_api_standin
from tests.unit import loop

TOKEN = "ghp_standin0123456789abcdefghijklmnopqrstu"  # noqa: S105 - the stand-in's token
GHCR = Credential("ghcr.io", "robot", TOKEN)
HUB_PAGE = "/v2/namespaces/amdenterpriseai/repositories"
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture
def standin() -> Iterator[ApiStandIn]:
    with start_api_standin() as s:
        yield s


def wildcard(registry: str, pattern: str, credential: Credential | None = None) -> RepositoryQuery:
    return RepositoryQuery(registry, pattern, wildcard=True, credential=credential)


def listed(index: RepositoryIndex, query: RepositoryQuery, seconds: float = 10) -> Repositories:
    return asyncio.run(index.repositories(query, time.monotonic() + seconds))


def refused(index: RepositoryIndex, query: RepositoryQuery, seconds: float = 10) -> ListingError:
    with pytest.raises(ListingError) as caught:
        listed(index, query, seconds)
    return caught.value


# Recorded shapes, several pages


def test_docker_hub_lists_a_namespace_across_its_pages(standin: ApiStandIn) -> None:
    """The repository API's pages are read by their `next` links, anonymously, and each
    `results[].name` is a repository of the namespace."""
    standin.serve_recorded("docker-hub-amdenterpriseai.json")

    got = listed(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert got == Repositories(
        (
            "amdenterpriseai/aim-qwen",
            "amdenterpriseai/aim-llama",
            "amdenterpriseai/aim-base",
            "amdenterpriseai/aim-mistral",
            "amdenterpriseai/benchmarks",
        )
    )
    assert [f"{r.path}?{r.query}" for r in standin.received] == [
        f"{HUB_PAGE}?page_size=100",
        f"{HUB_PAGE}?page=2&page_size=100",
    ]
    assert all("authorization" not in r.headers for r in standin.received)


def test_github_lists_an_organization_s_packages_with_the_pull_secret_s_token(
    standin: ApiStandIn,
) -> None:
    """The packages API is asked with the ghcr.io password as a bearer token on every page, the
    `Link` header's next page is followed (GitHub names it by organization id), and a package
    name with a `/` is a nested repository."""
    standin.serve_recorded("github-packages-amd-aim.json")

    got = listed(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/aim-*", GHCR))

    assert got.names == (
        "amd-aim/aim-qwen",
        "amd-aim/aim-llama",
        "amd-aim/aim-base",
        "amd-aim/tools/sync",
    )
    assert got.note == ""
    assert [r.path for r in standin.received] == [
        "/orgs/amd-aim/packages",
        "/organizations/12345/packages",
    ]
    for seen in standin.received:
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert seen.headers["accept"] == "application/vnd.github+json"
        assert seen.headers["x-github-api-version"] == "2022-11-28"


def test_an_owner_that_is_no_organization_is_listed_as_a_user(standin: ApiStandIn) -> None:
    """GitHub answers 404 for /orgs/<user>: the user's packages are asked for next."""
    standin.serve_recorded("github-packages-user.json")

    got = listed(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "someone/*", GHCR))

    assert got.names == ("someone/aim-tiny",)
    assert [r.path for r in standin.received] == [
        "/orgs/someone/packages",
        "/users/someone/packages",
    ]


# Refusals and rate limits, in the sites' words


def test_github_without_a_token_is_refused_before_any_call(standin: ApiStandIn) -> None:
    """GitHub lists packages only to a token: without a ghcr.io pull secret the filter fails at
    once and says which secret and scope it needs."""
    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/aim-*"))

    assert error.kind is FailureKind.UNAUTHORIZED
    assert "spec.imagePullSecrets" in error.message
    assert "read:packages" in error.message
    assert standin.received == []


def test_bad_credentials_are_github_s_words_and_the_fix(standin: ApiStandIn) -> None:
    """A 401 says GitHub's own message and what the token needs; the token is not repeated."""
    standin.serve_recorded("github-bad-credentials.json")

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert error.kind is FailureKind.UNAUTHORIZED
    assert "HTTP 401: Bad credentials" in error.message
    assert "read:packages" in error.message
    assert TOKEN not in error.message


def test_a_token_echoed_in_a_refusal_is_redacted(standin: ApiStandIn) -> None:
    """Whatever a site says back, the token it was sent never reaches a condition."""
    standin.serve("/orgs/amd-aim/packages", Reply(403, {"message": f"token {TOKEN} lacks scope"}))

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert TOKEN not in error.message
    assert "<redacted>" in error.message


def test_an_unknown_docker_hub_namespace_is_not_found(standin: ApiStandIn) -> None:
    """A namespace Docker Hub does not know is ImageNotFound in its words, asking whether the
    name is a Docker Hub user or organization."""
    standin.serve_recorded("docker-hub-refusals.json")

    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "nobody-here/aim-*"))

    assert error.kind is FailureKind.NOT_FOUND
    assert "HTTP 404: object not found" in error.message
    assert "'nobody-here'" in error.message


def test_a_rate_limit_says_when_to_retry(standin: ApiStandIn) -> None:
    """Docker Hub's 429 is RegistryRateLimited with its Retry-After, not an unknown error."""
    standin.serve_recorded("docker-hub-refusals.json")

    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "busy/aim-*"))

    assert error.kind is FailureKind.RATE_LIMITED
    assert "HTTP 429: Too Many Requests" in error.message
    assert "retry after 60 s" in error.message


@dataclass(frozen=True)
class Later(Case):
    headers: dict[str, str]
    says: str


@table(
    [
        Later("date", "Retry-After may be an HTTP date", {"Retry-After": "{in 120 s}"},
              "retry after 1"),
        Later("none", "a 429 that names no time still says what happens next", {},
              "it did not say when to retry; the source lists again at its next sync"),
        Later("garbage", "a Retry-After that is no time is not trusted", {"Retry-After": "soon"},
              "it did not say when to retry"),
    ]
)  # fmt: skip
def test_a_rate_limit_s_retry_time_is_read_as_sent(case: Later, standin: ApiStandIn) -> None:
    """Retry-After is read in both of its forms, and a missing or unreadable one is said so."""
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    headers = {k: v.replace("{in 120 s}", when) for k, v in case.headers.items()}
    standin.serve(HUB_PAGE, Reply(429, b"", headers))

    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert error.kind is FailureKind.RATE_LIMITED, case.reason
    assert case.says in error.message, case.reason


def test_a_relative_next_link_is_read_on_the_same_site(standin: ApiStandIn) -> None:
    """A `next` given as a path is the same site's next page."""
    standin.serve(f"{HUB_PAGE}?page_size=100", _hub_page(["aim-a"], f"{HUB_PAGE}?page=2"))
    standin.serve(f"{HUB_PAGE}?page=2", _hub_page(["aim-b"], None))

    got = listed(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert got.names == ("amdenterpriseai/aim-a", "amdenterpriseai/aim-b")


def test_github_s_exhausted_quota_is_a_rate_limit_with_its_reset(standin: ApiStandIn) -> None:
    """GitHub answers 403 with x-ratelimit-remaining 0 when the hour's quota is spent: that is
    a rate limit (retry at x-ratelimit-reset), not a refused token."""
    reset = int(time.time()) + 600
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(
            403,
            {"message": "API rate limit exceeded for user ID 1."},
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
        ),
    )

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert error.kind is FailureKind.RATE_LIMITED
    assert "API rate limit exceeded" in error.message
    seconds = int(error.message.split("retry after ")[1].split(" s")[0])
    assert 590 <= seconds <= 600


def test_a_redirect_is_not_followed(standin: ApiStandIn) -> None:
    """A token goes to the API's origin only: a redirect elsewhere is an error, not a hop."""
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(302, b"", {"Location": "http://127.0.0.2:9/collect"}),
    )

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert error.kind is FailureKind.ERROR
    assert "redirects are not followed" in error.message
    assert len(standin.received) == 1


def test_a_next_link_to_another_site_is_not_followed(standin: ApiStandIn) -> None:
    """A `Link` naming another origin would carry the token there: it is refused."""
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(
            200,
            [{"name": "aim-qwen", "package_type": "container"}],
            {"Link": '<http://127.0.0.2:9/orgs/amd-aim/packages?page=2>; rel="next"'},
        ),
    )

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert error.kind is FailureKind.ERROR
    assert "it was not followed" in error.message
    assert len(standin.received) == 1


LEAKED = "ghp_inthelink0123456789"
"""A token a site put in the userinfo of a URL it sent back."""


def test_a_next_link_elsewhere_is_quoted_without_its_userinfo(standin: ApiStandIn) -> None:
    """A token in the userinfo of a link to another origin never reaches the message (and so the
    source's RegistrySynced condition): the origin is quoted as scheme, host and port."""
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(
            200,
            [{"name": "aim-qwen", "package_type": "container"}],
            {"Link": f'<http://robot:{LEAKED}@127.0.0.2:9/orgs/amd-aim/packages>; rel="next"'},
        ),
    )
    standin.serve(HUB_PAGE, _hub_page(["aim-a"], f"https://x:{LEAKED}@hub.example:8443/v2/next"))

    github = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))
    hub = refused(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert "to http://127.0.0.2:9, another site" in github.message
    assert "to https://hub.example:8443, another site" in hub.message
    for error in (github, hub):
        assert LEAKED not in error.message
        assert "robot" not in error.message
        assert "@" not in error.message


@dataclass(frozen=True)
class BadLink(Case):
    link: str
    words: str


BAD_LINKS = [
    BadLink("ipv6", "an unclosed IPv6 host: urlsplit raised ValueError out of RunFunction",
            "http://[::1", "no URL"),
    BadLink("ipv6-userinfo", "the same with a token before it: neither crashes nor quotes it",
            f"http://u:{LEAKED}@[::1", "no URL"),
    BadLink("port", "a port out of range, which urllib only finds when it connects",
            "http://127.0.0.1:99999/v2/next", "no URL"),
    BadLink("port-text", "a port that is no number", "http://127.0.0.1:http/v2/next", "no URL"),
]  # fmt: skip


@table(BAD_LINKS)
def test_a_next_link_that_is_no_url_is_a_listing_error(case: BadLink, standin: ApiStandIn) -> None:
    """A malformed `next` (Docker Hub) or `Link` (GitHub) is the filter's error, naming where
    the site put it; nothing is raised past the lister, and no userinfo is quoted."""
    standin.serve(HUB_PAGE, _hub_page(["aim-a"], case.link))
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(200, [{"name": "aim-q", "package_type": "container"}],
              {"Link": f'<{case.link}>; rel="next"'}),
    )  # fmt: skip

    hub = refused(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))
    github = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert "in the `next` field of its answer" in hub.message, case.reason
    assert 'in its `Link` header (rel="next")' in github.message, case.reason
    for error in (hub, github):
        assert error.kind is FailureKind.ERROR, case.reason
        assert case.words in error.message, case.reason
        assert LEAKED not in error.message, case.reason


def test_a_malformed_next_link_is_the_source_s_condition(standin: ApiStandIn) -> None:
    """Through the model source's composer: the sync ends with RegistrySynced naming the filter
    and the field, not with an internal error."""
    standin.serve(HUB_PAGE, _hub_page(["aim-a"], "http://[::1"))
    lister = OrasLister(OrasInspector(), indexes={"docker.io": DockerHubIndex(standin.base)})

    comp = compose(source({"image": "amdenterpriseai/aim-*"}), lister, [])

    synced = next(c for c in comp.conditions if c.type == "RegistrySynced")
    assert synced.reason == "AllFiltersFailed"
    assert "amdenterpriseai/aim-*: RegistryError: docker.io: Docker Hub gave a next page" in (
        synced.message
    )
    assert "the `next` field of its answer" in synced.message


def test_a_wildcard_namespace_cannot_be_listed(standin: ApiStandIn) -> None:
    """The sites list one namespace at a time: `*/aim-*` fails without a call, with an example."""
    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "*/aim-*"))

    assert error.kind is FailureKind.ERROR
    assert "amdenterpriseai/aim-*" in error.message
    assert standin.received == []


# Bounds: floods, huge and mistyped answers, silence


def _hub_page(names: list[str], following: str | None) -> Reply:
    return Reply(200, {"count": 10**9, "next": following, "previous": None,
                       "results": [{"name": n} for n in names]})  # fmt: skip


def test_a_flood_of_pages_is_read_up_to_the_bound_and_said_so(standin: ApiStandIn) -> None:
    """A namespace whose pages never end is read up to MAX_REPOSITORIES, and the cut is noted."""

    def endless(seen: Received) -> Reply:
        page = int(dict(p.split("=") for p in seen.query.split("&")).get("page", "1"))
        names = [f"aim-{page}-{i}" for i in range(100)]
        return _hub_page(names, f"{standin.base}{HUB_PAGE}?page={page + 1}&page_size=100")

    standin.serve(HUB_PAGE, endless)

    got = listed(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert len(got.names) == MAX_REPOSITORIES
    assert len(standin.received) == MAX_REPOSITORIES // 100
    assert f"read up to {MAX_REPOSITORIES} repositories" in got.note


def test_endless_empty_pages_stop_at_the_page_bound(standin: ApiStandIn) -> None:
    """Pages that hold nothing and always link on cost MAX_PAGES requests, not forever."""
    standin.serve(HUB_PAGE, _hub_page([], f"{standin.base}{HUB_PAGE}?page=2&page_size=100"))

    got = listed(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert got.names == ()
    assert len(standin.received) == MAX_PAGES
    assert f"({MAX_PAGES} pages)" in got.note


def test_a_huge_page_is_an_error_not_a_memory_spike(standin: ApiStandIn) -> None:
    """A page beyond MAX_PAGE_BYTES is refused after reading that much, whatever it holds."""
    huge = b'{"results": [], "next": null, "pad": "' + b"x" * (MAX_PAGE_BYTES + 10) + b'"}'
    standin.serve(HUB_PAGE, Reply(200, huge))

    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert error.kind is FailureKind.ERROR
    assert "more than 2 MiB" in error.message


@dataclass(frozen=True)
class Wrong(Case):
    body: Any
    words: str


@table(
    [
        Wrong("list", "Docker Hub answers an object; a list is another API's", b"[]",
              "not its repository list"),
        Wrong("results", "`results` must be a list to be read", {"results": {"name": "x"},
              "next": None}, "not its repository list"),
        Wrong("next", "a `next` that is no URL cannot be followed", {"results": [], "next": 2},
              "not its repository list"),
        Wrong("html", "a maintenance page is no list", b"<html>maintenance</html>",
              "is not JSON"),
        Wrong("deep", "nesting deeper than any answer must not exhaust the parser",
              b"[" * 100 + b"]" * 100, "levels deep"),
    ]
)  # fmt: skip
def test_a_docker_hub_answer_of_the_wrong_shape_is_an_error(
    case: Wrong, standin: ApiStandIn
) -> None:
    """An answer not shaped as Docker Hub's list fails the filter; nothing is guessed from it."""
    standin.serve(HUB_PAGE, Reply(200, case.body))

    error = refused(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))

    assert error.kind is FailureKind.ERROR, case.reason
    assert case.words in error.message, case.reason


def test_entries_that_name_no_repository_are_skipped(standin: ApiStandIn) -> None:
    """Entries without a string name, and names no registry accepts, are left out; the rest
    are listed."""
    results = [{"name": 42}, {"name": "Upper Case"}, "aim-x", {"name": "aim-ok"}, {"nom": "aim-y"}]
    standin.serve(HUB_PAGE, Reply(200, {"results": results, "next": None}))
    standin.serve(
        "/orgs/amd-aim/packages",
        Reply(200, [{"name": "aim-npm", "package_type": "npm"}, {"name": ["x"]}, {"name": "aim"}]),
    )

    hub = listed(DockerHubIndex(standin.base), wildcard("docker.io", "amdenterpriseai/aim-*"))
    github = listed(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert hub.names == ("amdenterpriseai/aim-ok",)
    assert github.names == ("amd-aim/aim",), "an npm package is no image"


def test_github_answering_an_object_is_an_error(standin: ApiStandIn) -> None:
    """GitHub answers a list of packages; an object instead fails the filter."""
    standin.serve("/orgs/amd-aim/packages", Reply(200, {"packages": []}))

    error = refused(GitHubPackagesIndex(standin.base), wildcard("ghcr.io", "amd-aim/*", GHCR))

    assert error.kind is FailureKind.ERROR
    assert "not its package list" in error.message


def test_a_site_that_never_answers_costs_the_deadline(silent_server: str) -> None:
    """A site that accepts and never answers fails at the sync's deadline, not later."""
    started = time.monotonic()
    error = refused(
        DockerHubIndex(f"http://{silent_server}"),
        wildcard("docker.io", "amdenterpriseai/aim-*"),
        seconds=1,
    )

    assert error.kind is FailureKind.TIMEOUT
    assert time.monotonic() - started < 5


def test_a_site_nobody_listens_at_is_unreachable() -> None:
    """A refused connection is RegistryUnreachable, naming the site."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    error = refused(
        DockerHubIndex(f"http://127.0.0.1:{port}"), wildcard("docker.io", "amdenterpriseai/x*")
    )

    assert error.kind is FailureKind.UNREACHABLE
    assert "cannot reach Docker Hub" in error.message


# Through the lister and the composer: conditions and models


def test_the_default_lister_asks_the_sites_unless_a_mirror_serves_the_registry() -> None:
    """Docker Hub and ghcr.io get their sites' listings; a mirrored one keeps the mirror's
    catalog (air-gapped sites reach no API); other registries have none."""
    plain = OrasLister(OrasInspector())
    mirrored = OrasLister(OrasInspector(mirrors={"ghcr.io": "mirror.internal:5000"}))

    assert isinstance(plain._index("docker.io"), DockerHubIndex)  # noqa: SLF001
    assert isinstance(plain._index("ghcr.io"), GitHubPackagesIndex)  # noqa: SLF001
    assert plain._index("quay.io") is None  # noqa: SLF001
    assert mirrored._index("ghcr.io") is None  # noqa: SLF001
    assert isinstance(mirrored._index("docker.io"), DockerHubIndex)  # noqa: SLF001


def source(*filters: dict[str, Any], registry: str = "docker.io", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterModelSource",
        "metadata": {"name": "hub-catalog", "uid": "uid-src", "generation": 1},
        "spec": {"registry": registry, "filters": list(filters), **spec},
    }


def ghcr_secret() -> dict[str, Any]:
    config = {"auths": {"ghcr.io": {"username": "robot", "password": TOKEN}}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "ghcr-login", "namespace": Settings().system_namespace},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }


def compose(xr: dict[str, Any], lister: OrasLister, pool: list[Any]) -> Composition:
    """One sync as `fn.py` runs it: compose, list with `lister`, compose with the answer."""
    base = Observed(xr, now=NOW)
    asked = loop.run(compose_model_source, base, pool)
    assert isinstance(asked, ListRegistry)
    answer: ListingAnswer = asyncio.run(lister.list_images(asked.request))
    return loop.reconcile(compose_model_source, dataclasses.replace(base, listing=answer), pool)


def test_a_rate_limit_becomes_the_filter_s_condition(standin: ApiStandIn) -> None:
    """The source's RegistrySynced condition and the filter's status carry the site's words and
    when to retry; nothing is raised."""
    standin.serve_recorded("docker-hub-refusals.json")
    lister = OrasLister(OrasInspector(), indexes={"docker.io": DockerHubIndex(standin.base)})

    comp = compose(source({"image": "busy/aim-*"}), lister, [])

    synced = next(c for c in comp.conditions if c.type == "RegistrySynced")
    assert synced.reason == "AllFiltersFailed"
    assert "busy/aim-*: RegistryRateLimited: docker.io: Docker Hub is rate limiting" in (
        synced.message
    )
    assert "retry after 60 s" in synced.message
    status = ClusterModelSourceStatus.model_validate(comp.status)
    (only,) = status.filters or []
    assert (only.error or "").startswith("RegistryRateLimited: docker.io: ")


@pytest.fixture(scope="module")
def mirror(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The images the recorded listings name, pushed to a local registry that stands in as the
    mirror of Docker Hub and ghcr.io (and so serves their tags and has a catalog)."""
    work = tmp_path_factory.mktemp("api-listing")
    tags = {"aim-qwen": ["0.8.4", "0.8.5"], "aim-llama": ["1.0.0"], "aim-base": ["1.0.0"]}
    for repository, repository_tags in {
        **{f"amdenterpriseai/{r}": t for r, t in tags.items()},
        "amdenterpriseai/aim-mistral": ["0.1.0"],
        **{f"amd-aim/{r}": t for r, t in tags.items()},
    }.items():
        for tag in repository_tags:
            registry.push(repository, tag, {}, workdir=work)
    return registry


@dataclass(frozen=True)
class Site(Case):
    registry: str
    fixture: str
    image_filter: dict[str, Any]
    pool: list[dict[str, Any]]
    images: list[str]


@table(
    [
        Site(
            "docker-hub",
            "Docker Hub named by an alias is docker.io: models named as for docker.io images",
            "docker.io",
            "docker-hub-amdenterpriseai.json",
            {
                "image": "index.docker.io/amdenterpriseai/aim-*",
                "exclude": ["amdenterpriseai/aim-base"],
            },
            [],
            [
                "amdenterpriseai/aim-llama:1.0.0",
                "amdenterpriseai/aim-mistral:0.1.0",
                "amdenterpriseai/aim-qwen:0.8.4",
                "amdenterpriseai/aim-qwen:0.8.5",
            ],
        ),
        Site(
            "ghcr",
            "ghcr.io's packages, listed with the pull secret's token, keep the registry in names",
            "ghcr.io",
            "github-packages-amd-aim.json",
            {"image": "ghcr.io/amd-aim/aim-*", "exclude": ["amd-aim/aim-base"]},
            [ghcr_secret()],
            [
                "ghcr.io/amd-aim/aim-llama:1.0.0",
                "ghcr.io/amd-aim/aim-qwen:0.8.4",
                "ghcr.io/amd-aim/aim-qwen:0.8.5",
            ],
        ),
    ]
)
def test_models_from_a_site_listing_are_those_the_catalog_path_makes(
    case: Site, tools: Tools, mirror: Registry, standin: ApiStandIn
) -> None:
    """The site's listing names the repositories and the registry their tags: the models are the
    ones the mirror's catalog makes for the same repositories, names included."""
    standin.serve_recorded(case.fixture)
    index: RepositoryIndex = (
        DockerHubIndex(standin.base)
        if case.registry == "docker.io"
        else GitHubPackagesIndex(standin.base)
    )
    inspector = OrasInspector(
        oras=str(tools.oras),
        insecure=frozenset({mirror.host}),
        mirrors={case.registry: mirror.host},
    )
    secrets = [{"name": s["metadata"]["name"]} for s in case.pool]
    xr = source(case.image_filter, registry=case.registry, imagePullSecrets=secrets)

    by_site = compose(xr, OrasLister(inspector, indexes={case.registry: index}), case.pool)
    assert standin.received, "the stand-in was asked"
    by_catalog = compose(xr, OrasLister(inspector, indexes={}), case.pool)

    def made(comp: Composition) -> dict[str, Any]:
        return {k: d.manifest for k, d in comp.resources.items()}

    filters = ClusterModelSourceStatus.model_validate(by_site.status).filters or []
    assert [f.error for f in filters] == [None], filters
    assert sorted(m["spec"]["image"] for m in made(by_site).values()) == case.images
    assert made(by_site) == made(by_catalog)
