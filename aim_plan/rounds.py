"""Crossplane core's reconcile, played in rounds over the plan's world until nothing changes.

A round reconciles every AIM XR once, in the order the world holds them (what the manifests
named first, then what was composed), each seeing what the ones before it wrote, then reads
the labels of images waiting discovery Jobs run that no model describes (aim_plan/dryrun.py),
lets the simulated controllers act (aim_plan/simulate.py) and the garbage collector collect.
One XR's reconcile is core 2.4's: the XR labelled `crossplane.io/composite` first when it has
no such label, then a RunFunctionRequest with the XR and what it composed so far, the
function called again with what its requirements select until they stop changing (at most
`MAX_REQUIREMENT_ITERATIONS` more calls), and only the last response applied: its composed
objects (named, labelled and owned as core does), the XR's status and conditions, and what it
no longer composes deleted. The function runs in process (`FunctionRunner`, InProcess).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from pydantic import JsonValue

from aim_plan.composed import composed, composed_by, has_true, labelled
from aim_plan.dryrun import read_dry_run_images
from aim_plan.load import Obj, describe, is_aim, key_of
from aim_plan.registry import Answers, Asked
from aim_plan.requirements import resolve
from aim_plan.simulate import PLAN_TIME, simulate
from aim_plan.views import entries_at, mapping_at, meta_text, text_at
from aim_plan.world import Key, World, settled_change
from function.kube.convert import struct_to_dict
from function.kube.objects import controller_uid
from function.server.fn import FunctionRunner
from function.settings import Settings

MAX_REQUIREMENT_ITERATIONS: Final = 5
"""Core's `MaxRequirementsIterations`: calls after the first before it gives up on an XR."""
DEFAULT_MAX_ROUNDS: Final = 30
PLAN_NOW: Final = datetime.fromisoformat(PLAN_TIME).astimezone(UTC)

_STATUS: Final = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
    fnv1.STATUS_CONDITION_UNKNOWN: "Unknown",
}


class Runner(Protocol):
    """What a reconcile calls: `FunctionRunner`, or a test's stand-in."""

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: None = None
    ) -> fnv1.RunFunctionResponse:
        """Compose one XR."""
        ...


SERVICE_KINDS: Final = frozenset({"AIMService", "XAIMService"})
"""A service's kinds (the claims flavour's composite too): their last request is kept."""


@dataclass
class Reconciled:
    """One XR's last reconcile: the events it was told, and the error that stopped it, if any."""

    events: list[str] = field(default_factory=list)
    error: str | None = None
    request: bytes | None = None
    """A service's last RunFunctionRequest, serialized: what the function last decided on, so
    the report can ask it why the other templates were not chosen (aim_plan/choice.py)."""


@dataclass
class Plan:
    """Where the manifests ended up."""

    world: World
    rounds: int = 0
    calls: int = 0
    """RunFunction calls over every round (a reconcile makes one, plus one per new requirement)."""
    converged: bool = False
    unsettled: list[str] = field(default_factory=list)
    """What the last round still changed, when the plan did not converge."""
    simulations: dict[str, list[str]] = field(default_factory=dict)
    """Each simulation that acted, with the objects it acted on."""
    reconciled: dict[Key, Reconciled] = field(default_factory=dict)
    registry: Asked = field(default_factory=Asked)
    """What the function asked the registries, and their answers."""


def plan(
    world: World, max_rounds: int = DEFAULT_MAX_ROUNDS, registry: Answers | None = None
) -> Plan:
    """Reconcile the world's AIM XRs in rounds until a round changes nothing or `max_rounds`.

    The function's registry questions go to `registry` (offline when None); plans given the
    same `Answers` ask each question once between them.
    """
    return asyncio.run(_plan(world, max_rounds, registry))


async def _plan(world: World, max_rounds: int, registry: Answers | None) -> Plan:
    result = Plan(world) if registry is None else Plan(world, registry=Asked(registry))
    runner = FunctionRunner(
        settings=Settings(event_memory=0),
        inspector=result.registry,
        lister=result.registry,
        clock=lambda: PLAN_NOW,
    )
    counted = _Counted(runner, result)
    after = world.snapshot()
    try:
        for number in range(1, max_rounds + 1):
            result.rounds = number
            before = after  # nothing writes between two rounds: the last one's end state
            for obj in world:
                key = key_of(obj)
                if is_aim(obj) and world.get(key) is not None:
                    result.reconciled[key] = await reconcile(counted, world, key)
            await read_dry_run_images(world, result.registry)
            for done in simulate(world):
                name, _, what = done.partition(": ")
                result.simulations.setdefault(name, []).append(what)
            world.collect_garbage()
            after = world.snapshot()
            changed = sorted(
                k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
            )
            if not changed:
                result.converged = True
                return result
            result.unsettled = [settled_change(k, before, after) for k in changed]
    finally:
        runner.close()
    return result


@dataclass
class _Counted:
    """A runner that counts its calls into the plan."""

    runner: Runner
    plan: Plan

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: None = None
    ) -> fnv1.RunFunctionResponse:
        """Compose one XR, counted."""
        self.plan.calls += 1
        return await self.runner.RunFunction(req)


