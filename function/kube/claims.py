"""The claims flavour: LegacyCluster composites (`XAIMService`) seen as the namespaced XRs.

With the `apiextensions.crossplane.io/v1` XRDs an application team creates a claim, say an
`AIMService` in its namespace, and Crossplane makes a cluster-scoped composite `XAIMService` named
after it with a random suffix, labelled with the claim's name and namespace. The function is
called with the composite; the composers know only the namespaced shape, so the composite is
shown to them as the claim the user wrote: kind without the `X`, the claim's name and namespace
(its UID stays the composite's). What is composed therefore lands in the claim's namespace under
the names the namespaced flavour gives it, and AIM objects a service composes (a model, a cache)
are claims themselves.

Everything else needs no translation: a claim has the kind, namespace, spec and (copied by
Crossplane) status of the namespaced XR, so lookups of namespaced AIM kinds find the claims, and
the owner references composed claims carry name their composites, as composed objects' do in the
other flavour. Cluster-scoped kinds (`AIMClusterModel`, ...) have no claims and are the same in
both flavours.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import JsonValue

from function.api.common import OBJECT_NAME_PATTERN
from function.api.definitions import DEFINITIONS, XrdDefinition
from function.api.meta import Manifest
from function.rules.naming import DNS_LABEL_MAX

COMPOSITE_PREFIX: Final = "X"
CLAIM_NAME_LABEL: Final = "crossplane.io/claim-name"
CLAIM_NAMESPACE_LABEL: Final = "crossplane.io/claim-namespace"

CLAIM_KINDS: Final = frozenset(d.kind.value for d in DEFINITIONS if d.scope == "Namespaced")
"""The kinds that are claims in the claims flavour (and namespaced XRs in the other)."""


def composite_names(d: XrdDefinition) -> tuple[str, str]:
    """(kind, plural) of a kind's composite in the claims flavour.

    `X`-prefixed where the namespaced kind becomes a claim; cluster-scoped kinds have no claims
    and keep theirs.
    """
    if d.scope == "Namespaced":
        return COMPOSITE_PREFIX + d.kind.value, COMPOSITE_PREFIX.lower() + d.plural
    return d.kind.value, d.plural


def claim_kind(composite_kind: str) -> str | None:
    """`AIMService` for `XAIMService`; None for any kind that is not a claim's composite."""
    kind = composite_kind.removeprefix(COMPOSITE_PREFIX)
    return kind if kind != composite_kind and kind in CLAIM_KINDS else None


def is_composite_of_claim(obj: Manifest) -> bool:
    """Whether `obj` is a LegacyCluster composite of one of the AIM claim kinds."""
    kind = obj.get("kind")
    return isinstance(kind, str) and claim_kind(kind) is not None


def claim_of(obj: Manifest) -> tuple[str, str] | None:
    """(namespace, name) of the claim a composite belongs to; None for one made without a claim.

    Crossplane labels the composite with both; `spec.claimRef` says the same. Values that are no
    namespace or object name count as none.
    """
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    namespace, name = labels.get(CLAIM_NAMESPACE_LABEL), labels.get(CLAIM_NAME_LABEL)
    if not (_valid(namespace, _NAMESPACE, DNS_LABEL_MAX) and _valid(name, _NAME, OBJECT_NAME_MAX)):
        spec = obj.get("spec")
        ref = spec.get("claimRef") if isinstance(spec, dict) else None
        ref = ref if isinstance(ref, dict) else {}
        namespace, name = ref.get("namespace"), ref.get("name")
    if _valid(namespace, _NAMESPACE, DNS_LABEL_MAX) and _valid(name, _NAME, OBJECT_NAME_MAX):
        return str(namespace), str(name)
    return None


# What Kubernetes accepts as a namespace and as an object name. Crossplane only ever copies real
# ones into the labels, but a composite applied by hand can carry anything there, and this is
# where composed objects would go.
_NAMESPACE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NAME: Final = re.compile(OBJECT_NAME_PATTERN.removeprefix("^").removesuffix("$"))
OBJECT_NAME_MAX: Final = 253


def _valid(value: object, pattern: re.Pattern[str], most: int) -> bool:
    return isinstance(value, str) and len(value) <= most and pattern.fullmatch(value) is not None


LEGACY_MACHINERY: Final = frozenset(
    {
        "claimRef",
        "compositionRef",
        "compositionRevisionRef",
        "compositionRevisionSelector",
        "compositionSelector",
        "compositionUpdatePolicy",
        "compositeDeletePolicy",
        "environmentConfigRefs",
        "publishConnectionDetailsTo",
        "resourceRef",
        "resourceRefs",
        "writeConnectionSecretToRef",
    }
)
"""Fields Crossplane adds to the spec of v1 composites and claims; not part of the AIM API."""


def as_claim(obj: Manifest) -> Manifest:
    """A claim's composite as the namespaced XR the composers know; any other object unchanged.

    Only the identity changes (kind, name, namespace); the UID stays the composite's, which is
    what composed objects' owner references name. A composite without a claim keeps its name and
    has no namespace, which the caller reports.
    """
    kind = obj.get("kind")
    claim = claim_kind(kind) if isinstance(kind, str) else None
    if claim is None:
        return obj
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    identity = claim_of(obj)
    if identity is not None:
        meta["namespace"], meta["name"] = identity
    view: dict[str, JsonValue] = {**obj, "kind": claim, "metadata": meta}
    return view


def strip_legacy_machinery(spec: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The spec without the fields Crossplane adds to v1 composites and claims."""
    return {k: v for k, v in spec.items() if k not in LEGACY_MACHINERY}
