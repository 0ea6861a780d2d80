"""What every RunFunction response must satisfy, whatever the input: the fuzz tier's properties.

Each check returns the problems it found (empty: none), phrased so a failing example reads as a
bug report. The `restricted` Pod Security check lives in tests/podsecurity.py.

Requests carry drawn, hostile objects, and a composed object may keep what it observed: a check
reads every part of them through `_map` and `_list`, so a value that is not the map (or list) it
should be counts as absent, and the check judges the rest instead of failing on it.
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


def _map(value: Any) -> Mapping[str, Any]:
    """`value` where it is a map; an empty one where it is anything else."""
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    """`value` where it is a list; an empty one where it is anything else."""
    return value if isinstance(value, list) else []


def _at(value: Any, *keys: str) -> Any:
    """`value[k1][k2]...`, or None where a step is missing or no map."""
    for key in keys:
        value = _map(value).get(key)
    return value


def _resources(message: Mapping[str, Any], *where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each named resource of the map at `where` (`desired.resources`, `observed.resources`)."""
    for key, item in _map(_at(message, *where)).items():
        yield key, _map(_map(item).get("resource"))


def _messages(response: Mapping[str, Any], part: str) -> list[str]:
    """The messages of the response's conditions or results (`part`)."""
    said = [_map(c).get("message") for c in _list(response.get(part))]
    return [m for m in said if isinstance(m, str)]


def internal_errors(response: Mapping[str, Any]) -> list[str]:
    """Results that report a bug of ours rather than a problem with the input."""
    return [
        m for m in _messages(response, "results") if "internal error" in m or "this is a bug" in m
    ]


MAX_STATUS_BYTES: Final = 512 * 1024
"""A third of etcd's 1.5 MiB object limit: a status over that could not be written at all."""


def oversized_status(response: Mapping[str, Any]) -> list[str]:
    """An XR status too large to store, whatever the input."""
    status = _at(response, "desired", "composite", "resource", "status")
    size = len(json.dumps(status)) if status is not None else 0
    return [f"the XR status is {size} bytes"] if size > MAX_STATUS_BYTES else []


def bad_names(response: Mapping[str, Any]) -> list[str]:
    """Composed objects whose name, namespace or labels the API server would reject."""
    problems = []
    for key, obj in _resources(response, "desired", "resources"):
        kind, meta = str(obj.get("kind", "?")), _map(obj.get("metadata"))
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
        if namespace is not None and not (
            isinstance(namespace, str) and len(namespace) <= 63 and _DNS_LABEL.match(namespace)
        ):
            problems.append(f"{key} ({kind}): invalid namespace {namespace!r}")
        labels = meta.get("labels")
        if labels is not None and not isinstance(labels, Mapping):
            problems.append(f"{key} ({kind}): labels {labels!r} are no map")
        for label_key, value in _map(labels).items():
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
    for key, obj in _resources(response, "desired", "resources"):
        if obj.get("kind") == "PersistentVolumeClaim":
            name = _map(obj.get("spec")).get("storageClassName")
            problems += [f"{key}: {p}" for p in _name_problems("storageClassName", name)]
    return problems


def _pod_reference_problems(pod: Mapping[str, Any]) -> Iterator[str]:
    yield from _name_problems("serviceAccountName", pod.get("serviceAccountName"))
    for secret in _list(pod.get("imagePullSecrets")):
        yield from _name_problems("imagePullSecrets", _map(secret).get("name"))
    for volume in map(_map, _list(pod.get("volumes"))):
        yield from _name_problems("volume", volume.get("name"), label=True)
        claim = _at(volume, "persistentVolumeClaim", "claimName")
        yield from _name_problems("claimName", claim)
    for container in map(_map, _list(pod.get("containers"))):
        yield from _name_problems("container", container.get("name"), label=True)
        for env in _list(container.get("env")):
            name = _map(env).get("name")
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
    for key, obj in _resources(response, "desired", "resources"):
        spec = _map(obj.get("spec"))  # an object kept as observed may lack one (`state.keep`)
        if obj.get("kind") == "Job" and "template" in spec:
            yield key, _map(_at(spec, "template", "spec"))
        elif obj.get("kind") == "InferenceService" and "predictor" in spec:
            yield key, _map(spec["predictor"])


_USERINFO: Final = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*:)?//[^/?#\s\"'<>]*@")


