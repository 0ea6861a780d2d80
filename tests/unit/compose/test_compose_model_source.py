"""AIMClusterModelSource: filters read, the registry asked once per sync, models added, kept."""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from function.api.modelsource import ClusterModelSourceSpec
from function.compose.modelsource import compose_model_source
from function.kube.contract import Composition, ListRegistry, Observed
from function.registry.filters import Filter, FilterError, read_filters
from function.registry.inspect import FailureKind
from function.registry.listing import (
    ListingAnswer,
    ListingRequest,
    QueryAnswer,
    RepositoryQuery,
    RepositoryTags,
)
from function.registry.oras_listing import MAX_TAGS_FLAG
from function.settings import Settings
from tests.cases import Case, table
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
REG = "registry.example.com"
SYSTEM_NS = Settings().system_namespace


def source(status: dict[str, Any] | None = None, generation: int = 1, **spec: Any) -> Any:
    body = {"registry": REG, "filters": [{"image": "amd/aim-*"}], **spec}
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMClusterModelSource",
        "metadata": {"name": "amd-catalog", "uid": "uid-src", "generation": generation},
        "spec": body,
    }
    if status is not None:
        out["status"] = status
    return out


def cluster_model(name: str, image: str, **meta: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMClusterModel",
        "metadata": {"name": name, **meta},
        "spec": {"image": image},
        "status": {"status": "Ready"},
    }


def answer_all(request: ListingRequest, tags: dict[str, list[str]]) -> ListingAnswer:
    """What a registry holding `tags` (repository to tags) answers, as `OrasLister` would."""
    answers = []
    for q in request.queries:
        names = [
            r
            for r in tags
            if (r.startswith(q.repository.rstrip("*")) if q.wildcard else r == q.repository)
        ]
        answers.append(
            QueryAnswer(
                q, tuple(RepositoryTags(r, tuple(tags[r])) for r in names if r not in q.exclude)
            )
        )
    return ListingAnswer(request.source, tuple(answers))


REGISTRY = {
    "amd/aim-qwen": ["0.8.4", "0.8.5", "latest"],
    "amd/aim-llama": ["v1.0.0", "1.1.0-rc.1"],
    "amd/aim-base": ["1.0.0"],
    "other/thing": ["1.0.0"],
}


def too_large(request: ListingRequest, tags: dict[str, list[str]]) -> ListingAnswer:
    """What `OrasLister` answers when the sync's listing grows past its bound of tags (having
    made a call per query and one per repository it listed)."""
    listed = answer_all(request, tags)
    calls = len(listed.answers) + sum(len(a.repositories) for a in listed.answers)
    return dataclasses.replace(listed, calls=calls).given_up(
        "the 1,000 tags one sync reads across all its filters", MAX_TAGS_FLAG
    )


def sync(
    xr: Any,
    pool: list[Any] | None = None,
    registry: dict[str, list[str]] | None = None,
    *,
    given_up: bool = False,
    **observed: Any,
) -> tuple[Composition, ListingRequest | None]:
    """One reconcile as `fn.py` runs it: compose, list the registry if asked, compose again.

    `given_up`: the listing grew past the lister's bound, which answers how far it got.
    """
    base = Observed(xr, now=observed.pop("now", NOW), **observed)
    asked = loop.run(compose_model_source, base, pool or [])
    if isinstance(asked, ListRegistry):
        answer = too_large if given_up else answer_all
        listing = answer(asked.request, REGISTRY if registry is None else registry)
        return loop.reconcile(
            compose_model_source, dataclasses.replace(base, listing=listing), pool or []
        ), asked.request
    assert isinstance(asked, Composition)
    return asked, None


def models(comp: Composition) -> dict[str, Any]:
    return {k: d.manifest for k, d in comp.resources.items()}


def images(comp: Composition) -> list[str]:
    return sorted(m["spec"]["image"] for m in models(comp).values())


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def message(comp: Composition, ctype: str) -> str:
    return next(c.message for c in comp.conditions if c.type == ctype)


