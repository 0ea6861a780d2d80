"""The opening and the closing every AIM composer with a runtime config shares.

A composer opens a `Frame` on its XR: the runtime config it names is asked for and resolved,
and the labels that config propagates are set. It ends with `report` (a condition per
component, a warning event per failed or degraded one, the worst state for the headline) and
`finish` (the typed status written once, with the generation it describes and whether the XR
is Ready). Only the steps in between differ between kinds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from function.api.cache import CacheStatusValue
from function.api.common import EnvVar, ObservedStatus
from function.api.model import ModelStatusValue
from function.api.service import ServiceStatusValue
from function.api.template import TemplateStatusValue
from function.compose.config_lookup import lookup as runtime_config_lookup
from function.compose.config_lookup import resolve as resolve_runtime_config
from function.kube.contract import Composition, Observed
from function.kube.views import condition_of
from function.rules.credentials import credentials_condition
from function.rules.runtimeconfig import RuntimeConfig, propagated_labels
from function.rules.status import Condition, ConditionType, Health, State
from function.rules.status import report as report_healths

READY_HEADLINES: frozenset[StrEnum] = frozenset(
    {
        ServiceStatusValue.RUNNING,
        ModelStatusValue.READY,
        TemplateStatusValue.AVAILABLE,
        CacheStatusValue.AVAILABLE,
    }
)
"""AIM headlines (status.status) that make the XR's Ready condition True; any other is False."""


@dataclass
class Frame:
    """One composer call on one XR: its runtime config, and the `Composition` being built."""

    observed: Observed
    config_health: Health
    """The runtime config's component: the first of the healths a composer reports."""
    config: RuntimeConfig | None
    """The merged runtime config; None while it is fetched or when it cannot be used."""
    comp: Composition = field(default_factory=Composition)

    def report(
        self,
        healths: Sequence[Health],
        *,
        also: Iterable[Condition] = (),
    ) -> State:
        """End with a condition per component and a warning per failed or degraded one.

        `also` follows the components' conditions. Returns the worst state, which decides the
        headline.
        """
        return report_healths(self.comp, healths, also=also)

    def finish(self, status: ObservedStatus, headline: StrEnum) -> Composition:
        """Write the XR's status (`finish`) and return the composition."""
        finish(self.comp, self.observed, status, headline)
        return self.comp


def finish(
    comp: Composition, observed: Observed, status: ObservedStatus, headline: StrEnum
) -> None:
    """Write the XR's status: `status`, whose headline is `headline`, for this generation.

    The XR is Ready exactly when the headline is a ready one; Crossplane would otherwise call it
    Ready as soon as all it composed is, so a service that composed nothing yet would read Ready.
    """
    stamp(comp, observed, status)
    comp.ready = headline in READY_HEADLINES


def stamp(comp: Composition, observed: Observed, status: ObservedStatus) -> None:
    """Write the XR's status for this generation; alone for kinds without a headline.

    Every kind says which spec its status describes, so GitOps tools can tell a status that is
    not caught up yet from a current one.
    """
    if observed.generation is not None:
        status = status.model_copy(update={"observed_generation": observed.generation})
    comp.status = status.model_dump(mode="json", by_alias=True, exclude_none=True)


def open_frame(
    observed: Observed,
    config_name: str,
    namespace: str,
    condition: ConditionType = ConditionType.RUNTIME_CONFIG_READY,
) -> Frame:
    """Ask for the runtime config `config_name` (namespace first, then cluster) and resolve it.

    `condition` is the runtime config's condition type (models say RuntimeResolved).
    """
    config_lookup = runtime_config_lookup(config_name, namespace)
    health, config = resolve_runtime_config(config_lookup, observed.required, condition)
    frame = Frame(observed, health, config)
    frame.comp.requirements += config_lookup.requirements()
    frame.comp.propagated_labels = propagated_labels(observed.metadata, config)
    return frame


def cluster_credentials(
    observed: Observed, envs: Iterable[tuple[str, Iterable[EnvVar] | None]]
) -> Condition | None:
    """The `CredentialsInline` condition of a cluster-scoped XR, from its env lists.

    A cluster object's env reaches every namespace's pods, and every catalog reader sees it;
    whether the XR had the condition (so it must be cleared) is read from the XR itself.
    """
    return credentials_condition(
        observed.kind,
        envs,
        had=condition_of(observed.composite, ConditionType.CREDENTIALS_INLINE) is not None,
    )
