"""OrasLister against real registries (Debian's docker-registry): catalogs, tags, auth, bounds."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from devtools.cluster.registry import PASSWORD, USER, Registry
from devtools.tools import Tools
from function.registry.credentials import Credential
from function.registry.inspect import FailureKind
from function.registry.listing import MAX_TAGS, ListingAnswer, ListingRequest, RepositoryQuery
from function.registry.oras import OrasInspector
from function.registry.oras_listing import OrasLister


def lister(tools: Tools, *registries: str, timeout: float = 30) -> OrasLister:
    inspector = OrasInspector(oras=str(tools.oras), insecure=frozenset(registries))
    return OrasLister(inspector, timeout_s=timeout)


def ask(target: OrasLister, *queries: RepositoryQuery) -> ListingAnswer:
    return asyncio.run(target.list_images(ListingRequest("src", queries)))


@pytest.fixture(scope="module")
def catalog(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """Repositories under `lst/` (the session's registry holds other tests' too)."""
    work = tmp_path_factory.mktemp("listing")
    for repository, tags in {
        "lst/aim-qwen": ["0.8.4", "0.8.5"],
        "lst/aim-llama": ["1.0.0"],
        "lst/aim-base": ["1.0.0"],
        "lst/tools": ["1.0.0"],
    }.items():
        for tag in tags:
            registry.push(repository, tag, {}, workdir=work)
    return registry


def test_a_repository_s_tags(tools: Tools, catalog: Registry) -> None:
    """A repository query answers the tags the registry holds."""
    answer = ask(lister(tools, catalog.host), RepositoryQuery(catalog.host, "lst/aim-qwen"))

    (got,) = answer.answers
    assert got.failure is None
    assert [(r.repository, sorted(r.tags)) for r in got.repositories] == [
        ("lst/aim-qwen", ["0.8.4", "0.8.5"])
    ]


def test_a_wildcard_reads_the_catalog_and_lists_each_match_but_the_excluded(
    tools: Tools, catalog: Registry
) -> None:
    """`lst/aim-*` lists the registry's catalog, keeps matching repositories but the excluded,
    and lists their tags."""
    query = RepositoryQuery(
        catalog.host, "lst/aim-*", wildcard=True, exclude=frozenset({"lst/aim-base"})
    )
    (got,) = ask(lister(tools, catalog.host), query).answers

    assert got.failure is None
    assert {r.repository: sorted(r.tags) for r in got.repositories} == {
        "lst/aim-llama": ["1.0.0"],
        "lst/aim-qwen": ["0.8.4", "0.8.5"],
    }


def test_a_missing_repository_fails_that_query_only(tools: Tools, catalog: Registry) -> None:
    """Each query has its own answer: one repository missing does not fail the other."""
    answers = ask(
        lister(tools, catalog.host),
        RepositoryQuery(catalog.host, "lst/nothing-here"),
        RepositoryQuery(catalog.host, "lst/tools"),
    ).answers

    assert answers[0].failure is FailureKind.NOT_FOUND, answers[0].message
    assert "name unknown" in answers[0].message.lower() or "not found" in answers[0].message
    assert answers[1].failure is None
    assert answers[1].repositories[0].tags == ("1.0.0",)


def test_a_private_registry_lists_with_the_credential_and_refuses_without(
    tools: Tools, private_registry: Registry, tmp_path: Path
) -> None:
    """With the pull secret's credential the tags are listed; without, the registry's refusal is
    the answer, and the password appears nowhere."""
    private_registry.push("lst/private", "2.0.0", {}, workdir=tmp_path)
    target = lister(tools, private_registry.host)
    credential = Credential(private_registry.host, USER, PASSWORD)

    (ok,) = ask(
        target, RepositoryQuery(private_registry.host, "lst/private", credential=credential)
    ).answers
    (refused,) = ask(target, RepositoryQuery(private_registry.host, "lst/private")).answers
    wrong = Credential(private_registry.host, USER, "not-the-password")
    (bad,) = ask(
        target, RepositoryQuery(private_registry.host, "lst/*", wildcard=True, credential=wrong)
    ).answers

    assert ok.repositories[0].tags == ("2.0.0",)
    assert refused.failure is FailureKind.UNAUTHORIZED, refused.message
    assert bad.failure is FailureKind.UNAUTHORIZED, bad.message
    assert "not-the-password" not in bad.message


def test_docker_hub_wildcards_without_its_site_s_listing_are_refused_without_a_call(
    tools: Tools,
) -> None:
    """Docker Hub serves no catalog: without its repository API (a lister given no index for
    it), a wildcard there fails at once and says what to do."""
    target = dataclasses.replace(lister(tools), indexes={})
    (got,) = ask(
        target, RepositoryQuery("docker.io", "amdenterpriseai/aim-*", wildcard=True)
    ).answers
    assert got.failure is FailureKind.ERROR
    assert "name each repository" in got.message


def test_a_mirror_with_a_catalog_serves_wildcards_of_a_registry_without_one(
    tools: Tools, catalog: Registry
) -> None:
    """ghcr.io lists no catalog, but a site's mirror of it may: the mirror is asked."""
    inspector = OrasInspector(
        oras=str(tools.oras),
        insecure=frozenset({catalog.host}),
        mirrors={"ghcr.io": catalog.host},
    )
    (got,) = ask(
        OrasLister(inspector), RepositoryQuery("ghcr.io", "lst/aim-l*", wildcard=True)
    ).answers
    assert got.failure is None, got.message
    assert [r.repository for r in got.repositories] == ["lst/aim-llama"]


def test_a_registry_that_never_answers_costs_one_deadline(tools: Tools, silent_server: str) -> None:
    """A hanging registry fails every query of the sync at the sync's deadline, not later, and
    says which time ran out and the flag that sets it (not an inspection's 30 s)."""
    target = lister(tools, silent_server, timeout=2)
    answers = ask(
        target,
        RepositoryQuery(silent_server, "a/b"),
        RepositoryQuery(silent_server, "a/*", wildcard=True),
    ).answers
    assert [a.failure for a in answers] == [FailureKind.TIMEOUT, FailureKind.TIMEOUT]
    for answer in answers:
        assert "within the sync's 2 s (--registry-listing-timeout)" in answer.message


class _Flood(BaseHTTPRequestHandler):
    """A registry whose repository has 200,000 tags (and tags no registry would accept)."""

    def do_GET(self) -> None:
        tags = ["bad tag", "-x", *(f"t{i:07d}" for i in range(200_000))]
        body = json.dumps({"name": "flood/x", "tags": tags}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        del args


@pytest.fixture
def flood() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flood)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        with contextlib.suppress(OSError):
            server.shutdown()
        server.server_close()


def test_a_flood_of_tags_is_read_in_part_and_said_so(tools: Tools, flood: str) -> None:
    """A repository with more tags than anyone tags is cut at MAX_TAGS, the cut is reported, and
    names that are no tag are dropped."""
    (got,) = ask(lister(tools, flood), RepositoryQuery(flood, "flood/x")).answers

    assert got.failure is None, got.message
    tags = got.repositories[0].tags
    assert len(tags) == MAX_TAGS
    assert "bad tag" not in tags
    assert "-x" not in tags
    assert f"only its first {MAX_TAGS} tags were read" in got.message