def observed_after(comp: Composition, xr: Any) -> tuple[Any, dict[str, Any]]:
    """The XR and composed models as Crossplane shows them on the next reconcile."""
    later = {**xr, "status": comp.status}
    resources = {k: {**m, "status": {"status": "Ready"}} for k, m in models(comp).items()}
    return later, resources


# --- filters -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Read(Case):
    image: str
    want: Filter | str
    registry: str = REG


READS = [
    Read(
        "wildcard",
        "a `*` lists the catalog of spec.registry",
        "amd/aim-*",
        Filter("amd/aim-*", REG, "amd/aim-*", wildcard=True),
    ),
    Read(
        "wildcard-registry",
        "a first segment with a dot names another registry",
        "ghcr.io/amd/aim-*",
        Filter("ghcr.io/amd/aim-*", "ghcr.io", "amd/aim-*", wildcard=True),
    ),
    Read(
        "wildcard-port",
        "a host:port is a registry too (local registries)",
        "localhost:5000/aim-*",
        Filter("localhost:5000/aim-*", "localhost:5000", "aim-*", wildcard=True),
    ),
    Read(
        "repository",
        "no tag: the repository's tags are listed",
        "amd/aim-qwen",
        Filter("amd/aim-qwen", REG, "amd/aim-qwen"),
    ),
    Read(
        "image",
        "a tag: that image alone, no registry call",
        "amd/aim-qwen:0.8.5",
        Filter("amd/aim-qwen:0.8.5", REG, "amd/aim-qwen", tag="0.8.5"),
    ),
    Read(
        "hub-official",
        "Docker Hub's official images live under library/",
        "busybox",
        Filter("busybox", "docker.io", "library/busybox"),
        registry="docker.io",
    ),
    Read(
        "hub-alias-wildcard",
        "index.docker.io is Docker Hub: its wildcards list through Docker Hub's API",
        "index.docker.io/amdenterpriseai/aim-*",
        Filter(
            "index.docker.io/amdenterpriseai/aim-*",
            "docker.io",
            "amdenterpriseai/aim-*",
            wildcard=True,
        ),
    ),
    Read(
        "hub-alias-registry",
        "spec.registry registry-1.docker.io is Docker Hub too, official images under library/",
        "busybox:1.36",
        Filter("busybox:1.36", "docker.io", "library/busybox", tag="1.36"),
        registry="registry-1.docker.io",
    ),
    Read(
        "registry-in-image",
        "a registry in the filter wins over spec.registry",
        "quay.io/org/m:1",
        Filter("quay.io/org/m:1", "quay.io", "org/m", tag="1"),
    ),
    Read(
        "wildcard-with-tag",
        "tags of a wildcard are chosen by versions, not a tag",
        "amd/aim-*:1.0",
        "a wildcard takes no tag",
    ),
    Read(
        "digest",
        "a catalog lists tags; a digest cannot be matched",
        "amd/aim-qwen@sha256:" + "a" * 64,
        "not digest",
    ),
    Read(
        "malformed", "an empty path segment is no image", "amd//qwen", "is not an image reference"
    ),
]


@table(READS)
def test_filters_are_read(case: Read) -> None:
    """Each filter form means what AIM's operator makes of it; a bad one names its field."""
    spec = ClusterModelSourceSpec.model_validate(
        {"registry": case.registry, "filters": [{"image": case.image}]}
    )
    got = read_filters(spec)[0]
    if isinstance(case.want, str):
        assert isinstance(got, FilterError)
        assert "spec.filters[0].image" in got.message
        assert case.want in got.message
    else:
        assert got == case.want


def test_a_bad_constraint_names_its_field() -> None:
    """A constraint that cannot be read fails its filter only, naming where it is."""
    spec = ClusterModelSourceSpec.model_validate(
        {
            "filters": [{"image": "a/b", "versions": [">=one"]}, {"image": "c/d"}],
            "versions": [">=1"],
        }
    )
    first, second = read_filters(spec)
    assert isinstance(first, FilterError)
    assert first.message.startswith("spec.filters[0].versions:")
    assert isinstance(second, Filter)
    assert [c.text for c in second.constraints] == [">=1"], (
        "the source's versions apply to filters without"
    )


