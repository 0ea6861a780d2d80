"""What a plan would change in a live cluster: per object and per running service.

Pure: it compares the live objects (as read) with the plan's end state (the live world with the
manifests laid over it, planned to a fixed point). The plan only adds and updates what the
manifests give: a live object they leave out stays as it is, so `deleted` lists only what the
function would stop composing (or the garbage collector would take with it).

Fields compared, as `kubectl apply` would change them: `spec` (and the other top-level fields
of kinds without one, such as a ServiceAccount's), `metadata.labels` and
`metadata.annotations`, and of the status only `status.status` and each condition's status and
reason (a condition type only the live object carries is not the plan's). A field the live
object holds and the plan does not set is not a change: the API server
fills in defaults and other controllers write their fields, and an apply keeps both (so a field
removed from a manifest is not shown either). Volatile metadata (resourceVersion, uid,
managedFields, generation, timestamps) is never compared.

Secrets are compared but never described: `Secret ns/name changed`, not which key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from aim_plan.load import Obj, describe, key_of
from aim_plan.world import Key
from function.kube.objects import controller_uid

SERVICE_KINDS: Final = frozenset({"AIMService", "XAIMService"})
ISVC_API: Final = "serving.kserve.io/v1beta1"
CACHE_KINDS: Final = frozenset({"AIMTemplateCache", "XAIMTemplateCache"})
NOT_COMPARED_TOP: Final = frozenset({"apiVersion", "kind", "metadata", "status"})
NOT_COMPARED_ANNOTATIONS: Final = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
"""kubectl's copy of the last manifest applied: it changes with every apply, and holds a
Secret's data when the object is one."""
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
MAX_PATHS: Final = 50
"""Changed paths listed per object; more are counted (a rewritten object lists thousands)."""

Action = Literal["created", "deleted", "changed"]


@dataclass(frozen=True)
class Change:
    """One object the plan would create, delete or change, with the changed paths."""

    action: Action
    key: Key
    paths: tuple[str, ...] = ()
    more: int = 0
    """Changed paths beyond `MAX_PATHS`, not listed."""

    @property
    def what(self) -> str:
        """`Kind namespace/name`."""
        return describe(
            {
                "apiVersion": self.key[0],
                "kind": self.key[1],
                "metadata": {"namespace": self.key[2], "name": self.key[3]},
            }
        )

    @property
    def secret(self) -> bool:
        """Whether the object is a Secret (its paths are never shown)."""
        return self.key[:2] == ("v1", "Secret")


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


@dataclass
class Diff:
    """Every change the plan would make, and its effect on the running services."""

    changes: list[Change] = field(default_factory=list)
    services: list[ServiceImpact] = field(default_factory=list)

    @property
    def redeploys(self) -> bool:
        """Whether a running service would be redeployed (`aim plan --against` exits 2)."""
        return any(s.redeployed for s in self.services)


@dataclass(frozen=True)
class _Objects:
    """One side of the diff by key, and its keys by controller uid.

    A service's objects are looked up, not scanned for: `--against` a cluster of a thousand
    running services would otherwise scan every object per service.
    """

    by_key: dict[Key, Obj]
    controlled: dict[str, list[Key]]

    @classmethod
    def of(cls, by_key: dict[Key, Obj]) -> _Objects:
        controlled: dict[str, list[Key]] = {}
        for k, o in by_key.items():
            uid = controller_uid(o)
            if uid is not None:
                controlled.setdefault(uid, []).append(k)
        return cls(by_key, controlled)


def diff(live: Iterable[Obj], planned: Iterable[Obj]) -> Diff:
    """The changes from the `live` objects to the `planned` end state."""
    before = {key_of(o): o for o in live}
    after = {key_of(o): o for o in planned}
    changes: dict[Key, Change] = {}
    for key, obj in after.items():
        old = before.get(key)
        if old is None:
            changes[key] = Change("created", key)
            continue
        paths = changed_paths(old, obj)
        if paths:
            changes[key] = Change("changed", key, tuple(paths[:MAX_PATHS]), len(paths[MAX_PATHS:]))
    for key in before.keys() - after.keys():
        changes[key] = Change("deleted", key)
    result = Diff(changes=[changes[k] for k in sorted(changes, key=_order)])
    indexed = (_Objects.of(before), _Objects.of(after))
    result.services = [
        _impact(key, obj, indexed, changes)
        for key, obj in sorted(before.items(), key=lambda kv: _order(kv[0]))
        if key[1] in SERVICE_KINDS and (obj.get("status") or {}).get("status") == "Running"
    ]
    return result


