"""Whether a service serves LoRA adapters, and what it asks Crossplane for to stage them.

The namespace's model caches (an adapter is a cache of `type: adapter`) and the pods of its
staging Jobs, which report what each Job staged; and the labels of its adapter objects, by which
those pods are asked for.
"""

from __future__ import annotations

from typing import Final

from function.api.meta import Kind
from function.api.service import AdapterMode, AIMServiceSpec
from function.kube.contract import Observed, Requirement
from function.kube.lookup import Listing
from function.rules import labels

PODS: Final = "adapter-pods"


def enabled(spec: AIMServiceSpec) -> bool:
    """Whether the service serves adapters: it lists some, or can gain them (dynamic)."""
    return bool(spec.adapters) or spec.adapter_mode is AdapterMode.DYNAMIC


def caches(namespace: str) -> Listing:
    """The namespace's model caches, adapters among them."""
    # The same requirement as the service's model caches: Crossplane lists them once.
    return Listing("model-caches", Kind.MODEL_CACHE, namespace)


def requirements(spec: AIMServiceSpec, observed: Observed) -> list[Requirement]:
    """The namespace's model caches, and the pods of the service's staging Jobs.

    The pods are asked for by the labels every staging Job's pods carry, whichever Jobs
    exist: an old Job on its way out beside the new one must not hide the new one's verdict.
    """
    if not enabled(spec):
        return []
    pods = Requirement(
        PODS, "v1", "Pod", namespace=observed.namespace, match_labels=job_labels(observed)
    )
    return [caches(observed.namespace).requirement(), pods]


def labels_of_adapters(observed: Observed) -> dict[str, str]:
    """The labels of the service's adapter objects: its disk, and its staging Jobs."""
    return {
        **labels.MANAGED_BY,
        labels.SERVICE: labels.value(observed.name),
        "app.kubernetes.io/component": "adapters",
    }


def job_labels(observed: Observed) -> dict[str, str]:
    """The labels of the service's staging Jobs, which their pods carry too."""
    return {**labels_of_adapters(observed), "app.kubernetes.io/name": "aim-adapter-staging"}
