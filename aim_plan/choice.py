"""Why a service does not run on its model's other templates, in the function's own words.

The function records only the template a service chose (`status.resolvedTemplate`, with the
TemplateReady message). The plan keeps each service's last request, what its last reconcile
decided on, and asks the function's `explain_template_choice` about it: the same code that
chose, so the plan never re-implements selection. The model's template listings are added to
the request first, since a service that names its template asks for no listing.
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from aim_plan.requirements import resolve
from aim_plan.rounds import Plan
from aim_plan.world import Key
from function.compose.service import Alternative, catalog_requirements, explain_template_choice
from function.errors import InvalidSpecError
from function.kube.contract import Composition
from function.kube.wire import apply_composition, read_observed


def not_chosen(plan: Plan, key: Key) -> list[Alternative]:
    """The other templates of the service of `key`'s model, each with why it was not chosen.

    Empty when the service chose none (its TemplateReady message says why) or its last
    reconcile failed before the function answered.
    """
    reconciled = plan.reconciled.get(key)
    if reconciled is None or reconciled.request is None:
        return []
    req = fnv1.RunFunctionRequest.FromString(reconciled.request)
    # The service's namespace as the function reads it (a claim's, in the claims flavour).
    namespace = read_observed(req).namespace
    listings = fnv1.RunFunctionResponse()
    apply_composition(listings, Composition(requirements=catalog_requirements(namespace)))
    for name, items in resolve(listings.requirements, plan.world).items():
        if name in req.required_resources:
            continue  # fetched by the reconcile itself: exactly what it decided on
        req.required_resources[name].SetInParent()
        for item in items:
            req.required_resources[name].items.add().resource.update(item)
    try:
        return explain_template_choice(read_observed(req))
    except InvalidSpecError:
        return []  # the reconcile reported the spec already; there is no choice to explain
    except Exception as e:  # noqa: BLE001 - one service's explanation never ends the report
        return [Alternative(name="(not explained)", kind="", why=f"{type(e).__name__}: {e}")]