def userinfo_in_messages(response: Mapping[str, Any]) -> list[str]:
    """Messages (conditions, results) that quote a URL with its userinfo: a token, as often."""
    said = _messages(response, "conditions") + _messages(response, "results")
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
    requirements = _map(_at(response, "requirements", "resources"))
    if cluster == bool(namespace):
        results = map(_map, _list(response.get("results")))
        fatal = [
            str(r.get("message", "")) for r in results if r.get("severity") == "SEVERITY_FATAL"
        ]
        problems = (
            []
            if any("metadata.namespace" in m for m in fatal)
            else [f"an XR of the wrong scope (namespace {namespace!r}) was not refused: {fatal}"]
        )
        if _map(_at(response, "desired", "resources")) or requirements:
            problems.append("an XR of the wrong scope composed or asked for objects")
        return problems
    if not cluster:
        return []
    return [
        f"a cluster-scoped XR asks for Secret {key} in namespace {r.get('namespace')!r}"
        for key, r in ((k, _map(v)) for k, v in requirements.items())
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
    for key, obj in _resources(response, "desired", "resources"):
        if not str(obj.get("apiVersion", "")).startswith(_RBAC + "/"):
            continue
        kind, namespace = obj.get("kind"), _at(obj, "metadata", "namespace")
        expected_subject = [{"kind": "ServiceAccount", "namespace": namespace}]
        # Subjects that are no list, or no maps, stay unlike the one expected: flagged.
        subjects = obj.get("subjects", [])
        if isinstance(subjects, list):
            subjects = [
                {k: v for k, v in s.items() if k in {"kind", "namespace"}}
                if isinstance(s, Mapping)
                else s
                for s in subjects
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
    for key, obj in _resources(response, "desired", "resources"):
        if obj.get("kind") != "HTTPRoute":
            continue
        for rule in _list(_at(obj, "spec", "rules")):
            for match in _list(_map(rule).get("matches")):
                if not isinstance(match, Mapping):
                    continue
                path = str(_map(_at(match, "path")).get("value", ""))
                segments = [s for s in path.split("/") if s]
                if not segments or segments[0] != namespace:
                    problems.append(f"{key} routes {path!r}, outside /{namespace}/")
    return problems


def _platform_route_policy(request: Mapping[str, Any]) -> bool:
    """Whether an AIMClusterRuntimeConfig in the request sets `spec.routing.policy`."""
    for answer in _map(request.get("requiredResources")).values():
        for item in _list(_map(answer).get("items")):
            obj = _map(_map(item).get("resource"))  # drawn: hostile, maybe no map anywhere
            if (
                obj.get("kind") == "AIMClusterRuntimeConfig"
                and _at(obj, "spec", "routing", "policy") is not None
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
    said = [_SLOT.search(m) for m in _messages(response, "conditions")]
    counts = [int(m.group(1)) for m in said if m is not None]
    if not counts:
        return []
    listed = _map(request.get("requiredResources"))
    uids = {
        _metadata(item).get("uid")
        for key in _SLOT_TEMPLATES
        for item in _list(_at(listed, key, "items"))
    }
    controllers = set()
    for item in _list(_at(listed, _SLOT_JOBS, "items")):
        for ref in map(_map, _list(_metadata(item).get("ownerReferences"))):
            if ref.get("controller") is True and ref.get("uid") in uids:
                controllers.add(ref.get("uid"))
    most = len(controllers)
    return [f"{n} discovery Jobs counted, but templates control {most}" for n in counts if n > most]


def _metadata(item: Any) -> Mapping[str, Any]:
    """A listed object's metadata, or {} where the drawn (hostile) object has none that is a map."""
    return _map(_at(item, "resource", "metadata"))


def cluster_models_the_platform_did_not_ask(
    request: Mapping[str, Any], response: Mapping[str, Any]
) -> list[str]:
    """New AIMClusterModels from an AIMClusterRuntimeConfig whose own scope is not Cluster.

    Cluster models are inspected with the system namespace's pull secrets: only the platform's
    config may ask for them, never a namespace's AIMRuntimeConfig; ones composed before are kept.
    """
    xr = _map(_at(request, "observed", "composite", "resource"))
    if xr.get("kind") != "AIMClusterRuntimeConfig":
        return []
    if _at(xr, "spec", "model", "creationScope") == "Cluster":
        return []
    had = set(_map(_at(request, "observed", "resources")))
    return [
        f"{key}: a new AIMClusterModel the platform's config did not ask for"
        for key, obj in _resources(response, "desired", "resources")
        if obj.get("kind") == "AIMClusterModel" and key not in had
    ]
