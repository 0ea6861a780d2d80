"""Regression tests for hostile input found by fuzzing: each became a condition, not a bug.

Every case here once gave an internal error, a stall or a non-deterministic answer (issue 15);
the fuzz tier (tests/fuzz) keeps looking for new ones.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.registry import credentials, labels, oras
from function.rules import discovery, jsontext, quantity
from function.rules.status import Reason
from function.server.fn import FunctionRunner
from tests.cases import table
from tests.simulated import DRY_RUN_RESULT


@dataclass(frozen=True)
class Case:
    """An input, what must come of it, and why the case exists."""

    id: str
    given: Any
    want: Any
    reason: str


JSON_CASES = [
    Case("plain", '[1, {"a": 2}]', [1, {"a": 2}], "ordinary JSON still parses"),
    Case("brackets-in-strings", '["' + "[" * 100 + '"]', ["[" * 100], "strings do not nest"),
    Case("deep", "[" * 5000, "nested 5000 levels", "RecursionError escaped json.loads"),
    Case("deep-closed", "[" * 40 + "]" * 40, "nested 40 levels", "deeper than any document read"),
    Case("long-int", "9" * 5000, "out of range", "Python refuses ints over 4300 digits"),
    Case("huge-float", "1e400", "out of range", "becomes inf, then OverflowError in int()"),
    Case("nan", "[NaN]", "NaN", "not JSON; later arithmetic on it fails"),
    Case("too-long", "[" + "1," * 40000 + "1]", "more than the", "bounded before parsing"),
]


@table(JSON_CASES)
def test_bounded_json_parses_or_says_which_bound(case: Case) -> None:
    """`jsontext.loads` returns the value or a JsonTextError naming the bound, nothing else."""
    if isinstance(case.want, list):
        assert jsontext.loads(case.given, max_bytes=65536) == case.want, case.reason
    else:
        with pytest.raises(jsontext.JsonTextError, match=case.want):
            jsontext.loads(case.given, max_bytes=65536)


QUANTITY_CASES = [
    Case("binary", "16Gi", 16 * 2**30, "ordinary sizes still parse"),
    Case("exponent", "1.5e3", 1500, "exponents within range parse exactly"),
    Case("milli", "100m", 1, "a fraction of a byte rounds up"),
    Case("overflow", "1e400", "larger than", "float overflow was an internal error"),
    Case("cpu-burn", "1e9999999", "larger than", "10**9999999 burned seconds of CPU"),
    Case("tiny", "1e-9999999", 1, "a positive size is at least one byte"),
    Case("zero-huge", "0e99999999", 0, "zero stays zero whatever the exponent"),
    Case("int64", "8Ei", "larger than", "Kubernetes quantities are int64"),
]


@table(QUANTITY_CASES)
def test_quantities_are_parsed_without_unbounded_arithmetic(case: Case) -> None:
    """`quantity.to_bytes` gives bytes or a ValueError quoting the input, never an overflow."""
    if isinstance(case.want, int):
        assert quantity.to_bytes(case.given) == case.want, case.reason
    else:
        with pytest.raises(ValueError, match=case.want):
            quantity.to_bytes(case.given)


RESULT_CASES = [
    Case("repeated-empty-lists", "[]" * 2048, Reason.DISCOVERY_OUTPUT_INVALID, "was quadratic"),
    Case("deep", "[" * 4096, Reason.DISCOVERY_OUTPUT_INVALID, "RecursionError"),
    Case(
        "not-a-uri",
        '[{"models": [{"name": "a/b", "source": "ftp://a/b"}]}]',
        Reason.DISCOVERY_OUTPUT_INVALID,
        "a cache cannot download it, and the API server would refuse the cache",
    ),
    Case(
        "bytes-not-a-number",
        '{"aimDiscoveryOutputBytes": {"a": 1}}',
        Reason.DISCOVERY_OUTPUT_TOO_LARGE,
        "the wrapper's report is read without trusting its type",
    ),
]


@table(RESULT_CASES)
def test_unusable_discovery_results_fail_with_a_reason(case: Case) -> None:
    """A termination message that is no result is a failed attempt with a reason."""
    with pytest.raises(discovery.ResultError) as raised:
        discovery.parse_result(case.given, limit=4096)
    assert raised.value.reason == case.want, case.reason


def test_a_size_no_disk_holds_is_an_unknown_size() -> None:
    """1e308 GiB overflowed to inf and then int(inf); now the size is left to the size check."""
    output = '[{"models": [{"name": "a/b", "source": "hf://a/b", "size_gb": 1e308}]}]'
    assert discovery.parse_result(output, limit=4096).sources[0].size is None


def test_a_discovered_name_that_is_no_model_id_leaves_the_mount_path_to_the_cache() -> None:
    """`../../x` as a model id reached the AIMTemplateCache's mount path and failed its schema."""
    output = [{**DRY_RUN_RESULT[0], "models": [{"name": "../../x", "source": "hf://a/b"}]}]
    result = discovery.parse_result(json.dumps(output), limit=4096)
    assert result.sources[0].model_id is None
    assert result.sources[0].name == "../../x"


