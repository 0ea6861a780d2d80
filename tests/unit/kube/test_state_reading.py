"""Reading a request and writing a response: the fast paths must mean exactly the slow ones.

Required objects convert only when read, the templates of one model are picked out of the
catalog while still in protobuf, and a worker keeps converted objects between calls. Each of
these is a place where a composer could see something other than what Crossplane sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from function.api.meta import Manifest
from function.api.template import ServiceTemplateSpec
from function.kube.convert import (
    ObjectCache,
    RequiredObjects,
    required_where,
    struct_to_dict,
    update_struct,
)
from function.kube.parse import parse_spec
from function.kube.wire import read_observed
from tests.cases import table


def template(name: str, model: JsonValue, *, uid: str = "u1", version: str = "7") -> Manifest:
    """An AIMClusterServiceTemplate as the API server returns it."""
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": name, "uid": uid, "resourceVersion": version},
        "spec": {"modelName": model},
    }


def request(required: dict[str, list[Manifest]]) -> fnv1.RunFunctionRequest:
    """A request whose required resources are `required`."""
    req = fnv1.RunFunctionRequest()
    for name, items in required.items():
        req.required_resources[name].SetInParent()
        for item in items:
            req.required_resources[name].items.add().resource.update(item)
    return req


CATALOG: list[Manifest] = [
    template("a-1", "a"),
    template("b-1", "b"),
    template("a-2", "a"),
    {"kind": "Broken", "spec": "not an object"},
    {"kind": "Broken", "spec": {"modelName": 7}},
]


@dataclass(frozen=True)
class WhereCase:
    """One filter over the catalog, and the names it must return."""

    id: str
    reason: str
    path: tuple[str, ...]
    value: str
    names: list[str]


WHERE_CASES = [
    WhereCase(
        "match",
        "only the model's templates, in Crossplane's order",
        ("spec", "modelName"),
        "a",
        ["a-1", "a-2"],
    ),
    WhereCase(
        "none",
        "no template of that model is an empty answer, not a pending one",
        ("spec", "modelName"),
        "z",
        [],
    ),
    WhereCase(
        "not-an-object",
        "a path through a non-object matches nothing",
        ("spec", "modelName", "x"),
        "a",
        [],
    ),
    WhereCase("number", "only strings match: 7 is not '7'", ("spec", "modelName"), "7", []),
]


@table(WHERE_CASES)
def test_filtering_in_protobuf_agrees_with_filtering_dicts(case: WhereCase) -> None:
    """`where` on the request must pick what the same filter picks from converted objects."""
    req = request({"templates": CATALOG})
    lazy = RequiredObjects(req.required_resources)
    plain = {"templates": tuple(CATALOG)}
    from_protobuf = lazy.where("templates", case.path, case.value)
    from_dicts = required_where(plain, "templates", case.path, case.value)
    assert from_protobuf == from_dicts, case.reason
    assert [m["metadata"]["name"] for m in from_protobuf or ()] == case.names, case.reason  # type: ignore[index,call-overload]


def test_a_requirement_not_answered_yet_stays_apart_from_an_empty_one() -> None:
    """None (Crossplane has not fetched it) and () (it matched nothing) mean different things."""
    req = request({"empty": []})
    lazy = RequiredObjects(req.required_resources)
    assert lazy.get("missing") is None
    assert lazy.where("missing", ("spec", "modelName"), "a") is None
    assert lazy["empty"] == ()
    assert lazy.where("empty", ("spec", "modelName"), "a") == ()
    assert set(lazy) == {"empty"}


def test_reading_never_changes_the_request() -> None:
    """A protobuf map inserts a key on indexing; the filter must not add fields to what it read."""
    req = request({"templates": CATALOG})
    before = req.SerializeToString(deterministic=True)
    RequiredObjects(req.required_resources).where("templates", ("status", "nope", "x"), "a")
    assert req.SerializeToString(deterministic=True) == before


def test_the_lazy_view_shows_what_the_request_holds() -> None:
    """Read lazily or all at once, a composer sees the same objects."""
    req = request({"templates": CATALOG, "other": [template("o", "a")]})
    observed = read_observed(req, objects=ObjectCache())
    assert dict(observed.required) == {
        "templates": tuple(
            struct_to_dict(i.resource) for i in req.required_resources["templates"].items
        ),
        "other": (struct_to_dict(req.required_resources["other"].items[0].resource),),
    }


def test_the_cache_shares_only_identical_objects() -> None:
    """An object's metadata can claim anything: only equal content may share a converted copy."""
    cache = ObjectCache()
    first = request({"t": [template("a-1", "a")]}).required_resources["t"].items[0].resource
    again = request({"t": [template("a-1", "a")]}).required_resources["t"].items[0].resource
    # Same UID and resourceVersion, different content (render inputs, a hand-written test).
    liar = request({"t": [template("a-1", "b")]}).required_resources["t"].items[0].resource
    converted = cache.convert(first)
    assert cache.convert(again) is converted
    assert cache.convert(liar) == template("a-1", "b")


