"""Which template a service runs on, and the derived template its `overrides` call for.

An explicit `spec.template.name` resolves namespace first, then cluster; it is looked up once per
call (`looked_up`), as the model's resolution reads it too. Without one, the model's
`defaultServiceTemplate` is used when it exists, else auto-selection picks among the model's
templates (`function.rules.selection`), explaining every candidate it passed over. With
`overrides` that change the chosen template's profile, the service composes a derived
AIMServiceTemplate (the chosen one with the overrides applied) and runs on it once discovery made
it Available.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from function.api.hardware import Hardware
from function.api.meta import Kind, Scope
from function.api.service import AIMServiceSpec, AIMServiceStatus, ServiceOverrides
from function.api.template import ServiceTemplateSpec, TemplateStatusValue
from function.build.aim import build_aim_object
from function.compose.refs import Model, resolved_template
from function.compose.refs import Template as TemplateOf
from function.errors import InvalidSpecError
from function.kube.contract import Desired, Observed, Requirement
from function.kube.lookup import Absent, Found, Listing, Lookup, Pending, Resolution
from function.kube.objects import name_of
from function.kube.parse import once, parse_spec, parse_status
from function.kube.views import string_at
from function.rules import labels, naming
from function.rules.merge import cpu_above_limit, merge_hardware
from function.rules.placement import placement
from function.rules.profile import effective_profile
from function.rules.selection import (
    Candidate,
    Rejection,
    Selection,
    Stage,
    Wanted,
    ranks_below,
    select,
)
from function.rules.status import ConditionType, Health, Reason, State

DERIVED_TEMPLATE = "derived-template"
"""Composition-resource name of the AIMServiceTemplate derived from overrides."""

_MODEL_NAME = ("spec", "modelName")

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


@dataclass(frozen=True)
class Named:
    """The template `spec.template.name` names, as looked up on this call."""

    name: str
    resolution: Resolution


def requirements(spec: AIMServiceSpec, namespace: str) -> list[Requirement]:
    """What Crossplane must fetch to resolve the template; the same on every call."""
    if spec.template is not None and spec.template.name is not None:
        return explicit_lookup(spec.template.name, namespace).requirements()
    return [_namespace_templates(namespace).requirement(), _CLUSTER_TEMPLATES.requirement()]


def looked_up(observed: Observed, spec: AIMServiceSpec) -> Named | None:
    """The explicitly named template, looked up once for the call; None when none is named."""
    if spec.template is None or spec.template.name is None:
        return None
    name = spec.template.name
    return Named(name, explicit_lookup(name, observed.namespace).resolve(observed.required))


def model_of(named: Named | None) -> str | None:
    """The model the explicitly named template serves, to pick among models sharing an image."""
    if named is not None and isinstance(named.resolution, Found):
        return string_at(named.resolution.manifest, "spec", "modelName")
    return None


def resolve_template(
    observed: Observed, spec: AIMServiceSpec, model: Model | None, named: Named | None
) -> TemplateOutcome:
    """Choose the template (`named`, as `looked_up` found it, else auto), then apply overrides."""
    if named is not None:
        chosen = _explicit(observed, named, model)
    elif model is None:
        return TemplateOutcome(
            ConditionType.TEMPLATE_READY.pending(
                Reason.RESOLVING, "waiting for the model to choose a template"
            )
        )
    else:
        chosen = _auto(observed, spec, model)
    if isinstance(chosen, Health):
        return TemplateOutcome(chosen)
    return _with_overrides(observed, spec, chosen)


def _explicit(observed: Observed, named: Named, model: Model | None) -> Template | Health:
    name = named.name
    match named.resolution:
        case Pending():
            return ConditionType.TEMPLATE_READY.pending(
                Reason.RESOLVING, f"looking up template {name!r}"
            )
        case Absent():
            return ConditionType.TEMPLATE_READY.failed(
                Reason.TEMPLATE_NOT_FOUND,
                f"spec.template.name: neither AIMServiceTemplate {name!r} in namespace "
                f"{observed.namespace!r} nor AIMClusterServiceTemplate {name!r} exists; create "
                "it, name an existing template, or leave the name out to auto-select",
            )
        case Found() as found:
            template = _parse(found)
            if isinstance(template, Health):
                return template
            if model is not None and template.spec.model_name != model.name:
                return ConditionType.TEMPLATE_READY.failed(
                    Reason.TEMPLATE_MODEL_MISMATCH,
                    f"spec.template.name: {template.kind} {name!r} is for model "
                    f"{template.spec.model_name!r}, but spec.model resolves to {model.kind} "
                    f"{model.name!r}; name a template of that model or leave the name out",
                )
            return template


def _auto(observed: Observed, spec: AIMServiceSpec, model: Model) -> Template | Health:
    catalog = _catalog(observed, model)
    if catalog is None:
        return ConditionType.TEMPLATE_READY.pending(
            Reason.RESOLVING, f"listing templates of {model.name!r}"
        )
    candidates = _usable(catalog)
    invalid = [h.message for _, h in catalog if isinstance(h, Health)]
    default = _default(model, candidates)
    if default is not None:
        return default
    by_name = {(t.name, t.scope is Scope.NAMESPACE): t for t in candidates}
    selection = _select(observed, spec, model, candidates)
    if selection.chosen is not None:
        return by_name[(selection.chosen.name, selection.chosen.namespaced)]
    return _unselected(model, selection, len(candidates), invalid)


def _catalog(observed: Observed, model: Model) -> list[tuple[Found, Template | Health]] | None:
    """The model's templates Crossplane listed, parsed (a Health for one that cannot be read).

    None while the listings are not fetched.
    """
    # Only the model's templates are read out of the catalog Crossplane listed.
    namespaced = _namespace_templates(observed.namespace).items_where(
        observed.required, _MODEL_NAME, model.name
    )
    cluster = _CLUSTER_TEMPLATES.items_where(observed.required, _MODEL_NAME, model.name)
    if namespaced is None or cluster is None:
        return None
    # A cluster template's modelName is an AIMClusterModel: it serves a namespace model of the
    # same name only by accident, so those are not candidates.
    found = [
        *(Found(m, Kind.SERVICE_TEMPLATE, Scope.NAMESPACE) for m in namespaced),
        *(
            Found(m, Kind.CLUSTER_SERVICE_TEMPLATE, Scope.CLUSTER)
            for m in (cluster if model.scope is Scope.CLUSTER else ())
        ),
    ]
    return [(f, _parse(f)) for f in found]


def _usable(catalog: list[tuple[Found, Template | Health]]) -> list[Template]:
    return [t for _, t in catalog if not isinstance(t, Health)]


def _default(model: Model, candidates: list[Template]) -> Template | None:
    """The model's defaultServiceTemplate among its templates (namespace first), if named."""
    default = model.spec.default_service_template
    if default is not None:
        for t in sorted(candidates, key=lambda t: t.scope is not Scope.NAMESPACE):
            if t.name == default:
                return t
    return None


