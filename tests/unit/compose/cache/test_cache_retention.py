"""Caching as a platform default, and caches that outlive their services for a retention time.

The runtime config's `caching.mode: Always` makes every service cache unless it says
`cacheModel: false`; a template cache a service made is kept by its Namespace once the last
service is gone, counts down `caching.retention`, and then gives up its model caches (and so
their PVCs). Composers run through Crossplane's requirements loop in process; statuses of other
objects are written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from function.compose.cache import compose_template_cache
from function.compose.service import TEMPLATE_CACHE, compose_service
from function.kube.contract import Composition, Observed
from function.rules import caching
from function.rules.durations import duration_seconds
from tests.cases import Case, table
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
SOURCES = [
    {"modelId": "Org/A", "sourceUri": "hf://Org/A", "size": "2Gi"},
    {"modelId": "Org/B", "sourceUri": "hf://Org/B", "size": "3Gi"},
]


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def message(comp: Composition, kind: str) -> str:
    return next(c.message for c in comp.conditions if c.type == kind)


def runtime_config(**caching_spec: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": "default"},
        "spec": {"caching": caching_spec},
    }


# --- durations -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DurationCase(Case):
    text: str
    want: float | None


DURATION_CASES = [
    DurationCase("day", "the default retention", "24h", 86400.0),
    DurationCase("parts", "parts add up as in Gateway API durations", "1h30m", 5400.0),
    DurationCase("millis", "ms is not minutes", "1500ms", 1.5),
    DurationCase("zero", "zero is a choice: give caches up at once", "0s", 0.0),
    DurationCase("days", "no day unit: the XRD refuses it, the rule does not guess", "1d", None),
    DurationCase("garbage", "text around parts is not a duration", "1h and more", None),
    DurationCase("empty", "nothing is not zero", "", None),
    DurationCase("huge", "a value past the bound is not parsed at all", "1h" * 40, None),
]


@table(DURATION_CASES)
def test_retention_durations(case: DurationCase) -> None:
    """`caching.retention` reads like Gateway API durations; anything else is refused."""
    assert duration_seconds(case.text) == case.want, case.reason


# --- the service: whether it caches, and the cache's keeper ---------------------------------------


def service(**spec: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": NS, "uid": "svc-uid"},
        "spec": {"model": {"ref": "qwen3"}, "template": {"name": "tpl"}, **spec},
    }


def catalog() -> list[Any]:
    model = {
        "apiVersion": API,
        "kind": "AIMClusterModel",
        "metadata": {"name": "qwen3"},
        "spec": {"image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"},
        "status": {"status": "Ready"},
    }
    template = {
        "apiVersion": API,
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": "tpl"},
        "spec": {
            "modelName": "qwen3",
            "type": "optimized",
            "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
        },
        "status": {"status": "Available", "modelSources": SOURCES},
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "uid": "ns-uid"}}
    return [model, template, namespace]


@dataclass(frozen=True)
class ModeCase(Case):
    mode: str | None
    cache_model: bool | None
    caches: bool


MODE_CASES = [
    ModeCase(
        "default",
        "without a runtime config field, caching stays opt-in",
        mode=None,
        cache_model=None,
        caches=False,
    ),
    ModeCase("auto", "Auto is the default, spelt out", mode="Auto", cache_model=None, caches=False),
    ModeCase(
        "always",
        "the platform team's default: every service caches",
        mode="Always",
        cache_model=None,
        caches=True,
    ),
    ModeCase(
        "opt-out",
        "a service's cacheModel: false wins over Always",
        mode="Always",
        cache_model=False,
        caches=False,
    ),
    ModeCase(
        "opt-in",
        "a service's cacheModel: true caches under Auto",
        mode="Auto",
        cache_model=True,
        caches=True,
    ),
]


@table(MODE_CASES)
def test_the_runtime_config_can_make_caching_the_default(case: ModeCase) -> None:
    """`caching.mode: Always` in the runtime config caches every service that does not say."""
    world = catalog()
    if case.mode is not None:
        world.append(runtime_config(mode=case.mode))
    spec = {} if case.cache_model is None else {"cacheModel": case.cache_model}
    comp = loop.reconcile(compose_service, Observed(service(**spec)), world)
    assert (TEMPLATE_CACHE in comp.resources) is case.caches, case.reason
    assert ("CacheReady" in conditions(comp)) is case.caches, case.reason


NAMESPACE_OWNER = {"apiVersion": "v1", "kind": "Namespace", "name": NS, "uid": "ns-uid"}


def owner_refs(comp: Composition) -> Any:
    manifest: Any = comp.resources[TEMPLATE_CACHE].manifest
    return manifest["metadata"]["ownerReferences"]


def test_the_namespace_keeps_the_template_cache_a_service_makes() -> None:
    """The cache has the Namespace as an owner (not its controller), so the garbage collector
    keeps it, with its PVCs, when the last service that relied on it is deleted."""
    comp = loop.reconcile(compose_service, Observed(service(cacheModel=True)), catalog())
    owners = owner_refs(comp)
    assert owners == [{"apiVersion": "v1", "kind": "Namespace", "name": NS, "uid": "ns-uid"}]


def composed_cache(world: list[Any]) -> dict[str, Any]:
    """The template cache a caching service composed, as the API server shows it afterwards."""
    first = loop.reconcile(compose_service, Observed(service(cacheModel=True)), world)
    manifest: Any = first.resources[TEMPLATE_CACHE].manifest
    controller = {"apiVersion": API, "kind": "AIMService", "name": "chat", "uid": "svc-uid"}
    owners = [*manifest["metadata"]["ownerReferences"], {**controller, "controller": True}]
    return {**manifest, "metadata": {**manifest["metadata"], "ownerReferences": owners}}


def test_a_service_that_did_not_look_keeps_the_caches_keeper() -> None:
    """On a call where Crossplane has not fetched the Namespace (the key is absent, which is
    not "fetched, none found"), the keeper the cache has stays: a call that did not look must
    never leave the cache to die with the service."""
    current = composed_cache(catalog())
    xr = service(cacheModel=True)
    settled = loop.reconcile(
        compose_service, Observed(xr, resources={TEMPLATE_CACHE: current}), catalog()
    )
    required = loop.answer(settled, catalog())
    del required["namespace"]
    comp = compose_service(Observed(xr, resources={TEMPLATE_CACHE: current}, required=required))
    assert NAMESPACE_OWNER in owner_refs(comp)


def test_a_template_gone_unavailable_keeps_the_caches_keeper() -> None:
    """While the template is not Available the service keeps its cache as it is, keeper
    included: deleting the service then must still leave the weights to the namespace."""
    current = composed_cache(catalog())
    world = catalog()
    template = next(o for o in world if o["kind"] == "AIMClusterServiceTemplate")
    template["status"]["status"] = "NotAvailable"
    comp = loop.reconcile(
        compose_service,
        Observed(service(cacheModel=True), resources={TEMPLATE_CACHE: current}),
        world,
    )
    assert conditions(comp)["CacheReady"][1] == "WaitingForTemplate"
    assert NAMESPACE_OWNER in owner_refs(comp)


@dataclass(frozen=True)
class StopCase(Case):
    spec: dict[str, Any]
    world: list[Any]
    still_relied_on: bool


STOP_CASES = [
    StopCase(
        "mode-off",
        "the platform team turned Always back to Auto: the cache is kept and counts down",
        {"runtimeConfigName": "default"},
        [runtime_config(mode="Auto")],
        still_relied_on=False,
    ),
    StopCase(
        "opted-out",
        "the service now says cacheModel: false: kept, and counts down",
        {"cacheModel": False},
        [],
        still_relied_on=False,
    ),
    StopCase(
        "config-missing",
        "its named runtime config was deleted: what it says is unknown, so nothing changes",
        {"runtimeConfigName": "team"},
        [],
        still_relied_on=True,
    ),
]


@table(STOP_CASES)
def test_a_service_that_stops_caching_never_drops_its_cache_at_once(case: StopCase) -> None:
    """Dropping the cache from the desired state would delete it, PVCs and weights, at once.
    It is kept with its keeper; whether the service still relies on it decides whether it
    starts counting down its retention."""
    current = composed_cache([*catalog(), runtime_config(mode="Always")])
    xr = service(**case.spec)
    comp = loop.reconcile(
        compose_service, Observed(xr, resources={TEMPLATE_CACHE: current}), catalog() + case.world
    )
    assert TEMPLATE_CACHE in comp.resources, case.reason
    assert NAMESPACE_OWNER in owner_refs(comp), case.reason
    relied = comp.status.get("templateCache") == current["metadata"]["name"]
    assert relied is case.still_relied_on, case.reason


def test_a_namespace_config_setting_only_the_retention_keeps_the_clusters_mode() -> None:
    """Namespace configs merge over the cluster's field by field; a default written by the API
    server into the namespace's `caching` would silently undo the cluster's `mode: Always`."""
    team = {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": "default", "namespace": NS},
        "spec": {"caching": {"retention": "72h"}},
    }
    world = [*catalog(), runtime_config(mode="Always"), team]
    comp = loop.reconcile(compose_service, Observed(service()), world)
    assert TEMPLATE_CACHE in comp.resources


# --- the template cache: in use, counting down, given up -----------------------------------------


def template_cache(*, made_by_service: bool = True, **status: Any) -> Any:
    labels = {"aim.silogen.ai/service": "chat"} if made_by_service else {}
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMTemplateCache",
        "metadata": {"name": "tpl-cache", "namespace": NS, "labels": labels},
        "spec": {"templateName": "tpl", "templateScope": "Cluster"},
    }
    if status:
        out["status"] = status
    return out


def user(name: str = "chat", cache: str = "tpl-cache") -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {},
        "status": {"status": "Running", "templateCache": cache},
    }


def cache_world(*extra: Any) -> list[Any]:
    return [o for o in catalog() if o["kind"] == "AIMClusterServiceTemplate"] + list(extra)


def compose_cache(xr: Any, world: list[Any], now: datetime = NOW) -> Composition:
    first = loop.reconcile(compose_template_cache, Observed(xr, now=now), world)
    # The second call sees the model caches it composed, filled (written by hand: no download
    # runs in unit tests).
    resources: dict[str, Any] = {
        k: {**d.manifest, "status": {"status": "Available", "persistentVolumeClaim": f"{k}-pvc"}}
        for k, d in first.resources.items()
    }
    return loop.reconcile(compose_template_cache, Observed(xr, resources=resources, now=now), world)


def test_a_cache_a_service_relies_on_is_in_use_and_never_counts_down() -> None:
    """While a service names the cache in `status.templateCache` it is in use, waiting for its
    downloads or serving, and no clock runs."""
    world = cache_world(user("a"), user("b"), user("x", "other"))
    comp = compose_cache(template_cache(), world)
    assert conditions(comp)["Retained"] == ("False", "InUse")
    assert message(comp, "Retained") == "used by AIMService a, b"
    assert "unusedSince" not in comp.status
    assert len(comp.resources) == 2  # its two model caches


def test_without_services_the_cache_is_kept_for_the_retention_and_says_until_when() -> None:
    """The last service gone, the cache keeps its model caches and says when they go: the
    runtime config's retention from the first call that saw no user."""
    comp = compose_cache(template_cache(), cache_world(runtime_config(retention="2h")))
    assert len(comp.resources) == 2
    assert comp.status["unusedSince"] == "2026-11-25T12:00:00Z"
    assert comp.status["retainedUntil"] == "2026-11-25T14:00:00Z"
    assert conditions(comp)["Retained"] == ("True", "Unused")
    assert "deleted at 2026-11-25T14:00:00Z" in message(comp, "Retained")
    assert "caching.retention 2h" in message(comp, "Retained")
    assert comp.ttl_seconds == 600  # the usual recheck comes first
    resolved: Any = comp.status["resolvedRuntimeConfig"]
    assert resolved["name"] == "default"  # the runtime config is shown, as for other kinds


