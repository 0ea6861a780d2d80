"""aim-migrate on lists as kubectl writes them: a List's items convert as separate documents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from aim_migrate.cli import cli
from aim_migrate.manifests import MAX_DEPTH
from tests.cases import Case, table

OP1, OP2 = "aim.eai.amd.com/v1alpha1", "aim.eai.amd.com/v1alpha2"

TEMPLATE = {
    "apiVersion": OP1,
    "kind": "AIMServiceTemplate",
    "metadata": {"name": "t", "namespace": "ml"},
    "spec": {"modelName": "m", "metric": "throughput"},
}
CACHE = {
    "apiVersion": OP1,
    "kind": "AIMTemplateCache",
    "metadata": {"name": "c", "namespace": "ml"},
    "spec": {"templateName": "t"},
}
MODEL = {
    "apiVersion": OP2,
    "kind": "AIMClusterModel",
    "metadata": {"name": "tiny"},
    "spec": {"image": "amdenterpriseai/aim-tiny:0.1.0"},
}
PROFILE = {
    "apiVersion": OP2,
    "kind": "AIMClusterProfile",
    "metadata": {"name": "tiny-cpu"},
    "spec": {
        "aimId": "example/tiny",
        "image": "amdenterpriseai/aim-tiny:0.1.0",
        "acceleratorType": "cpu",
        "resources": {"requests": {"cpu": "4"}},
        "modelSources": [{"modelId": "example/tiny", "sourceUri": "hf://example/tiny"}],
    },
}
SERVICE_ITEM = {
    "metadata": {"name": "tiny", "namespace": "ml"},
    "spec": {"profile": {"name": "tiny-cpu"}, "caching": {"mode": "Shared"}},
}
"""An AIMService as the API server lists it in an AIMServiceList: no apiVersion nor kind."""


def listed(*items: Any, kind: str = "List", api_version: str = "v1") -> dict[str, Any]:
    """A list as `kubectl get -o yaml` writes one (`kind: List`), or a typed one."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"resourceVersion": ""},
        "items": list(items),
    }


def stream(*docs: Any) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


@dataclass(frozen=True)
class Listed(Case):
    text: str
    out: tuple[tuple[str, str], ...]
    """(kind, name) of each document written, in order."""
    exit_code: int = 0
    says: str = ""
    """What standard error must say."""
    spec: dict[str, Any] | None = None
    """The spec of the last document written, when it is checked."""


