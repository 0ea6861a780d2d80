"""A template's lifecycle in the AIM API's words: Progressing and Failure (seed 002), Degraded.

The component conditions (RuntimeConfigReady, ModelReady, GPUReady, Discovered) say what each
input is doing; these three say it of the template, and follow the headline, never set it:

- `Progressing` is True while discovery works (its Job being created, running, replaced, or its
  result read) or the template's AIMTemplateCache warms (seed 001: "discovery and/or cache warm");
- `Failure` is True while the template is Failed, with the reason and message of what failed;
- `Degraded` is True while the template is non-functional though nothing in it has failed: the
  cluster lacks the GPU it asks for (seed 001's own example; the headline is NotAvailable), or a
  component is degraded.

Each is always present, as Kubernetes and the other kinds' conditions do it: False says why not,
with the reason of what holds the template where it is. Degraded is Unknown while it cannot be
told (the Nodes not listed yet, a GPU requirement that cannot be read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from function.api.cache import CacheStatusValue
from function.api.meta import Kind
from function.rules.status import (
    Condition,
    ConditionStatus,
    ConditionType,
    Health,
    Reason,
    State,
    worst,
)

_WORKING = frozenset({Reason.DISCOVERY_STARTING, Reason.DISCOVERY_RUNNING})


@dataclass(frozen=True)
class CacheWarm:
    """The AIMTemplateCache a template composed, and its headline (None before it has one)."""

    name: str
    status: CacheStatusValue | None


def conditions(
    healths: Sequence[Health],
    *,
    discovery: Health,
    gpu: Health,
    gpu_unavailable: bool,
    cache: CacheWarm | None,
) -> list[Condition]:
    """Progressing, Failure and Degraded for a template whose components report `healths`."""
    state = worst(healths)
    # Short of Ready, the first component in the worst state is what holds the headline where
    # it is; Ready, discovery says what the template knows.
    holding = next((h for h in healths if h.state is state and state is not State.READY), discovery)
    return [
        _progressing(discovery, holding, state, cache),
        _failure(holding, state),
        _degraded(gpu, holding, state, gpu_unavailable=gpu_unavailable),
    ]


def _progressing(
    discovery: Health, holding: Health, state: State, cache: CacheWarm | None
) -> Condition:
    kind = ConditionType.PROGRESSING
    if discovery.state is State.PROGRESSING or discovery.reason in _WORKING:
        # Reading a finished Job's result is still discovery running.
        reason = discovery.reason if discovery.reason in _WORKING else Reason.DISCOVERY_RUNNING
        return Condition(kind, ConditionStatus.TRUE, reason, discovery.message)
    if state is State.READY and cache is not None:
        what = f"{Kind.TEMPLATE_CACHE} {cache.name!r}"
        if cache.status == CacheStatusValue.FAILED:
            return Condition(
                kind,
                ConditionStatus.FALSE,
                Reason.CACHE_FAILED,
                f"{what} is Failed, so the model sources are not pre-warmed; services download "
                f"them themselves (kubectl describe aimtemplatecache {cache.name} says why)",
            )
        if cache.status != CacheStatusValue.AVAILABLE:
            return Condition(
                kind,
                ConditionStatus.TRUE,
                Reason.WARMING_CACHE,
                f"{what} is {cache.status or 'being created'}: the model sources are downloading",
            )
    # Ready: nothing left to do (the message lists the sources); else what it waits for or
    # what failed. The same message as the component's, so it is one event, not two.
    return Condition(kind, ConditionStatus.FALSE, holding.reason, holding.message)


def _failure(holding: Health, state: State) -> Condition:
    kind = ConditionType.FAILURE
    if state is State.FAILED:
        return Condition(kind, ConditionStatus.TRUE, holding.reason, holding.message)
    return Condition(kind, ConditionStatus.FALSE, Reason.NO_FAILURE, "nothing has failed")


def _degraded(gpu: Health, holding: Health, state: State, *, gpu_unavailable: bool) -> Condition:
    kind = ConditionType.DEGRADED
    if gpu_unavailable:
        return Condition(kind, ConditionStatus.TRUE, gpu.reason, gpu.message)
    if state is State.DEGRADED:
        return Condition(kind, ConditionStatus.TRUE, holding.reason, holding.message)
    if gpu.state is State.READY:
        return Condition(kind, ConditionStatus.FALSE, gpu.reason, gpu.message)
    return Condition(kind, ConditionStatus.UNKNOWN, gpu.reason, gpu.message)