def test_log_lines_around_the_result_are_skipped() -> None:
    """Images that log to stdout still give their result (the scan is bounded, not removed)."""
    text = "INFO starting [x]\n" + json.dumps(DRY_RUN_RESULT) + "\nINFO done [1]"
    # The last list in the text is `[1]`, which is no profile: the log noise wins, as before.
    with pytest.raises(discovery.ResultError):
        discovery.parse_result(text, limit=4096)
    text = "INFO starting [x]\n" + json.dumps(DRY_RUN_RESULT)
    assert discovery.parse_result(text, limit=4096).sources[0].source_uri == "hf://Org/Small"


def _secret(config: str | bytes) -> Any:
    raw = config.encode() if isinstance(config, str) else config
    encoded = base64.b64encode(raw).decode()
    return {
        "metadata": {"name": "pull"},
        "type": credentials.DOCKER_CONFIG_JSON,
        "data": {".dockerconfigjson": encoded},
    }


SECRET_CASES = [
    Case("non-ascii-auth", {"auths": {"r.io": {"auth": "nön-ascii"}}}, "auth", "ValueError"),
    Case("deep", {"auths": json.loads("[" * 30 + "]" * 30)}, "'auths'", "no auths object"),
    Case("deeper", "[" * 3000, "base64-encoded JSON", "RecursionError escaped"),
    Case("long-number", '{"n": ' + "9" * 5000 + "}", "base64-encoded JSON", "int limit"),
]


@table(SECRET_CASES)
def test_unreadable_pull_secrets_are_format_errors_naming_the_secret(case: Case) -> None:
    """Every malformed secret is a SecretFormatError naming it, and quoting no value."""
    config = case.given if isinstance(case.given, str) else json.dumps(case.given)
    with pytest.raises(credentials.SecretFormatError, match=case.want) as raised:
        credentials.credential_for("r.io", [_secret(config)])
    assert "'pull'" in str(raised.value), case.reason
    assert "nön" not in str(raised.value)


LABEL_CASES = [
    Case("long-number", "[" + "9" * 5000 + "]", "out of range", "ValueError past JSONDecodeError"),
    Case("deep", "[" * 3000, "nested", "RecursionError"),
    Case("too-long", "[" + " " * 70000 + "]", "more than the", "unbounded work"),
]


@table(LABEL_CASES)
def test_unreadable_deployment_labels_are_label_errors(case: Case) -> None:
    """The recommended-deployments label is parsed within bounds, or refused naming it."""
    label = "com.amd.aim.model.recommendedDeployments"
    with pytest.raises(labels.LabelError, match=case.want):
        labels.recommended_deployments(label, case.given)


NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
TIME_CASES = [
    Case("naive", "2026-01-01T11:59:30", NOW + timedelta(seconds=30), "naive vs aware compare"),
    Case("offset", "2026-01-01T16:59:30+05:00", NOW + timedelta(seconds=30), "same instant"),
    Case("future", "9999-12-31T23:59:59Z", NOW + timedelta(seconds=60), "overflowed, or never"),
    Case("garbage", "yesterday", None, "an unreadable time retries at once"),
    Case("far-offset", "0001-01-01T00:00:00+14:00", None, "OverflowError moving to UTC"),
]


