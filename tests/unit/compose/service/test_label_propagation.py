"""Label propagation: the labels a runtime config's `labelPropagation` selects on an AIM object
reach what it composes (and a Job's pods), never replacing a composed object's own labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format

from function.api.meta import Manifest
from function.compose.cache import compose_template_cache
from function.compose.service import compose_service
from function.kube.contract import Composition, Desired, Observed
from function.kube.wire import apply_composition
from function.rules import labels
from tests.cases import Case, table
from tests.unit import loop
from tests.unit.compose.service.test_compose_service import NS, WORLD, config, service

LABELS = {
    "team.example.com/owner": "alice",
    "team.example.com/sub/part": "x",
    "other.io/owner": "bob",
    "cost-center": "42",
    "tier": "gold",
}


@dataclass(frozen=True)
class GlobCase(Case):
    patterns: tuple[str, ...]
    selected: frozenset[str]


GLOB_CASES = [
    GlobCase("prefix", "a domain's labels, and no other domain's", ("team.example.com/*",),
             frozenset({"team.example.com/owner"})),
    GlobCase("star-stops-at-slash", "`*` never crosses `/`, as in Go's filepath.Match: only "
             "unprefixed keys, and not a deeper path", ("*",), frozenset({"cost-center", "tier"})),
    GlobCase("question-mark", "`?` is one character", ("tie?",), frozenset({"tier"})),
    GlobCase("exact", "a key without wildcards is itself", ("other.io/owner",),
             frozenset({"other.io/owner"})),
    GlobCase("dot-is-literal", "pattern characters other than * and ? match themselves",
             ("team-example-com/*",), frozenset()),
    GlobCase("several", "any pattern selects", ("cost-center", "other.io/*"),
             frozenset({"cost-center", "other.io/owner"})),
]  # fmt: skip


@dataclass(frozen=True)
class MatchCase(Case):
    pattern: str
    key: str
    matches: bool


MATCH_CASES = [
    MatchCase("stars-between", "several stars each take what they need",
              "a*b*c", "aXXbYc", matches=True),
    MatchCase("star-takes-nothing", "a star may match the empty run",
              "abc*", "abc", matches=True),
    MatchCase("backtracks-to-last-star", "a first guess that fails is retried further on",
              "*ab", "aab", matches=True),
    MatchCase("question-not-slash", "`?` never matches the prefix separator",
              "a?c", "a/c", matches=False),
    MatchCase("segments-must-align", "a pattern with no `/` never matches a prefixed key",
              "*", "team.example.com/owner", matches=False),
    MatchCase("hostile-no-match", "a pattern built to backtrack answers at once, and rightly",
              "*a" * 150 + "b", "a" * 300, matches=False),
    MatchCase("hostile-match", "the same pattern without its tail matches",
              "*a" * 150, "a" * 300, matches=True),
]  # fmt: skip


@table(MATCH_CASES)
@pytest.mark.timeout(10)  # a backtracking matcher would take hours on the hostile rows
def test_glob_matching_follows_filepath_match_in_bounded_time(case: MatchCase) -> None:
    """The matcher agrees with Go's filepath.Match on these, and stays quick on hostile input."""
    assert labels.glob_match(case.pattern, case.key) is case.matches


@table(GLOB_CASES)
def test_patterns_select_label_keys_as_the_operator_reads_them(case: GlobCase) -> None:
    """Each pattern list selects exactly its keys, with their values."""
    got = labels.propagated(LABELS, case.patterns)
    assert set(got) == case.selected
    assert all(got[k] == LABELS[k] for k in got)


def labelled_service(**spec: Any) -> Any:
    xr = service(**spec)
    xr["metadata"]["labels"] = dict(LABELS)
    return xr


@dataclass(frozen=True)
class ConfigCase(Case):
    propagation: Any
    propagated: dict[str, str]


CONFIG_CASES = [
    ConfigCase("off-by-default", "nothing is copied unless a runtime config asks", None, {}),
    ConfigCase("disabled", "patterns without `enabled` copy nothing",
               {"enabled": False, "match": ["*"]}, {}),
    ConfigCase("enabled", "the service's matching labels, and only those",
               {"enabled": True, "match": ["team.example.com/*", "tier"]},
               {"team.example.com/owner": "alice", "tier": "gold"}),
]  # fmt: skip


@table(CONFIG_CASES)
def test_a_services_runtime_config_decides_what_it_propagates(case: ConfigCase) -> None:
    """The merged runtime config's `labelPropagation` picks the XR's labels to propagate."""
    spec = {"labelPropagation": case.propagation} if case.propagation else {}
    comp = loop.reconcile(compose_service, Observed(labelled_service()), [*WORLD, config(**spec)])
    assert comp.propagated_labels == case.propagated


def test_a_template_cache_passes_the_services_labels_on_to_its_model_caches() -> None:
    """service -> template cache -> model caches -> their Jobs and PVCs: a template cache that
    read no runtime config broke the chain, and its model caches never got the labels."""
    cache: Manifest = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMTemplateCache",
        "metadata": {"name": "tc", "namespace": NS, "labels": dict(LABELS)},
        "spec": {"templateName": "tpl", "runtimeConfigName": "default"},
    }
    propagation = {"enabled": True, "match": ["team.example.com/*"]}
    comp = loop.reconcile(
        compose_template_cache, Observed(cache), [config(labelPropagation=propagation)]
    )
    assert comp.propagated_labels == {"team.example.com/owner": "alice"}
    without = loop.reconcile(compose_template_cache, Observed(cache), [])
    assert without.propagated_labels == {}


def test_propagated_labels_reach_composed_objects_and_job_pods_without_overwriting() -> None:
    """Every composed object gets the labels it lacks, a Job's pod template too; a label a
    composed object sets itself keeps its value."""
    job: Manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": {"tier": "own"}},
        "spec": {"template": {"metadata": {"labels": {"job": "j"}}, "spec": {}}},
    }
    claim: Manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
    }
    comp = Composition(
        resources={"job": Desired(job, ready=False), "claim": Desired(claim, ready=False)},
        propagated_labels={"tier": "gold", "team.example.com/owner": "alice"},
    )
    rsp = fnv1.RunFunctionResponse()
    apply_composition(rsp, comp)
    out = {n: json_format.MessageToDict(r.resource) for n, r in rsp.desired.resources.items()}
    assert out["job"]["metadata"]["labels"] == {"tier": "own", "team.example.com/owner": "alice"}
    assert out["job"]["spec"]["template"]["metadata"]["labels"] == {
        "job": "j",
        "tier": "gold",
        "team.example.com/owner": "alice",
    }
    assert out["claim"]["metadata"]["labels"] == {"tier": "gold", "team.example.com/owner": "alice"}
    assert job["metadata"] == {"name": "j", "labels": {"tier": "own"}}  # the composer's, untouched
