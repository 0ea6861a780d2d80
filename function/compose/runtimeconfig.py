"""AIMRuntimeConfig / AIMClusterRuntimeConfig: read by the other composers, composing nothing.

Their Compositions still call the function, so each reconcile checks the spec (a bad one is a
fatal result naming the field) and returns an empty desired state; Crossplane then reports the
config Synced and Ready.
"""

from __future__ import annotations

from function.api.meta import Kind
from function.api.runtimeconfig import ClusterRuntimeConfigSpec, RuntimeConfigSpec
from function.kube.observed import Composition, Observed, parse_spec

RUNTIME_CONFIG_KINDS = frozenset({Kind.RUNTIME_CONFIG, Kind.CLUSTER_RUNTIME_CONFIG})


def compose_runtime_config(observed: Observed) -> Composition:
    """Validate a runtime config; it composes nothing."""
    namespaced = observed.kind == Kind.RUNTIME_CONFIG
    parse_spec(observed.composite, RuntimeConfigSpec if namespaced else ClusterRuntimeConfigSpec)
    return Composition()