def _order(key: Key) -> tuple[str, str, str, str]:
    return (key[1], key[2], key[3], key[0])


def changed_paths(live: Obj, planned: Obj) -> list[str]:
    """The compared paths whose value the plan sets differently from the live object's."""
    paths: list[str] = []
    for name in sorted(k for k in planned if k not in NOT_COMPARED_TOP):
        _set_differently(name, live.get(name), planned[name], paths)
    live_meta, planned_meta = live.get("metadata") or {}, planned.get("metadata") or {}
    for name in ("labels", "annotations"):
        before = _without(live_meta.get(name) or {})
        after = _without(planned_meta.get(name) or {})
        # Labels and annotations are the manifest's own: one it drops is removed, so both ways.
        paths += [
            f"metadata.{name}.{k}"
            for k in sorted(before.keys() | after.keys())
            if before.get(k) != after.get(k)
        ]
    paths += _status_paths(live.get("status") or {}, planned.get("status") or {})
    return paths


def _without(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k not in NOT_COMPARED_ANNOTATIONS}


def _set_differently(path: str, live: object, planned: object, out: list[str]) -> None:
    """Append the paths under `path` that `planned` sets and `live` holds otherwise."""
    if isinstance(planned, dict) and isinstance(live, dict):
        for k in sorted(planned):
            _set_differently(f"{path}.{k}", live.get(k), planned[k], out)
    elif isinstance(planned, list) and isinstance(live, list):
        if len(planned) != len(live):
            out.append(path)  # items added or removed: the list is replaced
            return
        for i, (old, new) in enumerate(zip(live, planned, strict=True)):
            _set_differently(f"{path}[{i}]", old, new, out)
    elif planned != live:
        out.append(path)


def _status_paths(live: Mapping[str, Any], planned: Mapping[str, Any]) -> list[str]:
    paths = ["status.status"] if live.get("status") != planned.get("status") else []
    before, after = _conditions(live), _conditions(planned)
    # A condition type only the live object carries is another writer's (core's Responsive,
    # say): the plan does not set it, so it is not a change, as for any field.
    paths += [
        f"status.conditions[{ctype}].{part}"
        for ctype in sorted(after)
        for part in ("status", "reason")
        if before.get(ctype, {}).get(part) != after.get(ctype, {}).get(part)
    ]
    return paths


def _conditions(status: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        str(c["type"]): c
        for c in status.get("conditions") or []
        if isinstance(c, dict) and c.get("type")
    }


def _impact(
    key: Key, live: Obj, worlds: tuple[_Objects, _Objects], changes: dict[Key, Change]
) -> ServiceImpact:
    before, after = worlds
    planned = after.by_key.get(key) or {}
    old_status, new_status = live.get("status") or {}, planned.get("status") or {}
    caches = _caches(live, before)
    lost = tuple(describe(before.by_key[k]) for k in caches if k not in after.by_key)
    changed = tuple(
        describe(before.by_key[k])
        for k in caches
        if k in changes and changes[k].action == "changed" and _spec_changed(changes[k])
    )
    return ServiceImpact(
        key=key,
        template=(
            _name(old_status.get("resolvedTemplate")),
            _name(new_status.get("resolvedTemplate")),
        ),
        cache=(old_status.get("templateCache") or None, new_status.get("templateCache") or None),
        caches_lost=lost,
        caches_changed=changed,
        redeployed=_redeployed(live, planned, worlds, changes),
        rescaled=_rescaled(live, before, changes),
    )


def _name(ref: object) -> str | None:
    return str(ref["name"]) if isinstance(ref, dict) and ref.get("name") else None


