"""Template auto-selection: which of a model's templates a service runs on when it names none.

The stages filter, then a preference order ranks what is left. Every candidate that drops out is
recorded with the reason, so a service that cannot choose can say exactly why; and a tie for first
place is never broken silently: the caller reports the tied candidates instead.
A leaf module over plain values: it knows nothing of manifests or Crossplane.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from function.rules.gpu import normalize_model

AVAILABLE: Final = "Available"

# Lower index is better; a value not listed ranks after every listed one.
TYPE_ORDER: Final = ("optimized", "preview", "unoptimized")
GPU_ORDER: Final = ("MI355X", "MI350X", "MI325X", "MI300X", "MI250X", "MI210")
METRIC_ORDER: Final = ("latency", "throughput")
PRECISION_ORDER: Final = ("fp4", "int4", "fp8", "int8", "fp16", "bf16", "fp32")


@dataclass(frozen=True)
class Candidate:
    """What selection needs to know about one template."""

    name: str
    namespaced: bool
    status: str | None
    type: str | None
    gpu: str | None
    gpu_count: int | None
    metric: str | None
    precision: str | None

    @property
    def label(self) -> str:
        """`name (scope)`, as messages show it."""
        return f"{self.name} ({'namespace' if self.namespaced else 'cluster'})"

    def describe(self) -> str:
        """The profile that ranked it, e.g. `optimized, 1 x MI300X, latency, fp8`."""
        gpus = (
            f"{self.gpu_count} x {self.gpu or 'GPU'}" if self.gpu_count else self.gpu or "any GPU"
        )
        if self.gpu_count == 0 and not self.gpu:
            gpus = "CPU"  # a CPU profile's count: no GPU at all, not any GPU
        parts = (self.type or "unoptimized", gpus, self.metric or "-", self.precision or "-")
        return ", ".join(parts)


@dataclass(frozen=True)
class Wanted:
    """The profile a service's `overrides` ask for; unset fields match anything."""

    metric: str | None = None
    precision: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None


class Stage(StrEnum):
    """The stage at which a candidate dropped out."""

    AVAILABILITY = "availability"
    TUNING = "tuning"
    OVERRIDES = "overrides"
    SCOPE = "scope"
    RANK = "rank"


@dataclass(frozen=True)
class Rejection:
    """A candidate that dropped out, at which stage, and why."""

    candidate: Candidate
    stage: Stage
    why: str


@dataclass(frozen=True)
class Selection:
    """The outcome: one chosen candidate, or the tie for first place, and every rejection."""

    chosen: Candidate | None
    tied: tuple[Candidate, ...]
    rejected: tuple[Rejection, ...]


def select(
    candidates: Sequence[Candidate],
    *,
    allow_unoptimized: bool = False,
    wanted: Wanted | None = None,
    sticky: str | None = None,
) -> Selection:
    """Filter by availability, tuning level and `wanted`, prefer namespace scope, then rank.

    `sticky` names the template the service already runs on: while it stays eligible it is kept,
    so a better template appearing later never restarts a running service.
    """
    rejected: list[Rejection] = []
    left = list(candidates)
    for stage, keep in (
        (Stage.AVAILABILITY, _available),
        (Stage.TUNING, lambda c: _tuned(c, allow_unoptimized=allow_unoptimized)),
        (Stage.OVERRIDES, lambda c: _matches(c, wanted)),
    ):
        left = _keep(left, stage, keep, rejected)

    for c in left:
        if c.name == sticky:
            return Selection(c, (), tuple(rejected))
    if any(c.namespaced for c in left):
        scope_rule = "a namespace template of the model is eligible"
        left = _keep(left, Stage.SCOPE, lambda c: None if c.namespaced else scope_rule, rejected)
    if not left:
        return Selection(None, (), tuple(rejected))

    best = min(_rank(c) for c in left)
    top = _keep(
        left,
        Stage.RANK,
        lambda c: None if _rank(c) == best else f"ranks below the best ({c.describe()})",
        rejected,
    )
    if len(top) > 1:
        return Selection(None, tuple(top), tuple(rejected))
    return Selection(top[0], (), tuple(rejected))


def _keep(
    left: Sequence[Candidate],
    stage: Stage,
    why_not: Callable[[Candidate], str | None],
    rejected: list[Rejection],
) -> list[Candidate]:
    """The candidates `why_not` has no objection to; the others go to `rejected`."""
    kept = []
    for c in left:
        why = why_not(c)
        if why is None:
            kept.append(c)
        else:
            rejected.append(Rejection(c, stage, why))
    return kept


def _available(c: Candidate) -> str | None:
    if c.status == AVAILABLE:
        return None
    return f"not Available (status {c.status or 'not reported yet'})"


def _tuned(c: Candidate, *, allow_unoptimized: bool) -> str | None:
    if allow_unoptimized or (c.type or "").lower() == "optimized":
        return None
    return f"{c.type or 'unoptimized'} profile; set spec.template.allowUnoptimized to allow it"


def _matches(c: Candidate, wanted: Wanted | None) -> str | None:
    if wanted is None:
        return None
    for field, want, have in (
        ("metric", wanted.metric, c.metric),
        ("precision", wanted.precision, c.precision),
    ):
        if want and (have or "").lower() != want.lower():
            return f"{field} {have or 'unset'} is not the overridden {want}"
    if wanted.gpu and c.gpu and normalize_model(wanted.gpu) != normalize_model(c.gpu):
        return f"GPU {c.gpu} is not the overridden {wanted.gpu}"
    if wanted.gpu_count and c.gpu_count and wanted.gpu_count != c.gpu_count:
        return f"{c.gpu_count} GPUs is not the overridden {wanted.gpu_count}"
    return None


def ranks_below(c: Candidate, best: Candidate) -> str | None:
    """Why `c` ranks below `best`, in words: the first preference where it loses; None if not.

    The preferences are `_rank`'s, in its order, e.g. `metric throughput ranks after latency
    (preferred: latency, throughput)`.
    """
    for (term, order), mine, theirs in zip(_TERMS, _values(c), _values(best), strict=True):
        if _index(order, mine) != _index(order, theirs):
            if _index(order, mine) < _index(order, theirs):
                return None  # ranks above on a weightier preference
            return (
                f"{term} {mine or 'unset'} ranks after {theirs or 'unset'} "
                f"(preferred: {', '.join(order)})"
            )
    return None


_TERMS: Final = (
    ("tuning", TYPE_ORDER),
    ("GPU", GPU_ORDER),
    ("metric", METRIC_ORDER),
    ("precision", PRECISION_ORDER),
)
"""The preferences ranking compares, most significant first."""


def _values(c: Candidate) -> tuple[str, str, str, str]:
    """The candidate's value for each of `_TERMS`, normalized as ranking compares them."""
    return (
        (c.type or "unoptimized").lower(),
        normalize_model(c.gpu) if c.gpu else "",
        (c.metric or "").lower(),
        (c.precision or "").lower(),
    )


def _rank(c: Candidate) -> tuple[int, ...]:
    return tuple(_index(order, value) for (_, order), value in zip(_TERMS, _values(c), strict=True))


def _index(order: Sequence[str], value: str) -> int:
    return order.index(value) if value in order else len(order)