def test_the_clock_is_read_back_from_status_not_restarted() -> None:
    """A later call (another replica, a restart) counts from the recorded start."""
    xr = template_cache(unusedSince="2026-11-25T11:00:00Z")
    comp = compose_cache(xr, cache_world(), now=NOW)
    assert comp.status["unusedSince"] == "2026-11-25T11:00:00Z"
    assert comp.status["retainedUntil"] == "2026-11-26T11:00:00Z"  # the default: a day

    almost = compose_cache(xr, cache_world(), now=datetime(2026, 11, 26, 10, 59, 30, tzinfo=UTC))
    assert almost.ttl_seconds == 30  # composed again when the time is up


def test_past_its_retention_the_cache_gives_up_its_model_caches() -> None:
    """Dropping its model caches deletes them and their PVCs: the weights are freed. The
    cache says so, and is Pending until a service relies on it again."""
    xr = template_cache(unusedSince="2026-11-24T11:00:00Z")
    comp = compose_cache(xr, cache_world(), now=NOW)
    assert comp.resources == {}
    assert comp.status["status"] == "Pending"
    assert conditions(comp)["Retained"] == ("False", "RetentionExpired")
    assert conditions(comp)["CacheReady"] == ("False", "RetentionExpired")
    assert "downloads the weights anew" in message(comp, "CacheReady")