def _spec_changed(change: Change) -> bool:
    return any(not p.startswith(("status.", "metadata.")) for p in change.paths) or bool(
        change.more
    )


def _caches(service: Obj, world: _Objects) -> list[Key]:
    """The cache objects the service composes, and what those compose (model caches, PVCs)."""
    found: list[Key] = []
    frontier = {str((service.get("metadata") or {}).get("uid"))}
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
        frontier = {str(world.by_key[k]["metadata"].get("uid")) for k in new} - {"None"}
        first = False
    return found


def _inference_service(service: Obj, world: _Objects) -> Key | None:
    """The InferenceService a service runs: named in its status, or the one it controls."""
    meta = service.get("metadata") or {}
    named = (service.get("status") or {}).get("inferenceService")
    if named:
        key = (ISVC_API, "InferenceService", meta.get("namespace") or "", str(named))
        if key in world.by_key:
            return key
    controlled = world.controlled.get(str(meta.get("uid")), [])
    return next((k for k in controlled if k[1] == "InferenceService"), None)


def _redeployed(
    live: Obj,
    planned: Obj,
    worlds: tuple[_Objects, _Objects],
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


def _rescaled(live: Obj, before: _Objects, changes: dict[Key, Change]) -> str | None:
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


def as_data(result: Diff) -> dict[str, Any]:
    """The diff for `-o yaml|json`; a Secret's changed fields are not named."""
    return {
        "note": LIMIT,
        "created": [c.what for c in result.changes if c.action == "created"],
        "deleted": [c.what for c in result.changes if c.action == "deleted"],
        "changed": [
            {"object": c.what}
            if c.secret
            else {"object": c.what, "paths": list(c.paths), **({"more": c.more} if c.more else {})}
            for c in result.changes
            if c.action == "changed"
        ],
        "runningServices": [
            {
                "service": describe(_stub(s.key)),
                "switchesTemplate": s.switches_template,
                "template": {"live": s.template[0], "planned": s.template[1]},
                "cache": {"live": s.cache[0], "planned": s.cache[1]},
                "cachesLost": list(s.caches_lost),
                "cachesChanged": list(s.caches_changed),
                "redeployed": s.redeployed,
                "rescaled": s.rescaled,
            }
            for s in result.services
        ],
        "redeploys": result.redeploys,
    }


LIMIT: Final = (
    "the plan adds and updates what the manifests give; it deletes no live object they leave "
    "out, and fields only the live object sets (defaults, other controllers') are not compared"
)


def _stub(key: Key) -> Obj:
    return {"apiVersion": key[0], "kind": key[1], "metadata": {"namespace": key[2], "name": key[3]}}


def as_text(result: Diff) -> str:
    """The diff as kubectl diff shows one: `+` created, `-` deleted, `~` changed."""
    sign = {"created": "+", "deleted": "-", "changed": "~"}
    lines = [f"diff against the live cluster ({LIMIT}):"]
    if not result.changes:
        lines.append("  no change")
    for c in result.changes:
        if c.secret and c.action == "changed":
            lines.append(f"~ {c.what} changed")
            continue
        lines.append(f"{sign[c.action]} {c.what}")
        lines += [f"    {p}" for p in c.paths]
        if c.more:
            lines.append(f"    ... and {c.more} more")
    for s in result.services:
        lines += _service_lines(s)
    return "\n".join(lines)


def _service_lines(s: ServiceImpact) -> list[str]:
    what = describe(_stub(s.key))
    if not s.affected:
        return [f"running {what}: unaffected"]
    lines = [f"running {what}:"]
    if s.switches_template:
        lines.append(f"  switches template: {s.template[0]} -> {s.template[1] or '(none)'}")
    if s.cache[0] != s.cache[1]:
        lines.append(f"  template cache: {s.cache[0] or '(none)'} -> {s.cache[1] or '(none)'}")
    lines += [f"  loses cache: {c}" for c in s.caches_lost]
    lines += [f"  cache changes: {c}" for c in s.caches_changed]
    if s.redeployed:
        lines.append(f"  redeployed: {s.redeployed}")
    elif s.rescaled:
        lines.append(f"  rescaled, no pod restarted: {s.rescaled}")
    return lines
