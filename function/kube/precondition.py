"""When the XR's status write may carry the resourceVersion the call observed.

Crossplane core reads the XR from its informer cache, asks the function, then server-side applies
the function's status *together with the conditions of the copy it read*, and only then writes the
function's conditions with an update (core 2.3 and 2.4, `FunctionComposer.Compose`). A reconcile
that reads a copy older than the XR's last write therefore puts old conditions back, the update
puts the new ones back, and each of the two writes wakes a reconcile that may again read a stale
copy: on a busy control plane the XR is rewritten for as long as the cache lags
(crossplane/crossplane#7062).

Core applies the desired composite's metadata with its status, so the function can make that
apply conditional: with `metadata.resourceVersion` set to the version the call observed, the API
server refuses (409 Conflict) an apply based on a stale copy, and core answers a conflict by
requeueing the XR with no write and no event. The next reconcile reads the fresh copy, whose
conditions are already the function's, and writes nothing.

The precondition is only safe when nothing else writes the XR between the call and the status
apply. Within one reconcile core does exactly one such write: it applies the XR's resource
references (`spec.crossplane.resourceRefs`, or `spec.resourceRefs` for a LegacyCluster XR) just
before the status, and that apply changes the XR whenever the set of composed resources changes.
So the precondition is set only when the references core will write are the ones the XR already
holds; otherwise the status apply stays unconditional (as without this module), which happens
while the XR composes something new, never at rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.contract import Observed
from function.kube.objects import metadata_of

_VERSION_MAX: Final = 64
"""A resourceVersion is an opaque string the API server makes (etcd's revision, a few digits);
anything longer did not come from it and is not echoed."""

Ref = tuple[str, str, str, str]
"""(apiVersion, kind, name, namespace), as core writes a resource reference."""
Identity = tuple[str | None, str | None, str | None, str | None]
"""A desired resource's apiVersion, kind, name and namespace as the response gives them (None
where absent or not a string)."""
_REF_KEYS: Final = frozenset({"apiVersion", "kind", "name", "namespace"})
_LEGACY_MACHINERY: Final = ("compositionRef", "compositionRevisionRef", "resourceRefs")
"""Where core keeps its own fields: under `spec.crossplane` for a v2 XR, at the top of `spec` for
a LegacyCluster one; core has set the composition before it calls the function."""


def status_precondition(observed: Observed, desired: Mapping[str, Identity]) -> str | None:
    """The resourceVersion the status apply may require, or None to leave it unconditional.

    `desired` is every resource of the response, by its name in the composition. A claim's
    composite is cluster-scoped, so its references carry namespaces even though composers see it
    as the namespaced claim.
    """
    version = observed.metadata.get("resourceVersion")
    if not isinstance(version, str) or not 0 < len(version) <= _VERSION_MAX:
        return None
    spec = observed.composite.get("spec")
    stored = refs_of(spec) if isinstance(spec, dict) else None
    if stored is None:
        return None
    namespaced = bool(observed.namespace) and not observed.claims
    written = refs_core_writes(desired, observed.resources, namespaced=namespaced)
    if written is None or observed_refs(stored[0]) != written:
        return None
    return version


def refs_core_writes(
    desired: Mapping[str, Identity], existing: Mapping[str, Manifest], *, namespaced: bool
) -> list[Ref] | None:
    """The references core will write for `desired`, in its order; None if it names one itself.

    Core references every desired resource by apiVersion, kind, name and (for a cluster-scoped
    XR) namespace, sorted by their concatenation; a resource it composed already keeps the name
    and namespace it has (`existing`, by name in the composition). A new resource without a name
    gets one from core (generateName), which cannot be known here.
    """
    refs: list[Ref] = []
    for key, (api_version, kind, desired_name, desired_namespace) in desired.items():
        name, namespace = desired_name, desired_namespace
        found = existing.get(key)
        if found is not None:
            meta = metadata_of(found)
            kept_name, kept_namespace = meta.get("name"), meta.get("namespace")
            name = kept_name if isinstance(kept_name, str) else None
            namespace = kept_namespace if isinstance(kept_namespace, str) else None
        if api_version is None or kind is None or not name:
            return None
        refs.append((api_version, kind, name, "" if namespaced else namespace or ""))
    return sorted(refs, key="".join)


def observed_refs(refs: JsonValue) -> list[Ref] | None:
    """The XR's references in their stored order; None when one is not what core writes."""
    if refs is None:
        return []
    if not isinstance(refs, list):
        return None
    out: list[Ref] = []
    for ref in refs:
        if not isinstance(ref, dict) or not set(ref) <= _REF_KEYS:
            return None  # core replaces the list with exactly these keys: a write
        fields = [ref.get(k, "") for k in ("apiVersion", "kind", "name", "namespace")]
        if not all(isinstance(f, str) for f in fields):
            return None
        api_version, kind, name, namespace = (str(f) for f in fields)
        out.append((api_version, kind, name, namespace))
    return out


def refs_of(spec: Mapping[str, JsonValue]) -> tuple[JsonValue] | None:
    """An XR's stored resource references, as a 1-tuple (they may be absent: `(None,)`).

    Under `spec.crossplane` for a v2 XR, at the top of `spec` for a LegacyCluster one; None when
    neither place holds core's fields, so where core keeps them cannot be told.
    """
    crossplane = spec.get("crossplane")
    if isinstance(crossplane, dict) and any(k in crossplane for k in _LEGACY_MACHINERY):
        return (crossplane.get("resourceRefs"),)
    if any(k in spec for k in _LEGACY_MACHINERY):
        return (spec.get("resourceRefs"),)
    return None
