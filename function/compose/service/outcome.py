"""What a service's template resolution yields, and the derived template its overrides call for.

With `overrides` that change the chosen template's profile, the service composes a derived
AIMServiceTemplate (the chosen one with the overrides applied) and runs on it once discovery made
it Available. The chosen template's health says whether it can be run on; when none could be
chosen, the health says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from function.api.hardware import Hardware
from function.api.meta import Kind, Scope
from function.api.service import AIMServiceSpec
from function.api.template import ServiceTemplateSpec, TemplateStatusValue
from function.build.aim import build_aim_object
from function.compose.refs import Model, resolved_template
from function.compose.refs import Template as TemplateOf
from function.kube.contract import Desired, Observed
from function.rules import labels, naming
from function.rules.merge import cpu_above_limit, merge_hardware
from function.rules.placement import placement
from function.rules.selection import Selection, Stage
from function.rules.status import ConditionType, Health, Reason, State

DERIVED_TEMPLATE = "derived-template"
"""Composition-resource name of the AIMServiceTemplate derived from overrides."""

Template = TemplateOf[ServiceTemplateSpec]


@dataclass(frozen=True)
class TemplateOutcome:
    """The template to serve with (derived or chosen), its health, and a derived one to compose."""

    health: Health
    template: Template | None = None
    desired: Desired | None = None

    @property
    def ready(self) -> bool:
        """The template is Available: discovery finished and its GPUs exist."""
        return self.health.state is State.READY


def unselected(model: Model, selection: Selection, count: int, invalid: list[str]) -> Health:
    """Why no template was chosen; templates that could not be read are named too."""
    also = "".join(f"; {message}" for message in invalid)
    if selection.tied:
        tied = "; ".join(f"{c.label}: {c.describe()}" for c in selection.tied)
        return ConditionType.TEMPLATE_READY.pending(
            Reason.TEMPLATE_SELECTION_AMBIGUOUS,
            f"{len(selection.tied)} templates of model {model.name!r} tie for best (Available, "
            f"eligible, equal profile rank): {tied}; set spec.template.name to one of them",
        )
    if count == 0:
        hint = (
            "its discovery is disabled (spec.discovery.enabled), so create a template for it"
            if not model.spec.discovery_enabled and not model.spec.model_sources
            else "templates appear once the model's discovery creates them"
        )
        return ConditionType.TEMPLATE_READY.pending(
            Reason.TEMPLATE_NOT_FOUND,
            f"model {model.name!r} has no usable templates yet; {hint}{also}",
        )
    why = "; ".join(f"{r.candidate.label}: {r.why}" for r in selection.rejected)
    not_ready = all(r.stage is Stage.AVAILABILITY for r in selection.rejected)
    return ConditionType.TEMPLATE_READY.pending(
        Reason.TEMPLATE_NOT_READY if not_ready else Reason.TEMPLATE_NOT_FOUND,
        f"no template of model {model.name!r} can be used yet: {why}{also}",
    )


def with_overrides(observed: Observed, spec: AIMServiceSpec, base: Template) -> TemplateOutcome:
    """The chosen template, or the derived one when the overrides change it, with its health."""
    derived_spec = _apply(base.spec, spec)
    if derived_spec is None:
        return TemplateOutcome(_template_health(base), base)
    overrides = spec.overrides
    assert overrides is not None  # noqa: S101 - _apply returns None without overrides
    asked_cpu = overrides.hardware.cpu if overrides.hardware else None
    cpu = derived_spec.hardware.cpu if derived_spec.hardware else None
    if asked_cpu is not None and cpu is not None and cpu_above_limit(cpu):
        # The override's request is above the base template's limit: the API server would
        # refuse the derived template, far from the field that caused it.
        return TemplateOutcome(
            ConditionType.TEMPLATE_READY.failed(
                Reason.INVALID,
                f"spec.overrides.hardware.cpu.requests ({cpu.requests}) is above the CPU limit "
                f"of {base.kind} {base.name!r} (hardware.cpu.limits: {cpu.limits}); recreate "
                "the service with spec.overrides.hardware.cpu.limits as well (overrides are "
                "immutable)",
            ),
            base,
        )
    gpu = overrides.hardware.gpu if overrides.hardware else None
    name = naming.derived_template_name(
        base.name,
        gpu=gpu.model if gpu else None,
        count=gpu.requests if gpu else None,
        precision=overrides.precision,
        metric=overrides.metric,
        cpu=(str(asked_cpu.requests), _text(asked_cpu.limits)) if asked_cpu else None,
    )
    manifest = build_aim_object(
        Kind.SERVICE_TEMPLATE,
        name=name,
        namespace=observed.namespace,
        labels={
            **labels.MANAGED_BY,
            labels.ORIGIN: labels.DERIVED,
            labels.SERVICE: labels.value(observed.name),
            labels.BASE_TEMPLATE: labels.value(base.name),
        },
        spec=derived_spec,
    )
    current = observed.resources.get(DERIVED_TEMPLATE)
    derived = resolved_template(
        current or manifest, Kind.SERVICE_TEMPLATE, Scope.NAMESPACE, derived_spec
    )
    desired = Desired(manifest, ready=derived.headline == TemplateStatusValue.AVAILABLE)
    if current is None or derived.headline is None:
        health = ConditionType.TEMPLATE_READY.pending(
            Reason.CREATING_DERIVED_TEMPLATE,
            f"AIMServiceTemplate {name!r} ({base.kind} {base.name!r} with spec.overrides) is "
            "being created; the service runs on it once it is Available",
        )
        return TemplateOutcome(health, derived, desired)
    return TemplateOutcome(_template_health(derived), derived, desired)


def _apply(base: ServiceTemplateSpec, spec: AIMServiceSpec) -> ServiceTemplateSpec | None:
    """The base spec with the overrides, or None when they change nothing."""
    o = spec.overrides
    if o is None:
        return None
    changes: dict[str, object] = {}
    if o.metric is not None and o.metric != base.metric:
        changes["metric"] = o.metric
    if o.precision is not None and o.precision != base.precision:
        changes["precision"] = o.precision
    if o.hardware is not None:
        # Field by field: overriding the GPU count keeps the base template's GPU model.
        hardware = merge_hardware(base.hardware, o.hardware)
        if _dump(hardware) != _dump(base.hardware):
            changes["hardware"] = hardware
    if not changes:
        return None
    changes["runtime_config_name"] = spec.runtime_config_name
    if spec.image_pull_secrets:
        changes["image_pull_secrets"] = spec.image_pull_secrets
    return base.model_copy(update=changes)


def _template_health(template: Template) -> Health:
    which = f"{template.kind} {template.name!r}"
    profile = template.status.profile.metadata if template.status.profile else None
    discovered = profile.gpu if profile else None
    try:
        placement(template.spec.hardware.gpu if template.spec.hardware else None, discovered)
    except ValueError as e:
        return ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_INVALID, f"{which} cannot be used: {e}"
        )
    match template.headline:
        case TemplateStatusValue.AVAILABLE:
            return ConditionType.TEMPLATE_READY.ready(Reason.RESOLVED, f"using {which}")
        case TemplateStatusValue.FAILED:
            return ConditionType.TEMPLATE_READY.failed(
                Reason.TEMPLATE_NOT_READY, f"{which} is Failed; see its conditions"
            )
        case TemplateStatusValue.DEGRADED:
            return ConditionType.TEMPLATE_READY.degraded(
                Reason.TEMPLATE_NOT_READY, f"{which} is Degraded"
            )
        case TemplateStatusValue.NOT_AVAILABLE:
            return ConditionType.TEMPLATE_READY.pending(
                Reason.TEMPLATE_NOT_READY,
                f"{which} is NotAvailable: no node has the GPU it needs",
            )
        case status:
            return ConditionType.TEMPLATE_READY.pending(
                Reason.TEMPLATE_NOT_READY,
                f"{which} is {status or 'not reconciled yet'}; waiting for it to become Available",
            )


def _text(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _dump(hardware: Hardware | None) -> object:
    return hardware.model_dump(mode="json", exclude_none=True) if hardware else None