# --- syncing ---------------------------------------------------------------------------------


def test_the_first_reconcile_lists_the_registry_once_for_all_filters() -> None:
    """One sync asks one ListingRequest holding a query per filter that needs the registry."""
    xr = source(
        filters=[
            {"image": "amd/aim-*", "exclude": ["amd/aim-base"]},
            {"image": "amd/aim-qwen:0.8.5"},
            {"image": "other/thing"},
        ]
    )
    _, asked = sync(xr)
    assert asked is not None
    assert asked.source == "amd-catalog"
    assert asked.queries == (
        RepositoryQuery(REG, "amd/aim-*", wildcard=True, exclude=frozenset({"amd/aim-base"})),
        RepositoryQuery(REG, "other/thing"),
    ), "an image with a tag needs no call"


def test_matching_images_become_cluster_models_labelled_with_their_source() -> None:
    """Every matching tag becomes an AIMClusterModel with AIM's labels and source annotations."""
    comp, _ = sync(source(filters=[{"image": "amd/aim-*", "exclude": ["amd/aim-base"]}]))

    assert images(comp) == [
        f"{REG}/amd/aim-llama:1.1.0-rc.1",
        f"{REG}/amd/aim-llama:v1.0.0",
        f"{REG}/amd/aim-qwen:0.8.4",
        f"{REG}/amd/aim-qwen:0.8.5",
        f"{REG}/amd/aim-qwen:latest",
    ], "no constraints: every tag; the excluded repository and other namespaces are left out"
    qwen = next(m for m in models(comp).values() if m["spec"]["image"].endswith("qwen:0.8.5"))
    assert qwen["kind"] == "AIMClusterModel"
    assert qwen["metadata"]["name"].startswith("aim-qwen-0-8-5-")
    assert qwen["metadata"]["labels"] == {
        "aim.silogen.ai/model-source": "amd-catalog",
        "aim.silogen.ai/origin": "auto-generated",
    }
    assert qwen["metadata"]["annotations"] == {
        "aim.silogen.ai/source-registry": REG,
        "aim.silogen.ai/source-repository": "amd/aim-qwen",
        "aim.silogen.ai/source-tag": "0.8.5",
    }
    assert comp.status["status"] == "Ready"
    assert comp.status["discoveredModels"] == 5
    assert comp.status["availableModels"] == 5
    assert comp.status["lastSyncTime"] == "2026-11-23T12:00:00Z"
    assert comp.status["filters"] == [{"image": "amd/aim-*", "matched": 5}]
    assert conditions(comp)["RegistrySynced"] == ("True", "AllFiltersSucceeded")
    assert conditions(comp)["MaxModelsLimitReached"] == ("False", "WithinLimit")
    assert conditions(comp)["ModelsReady"] == ("False", "ModelsNotReady"), "just created"


def test_versions_choose_tags_and_pull_secrets_and_discovery_reach_the_models() -> None:
    """Constraints drop non-versions and prereleases; models get the secrets and discovery."""
    secret = _secret("regcred")
    xr = source(
        filters=[{"image": "amd/aim-*"}],
        versions=[">=0.8.5"],
        imagePullSecrets=[{"name": "regcred"}],
        discovery={"enabled": True},
    )
    base = Observed(xr, now=NOW)
    asked = loop.run(compose_model_source, base, [secret])
    assert isinstance(asked, ListRegistry)
    credential = asked.request.queries[0].credential
    assert credential is not None
    assert (credential.username, credential.password) == ("robot", "s3cret")
    assert "s3cret" not in repr(asked.request), "a password never reaches a log line"
    listing = answer_all(asked.request, REGISTRY)
    comp = loop.reconcile(
        compose_model_source, dataclasses.replace(base, listing=listing), [secret]
    )

    assert images(comp) == [
        f"{REG}/amd/aim-base:1.0.0",
        f"{REG}/amd/aim-llama:v1.0.0",
        f"{REG}/amd/aim-qwen:0.8.5",
    ]
    spec = next(iter(models(comp).values()))["spec"]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["discovery"] == {"enabled": True, "autoCreateTemplates": True}


