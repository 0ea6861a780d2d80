"""What every RunFunction response must satisfy, whatever the input: the fuzz tier's properties.

Each check returns the problems it found (empty: none), phrased so a failing example reads as a
bug report. The `restricted` Pod Security check lives in tests/podsecurity.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

# Kubernetes' validation patterns (k8s.io/apimachinery/pkg/util/validation).
_DNS_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035: Final = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_LABEL_VALUE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

# Kinds whose name must be a DNS label: Jobs (the name becomes a Pod label value) and
# InferenceServices (KServe requires a DNS-1035 label, and adds `-predictor` to it).
_LABEL_NAMED: Final = frozenset({"Job"})
_DNS_1035_NAMED: Final = frozenset({"InferenceService"})


def internal_errors(response: Mapping[str, Any]) -> list[str]:
    """Results that report a bug of ours rather than a problem with the input."""
    return [
        r.get("message", "")
        for r in response.get("results", [])
        if "internal error" in r.get("message", "") or "this is a bug" in r.get("message", "")
    ]


MAX_STATUS_BYTES: Final = 512 * 1024
"""A third of etcd's 1.5 MiB object limit: a status over that could not be written at all."""


def oversized_status(response: Mapping[str, Any]) -> list[str]:
    """An XR status too large to store, whatever the input."""
    status = response.get("desired", {}).get("composite", {}).get("resource", {}).get("status")
    size = len(json.dumps(status)) if status is not None else 0
    return [f"the XR status is {size} bytes"] if size > MAX_STATUS_BYTES else []


def bad_names(response: Mapping[str, Any]) -> list[str]:
    """Composed objects whose name, namespace or labels the API server would reject."""
    problems = []
    for key, item in response.get("desired", {}).get("resources", {}).items():
        obj = item.get("resource", {})
        kind, meta = obj.get("kind", "?"), obj.get("metadata", {})
        name = meta.get("name")
        if not isinstance(name, str):
            problems.append(f"{key} ({kind}): no name")
            continue
        if kind in _DNS_1035_NAMED:
            ok = len(name) <= 63 and bool(_DNS_1035.match(name))
        elif kind in _LABEL_NAMED:
            ok = len(name) <= 63 and bool(_DNS_LABEL.match(name))
        else:
            ok = len(name) <= 253 and bool(_DNS_SUBDOMAIN.match(name))
        if not ok:
            problems.append(f"{key} ({kind}): invalid name {name!r}")
        namespace = meta.get("namespace")
        if namespace is not None and not (len(namespace) <= 63 and _DNS_LABEL.match(namespace)):
            problems.append(f"{key} ({kind}): invalid namespace {namespace!r}")
        for label_key, value in (meta.get("labels") or {}).items():
            problems += [f"{key} ({kind}): label {p}" for p in _label_problems(label_key, value)]
    return problems


def _label_problems(key: str, value: Any) -> Iterator[str]:
    prefix, _, name = key.rpartition("/")
    if prefix and not (len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix)):
        yield f"key {key!r} has an invalid prefix"
    if not (len(name) <= 63 and _LABEL_NAME.match(name)):
        yield f"key {key!r} has an invalid name"
    if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.match(value):
        yield f"{key}={value!r} is not a label value"


def bad_references(response: Mapping[str, Any]) -> list[str]:
    """Names inside composed pod specs and claims that the API server would reject."""
    problems = []
    for key, pod in pod_specs(response):
        problems += [f"{key}: {p}" for p in _pod_reference_problems(pod)]
    for key, item in response.get("desired", {}).get("resources", {}).items():
        obj = item.get("resource", {})
        if obj.get("kind") == "PersistentVolumeClaim":
            name = (obj.get("spec") or {}).get("storageClassName")
            problems += [f"{key}: {p}" for p in _name_problems("storageClassName", name)]
    return problems


def _pod_reference_problems(pod: Mapping[str, Any]) -> Iterator[str]:
    yield from _name_problems("serviceAccountName", pod.get("serviceAccountName"))
    for secret in pod.get("imagePullSecrets") or []:
        yield from _name_problems("imagePullSecrets", secret.get("name"))
    for volume in pod.get("volumes") or []:
        yield from _name_problems("volume", volume.get("name"), label=True)
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        yield from _name_problems("claimName", claim)
    for container in pod.get("containers") or []:
        yield from _name_problems("container", container.get("name"), label=True)
        for env in container.get("env") or []:
            name = env.get("name")
            if not isinstance(name, str) or not name or "=" in name:
                yield f"env name {name!r}"