def _select(
    observed: Observed, spec: AIMServiceSpec, model: Model, candidates: list[Template]
) -> Selection:
    sticky = _sticky(observed)
    return select(
        [_candidate(t) for t in candidates],
        # A custom model's profiles are the user's own weights on hardware they named: nobody
        # tuned them, and there is nothing better to pick, so the tuning filter does not apply.
        allow_unoptimized=bool(spec.template and spec.template.allow_unoptimized)
        or bool(model.spec.model_sources),
        wanted=_wanted(spec.overrides),
        sticky=next((t.name for t in candidates if labels.value(t.name) == sticky), None),
    )


@dataclass(frozen=True)
class Alternative:
    """A template of the service's model that it does not run on, and why not."""

    kind: str
    name: str
    why: str


def catalog_requirements(namespace: str) -> list[Requirement]:
    """The listings `explain_choice` reads the model's templates from, whatever the spec says.

    A service that names its template asks Crossplane for that one alone; a caller that wants
    the others explained (aim plan) fetches these too.
    """
    return [_namespace_templates(namespace).requirement(), _CLUSTER_TEMPLATES.requirement()]


def explain_choice(
    observed: Observed, spec: AIMServiceSpec, model: Model | None, named: Named | None
) -> list[Alternative]:
    """Each other template of the model of a service that has chosen one, and why not it.

    From the inputs `resolve_template` decides on, through the same steps: the field that named
    the template (`spec.template.name`, the model's `defaultServiceTemplate`) kept the others
    from being considered; otherwise each says the stage of auto-selection it dropped out at, or
    the preference it ranks lower on. Empty while no template is chosen (TemplateReady says why)
    or the model's templates are not listed. Pure: it decides and writes nothing. `named` is
    the explicitly named template as `looked_up` found it.
    """
    catalog = _catalog(observed, model) if model is not None else None
    if model is None or catalog is None:
        return []
    if named is not None:
        explicit = _explicit(observed, named, model)
        if isinstance(explicit, Health):
            return []
        by_name = f"not considered: spec.template.name names {explicit.kind} {explicit.name!r}"
        return _others(observed, catalog, explicit, lambda _: by_name)
    candidates = _usable(catalog)
    default = _default(model, candidates)
    if default is not None:
        by_default = (
            f"not considered: {model.kind} {model.name!r} names {default.name!r} in "
            "spec.defaultServiceTemplate"
        )
        return _others(observed, catalog, default, lambda _: by_default)
    selection = _select(observed, spec, model, candidates)
    best = selection.chosen
    if best is None:
        return []
    dropped = {(r.candidate.name, r.candidate.namespaced): r for r in selection.rejected}

    def why(t: Template) -> str:
        c = _candidate(t)
        r = dropped.get((c.name, c.namespaced))
        if r is not None and r.stage in _FILTERS:
            return _filtered(r)
        return _outranked(c, best)

    chosen = next(t for t in candidates if _candidate(t) == best)
    return _others(observed, catalog, chosen, why)