def test_between_syncs_nothing_is_listed_and_every_model_is_kept() -> None:
    """Within the interval the registry is not asked; the models and the record stay."""
    xr = source()
    first, _ = sync(xr)
    later, resources = observed_after(first, xr)

    comp, asked = sync(later, resources=resources, now=NOW + timedelta(minutes=10))
    assert asked is None
    assert images(comp) == images(first)
    assert comp.status["lastSyncTime"] == first.status["lastSyncTime"]
    assert comp.status["availableModels"] == first.status["availableModels"]
    assert conditions(comp)["ModelsReady"] == ("True", "AllModelsReady")
    assert comp.ttl_seconds == Settings().ready_recheck_s, "settled: the usual recheck"
    assert first.ttl_seconds == Settings().waiting_recheck_s, "models not Ready yet: soon"


def test_the_next_sync_is_composed_on_time() -> None:
    """With an interval shorter than the recheck, the response's TTL ends when the sync is due."""
    xr = source(syncInterval="5m")
    first, _ = sync(xr)
    later, resources = observed_after(first, xr)

    comp, asked = sync(later, resources=resources, now=NOW + timedelta(minutes=1))
    assert asked is None
    assert comp.ttl_seconds == 4 * 60


def test_a_sync_after_the_interval_adds_new_tags_and_keeps_vanished_ones() -> None:
    """Append-only: a new tag joins; an image gone from the registry keeps its model."""
    xr = source(filters=[{"image": "amd/aim-qwen"}], syncInterval="30m")
    first, _ = sync(xr)
    later, resources = observed_after(first, xr)

    comp, asked = sync(
        later,
        resources=resources,
        registry={"amd/aim-qwen": ["0.9.0"]},
        now=NOW + timedelta(minutes=31),
    )
    assert asked is not None
    assert images(comp) == sorted([*images(first), f"{REG}/amd/aim-qwen:0.9.0"])
    assert comp.status["availableModels"] == 1, "what the registry holds now"
    assert comp.status["discoveredModels"] == 4


def test_a_changed_spec_syncs_at_once() -> None:
    """A new generation is listed on its first reconcile, not at the end of the interval."""
    xr = source(filters=[{"image": "amd/aim-qwen"}])
    first, _ = sync(xr)
    later, resources = observed_after(first, xr)
    changed = {
        **later,
        "metadata": {**later["metadata"], "generation": 2},
        "spec": {**later["spec"], "filters": [{"image": "amd/aim-llama"}]},
    }

    comp, asked = sync(changed, resources=resources, now=NOW + timedelta(minutes=1))
    assert asked is not None
    assert len(images(comp)) == 5, "llama's two join qwen's three, which stay"


def test_images_in_the_catalog_already_are_not_added_twice() -> None:
    """An image someone added by hand is skipped and said so; a name someone holds is not taken."""
    hand = cluster_model("qwen-by-hand", f"{REG}/amd/aim-qwen:0.8.5")
    comp, _ = sync(source(filters=[{"image": "amd/aim-qwen"}]), pool=[hand])

    assert f"{REG}/amd/aim-qwen:0.8.5" not in images(comp)
    assert comp.status["skipped"] == [
        f"{REG}/amd/aim-qwen:0.8.5: in the catalog already as qwen-by-hand"
    ]
    assert comp.status["availableModels"] == 3
    assert comp.status["discoveredModels"] == 2