def test_the_cache_keeps_a_bounded_number_of_objects() -> None:
    """A worker's memory must not grow with every object it ever saw."""
    cache = ObjectCache(size=2)
    structs = [
        request({"t": [template(f"t-{i}", "a")]}).required_resources["t"].items[0].resource
        for i in range(3)
    ]
    oldest = cache.convert(structs[0])
    cache.convert(structs[1])
    cache.convert(structs[2])
    assert cache.convert(structs[0]) is not oldest  # evicted, so converted anew


def test_the_cache_keeps_a_bounded_number_of_bytes() -> None:
    """Many large objects make the cache forget sooner; its memory never grows past the bound."""
    structs = [
        request({"t": [template(f"t-{i}", "a" * 1000)]}).required_resources["t"].items[0].resource
        for i in range(3)
    ]
    one = len(structs[0].SerializeToString(deterministic=True))
    cache = ObjectCache(max_bytes=2 * one + one // 2)
    oldest = cache.convert(structs[0])
    second = cache.convert(structs[1])
    cache.convert(structs[2])
    assert cache.convert(structs[1]) is second  # still there
    assert cache.convert(structs[0]) is not oldest  # the oldest went to make room


def test_derived_values_are_remembered_only_for_the_cache_s_own_objects() -> None:
    """A dict made elsewhere can change between two reads, so nothing is remembered for it."""
    cache = ObjectCache()
    struct = request({"t": [template("a-1", "a")]}).required_resources["t"].items[0].resource
    owned = cache.convert(struct)
    calls: list[str] = []

    def compute() -> str:
        calls.append("x")
        return "value"

    cache.derived(owned, "k", compute)
    cache.derived(owned, "k", compute)
    foreign = dict(owned)
    cache.derived(foreign, "k", compute)
    cache.derived(foreign, "k", compute)
    assert calls == ["x", "x", "x"]


def test_a_parsed_spec_follows_the_object_not_its_name() -> None:
    """Two versions of one template parse to their own specs."""
    cache = ObjectCache()
    a = cache.convert(
        request({"t": [template("t", "a")]}).required_resources["t"].items[0].resource
    )
    b = cache.convert(
        request({"t": [template("t", "b")]}).required_resources["t"].items[0].resource
    )
    assert parse_spec(a, ServiceTemplateSpec).model_name == "a"
    assert parse_spec(b, ServiceTemplateSpec).model_name == "b"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.text(max_size=8)
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(
    before=st.dictionaries(st.text(max_size=4), json_values, max_size=4),
    update=st.dictionaries(st.text(max_size=4), json_values, max_size=4),
)
def test_writing_a_response_means_what_the_sdk_writer_means(
    before: dict[str, JsonValue], update: dict[str, JsonValue]
) -> None:
    """The fast writer replaces each top-level key exactly as protobuf's `Struct.update` does."""
    ours, theirs = struct_pb2.Struct(), struct_pb2.Struct()
    ours.update(before)
    theirs.update(before)
    update_struct(ours, update)
    theirs.update(update)
    assert ours == theirs