_FILTERS = frozenset({Stage.AVAILABILITY, Stage.TUNING, Stage.OVERRIDES})


def _others(
    observed: Observed,
    catalog: list[tuple[Found, Template | Health]],
    chosen: Template,
    why: Callable[[Template], str],
) -> list[Alternative]:
    """Every template of the catalog but the chosen one and the service's own derived one."""
    derived = observed.resources.get(DERIVED_TEMPLATE)
    own = name_of(derived) if derived is not None else None
    out = []
    for found, t in catalog:
        name = name_of(found.manifest)
        if (name, found.scope) == (chosen.name, chosen.scope) or (
            found.scope is Scope.NAMESPACE and name == own
        ):
            continue
        reason = t.message if isinstance(t, Health) else why(t)
        out.append(Alternative(str(found.kind), name, reason))
    return out


def _filtered(r: Rejection) -> str:
    """A filter's reason, with what the user can act on."""
    c = r.candidate
    if r.stage is Stage.AVAILABILITY and c.status == TemplateStatusValue.NOT_AVAILABLE:
        return f"{r.why}: no node of the cluster has its GPU ({c.gpu or 'unknown'})"
    if r.stage is Stage.OVERRIDES:
        return f"{r.why} (spec.overrides)"
    return r.why


def _outranked(c: Candidate, best: Candidate) -> str:
    """Why a template that passed every filter lost to `best`."""
    if best.namespaced and not c.namespaced:
        return "a cluster template: the model has an eligible namespace template, which comes first"
    below = ranks_below(c, best)
    if below is not None and c.namespaced == best.namespaced:
        return f"ranks below the chosen template: {below}"
    # Only a sticky choice keeps a template that does not rank first.
    return (
        f"eligible ({c.describe()}), but the service already runs on {best.name}, which it keeps "
        "while that stays eligible: a better template does not restart a running service"
    )


def _unselected(model: Model, selection: Selection, count: int, invalid: list[str]) -> Health:
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


def _with_overrides(observed: Observed, spec: AIMServiceSpec, base: Template) -> TemplateOutcome:
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


def _parse(found: Found) -> Template | Health:
    return once(found.manifest, f"template:{found.kind}:{found.scope}", lambda: _parse_now(found))


def _parse_now(found: Found) -> Template | Health:
    try:
        spec = parse_spec(found.manifest, ServiceTemplateSpec)
    except InvalidSpecError as e:
        return ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_INVALID,
            f"{found.kind} {name_of(found.manifest)!r} cannot be used: {e}",
        )
    return resolved_template(found.manifest, found.kind, found.scope, spec)


def _candidate(t: Template) -> Candidate:
    return once(t.manifest, f"candidate:{t.scope}", lambda: _candidate_now(t))


def _candidate_now(t: Template) -> Candidate:
    profile = effective_profile(t.spec, t.status.profile, t.labels)
    return Candidate(
        name=t.name,
        namespaced=t.scope is Scope.NAMESPACE,
        status=t.headline,
        type=profile.type,
        gpu=profile.gpu,
        gpu_count=profile.gpu_count,
        metric=profile.metric,
        precision=profile.precision,
    )


def _wanted(overrides: ServiceOverrides | None) -> Wanted | None:
    if overrides is None:
        return None
    gpu = overrides.hardware.gpu if overrides.hardware else None
    return Wanted(
        metric=overrides.metric,
        precision=overrides.precision,
        gpu=gpu.model if gpu else None,
        gpu_count=gpu.requests if gpu else None,
    )


def _sticky(observed: Observed) -> str | None:
    """The template the service already runs on (the base of its derived template, if any).

    As a label value, which is how a derived template records its base.
    """
    derived = observed.resources.get(DERIVED_TEMPLATE)
    if derived is not None:
        base = string_at(derived, "metadata", "labels", labels.BASE_TEMPLATE)
        if base is not None:
            return base
    status = parse_status(observed.composite, AIMServiceStatus)
    if status is not None and status.resolved_template is not None:
        return labels.value(status.resolved_template.name)
    return None


def _text(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _dump(hardware: Hardware | None) -> object:
    return hardware.model_dump(mode="json", exclude_none=True) if hardware else None


def explicit_lookup(name: str, namespace: str) -> Lookup:
    """The lookup of an explicitly named template, namespace first."""
    return Lookup(
        key="template",
        name=name,
        namespace=namespace,
        namespaced_kind=Kind.SERVICE_TEMPLATE,
        cluster_kind=Kind.CLUSTER_SERVICE_TEMPLATE,
    )


def _namespace_templates(namespace: str) -> Listing:
    return Listing("templates", Kind.SERVICE_TEMPLATE, namespace)


_CLUSTER_TEMPLATES = Listing("cluster-templates", Kind.CLUSTER_SERVICE_TEMPLATE)
