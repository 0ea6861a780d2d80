"""Hypothesis strategies for what reaches RunFunction: AIM objects and the cluster around them.

Three sources, mixed in every example:
- the XRDs' own OpenAPI schemas (`from_schema`), so specs and statuses look like what the API
  server admits, with a vocabulary of realistic names so lookups find what they ask for;
- the kinds the composers read from the cluster (Pods, Jobs, Secrets, Nodes, PVCs, KServe and
  Gateway objects), shaped as their controllers write them;
- `hostile`: what an attacker or a careless user puts anywhere (wrong types, huge and deeply
  nested values, unicode, numbers out of every range, malformed termination messages, image
  labels and pull secrets), applied to any path of a document by `mutated`.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml
from hypothesis import strategies as st

from tests.simulated import DRY_RUN_RESULT

ROOT: Final = Path(__file__).resolve().parents[2]
SECRET_MARK: Final = "S3cr3t-"  # noqa: S105 - a marker to search for, not a password
"""Every password and token a strategy makes starts with this, so leaks can be searched for."""

NAMES: Final = ("m", "default", "qwen3-32b", "t", "llama-3.1-8b", "x", "aim-system", "a" * 70)
REFERENCES: Final = ("m", "t", "default")
_READY: Final = frozenset({"Ready", "Available", "Running", "True", "Bound"})
IMAGES: Final = (
    "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5",
    "ghcr.io/org/img@sha256:" + "a" * 64,
    "private.registry/team/model:1",
    "Not An Image",
    "docker.io/library/x:" + "t" * 200,
)
NAMESPACES: Final = ("ml-team", "aim-system", "n" * 63)
TIMES: Final = (
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00",  # no zone
    "2026-01-01T05:00:00+05:00",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00+14:00",
    "yesterday",
    "",
)
GPU_DEVICE_IDS: Final = ("74a1", "74a9", "74b5", "7408", "0x740f", "ffff", "", "名前")

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values: Final = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = 1) -> Any:
    """Lists and objects alternating `depth` levels deep."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


@cache
def hostile() -> st.SearchStrategy[Any]:
    """A value nobody should have written where it is found."""
    return st.one_of(
        json_values,
        # Deeper objects cannot travel: protobuf decoders (Crossplane's and ours) stop at 100
        # levels, two per JSON level. Deep JSON inside strings is drawn elsewhere.
        st.integers(1, 25).map(nested),
        st.sampled_from(["", " ", "\x00", "ä" * 300, "名前", "../../etc", "a/b/c", "A" * 70000]),
        st.sampled_from(["1e400", "1e9999999", "-1", "9" * 5000, "0x10", "Infinity", "NaN"]),
        st.sampled_from([0, -1, 2**31, 2**53, 2**63, 1e308, -1e308, 0.5]),
        st.text(min_size=1, max_size=300),
    )


def mutated(base: st.SearchStrategy[Any], most: int = 3) -> st.SearchStrategy[Any]:
    """`base`, with up to `most` of its values replaced by hostile ones, at any depth."""

    @st.composite
    def mutate(draw: st.DrawFn) -> Any:
        doc = copy.deepcopy(draw(base))  # `st.just` hands out one object: never change it
        # Places of the drawn document only: a hostile value is never nested into another.
        places = list(_places(doc))
        # Half the documents are left as drawn, so some objects are usable as they are.
        for _ in range(draw(st.one_of(st.just(0), st.integers(1, most))) if places else 0):
            container, key = draw(st.sampled_from(places))
            container[key] = draw(hostile())
        return doc

    return mutate()