def test_max_models_keeps_the_newest_and_says_the_limit_is_reached() -> None:
    """Past maxModels images are counted, not created; the newest versions are created first."""
    comp, _ = sync(source(filters=[{"image": "amd/aim-qwen"}], maxModels=1))

    assert images(comp) == [f"{REG}/amd/aim-qwen:0.8.5"]
    assert comp.status["modelsLimitReached"] is True
    assert comp.status["skipped"] == ["2 more image(s): spec.maxModels (1) is reached"]
    assert comp.status["modelsOmitted"] == 2
    assert conditions(comp)["MaxModelsLimitReached"] == ("True", "LimitReached")
    assert "raise spec.maxModels (1)" in message(comp, "MaxModelsLimitReached")
    assert comp.status["status"] == "Ready", "a reached limit is the user's choice, not a failure"


def test_a_huge_listing_creates_max_models_and_only_counts_the_rest() -> None:
    """100 repositories of 5,000 tags (the most one wildcard lists): maxModels models, the newest
    of the first repository, and the other 499,900 images counted in status, not named."""
    registry = {f"amd/aim-m{r:03}": [f"1.{n}.0" for n in range(5000)] for r in range(100)}
    comp, _ = sync(source(maxModels=100, versions=[">=1.0"]), registry=registry)

    assert images(comp) == sorted(f"{REG}/amd/aim-m000:1.{n}.0" for n in range(4900, 5000))
    assert comp.status["modelsOmitted"] == 500_000 - 100
    assert comp.status["availableModels"] == 500_000
    assert comp.status["filters"] == [{"image": "amd/aim-*", "matched": 500_000}]
    assert comp.status["skipped"] == ["499900 more image(s): spec.maxModels (100) is reached"]
    assert conditions(comp)["MaxModelsLimitReached"] == ("True", "LimitReached")
    assert comp.status["status"] == "Ready"


def test_past_max_models_an_image_in_the_catalog_is_still_named_not_counted() -> None:
    """Counting past the cap still tells a hand-made model's image apart from a left-out one."""
    hand = cluster_model("qwen-by-hand", f"{REG}/amd/aim-qwen:0.8.4")
    comp, _ = sync(source(filters=[{"image": "amd/aim-qwen"}], maxModels=1), pool=[hand])

    assert images(comp) == [f"{REG}/amd/aim-qwen:0.8.5"]
    assert comp.status["skipped"] == [
        f"{REG}/amd/aim-qwen:0.8.4: in the catalog already as qwen-by-hand",
        "1 more image(s): spec.maxModels (1) is reached",
    ]
    assert comp.status["modelsOmitted"] == 1, "latest: left out; 0.8.4: in the catalog"
    assert comp.status["availableModels"] == 3


@dataclass(frozen=True)
class Total(Case):
    filters: tuple[str, ...]
    max_models: int
    created: int
    omitted: int
    registry: dict[str, list[str]] | None = None
    existing: int = 0
    """Models the source made at an earlier sync (of the first filter's repository)."""


TOTALS = [
    Total(
        "two-filters",
        "maxModels caps the source, not each filter: qwen's 3 and llama's 2 images, room for 4",
        ("amd/aim-qwen", "amd/aim-llama"),
        max_models=4,
        created=4,
        omitted=1,
    ),
    Total(
        "first-filter-fills-it",
        "a first filter that fills the cap leaves the second nothing; its images are counted",
        ("amd/aim-qwen", "amd/aim-llama"),
        max_models=3,
        created=3,
        omitted=2,
    ),
    Total(
        "overlapping-filters",
        "an image two filters match is one image: created or counted once",
        ("amd/aim-*", "amd/aim-qwen"),
        max_models=2,
        created=2,
        omitted=4,
    ),
    Total(
        "earlier-models-count",
        "models of earlier syncs take their share of the cap: 2 made before, room for 1 more",
        ("amd/aim-qwen", "amd/aim-llama"),
        max_models=3,
        created=1,
        omitted=2,
        existing=2,
    ),
]


