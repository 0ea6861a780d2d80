"""Read the manifests a plan starts from: files and directories, within bounds.

Directories are read in sorted file order, as the journeys are applied (`01-...`, `02-...`), and
a later document replaces an earlier one of the same kind, namespace and name, as a second
`kubectl apply` would. What a plan cannot use is listed with the reason, never dropped silently.

Files are read as `scripts/migrate` reads them, within the bounds of `aim_migrate.manifests`
(size, nesting the function can receive, values with aliases expanded, string length, JSON
values only), so a hostile or mistaken file costs a one-line error instead of a stall or a
traceback. Error messages name the file, the document and the field; they quote a user's text
cut short, and never a Secret's values.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aim_migrate.convert import ConverterFailedError, convert
from aim_migrate.manifests import QUOTED, UnreadableError, a, cut, objects_of, read_path
from aim_migrate.operator import OPERATOR_GROUP
from aim_plan.views import mapping_at, meta_text, text_at
from function.api.definitions import DEFINITIONS
from function.api.meta import GROUP
from function.kube.claims import composite_names
from function.kube.views import field_at

SUFFIXES: Final = (".yaml", ".yml")
_SAID: Final = 3
"""What the converter could not carry, quoted in the one line that stops a plan (the rest is
counted: scripts/migrate lists it all)."""

AIM_KINDS: Final = frozenset(
    {d.kind.value for d in DEFINITIONS} | {composite_names(d)[0] for d in DEFINITIONS}
)
"""The kinds the function composes: the XRs, and the claims flavour's `XAIM...` composites."""
CLUSTER_SCOPED: Final = frozenset(
    {d.kind.value for d in DEFINITIONS if d.scope == "Cluster"}
    | {composite_names(d)[0] for d in DEFINITIONS}
    | {"Namespace", "Node"}
)
CORE_KINDS: Final = frozenset({"Secret", "ServiceAccount", "Namespace", "Node"})
"""The Kubernetes objects the function reads that a user's manifests may hold."""

Obj = dict[str, Any]
"""An object as YAML or JSON gave it: the plan's boundary type, read through `aim_plan.views`."""


class LoadError(ValueError):
    """A manifest a plan cannot read; the message names the file, the document and the fix."""


@dataclass(frozen=True)
class Ignored:
    """A document the plan does not use, and why."""

    source: str
    what: str
    why: str


@dataclass
class Loaded:
    """The objects a plan starts from, in the order they were read, and what it left out."""

    objects: list[Obj] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One per object converted from an older API with aim-migrate, with the converter's
    warnings."""


def files_of(paths: Sequence[Path]) -> list[Path]:
    """Every manifest file named or under a named directory, directories' files sorted.

    Raises:
        LoadError: a path does not exist, or a directory holds no manifest.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            if not inside:
                msg = f"{path}: a directory with no *.yaml or *.yml file; name manifest files"
                raise LoadError(msg)
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            msg = f"{path}: no such file or directory"
            raise LoadError(msg)
    return found


def load(paths: Sequence[Path]) -> Loaded:
    """Read every manifest of `paths` (files, or directories of *.yaml / *.yml).

    Raises:
        LoadError: a file is missing, too large, not YAML, too deep, or holds a document that is
            no Kubernetes object.
    """
    loaded = Loaded(files=files_of(paths))
    read: list[tuple[str, Obj]] = []
    for path in loaded.files:
        try:
            docs = read_path(path)
        except UnreadableError as e:
            raise LoadError(str(e)) from None
        for index, doc in enumerate(docs):
            # A List (what `kubectl get -o yaml` writes) stands for its items, as with kubectl.
            try:
                objects = objects_of(str(path), index, doc)
            except UnreadableError as e:
                raise LoadError(str(e)) from None
            read.extend((where, _object(obj, where)) for where, obj in objects)
    by_key: dict[tuple[str, str, str, str], int] = {}
    for where, doc in _converted(read, loaded.notes):
        _default_namespace(doc)
        reason = ignored_because(doc)
        if reason is not None:
            loaded.ignored.append(Ignored(where, describe(doc), reason))
            continue
        obj = as_stored(doc)
        key = key_of(obj)
        if key in by_key:  # applied again: the later document wins, as with kubectl apply
            loaded.objects[by_key[key]] = obj
        else:
            by_key[key] = len(loaded.objects)
            loaded.objects.append(obj)
    return loaded


def as_stored(obj: Obj) -> Obj:
    """`obj` as the API server stores it: a Secret's `stringData` folded into base64 `data`.

    The function reads `data` (a pull secret's `.dockerconfigjson`), and a live Secret has no
    `stringData` to compare with, so a manifest that writes it must read as what it becomes.
    """
    plain = field_at(obj, "stringData")
    if key_of(obj)[:2] != ("v1", "Secret") or not isinstance(plain, dict):
        return obj
    data = dict(mapping_at(obj, "data"))
    data.update({str(k): base64.b64encode(str(v).encode()).decode() for k, v in plain.items()})
    return {**{k: v for k, v in obj.items() if k != "stringData"}, "data": data}


def key_of(obj: Obj) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name): how the plan's world keys an object."""
    return (
        text_at(obj, "apiVersion"),
        text_at(obj, "kind"),
        meta_text(obj, "namespace"),
        meta_text(obj, "name"),
    )


