"""Which template a service runs on: the one it names, its model's default, or auto-selection.

An explicit `spec.template.name` resolves namespace first, then cluster; it is looked up once per
call (`looked_up`), as the model's resolution reads it too. Without one, the model's
`defaultServiceTemplate` is used when it exists, else auto-selection picks among the model's
templates (`function.rules.selection`), explaining every candidate it passed over. What the
choice comes to, and the derived template its `overrides` call for, are `outcome`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from function.api.meta import Kind, Scope
from function.api.service import AIMServiceSpec, AIMServiceStatus, ServiceOverrides
from function.api.template import ServiceTemplateSpec
from function.compose.refs import Model, resolved_template
from function.compose.service.outcome import (
    DERIVED_TEMPLATE,
    Template,
    TemplateOutcome,
    unselected,
    with_overrides,
)
from function.errors import InvalidSpecError
from function.kube.contract import Observed, Requirement
from function.kube.lookup import Absent, Found, Listing, Lookup, Pending, Resolution
from function.kube.objects import name_of
from function.kube.parse import once, parse_spec, parse_status
from function.kube.views import string_at
from function.rules import labels
from function.rules.profile import effective_profile
from function.rules.selection import Candidate, Selection, Wanted, select
from function.rules.status import ConditionType, Health, Reason

_MODEL_NAME = ("spec", "modelName")


@dataclass(frozen=True)
class Named:
    """The template `spec.template.name` names, as looked up on this call."""

    name: str
    resolution: Resolution


def requirements(spec: AIMServiceSpec, namespace: str) -> list[Requirement]:
    """What Crossplane must fetch to resolve the template; the same on every call."""
    if spec.template is not None and spec.template.name is not None:
        return explicit_lookup(spec.template.name, namespace).requirements()
    return catalog_requirements(namespace)


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
        chosen = explicit(observed, named, model)
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
    return with_overrides(observed, spec, chosen)


def explicit(observed: Observed, named: Named, model: Model | None) -> Template | Health:
    """The named template, checked against the model; a Health when it cannot be used (yet)."""
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
    catalog = listed(observed, model)
    if catalog is None:
        return ConditionType.TEMPLATE_READY.pending(
            Reason.RESOLVING, f"listing templates of {model.name!r}"
        )
    candidates = usable(catalog)
    invalid = [h.message for _, h in catalog if isinstance(h, Health)]
    default = default_of(model, candidates)
    if default is not None:
        return default
    by_name = {(t.name, t.scope is Scope.NAMESPACE): t for t in candidates}
    selection = selection_for(observed, spec, model, candidates)
    if selection.chosen is not None:
        return by_name[(selection.chosen.name, selection.chosen.namespaced)]
    return unselected(model, selection, len(candidates), invalid)


def listed(observed: Observed, model: Model) -> list[tuple[Found, Template | Health]] | None:
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


def usable(catalog: list[tuple[Found, Template | Health]]) -> list[Template]:
    """The templates of the catalog that could be read."""
    return [t for _, t in catalog if not isinstance(t, Health)]


def default_of(model: Model, candidates: list[Template]) -> Template | None:
    """The model's defaultServiceTemplate among its templates (namespace first), if named."""
    default = model.spec.default_service_template
    if default is not None:
        for t in sorted(candidates, key=lambda t: t.scope is not Scope.NAMESPACE):
            if t.name == default:
                return t
    return None


def selection_for(
    observed: Observed, spec: AIMServiceSpec, model: Model, candidates: list[Template]
) -> Selection:
    """Auto-selection among `candidates`, for this service and model."""
    sticky = _sticky(observed)
    return select(
        [candidate(t) for t in candidates],
        # A custom model's profiles are the user's own weights on hardware they named: nobody
        # tuned them, and there is nothing better to pick, so the tuning filter does not apply.
        allow_unoptimized=bool(spec.template and spec.template.allow_unoptimized)
        or bool(model.spec.model_sources),
        wanted=_wanted(spec.overrides),
        sticky=next((t.name for t in candidates if labels.value(t.name) == sticky), None),
    )


def catalog_requirements(namespace: str) -> list[Requirement]:
    """The listings `explain_choice` reads the model's templates from, whatever the spec says.

    A service that names its template asks Crossplane for that one alone; a caller that wants
    the others explained (aim plan) fetches these too.
    """
    return [_namespace_templates(namespace).requirement(), _CLUSTER_TEMPLATES.requirement()]


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


def candidate(t: Template) -> Candidate:
    """What selection reads of a template, once per version."""
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