@table(TOTALS)
def test_max_models_is_a_total_across_filters(case: Total) -> None:
    """However many filters match, the source creates at most maxModels models in all, and
    modelsOmitted counts each image left out once."""
    xr = source(filters=[{"image": f} for f in case.filters], maxModels=case.max_models)
    resources = {
        f"model-old{i}": cluster_model(f"old{i}", f"{REG}/amd/aim-qwen:0.8.{4 + i}")
        for i in range(case.existing)
    }
    comp, _ = sync(xr, resources=resources)

    assert len(images(comp)) - case.existing == case.created
    assert comp.status["discoveredModels"] == case.existing + case.created
    assert comp.status["modelsOmitted"] == case.omitted
    assert comp.status["skipped"] == [
        f"{case.omitted} more image(s): spec.maxModels ({case.max_models}) is reached"
    ]


def test_a_listing_given_up_keeps_the_last_sync_and_says_how_far_it_got() -> None:
    """A sync whose listing grew past the lister's bound uses none of it: the models and status
    of the last completed sync stay, and RegistrySynced says RegistryTooLarge naming the
    registry, how far the listing got, how to narrow the filters and which flag raises the
    bound."""
    xr = source(syncInterval="30m")
    first, _ = sync(xr)
    later, resources = observed_after(first, xr)
    bigger = {**REGISTRY, "amd/aim-new": ["1.0.0"]}

    comp, asked = sync(
        later, resources=resources, registry=bigger, given_up=True, now=NOW + timedelta(minutes=31)
    )

    assert asked is not None, "the sync was due and listed"
    assert images(comp) == images(first), "nothing half-created, nothing deleted"
    for kept in ("lastSyncTime", "availableModels", "filters", "discoveredModels"):
        assert comp.status[kept] == first.status[kept], f"{kept} stays the last sync's"
    assert conditions(comp)["RegistrySynced"] == ("False", "RegistryTooLarge")
    said = message(comp, "RegistrySynced")
    assert comp.status["failedSync"] == {
        "time": "2026-11-23T12:31:00Z",
        "generation": 1,
        "reason": "RegistryTooLarge",
        "message": said,
    }, "recorded, so the condition outlives this reconcile and the retry waits"
    assert f"the listing of {REG} was given up past the 1,000 tags one sync reads" in said
    assert "4 repositories and 7 tags read in 5 registry calls" in said, "a catalog, 4 tag lists"
    assert "Narrow spec.filters" in said
    assert "--registry-listing-max-tags" in said
    assert "last completed sync (2026-11-23T12:00:00Z) are kept" in said
    assert comp.status["status"] == "Failed"
    assert said in comp.warnings, "a failed sync is a Warning event too"


def test_a_listing_given_up_at_the_first_sync_creates_nothing() -> None:
    """With no earlier sync there is nothing to keep: no model, and the condition says so."""
    comp, _ = sync(source(), given_up=True)

    assert images(comp) == []
    assert "lastSyncTime" not in comp.status
    assert "no model was created" in message(comp, "RegistrySynced")
    assert comp.status["status"] == "Failed"


def test_a_listing_given_up_is_not_listed_again_at_every_reconcile() -> None:
    """After a listing was given up, reconciles in the next 5 minutes list nothing and keep
    saying why; the response's TTL brings the retry on time."""
    xr = source(syncInterval="1h")
    first, _ = sync(xr, given_up=True)
    later, resources = observed_after(first, xr)

    soon, asked_soon = sync(later, resources=resources, now=NOW + timedelta(minutes=4))
    _, asked_later = sync(later, resources=resources, given_up=True, now=NOW + timedelta(minutes=5))

    assert asked_soon is None, "no listing within the retry window"
    assert conditions(soon)["RegistrySynced"] == ("False", "RegistryTooLarge")
    assert soon.status["failedSync"] == first.status["failedSync"]
    assert soon.ttl_seconds == 60, "called again when the retry is due"
    assert asked_later is not None, "tried again after 5 minutes, not at the interval"


def test_narrowed_filters_after_a_listing_given_up_sync_at_once_and_clear_it() -> None:
    """The fix the condition names, a narrower spec, is a new generation: listed at once, and a
    sync that completes clears failedSync and its condition."""
    xr = source()
    first, _ = sync(xr, given_up=True)
    later, resources = observed_after(first, xr)
    narrowed = {
        **later,
        "metadata": {**later["metadata"], "generation": 2},
        "spec": {**later["spec"], "filters": [{"image": "amd/aim-qwen"}]},
    }

    comp, asked = sync(narrowed, resources=resources, now=NOW + timedelta(minutes=1))

    assert asked is not None
    assert len(images(comp)) == 3
    assert "failedSync" not in comp.status
    assert conditions(comp)["RegistrySynced"] == ("True", "AllFiltersSucceeded")