def _places(doc: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield doc, key
            yield from _places(value)
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield doc, index
            yield from _places(value)


# --- from the XRDs ---------------------------------------------------------------------------


@cache
def xrds() -> Mapping[str, Mapping[str, Any]]:
    """Every generated XRD, by the kind it defines."""
    found = {}
    for path in sorted((ROOT / "xrds").glob("*.yaml")):
        xrd = yaml.safe_load(path.read_text())
        found[xrd["spec"]["names"]["kind"]] = xrd
    return found


def is_cluster_scoped(kind: str) -> bool:
    """Whether the XRD makes a cluster-scoped kind."""
    return bool(xrds()[kind]["spec"].get("scope") == "Cluster")


def schema_of(kind: str, part: str) -> Mapping[str, Any]:
    """The OpenAPI schema of `spec` or `status` of an AIM kind."""
    root = xrds()[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema: Mapping[str, Any] = root["properties"].get(part, {"type": "object"})
    return schema


def from_schema(schema: Mapping[str, Any], name: str = "") -> st.SearchStrategy[Any]:
    """Values `schema` admits (CEL rules aside), favouring names and images that resolve."""
    if schema.get("x-kubernetes-int-or-string") or "anyOf" in schema:
        return st.one_of(
            st.integers(0, 2**40),
            st.sampled_from(["16Gi", "512M", "1", "0.5", "100m", "1e3"]),
            # What the quantity pattern admits but no disk or GPU has.
            st.sampled_from(["1e400", "1e9999999", "9" * 40, "8Ei", ".5e-99999", "0e99999999"]),
        )
    if "enum" in schema:
        good = [v for v in schema["enum"] if v in _READY]
        # Ready objects half the time, so the objects that wait for them get further.
        return st.one_of(st.sampled_from(good or schema["enum"]), st.sampled_from(schema["enum"]))
    low, high = schema.get("minimum"), schema.get("maximum")
    builders: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
        "object": lambda: _object(schema, name),
        "array": lambda: _array(schema, name),
        "string": lambda: _string(schema, name),
        "integer": lambda: st.integers(
            -(2**31) if low is None else low, 2**31 if high is None else high
        ),
        "number": lambda: st.floats(low, high, allow_nan=False, allow_infinity=False),
        "boolean": st.booleans,
    }
    build = builders.get(str(schema.get("type")))
    # Anything else is x-kubernetes-preserve-unknown-fields: any JSON.
    return json_values if build is None else build()


def _array(schema: Mapping[str, Any], name: str) -> st.SearchStrategy[Any]:
    items = from_schema(schema.get("items", {}), name)
    low = schema.get("minItems", 0)
    return st.lists(items, min_size=low, max_size=max(low, min(schema.get("maxItems", 3), 3)))


def _object(schema: Mapping[str, Any], name: str) -> st.SearchStrategy[Any]:
    properties = schema.get("properties")
    if properties is None:
        values = from_schema(schema.get("additionalProperties", {}), name)
        if schema.get("additionalProperties") is None:
            values = json_values
        return st.dictionaries(st.sampled_from(["a", "b/c", "KEY", "x.y"]), values, max_size=3)
    required = set(schema.get("required", ()))
    optional = {k: from_schema(v, k) for k, v in properties.items() if k not in required}
    fields = {k: from_schema(v, k) for k, v in properties.items() if k in required}
    one_of = _exactly_one(schema)
    if not one_of:
        return st.fixed_dictionaries(fields, optional=optional)
    # The XRD admits exactly one of these: draw which, so most objects get past admission's rule.
    rest = {k: v for k, v in optional.items() if k not in one_of}
    return st.sampled_from(one_of).flatmap(
        lambda chosen: st.fixed_dictionaries({**fields, chosen: optional[chosen]}, optional=rest)
    )


def _exactly_one(schema: Mapping[str, Any]) -> list[str]:
    for rule in schema.get("x-kubernetes-validations", ()):
        message = rule.get("message", "")
        if message.startswith(("set exactly one of ", "set at least one of ")):
            listed = message.split(" of ", 1)[1].replace(" or ", ", ").split(", ")
            return [name.rsplit(".", 1)[-1] for name in listed]
    return []


def _string(schema: Mapping[str, Any], name: str) -> st.SearchStrategy[str]:
    longest = schema.get("maxLength", 2048)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: len(s) <= longest)
    if "image" in name.lower():
        return st.sampled_from(IMAGES)
    if name.lower().endswith("uri"):
        return st.sampled_from(["hf://Org/Small", "s3://bucket/key", "hf://x", "ftp://no"])
    low = schema.get("minLength", 0)
    if name in {"name", "ref"} or name.endswith("Name"):
        # A small vocabulary, so what one object names, another object is often called.
        return st.one_of(
            st.sampled_from(REFERENCES), st.text(min_size=low, max_size=min(longest, 70))
        )
    return st.one_of(
        st.sampled_from([n for n in NAMES if low <= len(n) <= longest] or ["x" * max(low, 1)]),
        st.text(min_size=low, max_size=min(longest, 40)),
    )