async def reconcile(runner: Runner, world: World, key: Key) -> Reconciled:
    """One reconcile of the XR of `key`, as core runs it, applied to the world."""
    xr = labelled(world, world.get(key) or {})
    observed = composed_by(world, xr)
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "aim-plan"
    req.observed.composite.resource.update(xr)
    for name, obj in observed.items():
        req.observed.resources[name].resource.update(obj)
    asked = b""
    rsp = fnv1.RunFunctionResponse()
    for iteration in range(MAX_REQUIREMENT_ITERATIONS + 1):
        rsp = await runner.RunFunction(req)
        if _fatal(rsp):
            break
        wanted = rsp.requirements.SerializeToString(deterministic=True)
        if wanted == asked:
            break
        if iteration == MAX_REQUIREMENT_ITERATIONS:
            return _failed(
                world,
                xr,
                "cannot compose: the function's requirements did not stabilize after "
                f"{MAX_REQUIREMENT_ITERATIONS} iterations (core gives up the same way)",
            )
        asked = wanted
        req.ClearField("required_resources")
        for name, items in resolve(rsp.requirements, world).items():
            req.required_resources[name].SetInParent()
            for item in items:
                req.required_resources[name].items.add().resource.update(item)
    events = [
        f"{'Warning' if r.severity == fnv1.SEVERITY_WARNING else 'Normal'}: {r.message}"
        for r in rsp.results
        if r.severity != fnv1.SEVERITY_FATAL
    ]
    fatal = _fatal(rsp)
    if fatal is not None:
        outcome = _failed(world, xr, fatal)
        outcome.events = events
        return outcome
    error = _apply(world, xr, observed, rsp)
    if error is not None:
        outcome = _failed(world, xr, error)
        outcome.events = events
        return outcome
    last = req.SerializeToString() if key_of(xr)[1] in SERVICE_KINDS else None
    return Reconciled(events, request=last)


def _fatal(rsp: fnv1.RunFunctionResponse) -> str | None:
    for r in rsp.results:
        if r.severity == fnv1.SEVERITY_FATAL:
            return str(r.message)
    return None


def _apply(
    world: World, xr: Obj, observed: dict[str, Obj], rsp: fnv1.RunFunctionResponse
) -> str | None:
    """Apply the response as core does; an error message when a composed object cannot be."""
    errors: list[str] = []
    ready: list[bool] = []
    for name in sorted(rsp.desired.resources):
        outcome = _apply_composed(world, xr, name, observed.get(name), rsp.desired.resources[name])
        if isinstance(outcome, str):
            errors.append(outcome)
        else:
            ready.append(outcome)
    for name, obj in observed.items():
        if name not in rsp.desired.resources:
            world.delete(key_of(obj))  # core deletes what the function no longer composes
    status = dict(mapping_at(struct_to_dict(rsp.desired.composite.resource), "status"))
    status.pop("conditions", None)
    if rsp.desired.composite.ready == fnv1.READY_UNSPECIFIED:
        is_ready = all(ready)
    else:
        is_ready = rsp.desired.composite.ready == fnv1.READY_TRUE
    conditions = [
        _condition("Synced", "False", "ReconcileError", "; ".join(errors))
        if errors
        else _condition("Synced", "True", "ReconcileSuccess"),
        _condition("Ready", "True", "Available")
        if is_ready
        else _condition("Ready", "False", "Creating"),
    ]
    conditions += [
        _condition(c.type, _STATUS.get(c.status, "Unknown"), c.reason, c.message)
        for c in rsp.conditions
    ]
    world.put({**xr, "status": {**status, "conditions": conditions}})
    return "; ".join(errors) or None


def _apply_composed(
    world: World, xr: Obj, name: str, observed: Obj | None, desired: fnv1.Resource
) -> bool | str:
    """Apply one composed resource: whether it is ready, or why it cannot be applied."""
    wanted: Obj = struct_to_dict(desired.resource)
    if not meta_text(wanted, "name") and observed is not None:
        # Core names a composed resource once; later reconciles keep the name it has (a
        # live cluster's are `<xr>-<random>`, which the plan cannot derive).
        wanted.setdefault("metadata", {})["name"] = meta_text(observed, "name")
    obj = composed(xr, name, wanted)
    existing = world.get(key_of(obj))
    owner = controller_uid(existing) if existing else None
    if owner is not None and owner != meta_text(xr, "uid"):
        return (
            f"cannot apply composed resource {name!r}: {describe(obj)} is controlled by "
            "another object"
        )
    if existing is not None and "status" in existing:
        obj["status"] = existing["status"]
    world.put(obj)
    if desired.ready == fnv1.READY_UNSPECIFIED:
        return has_true(obj, "Ready")
    return desired.ready == fnv1.READY_TRUE


def _failed(world: World, xr: Obj, message: str) -> Reconciled:
    """The XR as core leaves it after a failed reconcile: Synced False, the rest unchanged."""
    status = dict(mapping_at(xr, "status"))
    conditions: list[JsonValue] = [_condition("Synced", "False", "ReconcileError", message)]
    conditions += [
        dict(c) for c in entries_at(status, "conditions") if text_at(c, "type") != "Synced"
    ]
    status["conditions"] = conditions
    world.put({**xr, "status": status})
    return Reconciled(error=message)


def _condition(ctype: str, status: str, reason: str, message: str = "") -> dict[str, JsonValue]:
    c: dict[str, JsonValue] = {
        "type": ctype,
        "status": status,
        "reason": reason,
        "lastTransitionTime": PLAN_TIME,
    }
    if message:
        c["message"] = message
    return c