def test_one_failed_filter_degrades_and_keeps_what_the_others_found() -> None:
    """A registry refusing one filter degrades the source; the other filters' models are added."""
    xr = source(filters=[{"image": "amd/aim-qwen"}, {"image": "secret/models"}])
    base = Observed(xr, now=NOW)
    asked = loop.run(compose_model_source, base, [])
    assert isinstance(asked, ListRegistry)
    ok, refused = asked.request.queries
    listing = ListingAnswer(
        "amd-catalog",
        (
            QueryAnswer(ok, (RepositoryTags("amd/aim-qwen", ("0.8.5",)),)),
            QueryAnswer(refused, failure=FailureKind.UNAUTHORIZED, message="401 Unauthorized"),
        ),
    )
    comp = loop.reconcile(compose_model_source, dataclasses.replace(base, listing=listing), [])

    assert images(comp) == [f"{REG}/amd/aim-qwen:0.8.5"]
    assert comp.status["status"] == "Degraded"
    assert conditions(comp)["RegistrySynced"] == ("False", "SomeFiltersFailed")
    assert "secret/models: RegistryUnauthorized: registry.example.com: 401 Unauthorized" in message(
        comp, "RegistrySynced"
    )
    assert any("1 of 2 filter(s) failed" in w for w in comp.warnings)
    later, resources = observed_after(comp, xr)
    _, soon = sync(later, resources=resources, now=NOW + timedelta(minutes=4))
    _, retry = sync(later, resources=resources, now=NOW + timedelta(minutes=5))
    assert soon is None
    assert retry is not None, "a failed filter is tried again after 5 minutes, not an hour"


def test_every_filter_failing_is_failed() -> None:
    """When nothing could be listed the source is Failed, naming each filter's error."""
    comp, _ = sync(source(filters=[{"image": "amd/aim-*:1"}]))
    assert comp.status["status"] == "Failed"
    assert conditions(comp)["RegistrySynced"] == ("False", "AllFiltersFailed")
    assert "a wildcard takes no tag" in message(comp, "RegistrySynced")


def test_a_missing_pull_secret_fails_before_any_registry_call() -> None:
    """A named secret that does not exist is Failed naming it; the registry is not asked."""
    comp, asked = sync(source(imagePullSecrets=[{"name": "nope"}]))
    assert asked is None
    assert comp.status["status"] == "Failed"
    assert conditions(comp)["RegistrySynced"] == ("False", "SecretNotFound")
    assert f"secret 'nope' does not exist in namespace '{SYSTEM_NS}'" in message(
        comp, "RegistrySynced"
    )


def test_a_listing_for_another_source_is_not_believed() -> None:
    """An answer is used only by the source that asked it (one worker serves many XRs)."""
    xr = source()
    stray = ListingAnswer("someone-else", ())
    asked = loop.run(compose_model_source, Observed(xr, now=NOW, listing=stray), [])
    assert isinstance(asked, ListRegistry)


def test_models_of_the_source_survive_a_status_nobody_can_read() -> None:
    """A status written by hand (or garbled) means 'sync now', and the models are still kept."""
    xr = source(status={"lastSyncTime": 7, "filters": "x"})
    resources = {"model-a": cluster_model("a", f"{REG}/amd/aim-qwen:0.1")}
    comp, asked = sync(xr, resources=resources)
    assert asked is not None
    assert f"{REG}/amd/aim-qwen:0.1" in images(comp)


def _secret(name: str) -> Any:
    auth = {"auths": {REG: {"username": "robot", "password": "s3cret"}}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": SYSTEM_NS},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(auth).encode()).decode()},
    }