# --- metadata ---------------------------------------------------------------------------------

dns_names: Final = st.one_of(
    st.sampled_from(NAMES[:-1]),
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True),
    st.integers(60, 253).map(lambda n: "a" * n),
    st.just("a.b-c." + "d" * 200),
)
"""Names the API server accepts for most objects (DNS subdomains)."""

uids: Final = st.uuids().map(str)


def metadata(
    name: str | st.SearchStrategy[str] = dns_names,
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Object metadata as the API server returns it."""
    name_st = st.just(name) if isinstance(name, str) else name
    meta: dict[str, Any] = {
        "name": name_st,
        "uid": uids,
        "generation": st.integers(1, 2**31),
        "labels": st.just(dict(labels or {})),
    }
    if namespace is not None:
        meta["namespace"] = st.just(namespace)
    return st.fixed_dictionaries(meta, optional={"ownerReferences": st.lists(_owner(), max_size=2)})


def _owner() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just("aim.silogen.ai/v1alpha1"),
            "kind": st.sampled_from(["AIMService", "AIMModel", "AIMTemplateCache"]),
            "name": st.sampled_from(NAMES),
            "uid": uids,
        },
        optional={"controller": st.booleans()},
    )


def aim_object(kind: str, meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """An AIM object of `kind` with a spec and a status from its XRD, either possibly mutated.

    The identity (apiVersion, kind, metadata) is left alone: the API server vouches for it.
    """
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just("aim.silogen.ai/v1alpha1"),
            "kind": st.just(kind),
            "metadata": meta,
            "spec": _part(kind, "spec"),
        },
        optional={"status": _part(kind, "status")},
    )


def claim_labels(namespace: str, name: str) -> st.SearchStrategy[dict[str, Any] | None]:
    """The claim labels of the composite Crossplane makes for the claim `namespace/name`; or
    none (a composite applied by hand), or label values that name no namespace or object."""
    real = {"crossplane.io/claim-name": name, "crossplane.io/claim-namespace": namespace}
    odd = st.fixed_dictionaries(
        {
            "crossplane.io/claim-name": st.sampled_from([name, "", "Chat_1", "a" * 63]),
            "crossplane.io/claim-namespace": st.sampled_from([namespace, "", "Team_A", "x.y"]),
        }
    )
    return st.one_of(st.just(real), st.none(), odd)


def as_composite(claim: dict[str, Any], labels: dict[str, Any] | None) -> dict[str, Any]:
    """The cluster-scoped composite of the claims flavour for the claim `claim`: `X` kind, a
    generated name, no namespace, the claim labels, Crossplane's claimRef."""
    meta = dict(claim["metadata"])
    namespace, name = meta.pop("namespace", ""), str(meta["name"])
    meta["name"] = f"{name[:57]}-x7k2p"
    meta["labels"] = {**(meta.get("labels") or {}), **(labels or {})}
    spec = claim.get("spec")
    if isinstance(spec, dict) and labels is not None:
        ref = {"apiVersion": claim["apiVersion"], "kind": claim["kind"]}
        spec = {**spec, "claimRef": {**ref, "name": name, "namespace": namespace}}
    return {**claim, "kind": f"X{claim['kind']}", "metadata": meta, "spec": spec}


@cache
def _part(kind: str, part: str) -> st.SearchStrategy[Any]:
    # Built once per kind: building and resolving a strategy tree costs more than drawing.
    return mutated(from_schema(schema_of(kind, part)))


# --- the cluster around an XR -------------------------------------------------------------


def _accelerator_schema() -> Any:
    """DRY_RUN_RESULT as newer AIM images print it: accelerator_* instead of gpu and gpu_count."""
    result: Any = json.loads(json.dumps(DRY_RUN_RESULT))
    metadata = result[0]["profile"]["metadata"]
    metadata["accelerator_model"] = metadata.pop("gpu")
    metadata["accelerator_count"] = metadata.pop("gpu_count")
    metadata.update(accelerator_type="gpu", manual_selection_only=False, features=["adapters"])
    return result


@cache
def termination_messages() -> st.SearchStrategy[str]:
    """What a container may leave in its termination message, good and bad."""
    good = st.just(json.dumps(DRY_RUN_RESULT))
    return st.one_of(
        good,
        mutated(st.just(json.loads(json.dumps(DRY_RUN_RESULT)))).map(json.dumps),
        # Newer images' schema: accelerator_* fields, mutated into wrong types and sizes.
        mutated(st.just(_accelerator_schema())).map(json.dumps),
        st.integers(1, 2**52).map(lambda n: json.dumps({"sizeBytes": n})),
        st.sampled_from(
            [
                "[]" * 2048,  # quadratic for a naive scanner
                "[" * 4096,
                "{" * 2000 + "}" * 2000,
                '{"sizeBytes": ' + "9" * 5000 + "}",
                '{"sizeBytes": 1e400}',
                '[{"models": [{"source": "hf://a/b", "size_gb": 1e308}]}]',
                '[{"models": [{"source": "hf://a/b", "size_gb": NaN}]}]',
                '[{"models": [{"name": "../../x", "source": "hf://a/b"}]}]',
                '{"aimDiscoveryOutputBytes": {"a": 1}}',
                "INFO starting [x]\n" + json.dumps(DRY_RUN_RESULT) + "\nINFO done [1]",
                "Traceback (most recent call last):",
            ]
        ),
        st.integers(1, 300).map(lambda d: json.dumps(nested(d))),
        st.text(max_size=200),
    )


def pods(meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """Pods as the kubelet reports them, with termination messages and waiting reasons."""
    return mutated(
        st.fixed_dictionaries(
            {
                "apiVersion": st.just("v1"),
                "kind": st.just("Pod"),
                "metadata": meta,
                "status": _pod_status(),
            }
        ),
        most=1,
    )


@cache
def _pod_status() -> st.SearchStrategy[Any]:
    state = st.one_of(
        st.fixed_dictionaries(
            {
                "terminated": st.fixed_dictionaries(
                    {"exitCode": st.integers(0, 255), "message": termination_messages()}
                )
            }
        ),
        st.fixed_dictionaries(
            {
                "waiting": st.fixed_dictionaries(
                    {
                        "reason": st.sampled_from(
                            ["ImagePullBackOff", "ErrImagePull", "ContainerCreating"]
                        ),
                        "message": st.text(max_size=50),
                    }
                )
            }
        ),
    )
    return st.fixed_dictionaries(
        {
            "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
            "containerStatuses": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(
                            ["discovery", "download", "size-check", "kserve-container"]
                        ),
                        "state": state,
                    }
                ),
                max_size=2,
            ),
        }
    )