@table(TIME_CASES)
def test_attempt_times_in_any_form_give_a_retry_at_most_one_window_away(case: Case) -> None:
    """A time without zone, far away or unreadable never breaks or postpones discovery."""
    assert discovery.retry_at(case.given, 1, NOW) == case.want, case.reason


def _request(kind: str, spec: dict[str, Any]) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(
        {
            "apiVersion": "aim.silogen.ai/v1alpha1",
            "kind": kind,
            "metadata": {"name": "x", "namespace": "team"},
            "spec": spec,
        }
    )
    return req


def _run(req: fnv1.RunFunctionRequest, **kwargs: Any) -> fnv1.RunFunctionResponse:
    return asyncio.run(FunctionRunner(**kwargs).RunFunction(req))


def test_a_model_with_no_source_is_a_fatal_result_naming_the_field() -> None:
    """`spec.model: {}` reached an assert through render; now the field and the fix are named."""
    rsp = _run(_request("AIMService", {"model": {}}))
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert "spec.model: set exactly one of spec.model.ref" in rsp.results[0].message
    assert "internal error" not in rsp.results[0].message


def test_the_first_spec_error_does_not_depend_on_map_order() -> None:
    """Two errors in one spec: the same one is reported however the request's maps are ordered."""
    spec = {"model": {"image": 3}, "replicas": "many", "env": 7}
    forward = _request("AIMService", spec)
    backward = _request("AIMService", dict(reversed(spec.items())))
    assert _run(forward).results[0].message == _run(backward).results[0].message


def test_a_model_keeps_only_the_labels_it_reads_and_no_more_of_each_than_it_reads() -> None:
    """A model stores its image's labels in status; an image with 300 KB labels (or thousands of
    them) made a status too large for etcd, so the model could never report anything."""
    image = {
        "com.amd.aim.model.canonicalName": "x" * 300_000,
        "com.amd.aim.model.recommendedDeployments": "[" + "1," * 50_000 + "1]",
        **{f"vendor.label.{i}": "y" * 1000 for i in range(1000)},
    }
    stored = labels.kept(image)
    assert set(stored) == {
        "com.amd.aim.model.canonicalName",
        "com.amd.aim.model.recommendedDeployments",
    }
    assert len(stored["com.amd.aim.model.canonicalName"]) == 4096
    # Still too long to parse, so still refused with the same reason as the original.
    with pytest.raises(labels.LabelError, match="more than the"):
        labels.image_metadata(stored)


CONFIG_CASES = [
    Case("deep", b"[" * 5000, "nested 5000 levels", "RecursionError escaped the inspector"),
    Case("not-utf8", b'{"config": "\xff"}', "not UTF-8", "UnicodeDecodeError"),
    Case("huge-number", b'{"n": ' + b"9" * 5000 + b"}", "out of range", "int digit limit"),
]


@table(CONFIG_CASES)
def test_an_image_config_that_cannot_be_read_is_a_registry_error(case: Case) -> None:
    """What a registry serves as an image's config is parsed within bounds, on the event loop,
    so a failure must be an answer (a RegistryError naming the image), never an exception."""
    with pytest.raises(oras.OrasError, match=case.want):
        oras._labels_and_entrypoint(case.given, "registry.io/x:1")  # noqa: SLF001


def test_an_entrypoint_no_image_needs_counts_as_unknown() -> None:
    """A 17-argument entrypoint would be stored in status and run by discovery Jobs; it is
    treated as unknown instead, and discovery uses the configured entrypoint."""
    config = {"config": {"Labels": {}, "Entrypoint": ["aim"] * 17}}
    assert oras._labels_and_entrypoint(json.dumps(config).encode(), "r/x:1") == ({}, ())  # noqa: SLF001
    config = {"config": {"Labels": {}, "Entrypoint": ["aim-runtime"]}}
    assert oras._labels_and_entrypoint(json.dumps(config).encode(), "r/x:1") == (  # noqa: SLF001
        {},
        ("aim-runtime",),
    )
