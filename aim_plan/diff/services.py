"""What the plan does to each live, Running service: its template, caches and InferenceService."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from aim_plan.diff.changes import Change
from aim_plan.load import Obj, describe, key_of
from aim_plan.views import meta_text, text_at
from aim_plan.world import Key
from function.kube.objects import controller_uid

SERVICE_KINDS: Final = frozenset({"AIMService", "XAIMService"})
ISVC_API: Final = "serving.kserve.io/v1beta1"
CACHE_KINDS: Final = frozenset({"AIMTemplateCache", "XAIMTemplateCache"})
SCALING_PATHS: Final = (
    "spec.predictor.minReplicas",
    "spec.predictor.maxReplicas",
    "spec.predictor.scaleTarget",
    "spec.predictor.scaleMetric",
    "spec.predictor.autoScaling",
)
"""InferenceService fields KServe's raw deployment turns into the replica count or the
autoscaler (HPA or KEDA), not into the pod template: changing them adds or removes pods, it
restarts none."""


@dataclass(frozen=True)
class Service:
    """What the diff reads of a service, live or planned: its identity and `status`."""

    uid: str
    namespace: str
    template: str | None
    """`status.resolvedTemplate.name`."""
    cache: str | None
    """`status.templateCache`."""
    inference_service: str
    """`status.inferenceService`: the InferenceService it runs, "" before it runs one."""

    @classmethod
    def of(cls, obj: Obj) -> Service:
        """The service `obj` as the diff reads it; an empty one for `{}` (none planned)."""
        return cls(
            uid=meta_text(obj, "uid"),
            namespace=key_of(obj)[2],
            template=text_at(obj, "status", "resolvedTemplate", "name") or None,
            cache=text_at(obj, "status", "templateCache") or None,
            inference_service=text_at(obj, "status", "inferenceService"),
        )


@dataclass(frozen=True)
class ServiceImpact:
    """What the plan does to one live, Running service."""

    key: Key
    template: tuple[str | None, str | None]
    """status.resolvedTemplate's name, live and planned."""
    cache: tuple[str | None, str | None]
    """status.templateCache, live and planned."""
    caches_lost: tuple[str, ...] = ()
    """The caches it composes (and theirs) that the plan deletes."""
    caches_changed: tuple[str, ...] = ()
    redeployed: str | None = None
    """Why its InferenceService would be redeployed, or None when it would not be."""
    rescaled: str | None = None
    """Which scaling fields of its InferenceService change, when only those do (no pod
    restarts: KServe changes the replica count or the autoscaler)."""

    @property
    def switches_template(self) -> bool:
        """Whether the service would run another template."""
        return self.template[0] != self.template[1]

    @property
    def loses_or_changes_cache(self) -> bool:
        """Whether its cache would go, be replaced, or change."""
        return self.cache[0] != self.cache[1] or bool(self.caches_lost or self.caches_changed)

    @property
    def affected(self) -> bool:
        """Whether anything the service runs on would change."""
        return (
            self.switches_template
            or self.loses_or_changes_cache
            or bool(self.redeployed)
            or bool(self.rescaled)
        )


@dataclass(frozen=True)
class Indexed:
    """One side of the diff by key, and its keys by controller uid.

    A service's objects are looked up, not scanned for: `--against` a cluster of a thousand
    running services would otherwise scan every object per service.
    """

    by_key: dict[Key, Obj]
    controlled: dict[str, list[Key]]

    @classmethod
    def of(cls, by_key: dict[Key, Obj]) -> Indexed:
        """`by_key` indexed by controller."""
        controlled: dict[str, list[Key]] = {}
        for k, o in by_key.items():
            uid = controller_uid(o)
            if uid is not None:
                controlled.setdefault(uid, []).append(k)
        return cls(by_key, controlled)


def impact(
    key: Key, live: Obj, worlds: tuple[Indexed, Indexed], changes: dict[Key, Change]
) -> ServiceImpact:
    """What the changes do to the live, Running service of `key` (`worlds`: before, after)."""
    before, after = worlds
    planned = after.by_key.get(key) or {}
    old, new = Service.of(live), Service.of(planned)
    caches = _caches(live, before)
    lost = tuple(describe(before.by_key[k]) for k in caches if k not in after.by_key)
    changed = tuple(
        describe(before.by_key[k])
        for k in caches
        if k in changes and changes[k].action == "changed" and _spec_changed(changes[k])
    )
    return ServiceImpact(
        key=key,
        template=(old.template, new.template),
        cache=(old.cache, new.cache),
        caches_lost=lost,
        caches_changed=changed,
        redeployed=_redeployed(live, planned, worlds, changes),
        rescaled=_rescaled(live, before, changes),
    )


def _spec_changed(change: Change) -> bool:
    return any(not p.startswith(("status.", "metadata.")) for p in change.paths) or bool(
        change.more
    )


def _caches(service: Obj, world: Indexed) -> list[Key]:
    """The cache objects the service composes, and what those compose (model caches, PVCs)."""
    found: list[Key] = []
    frontier = {Service.of(service).uid} - {""}
    first = True
    while frontier:
        owned = [
            k
            for uid in sorted(frontier)
            for k in world.controlled.get(uid, [])
            if not first or k[1] in CACHE_KINDS
        ]
        new = [k for k in owned if k not in found]
        found += new
        # Only what this step found goes on: an ownership cycle runs out of new objects.
        frontier = {meta_text(world.by_key[k], "uid") for k in new} - {""}
        first = False
    return found


def _inference_service(service: Obj, world: Indexed) -> Key | None:
    """The InferenceService a service runs: named in its status, or the one it controls."""
    read = Service.of(service)
    if read.inference_service:
        key = (ISVC_API, "InferenceService", read.namespace, read.inference_service)
        if key in world.by_key:
            return key
    controlled = world.controlled.get(read.uid, []) if read.uid else []
    return next((k for k in controlled if k[1] == "InferenceService"), None)


def _redeployed(
    live: Obj,
    planned: Obj,
    worlds: tuple[Indexed, Indexed],
    changes: dict[Key, Change],
) -> str | None:
    before, after = worlds
    running = _inference_service(live, before)
    if running is None:
        return None
    what = describe(before.by_key[running])
    if running not in after.by_key:
        replacement = _inference_service(planned, after) if planned else None
        if replacement is not None:
            return f"{what} is replaced by {describe(after.by_key[replacement])}"
        return f"{what} is deleted"
    change = changes.get(running)
    if change is not None and (change.more or _pod_fields(change)):
        # Paths past the listed ones may reach the pods: a CI gate fails closed on them.
        listed = _pod_fields(change) + ([f"{change.more} more not listed"] if change.more else [])
        return f"{what} changes ({', '.join(listed)})"
    return None


def _rescaled(live: Obj, before: Indexed, changes: dict[Key, Change]) -> str | None:
    """The scaling fields of the running InferenceService that change, when nothing else does."""
    running = _inference_service(live, before)
    if running is None or running not in changes:
        return None
    change = changes[running]
    fields = [p for p in change.paths if p.startswith(SCALING_PATHS)]
    if change.more or _pod_fields(change) or not fields:
        return None
    return f"{describe(before.by_key[running])} ({', '.join(fields)})"


def _pod_fields(change: Change) -> list[str]:
    """The changed spec fields that reach the pods (a rollout), scaling fields left out."""
    return [
        p
        for p in change.paths
        if not p.startswith(("status.", "metadata.")) and not p.startswith(SCALING_PATHS)
    ]