def test_a_service_coming_back_stops_the_clock_and_refills_an_expired_cache() -> None:
    """A service that relies on the cache again clears the clock; after expiry, the model
    caches are composed again (the weights are downloaded anew)."""
    xr = template_cache(unusedSince="2026-11-24T11:00:00Z", retainedUntil="2026-11-25T11:00:00Z")
    comp = compose_cache(xr, cache_world(user()), now=NOW)
    assert len(comp.resources) == 2
    assert "unusedSince" not in comp.status
    assert conditions(comp)["Retained"] == ("False", "InUse")


def test_caches_no_service_made_are_never_timed_out() -> None:
    """A platform team's template cache, or a template's own, is not a service's: it has no
    clock and keeps its model caches with no user at all."""
    xr = template_cache(made_by_service=False, unusedSince="2026-01-01T00:00:00Z")
    comp = compose_cache(xr, cache_world(), now=NOW)
    assert len(comp.resources) == 2
    assert "Retained" not in conditions(comp)
    assert "unusedSince" not in comp.status


def test_nothing_is_given_up_before_the_services_are_fetched() -> None:
    """A call before Crossplane listed the services keeps what status says and drops nothing."""
    xr = template_cache(unusedSince="2026-11-20T00:00:00Z", retainedUntil="2026-11-21T00:00:00Z")
    resources: dict[str, Any] = {
        "model-cache-x": {"apiVersion": API, "kind": "AIMModelCache", "metadata": {}}
    }
    comp = compose_template_cache(Observed(xr, resources=resources, now=NOW))
    assert "model-cache-x" in comp.resources
    assert comp.status["unusedSince"] == "2026-11-20T00:00:00Z"


