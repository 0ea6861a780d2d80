"""The objects Crossplane core fetches for a function's requirements, from the plan's world.

Core 2.4 (`ExistingRequiredResourcesFetcher`) answers each `ResourceSelector` with one API call:
by `match_name` a GET of that name in the selector's namespace (none: the cluster scope), which
finds nothing when the object does not exist there; by `match_labels` a LIST in the selector's
namespace, or in every namespace when it names none. Either way the requirement's key is in the
next request, with no items when nothing matched: that is how the function tells "asked, none"
from "not asked yet".
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from aim_plan.load import Obj, key_of
from aim_plan.world import World
from function.kube.objects import labels_of


def selects(selector: fnv1.ResourceSelector, obj: Obj) -> bool:
    """Whether core's GET or LIST for `selector` returns `obj`."""
    api_version, kind, namespace, name = key_of(obj)
    if api_version != selector.api_version or kind != selector.kind:
        return False
    if selector.WhichOneof("match") == "match_name":
        # A GET: the name in exactly that namespace ("" is the cluster scope).
        return name == selector.match_name and namespace == selector.namespace
    if selector.namespace and namespace != selector.namespace:
        return False
    labels = labels_of(obj)
    return all(labels.get(k) == v for k, v in selector.match_labels.labels.items())


def resolve(requirements: fnv1.Requirements, world: World) -> dict[str, list[Obj]]:
    """Every requirement's key with the objects that match it (possibly none).

    Sorted by namespace and name, as core sorts what it lists. Only the objects of the
    selector's kind (and namespace, when it names one) are looked at: the world's index.
    """
    return {
        name: sorted(_candidates(selector, world), key=_place)
        for name, selector in sorted(requirements.resources.items())
    }


def _candidates(selector: fnv1.ResourceSelector, world: World) -> list[Obj]:
    if selector.WhichOneof("match") == "match_name":
        key = (selector.api_version, selector.kind, selector.namespace, selector.match_name)
        found = world.get(key)
        return [found] if found is not None and selects(selector, found) else []
    of_kind = world.of_kind(selector.api_version, selector.kind, selector.namespace or None)
    return [o for o in of_kind if selects(selector, o)]


def _place(obj: Obj) -> tuple[str, str]:
    _, _, namespace, name = key_of(obj)
    return (namespace, name)