def conditions(types: tuple[str, ...]) -> st.SearchStrategy[list[Any]]:
    """Kubernetes conditions of the given types, with times good and bad."""
    return st.lists(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(types),
                "status": st.sampled_from(["True", "False", "Unknown"]),
                "lastTransitionTime": st.sampled_from(TIMES),
            },
            optional={"reason": st.text(max_size=20), "message": st.text(max_size=80)},
        ),
        max_size=3,
    )


@cache
def pull_secret_data() -> st.SearchStrategy[tuple[dict[str, Any], list[str]]]:
    """A `.dockerconfigjson` value and the secret values in it (to search responses for)."""

    @st.composite
    def make(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
        password = SECRET_MARK + draw(st.text("0123456789abcdef", min_size=8, max_size=16))
        user = draw(st.sampled_from(["robot", "ä-user", "u"]))
        auth = base64.b64encode(f"{user}:{password}".encode()).decode()
        registry = draw(
            st.sampled_from(["private.registry", "ghcr.io", "https://index.docker.io/v1/"])
        )
        entry = draw(
            st.sampled_from(
                [
                    {"auth": auth},
                    {"username": user, "password": password},
                    {"auth": "nön-ascii-" + password},
                    {"auth": base64.b64encode(password.encode()).decode()},  # no colon
                ]
            )
        )
        config = draw(
            st.sampled_from(
                [
                    json.dumps({"auths": {registry: entry}}),
                    json.dumps({"auths": nested(300, entry)}),
                    json.dumps({"auths": {registry: entry}, "n": int("9" * 100)}),
                    "{" * 3000,
                    password,
                ]
            )
        )
        encoded = base64.b64encode(config.encode()).decode()
        data = draw(
            st.sampled_from(
                [{".dockerconfigjson": encoded}, {".dockerconfigjson": "%%" + password}, {}]
            )
        )
        return data, [password, auth, encoded]

    return make()


def nodes(meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """Nodes with AMD GPU labels, real and garbled."""
    labels = st.dictionaries(
        st.sampled_from(
            [
                "amd.com/gpu.device-id",
                "beta.amd.com/gpu.device-id",
                "amd.com/gpu.device-id.74a1",
                "amd.com/gpu.family",
                "amd.com/gpu.vram",
                "kubernetes.io/hostname",
            ]
        ),
        st.one_of(
            st.sampled_from(GPU_DEVICE_IDS), st.sampled_from(["1", "0", "AI", "MI300X", "192G"])
        ),
        max_size=4,
    )

    @st.composite
    def make(draw: st.DrawFn) -> Any:
        node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": draw(meta)}
        node["metadata"]["labels"] = draw(labels)
        node["status"] = {
            "capacity": {"amd.com/gpu": draw(st.sampled_from(["8", "0", "x", "1e400"]))}
        }
        return node

    return make()


ObjectMaker = Callable[[str, st.SearchStrategy[dict[str, Any]]], st.SearchStrategy[Any]]


def _plain(
    api_version: str,
    kind: str,
    status: st.SearchStrategy[Any],
    spec: st.SearchStrategy[Any] | None = None,
) -> ObjectMaker:
    def make(_: str, meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
        fields = {
            "apiVersion": st.just(api_version),
            "kind": st.just(kind),
            "metadata": meta,
            "status": status,
        }
        if spec is not None:
            fields["spec"] = spec
        return mutated(st.fixed_dictionaries(fields), most=1)

    return make


STATUSES: Final[Mapping[str, ObjectMaker]] = {
    "Job": _plain(
        "batch/v1",
        "Job",
        st.fixed_dictionaries({"conditions": conditions(("Complete", "Failed", "Suspended"))}),
    ),
    "PersistentVolumeClaim": _plain(
        "v1",
        "PersistentVolumeClaim",
        st.fixed_dictionaries(
            {
                "phase": st.sampled_from(["Pending", "Bound", "Lost", "?"]),
                "capacity": st.fixed_dictionaries(
                    {"storage": st.sampled_from(["10Gi", "1e400", "x"])}
                ),
            }
        ),
    ),
    "InferenceService": _plain(
        "serving.kserve.io/v1beta1",
        "InferenceService",
        st.fixed_dictionaries(
            {"conditions": conditions(("Ready", "PredictorReady")), "url": st.text(max_size=30)}
        ),
    ),
    "HTTPRoute": _plain(
        "gateway.networking.k8s.io/v1",
        "HTTPRoute",
        st.fixed_dictionaries(
            {
                "parents": st.lists(
                    st.fixed_dictionaries({"conditions": conditions(("Accepted", "ResolvedRefs"))}),
                    max_size=2,
                )
            }
        ),
    ),
    "Pod": lambda _, meta: pods(meta),
    "Node": lambda _, meta: nodes(meta),
}
"""How each non-AIM kind the composers read is made (AIM kinds come from their XRDs)."""


def cluster_object(kind: str, meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """An object of `kind` as the API server would return it (AIM kinds from their XRDs)."""
    if kind in xrds():
        return aim_object(kind, meta)
    if kind == "Secret":
        return secrets(meta).map(lambda pair: pair[0])
    maker = STATUSES.get(kind)
    if maker is None:
        return st.fixed_dictionaries(
            {"apiVersion": st.just("v1"), "kind": st.just(kind), "metadata": meta}
        )
    return maker(kind, meta)


def secrets(meta: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[tuple[Any, list[str]]]:
    """A pull secret and the secret values in it."""

    @st.composite
    def make(draw: st.DrawFn) -> tuple[Any, list[str]]:
        data, values = draw(pull_secret_data())
        kind = draw(st.sampled_from(["kubernetes.io/dockerconfigjson", "Opaque", 7]))
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": draw(meta),
            "type": kind,
            "data": data,
        }, values

    return make()


@cache
def image_labels() -> st.SearchStrategy[dict[str, str]]:
    """An AIM image's labels as its registry serves them, good and bad."""
    deployments = st.one_of(
        st.just('[{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]'),
        st.just("{'gpuModel': 'MI325X', 'gpuCount': 8}"),
        st.sampled_from(
            [
                "[" + "9" * 5000 + "]",
                "[1e400]",
                json.dumps(nested(400)),
                '[{"gpuModel": "' + "X" * 70000 + '"}]',
                '[{"gpuModel": "MI300X", "gpuCount": -1}]',
                "not json",
                "",
            ]
        ),
        json_values.map(json.dumps),
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "com.amd.aim.model.recommendedDeployments": deployments,
            "org.amd.silogen.model.deployments": deployments,
            "com.amd.aim.model.canonicalName": st.one_of(
                st.just("Org/Small"), st.text(max_size=300), st.just("x" * 300_000)
            ),
            "com.amd.aim.model.tags": st.one_of(
                st.text(max_size=100), st.just(",".join(["tag"] * 100_000))
            ),
            "com.amd.aim.hfToken.required": st.sampled_from(["true", "no", "ä"]),
            "org.opencontainers.image.title": st.text(max_size=300),
        },
    )


# --- seeds: the examples' coherent worlds --------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """An example's XR, the objects around it and its composed objects by resource name."""

    xr: Any
    world: tuple[Any, ...]
    observed: Mapping[str, Any]


@cache
def seeds(kind: str) -> tuple[Seed, ...]:
    """The examples/ scenarios whose XR is of `kind`: worlds where every lookup finds something."""
    found = []
    for xr_path in sorted((ROOT / "examples").glob("*/xr.yaml")):
        xr = yaml.safe_load(xr_path.read_text())
        if xr.get("kind") != kind:
            continue
        world = _documents(xr_path.parent / "required.yaml")
        observed = {
            o["metadata"]["annotations"]["crossplane.io/composition-resource-name"]: o
            for o in _documents(xr_path.parent / "observed.yaml")
        }
        found.append(Seed(xr, world, observed))
    return tuple(found)


def _documents(path: Path) -> tuple[Any, ...]:
    if not path.exists():
        return ()
    return tuple(d for d in yaml.safe_load_all(path.read_text()) if d)


def seeded(seed: Seed) -> st.SearchStrategy[Seed]:
    """`seed` with a few of its values made hostile (its names left alone, so lookups match)."""
    return st.builds(
        Seed,
        xr=_lightly(seed.xr),
        world=st.tuples(*(_lightly(o) for o in seed.world)),
        # What the function composed was admitted by the API server: only its status is anyone's.
        observed=st.fixed_dictionaries(
            {k: _lightly(v, ("status",)) for k, v in seed.observed.items()}
        ),
    )


def _lightly(
    obj: Any, parts: tuple[str, ...] = ("spec", "status", "data")
) -> st.SearchStrategy[Any]:
    mutable = {k: mutated(st.just(v), most=1) for k, v in obj.items() if k in parts}
    return st.fixed_dictionaries({**{k: st.just(v) for k, v in obj.items()}, **mutable})
