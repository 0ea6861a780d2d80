"""Why a service does not run on its model's other templates: for tools, never for composing.

`explain_template_choice` resolves the runtime config, the model and the template as
`compose_service` does, from the same observed state, and says for each other template of the
model why it was not chosen, in the words of the step that passed it over. Nothing is composed;
the function itself records only the template chosen (aim plan asks the rest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from function.api.meta import Scope
from function.api.service import AIMServiceSpec
from function.api.template import TemplateStatusValue
from function.compose.frame import open_frame
from function.compose.refs import Model
from function.compose.service.model import resolve_model
from function.compose.service.outcome import DERIVED_TEMPLATE, Template
from function.compose.service.template import (
    Named,
    candidate,
    default_of,
    explicit,
    listed,
    looked_up,
    model_of,
    selection_for,
    usable,
)
from function.kube.contract import Observed
from function.kube.lookup import Found
from function.kube.objects import name_of
from function.kube.parse import parse_spec
from function.rules.selection import Candidate, Rejection, Stage, ranks_below
from function.rules.status import Health


@dataclass(frozen=True)
class Alternative:
    """A template of the service's model that it does not run on, and why not."""

    kind: str
    name: str
    why: str


def explain_template_choice(observed: Observed) -> list[Alternative]:
    """The templates of a service's model it does not run on, and why (`explain_choice`).

    The runtime config and the model are resolved as `compose_service` resolves them, from the
    same observed state; nothing is composed. For tools (aim plan): the function itself records
    only the template chosen.
    """
    spec = parse_spec(observed.composite, AIMServiceSpec)
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    named = looked_up(observed, spec)
    models = resolve_model(observed, spec, frame.config, model_of(named))
    return explain_choice(observed, spec, models.model, named)


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
    catalog = listed(observed, model) if model is not None else None
    if model is None or catalog is None:
        return []
    if named is not None:
        named_template = explicit(observed, named, model)
        if isinstance(named_template, Health):
            return []
        by_name = (
            f"not considered: spec.template.name names {named_template.kind} "
            f"{named_template.name!r}"
        )
        return _others(observed, catalog, named_template, lambda _: by_name)
    candidates = usable(catalog)
    default = default_of(model, candidates)
    if default is not None:
        by_default = (
            f"not considered: {model.kind} {model.name!r} names {default.name!r} in "
            "spec.defaultServiceTemplate"
        )
        return _others(observed, catalog, default, lambda _: by_default)
    selection = selection_for(observed, spec, model, candidates)
    best = selection.chosen
    if best is None:
        return []
    dropped = {(r.candidate.name, r.candidate.namespaced): r for r in selection.rejected}

    def why(t: Template) -> str:
        c = candidate(t)
        r = dropped.get((c.name, c.namespaced))
        if r is not None and r.stage in _FILTERS:
            return _filtered(r)
        return _outranked(c, best)

    chosen = next(t for t in candidates if candidate(t) == best)
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