def test_a_start_in_the_future_is_not_believed() -> None:
    """Another clock's time ahead of ours restarts the count from now, never past its end."""
    ahead = NOW + timedelta(days=30)
    got = caching.retention(ahead, now=NOW, keep_for_s=60)
    assert got.unused_since == NOW
    assert got.until == NOW + timedelta(seconds=60)


def test_a_custom_models_cache_is_dedicated_and_goes_with_its_service() -> None:
    """A custom model's weights are its own: its cache has no keeper beside its services, so
    the garbage collector removes it (PVCs included) with the last of them."""
    world = catalog()
    model = next(o for o in world if o["kind"] == "AIMClusterModel")
    model["spec"]["modelSources"] = SOURCES[:1]  # custom models have one source
    comp = loop.reconcile(compose_service, Observed(service(cacheModel=True)), world)
    manifest: Any = comp.resources[TEMPLATE_CACHE].manifest
    assert "ownerReferences" not in manifest["metadata"]


def test_an_expired_cache_stays_expired_when_the_retention_grows() -> None:
    """Raising the retention after a cache gave its weights up does not bring its model caches
    back to download with nobody to use them; only a service relying on it does."""
    xr = template_cache(unusedSince="2026-11-24T11:00:00Z", retainedUntil="2026-11-25T11:00:00Z")
    comp = compose_cache(xr, cache_world(runtime_config(retention="72h")), now=NOW)
    assert comp.resources == {}
    assert conditions(comp)["Retained"] == ("False", "RetentionExpired")


def test_a_service_does_not_mount_the_weights_of_a_cache_past_its_retention() -> None:
    """A cache past its retention is deleting its model caches: a service created at that
    moment must not start on their PVCs. It waits, relying on the cache, which fills again."""
    world = catalog()
    expired = template_cache(
        unusedSince="2026-11-24T11:00:00Z", retainedUntil="2026-11-25T11:00:00Z"
    )
    expired["metadata"]["name"] = "qwen-filler"
    filled: list[Any] = []
    for i, source in enumerate(SOURCES):
        filled.append(
            {
                "apiVersion": API,
                "kind": "AIMModelCache",
                "metadata": {
                    "name": f"mc-{i}",
                    "namespace": NS,
                    "ownerReferences": [
                        {"kind": "AIMTemplateCache", "name": "qwen-filler", "controller": True}
                    ],
                },
                "spec": {"sourceUri": source["sourceUri"]},
                "status": {"status": "Available", "persistentVolumeClaim": f"mc-{i}-pvc"},
            }
        )
    comp = loop.reconcile(
        compose_service, Observed(service(cacheModel=True), now=NOW), [*world, expired, *filled]
    )
    assert "inference-service" not in comp.resources
    assert conditions(comp)["CacheReady"] == ("False", "CachesNotAvailable")
    fresh = loop.reconcile(
        compose_service,
        Observed(service(cacheModel=True), now=datetime(2026, 11, 25, 10, 0, tzinfo=UTC)),
        [*world, expired, *filled],
    )
    assert "inference-service" in fresh.resources  # before its time, the same weights serve
