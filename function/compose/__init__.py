"""Composers, one per AIM kind, and the table `fn.py` dispatches through."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from function.api.meta import Kind
from function.compose.cache import compose_model_cache, compose_template_cache
from function.compose.model import compose_model
from function.compose.modelsource import compose_model_source
from function.compose.runtimeconfig import compose_runtime_config
from function.compose.service import compose_service
from function.compose.template import compose_template
from function.kube.contract import AskRegistry, Composition, Observed


class Composer(Protocol):
    """A pure function from what Crossplane observed to what should exist.

    It may raise `function.errors.FunctionError` for input it cannot compose at all; every other
    outcome, including user mistakes it can describe in status, is part of the `Composition`.
    A composer that needs data from outside the cluster asks the registry (`AskRegistry`) when
    `Observed` does not hold the answer yet: a model its image's labels (`Inspect`), a model
    source a registry's repositories (`ListRegistry`).
    """

    def __call__(self, observed: Observed, /) -> Composition | AskRegistry:
        """Decide the desired state for one XR."""
        ...


COMPOSERS: Mapping[str, Composer] = MappingProxyType(
    {
        Kind.SERVICE: compose_service,
        Kind.MODEL: compose_model,
        Kind.CLUSTER_MODEL: compose_model,
        Kind.CLUSTER_MODEL_SOURCE: compose_model_source,
        Kind.SERVICE_TEMPLATE: compose_template,
        Kind.CLUSTER_SERVICE_TEMPLATE: compose_template,
        Kind.TEMPLATE_CACHE: compose_template_cache,
        Kind.MODEL_CACHE: compose_model_cache,
        Kind.RUNTIME_CONFIG: compose_runtime_config,
        Kind.CLUSTER_RUNTIME_CONFIG: compose_runtime_config,
    }
)