CASES = [
    Listed(
        "kubectl-list",
        "the papercut: `kubectl get a,b -o yaml` writes one `kind: List`, whose items were "
        "passed through unconverted with exit 0; each item converts as its own document would",
        stream(listed(TEMPLATE, CACHE)),
        (("AIMServiceTemplate", "t"), ("AIMTemplateCache", "c")),
        says="AIMTemplateCache/c",
    ),
    Listed(
        "typed-list-items-without-kind",
        "the API server leaves apiVersion and kind out of a typed list's items; kubectl gives "
        "them the list's apiVersion and its kind without List, and so does aim-migrate",
        stream(listed(SERVICE_ITEM, kind="AIMServiceList", api_version=OP2), MODEL, PROFILE),
        (
            ("AIMService", "tiny"),
            ("AIMClusterModel", "tiny"),
            ("AIMClusterServiceTemplate", "tiny-cpu"),
        ),
    ),
    Listed(
        "lists-refer-to-each-other",
        "the doc's two exports (cluster.yaml, ml-team.yaml) in one run: a service in one list "
        "finds its profile by name, and the profile its model by image, in another list",
        stream(
            listed(MODEL, PROFILE), listed(SERVICE_ITEM, kind="AIMServiceList", api_version=OP2)
        ),
        (
            ("AIMClusterModel", "tiny"),
            ("AIMClusterServiceTemplate", "tiny-cpu"),
            ("AIMService", "tiny"),
        ),
        spec={"model": {"ref": "tiny"}, "template": {"name": "tiny-cpu"}, "cacheModel": True},
    ),
    Listed(
        "list-among-documents",
        "a List between plain documents: the output keeps the order they were read in",
        stream(CACHE, listed(TEMPLATE), MODEL),
        (("AIMTemplateCache", "c"), ("AIMServiceTemplate", "t"), ("AIMClusterModel", "tiny")),
    ),
    Listed(
        "nested-list",
        "a list among a list's items stands for its own items, in place, as kubectl flattens it",
        stream(listed(CACHE, listed(TEMPLATE, MODEL), PROFILE)),
        (
            ("AIMTemplateCache", "c"),
            ("AIMServiceTemplate", "t"),
            ("AIMClusterModel", "tiny"),
            ("AIMClusterServiceTemplate", "tiny-cpu"),
        ),
    ),
    Listed(
        "item-keeps-its-own-kind",
        "only an item with neither apiVersion nor kind takes the list's: one that names its "
        "own (a List may hold any kind) keeps it",
        stream(listed(CACHE, kind="AIMServiceList", api_version=OP2)),
        (("AIMTemplateCache", "c"),),
    ),
    Listed(
        "empty-list",
        "`kubectl get` in a namespace with none writes an empty List: nothing to write, exit "
        "0, but the report says so rather than nothing",
        stream(listed()),
        (),
        says="(document 0): a List with no items",
    ),
    Listed(
        "null-items",
        "`items: null` (how Go writes an empty list) holds no items; not a refusal",
        stream({**listed(), "items": None}, TEMPLATE),
        (("AIMServiceTemplate", "t"),),
        says="(document 0): a List with no items",
    ),
    Listed(
        "kind-ending-in-list-without-items",
        "a kind that merely ends in List is an object of its own unless it has items (kubectl's "
        "rule too): passed through as any other object",
        stream({"apiVersion": "example.com/v1", "kind": "PlayList", "metadata": {"name": "p"}}),
        (("PlayList", "p"),),
    ),
    Listed(
        "items-not-a-list",
        "items that are a mapping are no list kubectl reads: refused in one line naming the "
        "document, exit 2, before anything is written",
        stream({**listed(), "items": {"a": 1}}),
        (),
        exit_code=2,
        says="(document 0): List's items is a mapping, not a list of objects",
    ),
    Listed(
        "item-not-a-mapping",
        "an item that is no object is refused naming the item, not passed on to the rules",
        stream(TEMPLATE, listed(CACHE, "oops")),
        (),
        exit_code=2,
        says="(document 1, items[1]): List's item is a string, not an object",
    ),
    Listed(
        "nested-item-with-a-bad-name",
        "an item's identity is checked as a document's is (a report quotes it), and named by "
        "its path through the lists",
        stream(listed(listed(CACHE, {**TEMPLATE, "metadata": {"name": 42}}))),
        (),
        exit_code=2,
        says="(document 0, items[0].items[1]): AIMServiceTemplate's metadata.name is a number",
    ),
    Listed(
        "list-levels-count-towards-the-nesting",
        "a List's levels count towards the nesting bound, as they do when the file is read: an "
        "item nested to the bound on its own is refused inside a List, never read past it",
        stream(listed({**CACHE, "spec": {"deep": _deep(MAX_DEPTH - 2)}})),
        (),
        exit_code=2,
        says="is nested deeper than",
    ),
]


@table(CASES)
def test_a_lists_items_convert_as_separate_documents(case: Listed, tmp_path: Path) -> None:
    """Each item of a List converts as if it were a document of the run; what no list kubectl
    reads holds is refused in one line naming the document and the item."""
    path = tmp_path / "exported.yaml"
    path.write_text(case.text)
    result = CliRunner().invoke(cli, [str(path)])
    assert result.exit_code == case.exit_code, (case.reason, result.stderr)
    assert case.says in result.stderr, (case.reason, result.stderr)
    out = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
    assert [(d["kind"], d["metadata"]["name"]) for d in out] == list(case.out), case.reason
    for doc in out:
        assert doc["apiVersion"] != "v1" or doc["kind"] != "List", case.reason
        if doc["kind"].startswith("AIM"):
            assert doc["apiVersion"] == "aim.silogen.ai/v1alpha1", case.reason
    if case.spec is not None:
        assert out[-1]["spec"] == case.spec, case.reason
    if case.exit_code == 2:
        assert result.stdout == "", case.reason
        assert len(result.stderr.strip().splitlines()) == 1, case.reason


def test_an_empty_list_is_not_mentioned_in_the_quiet_report(tmp_path: Path) -> None:
    """--quiet reports warnings and what was not carried only; an empty List is neither."""
    path = tmp_path / "empty.yaml"
    path.write_text(stream(listed()))
    result = CliRunner().invoke(cli, ["--quiet", str(path)])
    assert result.exit_code == 0
    assert result.stderr == ""