def _name_problems(what: str, name: Any, *, label: bool = False) -> Iterator[str]:
    """A reference that is set but is no object name (or, with `label`, no DNS label)."""
    if name is None:
        return
    pattern, limit = (_DNS_LABEL, 63) if label else (_DNS_SUBDOMAIN, 253)
    if not (isinstance(name, str) and len(name) <= limit and pattern.match(name)):
        yield f"{what} {name!r} is not a valid name"


def pod_specs(response: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every pod spec we compose: Jobs' templates and InferenceServices' predictors."""
    for key, item in response.get("desired", {}).get("resources", {}).items():
        obj = item.get("resource", {})
        spec = obj.get("spec") or {}  # an object kept as observed may lack one (`state.keep`)
        if obj.get("kind") == "Job" and "template" in spec:
            yield key, spec["template"].get("spec") or {}
        elif obj.get("kind") == "InferenceService" and "predictor" in spec:
            yield key, spec["predictor"]


_USERINFO: Final = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*:)?//[^/?#\s\"'<>]*@")


def userinfo_in_messages(response: Mapping[str, Any]) -> list[str]:
    """Messages (conditions, results) that quote a URL with its userinfo: a token, as often."""
    said = [c.get("message", "") for c in response.get("conditions", [])]
    said += [r.get("message", "") for r in response.get("results", [])]
    return [f"a URL with its userinfo in: {m[:200]}" for m in said if _USERINFO.search(m)]


def leaked(secrets: Iterator[str] | list[str], *texts: str) -> list[str]:
    """Secret values that appear in any of `texts`."""
    return sorted({s for s in secrets for t in texts if s and s in t})


def scope_problems(
    response: Mapping[str, Any], *, cluster: bool, namespace: str | None, system_namespace: str
) -> list[str]:
    """The XR's kind, not its metadata, decides whose objects it may read.

    An XR whose namespace contradicts its kind's scope must be refused with a fatal result naming
    metadata.namespace, composing and asking for nothing; a cluster-scoped XR may read Secrets only
    in the function's system namespace, never in a team's.
    """
    requirements = response.get("requirements", {}).get("resources", {})
    if cluster == bool(namespace):
        fatal = [
            r.get("message", "")
            for r in response.get("results", [])
            if r.get("severity") == "SEVERITY_FATAL"
        ]
        problems = (
            []
            if any("metadata.namespace" in m for m in fatal)
            else [f"an XR of the wrong scope (namespace {namespace!r}) was not refused: {fatal}"]
        )
        if response.get("desired", {}).get("resources") or requirements:
            problems.append("an XR of the wrong scope composed or asked for objects")
        return problems
    if not cluster:
        return []
    return [
        f"a cluster-scoped XR asks for Secret {key} in namespace {r.get('namespace')!r}"
        for key, r in requirements.items()
        if r.get("kind") == "Secret" and r.get("namespace") != system_namespace
    ]


_RBAC: Final = "rbac.authorization.k8s.io"
DOWNLOAD_PROGRESS_ROLE: Final = "aim-crossplane:download-progress"


def rbac_problems(response: Mapping[str, Any]) -> list[str]:
    """RBAC objects beyond the one shape a download's report needs.

    Crossplane may bind package/rbac's download-progress ClusterRole, in the binding's namespace,
    to one ServiceAccount of that namespace; any other Role, ClusterRole or binding composed would
    hand out what Crossplane holds.
    """
    problems = []
    for key, item in response.get("desired", {}).get("resources", {}).items():
        obj = item.get("resource", {})
        if not str(obj.get("apiVersion", "")).startswith(_RBAC + "/"):
            continue
        kind, namespace = obj.get("kind"), obj.get("metadata", {}).get("namespace")
        expected_subject = [{"kind": "ServiceAccount", "namespace": namespace}]
        subjects = [
            {k: v for k, v in s.items() if k in {"kind", "namespace"}}
            for s in obj.get("subjects", [])
        ]
        if (
            kind != "RoleBinding"
            or obj.get("roleRef")
            != {"apiGroup": _RBAC, "kind": "ClusterRole", "name": DOWNLOAD_PROGRESS_ROLE}
            or subjects != expected_subject
        ):
            problems.append(f"{key} composes {kind} {json.dumps(obj, sort_keys=True)[:300]}")
    return problems


def routes_outside_the_namespace(
    request: Mapping[str, Any], response: Mapping[str, Any], namespace: str | None
) -> list[str]:
    """HTTPRoute paths outside `/<namespace>/`, the default route policy, where no platform
    policy widens it.

    Only the platform's AIMClusterRuntimeConfig can set `spec.routing.policy`: where the request
    carries one that does, another prefix may be right and nothing is checked. Paths are compared
    by whole segments, so `/team-a` does not cover `/team-ab`.
    """
    if not namespace or _platform_route_policy(request):
        return []
    problems = []
    for key, item in response.get("desired", {}).get("resources", {}).items():
        obj = item.get("resource", {})
        if obj.get("kind") != "HTTPRoute":
            continue
        for rule in (obj.get("spec") or {}).get("rules", []):
            for match in rule.get("matches", []):
                path = str((match.get("path") or {}).get("value", ""))
                segments = [s for s in path.split("/") if s]
                if not segments or segments[0] != namespace:
                    problems.append(f"{key} routes {path!r}, outside /{namespace}/")
    return problems


def _platform_route_policy(request: Mapping[str, Any]) -> bool:
    """Whether an AIMClusterRuntimeConfig in the request sets `spec.routing.policy`."""
    for answer in request.get("requiredResources", {}).values():
        for item in answer.get("items", []):
            obj = item.get("resource", {})
            spec = obj.get("spec")  # drawn: hostile, maybe no map
            routing = spec.get("routing") if isinstance(spec, dict) else None
            if (
                obj.get("kind") == "AIMClusterRuntimeConfig"
                and isinstance(routing, dict)
                and routing.get("policy") is not None
            ):
                return True
    return False


_SLOT: Final = re.compile(r"waiting for a discovery slot: (\d+) of at most")
_SLOT_JOBS: Final = "discovery-slots-jobs"
_SLOT_TEMPLATES: Final = ("discovery-queue-templates", "discovery-queue-cluster-templates")


def foreign_jobs_counted(request: Mapping[str, Any], response: Mapping[str, Any]) -> list[str]:
    """A discovery-slot count above the listed Jobs a listed template controls.

    Anyone can label a Job as a discovery Job; only those a template of ours composed (its
    controller reference names a listed template) may take a slot, one per template.
    """
    said = [_SLOT.search(c.get("message", "")) for c in response.get("conditions", [])]
    counts = [int(m.group(1)) for m in said if m is not None]
    if not counts:
        return []
    listed = request.get("requiredResources", {})
    uids = {
        _metadata(item).get("uid")
        for key in _SLOT_TEMPLATES
        for item in listed.get(key, {}).get("items", [])
    }
    controllers = set()
    for item in listed.get(_SLOT_JOBS, {}).get("items", []):
        refs = _metadata(item).get("ownerReferences")
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, dict) and ref.get("controller") is True and ref.get("uid") in uids:
                controllers.add(ref.get("uid"))
    most = len(controllers)
    return [f"{n} discovery Jobs counted, but templates control {most}" for n in counts if n > most]


def _metadata(item: Any) -> dict[str, Any]:
    """A listed object's metadata, or {} where the drawn (hostile) object has none that is a map."""
    resource = item.get("resource") if isinstance(item, dict) else None
    meta = resource.get("metadata") if isinstance(resource, dict) else None
    return meta if isinstance(meta, dict) else {}


def cluster_models_the_platform_did_not_ask(
    request: Mapping[str, Any], response: Mapping[str, Any]
) -> list[str]:
    """New AIMClusterModels from an AIMClusterRuntimeConfig whose own scope is not Cluster.

    Cluster models are inspected with the system namespace's pull secrets: only the platform's
    config may ask for them, never a namespace's AIMRuntimeConfig; ones composed before are kept.
    """
    xr = request.get("observed", {}).get("composite", {}).get("resource", {})
    if xr.get("kind") != "AIMClusterRuntimeConfig":
        return []
    model = (xr.get("spec") or {}).get("model") if isinstance(xr.get("spec"), dict) else None
    if isinstance(model, dict) and model.get("creationScope") == "Cluster":
        return []
    had = set(request.get("observed", {}).get("resources", {}))
    return [
        f"{key}: a new AIMClusterModel the platform's config did not ask for"
        for key, item in response.get("desired", {}).get("resources", {}).items()
        if item.get("resource", {}).get("kind") == "AIMClusterModel" and key not in had
    ]
