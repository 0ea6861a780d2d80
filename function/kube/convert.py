"""Between protobuf and plain values, fast.

Structs to dicts and back, and required objects converted only when a composer reads them, once
per worker for each version of an object.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from pydantic import JsonValue

from function.api.meta import Manifest

T = TypeVar("T")

FieldPath = tuple[str, ...]


class RequiredObjects(Mapping[str, tuple[Manifest, ...]]):
    """The resolved requirements of a request, converted from protobuf only when read.

    A service's call carries the whole template catalog and reads a few of its entries, and
    converting every object was most of a call's time (benchmarks/run_function.py). Each item
    converts at most once however often and through whichever method it is read.
    """

    def __init__(
        self, resolved: Mapping[str, fnv1.Resources], objects: ObjectCache | None = None
    ) -> None:
        """Wrap the request's `required_resources` (they must outlive this view)."""
        self._resolved = resolved
        self._objects = objects
        self._converted: dict[tuple[str, int], Manifest] = {}

    def __getitem__(self, name: str) -> tuple[Manifest, ...]:
        """Every object fetched for requirement `name`."""
        if name not in self._resolved:
            raise KeyError(name)
        return tuple(self._item(name, i) for i in range(len(self._resolved[name].items)))

    def __iter__(self) -> Iterator[str]:
        """The names Crossplane answered."""
        return iter(self._resolved)

    def __len__(self) -> int:
        """How many requirements Crossplane answered."""
        return len(self._resolved)

    def where(self, name: str, path: FieldPath, value: str) -> tuple[Manifest, ...] | None:
        """The objects of requirement `name` whose string field at `path` equals `value`.

        Matching reads the protobuf directly, so the objects that do not match are never
        converted. None when Crossplane has not answered `name` yet.
        """
        if name not in self._resolved:
            return None
        items = self._resolved[name].items
        return tuple(
            self._item(name, i) for i, item in enumerate(items) if _string_at(item, path) == value
        )

    def _item(self, name: str, index: int) -> Manifest:
        key = (name, index)
        converted = self._converted.get(key)
        if converted is None:
            struct = self._resolved[name].items[index].resource
            converted = self._objects.convert(struct) if self._objects else struct_to_dict(struct)
            self._converted[key] = converted
        return converted


class ObjectCache:
    """Objects converted (and parsed) by earlier calls, by exact content, LRU-bounded.

    A service's call carries the template catalog, and the same templates come in every call of
    every service: a worker converts and parses each version of one once. The key is the
    object's deterministic protobuf encoding, so two objects share an entry only when they are
    identical, whatever their metadata claims. The dicts are shared between calls: composers
    never modify what they observe, and parsed models are frozen.
    """

    def __init__(self, size: int = 4096, max_bytes: int = 64 << 20) -> None:
        """Keep at most `size` objects, and at most `max_bytes` of them in protobuf form.

        Both bounds hold whatever the objects are: a user who creates many large AIM objects
        makes the cache forget sooner, never grow past them.
        """
        self._size = size
        self._max_bytes = max_bytes
        self._bytes = 0
        self._objects: OrderedDict[bytes, Manifest] = OrderedDict()
        self._derived: dict[int, dict[str, object]] = {}
        """By the id of a dict in `_objects` (only those: a dict made elsewhere may change)."""

    def convert(self, struct: struct_pb2.Struct) -> Manifest:
        """`struct_to_dict(struct)`, from the cache when the same object was converted before."""
        key = struct.SerializeToString(deterministic=True)
        found = self._objects.get(key)
        if found is not None:
            self._objects.move_to_end(key)
            return found
        converted = struct_to_dict(struct)
        if len(key) > self._max_bytes:
            return converted
        self._objects[key] = converted
        self._derived[id(converted)] = {}
        self._bytes += len(key)
        while len(self._objects) > self._size or self._bytes > self._max_bytes:
            dropped_key, dropped = self._objects.popitem(last=False)
            self._bytes -= len(dropped_key)
            del self._derived[id(dropped)]
        return converted

    def derived(self, manifest: Manifest, key: str, compute: Callable[[], T]) -> T:
        """`compute()`: a value of `manifest` alone (its parsed spec, say), computed once.

        Once per object this cache handed out, that is; for any other dict, on every call.
        """
        derived = self._derived.get(id(manifest))
        if derived is None:
            return compute()
        if key not in derived:
            derived[key] = compute()
        return cast("T", derived[key])


OBJECTS = ObjectCache()
"""This process's cache: each worker (or the server with --workers 0) has its own."""


def _string_at(item: fnv1.Resource, path: FieldPath) -> str | None:
    # `get`, never `[]`: indexing a protobuf map inserts the missing key into the request.
    fields = item.resource.fields
    for key in path[:-1]:
        value = fields.get(key)
        if value is None or not value.HasField("struct_value"):
            return None
        fields = value.struct_value.fields
    value = fields.get(path[-1])
    return value.string_value if value is not None and value.HasField("string_value") else None


def required_where(
    required: Mapping[str, tuple[Manifest, ...]], name: str, path: FieldPath, value: str
) -> tuple[Manifest, ...] | None:
    """`RequiredObjects.where` for any mapping of required objects (tests build plain dicts)."""
    if isinstance(required, RequiredObjects):
        return required.where(name, path, value)
    items = required.get(name)
    if items is None:
        return None
    return tuple(m for m in items if _plain_string_at(m, path) == value)


def _plain_string_at(manifest: Manifest, path: FieldPath) -> str | None:
    node: JsonValue = manifest
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, str) else None


def struct_to_dict(struct: struct_pb2.Struct) -> Manifest:
    """A protobuf Struct as plain Python values, with whole numbers as ints.

    The SDK's converter goes through protobuf's generic JSON printer; with a catalog of templates
    in the request that was two thirds of a call's time, and this direct walk is several times
    faster (see benchmarks/run_function.py). Keys come out sorted: protobuf map order can differ
    between two parses of the same bytes, and every message that follows dict order (the first
    of several spec errors, say) must come out the same.
    """
    return {key: _value(struct.fields[key]) for key in sorted(struct.fields)}


def _value(v: struct_pb2.Value) -> JsonValue:
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return struct_to_dict(v.struct_value)
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        number = v.number_value
        return int(number) if number.is_integer() else number
    if kind == "bool_value":
        return v.bool_value
    return None


def update_struct(struct: struct_pb2.Struct, manifest: Manifest) -> None:
    """`struct.update(manifest)` (each top-level key replaced), in a third less time.

    Writing the response was a tenth of a call with the generic writer; this one tests the
    common types first and never clears what it has just created.
    """
    fields = struct.fields
    for key, value in manifest.items():
        target = fields[key]
        target.Clear()
        _set(target, value)


def _set(target: struct_pb2.Value, value: JsonValue) -> None:
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, dict):
        struct = target.struct_value
        struct.SetInParent()
        fields = struct.fields
        for key, item in value.items():
            _set(fields[key], item)
    elif isinstance(value, bool):  # before numbers: a bool is an int too
        target.bool_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    elif isinstance(value, list):
        values = target.list_value
        values.SetInParent()
        for item in value:
            _set(values.values.add(), item)
    elif value is None:
        target.null_value = struct_pb2.NULL_VALUE
    else:
        msg = f"cannot write {type(value).__name__} into a protobuf Struct"
        raise TypeError(msg)