def describe(obj: Obj) -> str:
    """`Kind namespace/name`, or `Kind name` for a cluster-scoped object."""
    _, kind, namespace, name = key_of(obj)
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def is_aim(obj: Obj) -> bool:
    """Whether the plan composes `obj`: an AIM kind of this API's served version."""
    api_version, kind, _, _ = key_of(obj)
    return api_version == f"{GROUP}/v1alpha1" and kind in AIM_KINDS


def ignored_because(obj: Obj) -> str | None:
    """Why the plan leaves `obj` out, or None when it is planned or read."""
    api_version, kind, _, _ = key_of(obj)
    group = _group(obj)
    if is_aim(obj):
        return None
    if api_version == "v1" and kind in CORE_KINDS:
        return None
    if group in {GROUP, OPERATOR_GROUP}:
        return (
            f"{kind} of {api_version} is neither this API ({GROUP}/v1alpha1) nor a kind "
            "aim-migrate converts: the plan neither creates nor reads it"
        )
    return (
        "not an AIM kind nor an object the function reads (Secret, ServiceAccount, Namespace, "
        "Node): the plan neither creates nor reads it"
    )


def _converted(read: list[tuple[str, Obj]], notes: list[str]) -> list[tuple[str, Obj]]:
    """The documents with those of an older AIM API converted, as `scripts/migrate` would.

    Every AIM document of either group, this API's current ones included, goes through one run
    of the converter (models are found by image and profiles by name across them); one it
    leaves as it is (a current one) stays as read, its status too. A converted one gets a note;
    one the converter cannot carry over stops the plan with the converter's words, as
    `scripts/migrate` would ask for a review.

    Raises:
        LoadError: the converter cannot carry a document over, or failed on one.
    """
    aim_docs = [i for i, (_, obj) in enumerate(read) if _group(obj) in {GROUP, OPERATOR_GROUP}]
    try:
        migrations = convert([read[i][1] for i in aim_docs])
    except ConverterFailedError as e:
        msg = f"{read[aim_docs[e.index]][0]}: {e}; or leave the document out"
        raise LoadError(msg) from None
    out = list(read)
    for i, m in zip(aim_docs, migrations, strict=True):
        where, obj = read[i]
        if not m.dropped and m.manifest == {k: v for k, v in obj.items() if k != "status"}:
            continue  # this API already: planned as written
        if m.not_carried or not isinstance(m.manifest, dict):
            said = m.not_carried[:_SAID] or ["left out"]
            more = len(m.not_carried) - len(said)
            msg = (
                f"{where}: aim-migrate cannot carry {m.source} over: "
                + "; ".join(said)
                + (f"; and {more} more" if more > 0 else "")
                + "; fix the manifest (scripts/migrate prints the whole report) or leave it out"
            )
            raise LoadError(msg)
        out[i] = (where, m.manifest)
        warned = "".join(f"; warning: {w}" for w in m.warnings)
        notes.append(
            f"{where}: {describe(m.manifest)} converted from {' '.join(key_of(obj)[:2])} "
            f"with aim-migrate (scripts/migrate writes the converted manifests){warned}"
        )
    return out


def _group(obj: Obj) -> str:
    api_version = text_at(obj, "apiVersion")
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _default_namespace(obj: Obj) -> None:
    """A namespaced object given no namespace lands in `default`, as with kubectl apply."""
    _, kind, namespace, _ = key_of(obj)
    # Unset, null or empty: kubectl reads each as the default namespace.
    if ignored_because(obj) is None and kind not in CLUSTER_SCOPED and not namespace:
        obj["metadata"]["namespace"] = "default"


def _object(doc: object, where: str) -> Obj:
    """The document as an object, checked to be one."""
    if not isinstance(doc, dict):
        msg = f"{where}: is a {type(doc).__name__}, not a Kubernetes object (a mapping)"
        raise LoadError(msg)
    obj: Obj = doc
    # apiVersion, kind, metadata.name and namespace are strings as Kubernetes writes them: the
    # reader checked them, so what is not one here is absent.
    api_version, kind, _, name = key_of(obj)
    if not api_version or not kind:
        msg = f"{where}: has no apiVersion or no kind; every Kubernetes object names both"
        raise LoadError(msg)
    if not isinstance(field_at(obj, "metadata"), dict) or not name:
        msg = f"{where}: {kind} has no metadata.name; give it one"
        raise LoadError(msg)
    for key in ("labels", "annotations"):
        _check_strings(field_at(obj, "metadata", key), f"{where}: {kind}'s metadata.{key}")
    return obj


def _check_strings(value: object, what: str) -> None:
    """Refuse labels or annotations that are not a mapping of strings to strings (None: none).

    The function and the plan read them as such (a selector's labels, an annotation's value), as
    the API server would have refused them.
    """
    if value is None:
        return
    if not isinstance(value, dict):
        msg = f"{what} is {a(value)}, not a mapping of strings; write KEY: VALUE lines"
        raise LoadError(msg)
    for key, item in value.items():  # keys are strings: the reader refuses others
        # Name the key (cut), never the value, which may be a Secret's.
        if not isinstance(item, str):
            msg = (
                f"{what}[{cut(key, QUOTED)}] is {a(item)}, not a string; quote the value if YAML "
                "reads it as a number, a boolean or null"
            )
            raise LoadError(msg)
