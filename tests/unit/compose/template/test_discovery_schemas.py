"""Discovery reads both profile schemas AIM images print, and names an accelerator it cannot place.

Older AIM images print `gpu` and `gpu_count` in a profile's metadata; newer ones print
`accelerator_model`, `accelerator_count` and `accelerator_type`. A template must not depend on
which one its image prints; a profile for an accelerator no AMD GPU in the table matches fails
the template by name, and the model says so too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from function.compose.model import compose_model
from function.compose.template import DISCOVERY_JOB
from function.kube.contract import Composition, Observed
from function.rules import discovery
from function.rules.discovery import ResultError
from function.rules.status import Reason
from tests.cases import Case, table
from tests.unit import loop
from tests.unit.compose.template.test_compose_template import (
    MI300X_NODE,
    WORLD,
    complete_job,
    compose,
    conditions,
    job_of,
    message,
    model,
    node,
    pod,
    started,
    step,
    template,
    tree,
)

LIMIT = 4096
COMMON = {"engine": "vllm", "metric": "latency", "precision": "fp8", "type": "optimized"}
# What every case of the first table must yield, written out rather than taken from a run.
WANT_METADATA = {**COMMON, "gpu": "MI300X", "gpu_count": 1}


def dry_run(metadata: Any) -> str:
    """A dry-run's output with one profile whose metadata is `metadata`."""
    return json.dumps(
        [
            {
                "filename": "vllm-mi300x-fp8-tp1-latency.yaml",
                "profile": {
                    "metadata": metadata,
                    "engine_args": {"tensor-parallel-size": 1},
                    "env_vars": {"VLLM_USE_V1": "1"},
                },
                "models": [{"name": "Org/Small", "source": "hf://Org/Small", "size_gb": 0.5}],
            }
        ]
    )


def discovered(metadata: Any, pool: list[Any] | None = None) -> Composition:
    """The template's composition once its discovery Job printed a profile with `metadata`."""
    xr, job = started()
    world = WORLD if pool is None else pool
    pods = [pod(job, "Succeeded", message=dry_run(metadata))]
    return compose(xr, [*world, *pods], resources={DISCOVERY_JOB: complete_job(job)})


@dataclass(frozen=True)
class SchemaCase(Case):
    metadata: dict[str, Any]


SCHEMA_CASES = [
    SchemaCase(
        "gpu-schema",
        "what images up to AIM 0.10 print",
        {**COMMON, "gpu": "MI300X", "gpu_count": 1},
    ),
    SchemaCase(
        "accelerator-schema",
        "what newer images print: the runtime's whole metadata, fields we do not use included",
        {
            **COMMON,
            "accelerator_type": "gpu",
            "accelerator_model": "MI300X",
            "accelerator_count": 1,
            "manual_selection_only": False,
            "capabilities": {"tool_calling": True},
            "features": ["adapters"],
            "primary": True,
            "variant": "inductor-diff",
        },
    ),
    SchemaCase(
        "both-agree",
        "an image printing the new fields with the old ones as aliases",
        {
            **COMMON,
            "gpu": "MI300X",
            "gpu_count": 1,
            "accelerator_model": "MI300X",
            "accelerator_count": 1,
        },
    ),
    SchemaCase(
        "empty-accelerator-model",
        "an empty accelerator_model is unset, as the operator reads it: gpu is used",
        {**COMMON, "accelerator_model": "", "gpu": "MI300X", "accelerator_count": 1},
    ),
    SchemaCase(
        "null-accelerator-count",
        "a null accelerator_count is unset: gpu_count is used",
        {**COMMON, "accelerator_model": "MI300X", "accelerator_count": None, "gpu_count": 1},
    ),
    SchemaCase(
        "future-fields",
        "fields no image prints yet are ignored, not a failed discovery",
        {**COMMON, "gpu": "MI300X", "gpu_count": 1, "interconnect": {"xgmi": 8}},
    ),
]


@table(SCHEMA_CASES)
def test_either_schema_gives_the_same_template(case: SchemaCase) -> None:
    """An image of either schema makes the same Available template: profile, resolved profile,
    hardware summary and conditions."""
    comp = discovered(case.metadata)

    assert comp.status["status"] == "Available", (case.reason, comp.conditions)
    assert conditions(comp)["Discovered"] == ("True", "DiscoveryComplete"), case.reason
    status = tree(comp.status)
    assert status["profile"]["metadata"] == WANT_METADATA, case.reason
    assert status["resolvedProfile"] == {
        "type": "optimized",
        "metric": "latency",
        "precision": "fp8",
        "gpu": "MI300X",
        "gpuCount": 1,
    }, case.reason
    assert status["hardwareSummary"] == "1 x MI300X", case.reason


@dataclass(frozen=True)
class PrecedenceCase(Case):
    metadata: dict[str, Any]
    gpu: str | None
    gpu_count: int | None


PRECEDENCE_CASES = [
    PrecedenceCase(
        "model-disagrees",
        "both set and different: accelerator_model wins, as the operator and the runtime read it",
        {"gpu": "MI300X", "accelerator_model": "MI325X", "gpu_count": 1},
        "MI325X",
        1,
    ),
    PrecedenceCase(
        "count-disagrees",
        "both set and different: accelerator_count wins",
        {"gpu": "MI300X", "gpu_count": 8, "accelerator_count": 2},
        "MI300X",
        2,
    ),
    PrecedenceCase(
        "count-zero-is-set",
        "a present accelerator_count of 0 is set (the operator reads a pointer), not a fallback",
        {"gpu": "MI300X", "gpu_count": 8, "accelerator_count": 0},
        "MI300X",
        0,
    ),
    PrecedenceCase(
        "none-sentinel",
        "NONE is the runtime's word for no accelerator, not a GPU named NONE",
        {"accelerator_model": "none", "accelerator_count": 0},
        None,
        0,
    ),
    PrecedenceCase(
        "nothing",
        "metadata without an accelerator leaves the template's own hardware in charge",
        {"engine": "vllm"},
        None,
        None,
    ),
    PrecedenceCase(
        "padded",
        "spaces around a model name are no part of it",
        {"accelerator_model": "  R9700 ", "accelerator_count": 1},
        "R9700",
        1,
    ),
]


@table(PRECEDENCE_CASES)
def test_where_both_schemas_are_printed_the_accelerator_fields_win(case: PrecedenceCase) -> None:
    """Which field a template's status takes its GPU from, field by field."""
    result = discovery.parse_result(dry_run(case.metadata), limit=LIMIT)
    meta = result.profile.metadata

    assert meta is not None
    assert (meta.gpu, meta.gpu_count) == (case.gpu, case.gpu_count), case.reason


@dataclass(frozen=True)
class HostileCase(Case):
    metadata: Any
    names: str


HOSTILE_CASES = [
    HostileCase(
        "model-number",
        "a model name that is a number is no name",
        {"accelerator_model": 300, "accelerator_count": 1},
        "profile.metadata.accelerator_model is a number, not a string",
    ),
    HostileCase(
        "gpu-list",
        "a list where the old schema's gpu goes",
        {"gpu": ["MI300X"], "gpu_count": 1},
        "profile.metadata.gpu is a list, not a string",
    ),
    HostileCase(
        "count-string",
        "a count in quotes is refused as the operator's JSON decoding refuses it",
        {"accelerator_model": "MI300X", "accelerator_count": "2"},
        "profile.metadata.accelerator_count is 2 (a string)",
    ),
    HostileCase(
        "count-bool",
        "true is not one GPU",
        {"gpu": "MI300X", "gpu_count": True},
        "profile.metadata.gpu_count is True (a boolean)",
    ),
    HostileCase(
        "count-fraction",
        "half a GPU cannot be requested",
        {"gpu": "MI300X", "accelerator_count": 1.5},
        "profile.metadata.accelerator_count is 1.5 (a number)",
    ),
    HostileCase(
        "count-negative",
        "a negative count would be a pod requesting -1 GPUs",
        {"accelerator_model": "MI300X", "accelerator_count": -1},
        "profile.metadata.accelerator_count is -1 (a number), not a number of GPUs from 0",
    ),
    HostileCase(
        "count-huge",
        "a count past int32 does not fit a Kubernetes resource request",
        {"gpu": "MI300X", "gpu_count": 2**40},
        "profile.metadata.gpu_count is 1099511627776 (a number)",
    ),
    HostileCase(
        "metadata-list",
        "metadata that is not an object",
        ["MI300X", 1],
        "profile.metadata is a list, not an object",
    ),
    HostileCase(
        "engine-object",
        "a field we keep, of the wrong type, is named too",
        {"engine": {"name": "vllm"}, "gpu": "MI300X"},
        "profile.metadata.engine is an object, not a string",
    ),
]


@table(HOSTILE_CASES)
def test_a_field_we_use_of_the_wrong_type_is_invalid_output_naming_it(case: HostileCase) -> None:
    """Wrong types and impossible counts are a failed discovery whose message names the field,
    never a template with a made-up GPU count."""
    with pytest.raises(ResultError) as failed:
        discovery.parse_result(dry_run(case.metadata), limit=LIMIT)

    assert failed.value.reason == Reason.DISCOVERY_OUTPUT_INVALID, case.reason
    assert case.names in str(failed.value), case.reason


def test_hostile_counts_fail_the_template_s_discovery_and_keep_no_profile() -> None:
    """Through the composer: the attempt is counted, the template is Failed, nothing is kept."""
    comp = discovered({"accelerator_model": "MI300X", "accelerator_count": -4})

    assert comp.status["status"] == "Failed"
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryOutputInvalid")
    assert "accelerator_count is -4" in message(comp, "Discovered")
    assert "profile" not in comp.status


def test_a_huge_model_name_is_cut_to_what_a_status_carries() -> None:
    """A name thousands of characters long (the termination message allows 16 KiB) is kept cut,
    so the template still reports it."""
    result = discovery.parse_result(
        dry_run({"accelerator_model": "X" * 10_000, "accelerator_count": 1}), limit=LIMIT
    )
    meta = result.profile.metadata

    assert meta is not None
    assert meta.gpu is not None
    assert len(meta.gpu) == 128
    assert meta.gpu.startswith("XXXX")
    assert meta.gpu.endswith("…")


# --- an accelerator we cannot place -------------------------------------------------------------


@dataclass(frozen=True)
class UnknownCase(Case):
    metadata: dict[str, Any]
    named: str


UNKNOWN_CASES = [
    UnknownCase(
        "new-gpu",
        "a GPU newer than the table, in the new schema",
        {
            **COMMON,
            "accelerator_type": "gpu",
            "accelerator_model": "MI450X",
            "accelerator_count": 1,
        },
        "'MI450X'",
    ),
    UnknownCase(
        "old-schema",
        "the same in the old schema",
        {**COMMON, "gpu": "MI450X", "gpu_count": 1},
        "'MI450X'",
    ),
]

CPU_PROFILE = {
    **COMMON,
    "accelerator_type": "cpu",
    "accelerator_model": "EPYC_ZEN5",
    "accelerator_count": 32,
}


@dataclass(frozen=True)
class GpuAsk(Case):
    hardware: dict[str, Any]


GPU_ASKS = [
    GpuAsk(
        "count-and-model",
        "the usual template: one MI300X",
        {"gpu": {"requests": 1, "model": "MI300X"}},
    ),
    GpuAsk(
        "model-only",
        "a GPU model without a count still asks for that GPU",
        {"gpu": {"model": "MI300X"}},
    ),
    GpuAsk("memory-only", "a minimum GPU memory asks for some GPU", {"gpu": {"minVram": "100Gi"}}),
]


def discovered_on(hardware: dict[str, Any], metadata: Any) -> Composition:
    """`discovered`, for a template of the given hardware (in a world with an MI300X node)."""
    xr = template(hardware=hardware)
    job = job_of(compose(xr))
    xr = step(xr, compose(xr))
    pods = [pod(job, "Succeeded", message=dry_run(metadata))]
    return compose(xr, [*WORLD, *pods], resources={DISCOVERY_JOB: complete_job(job)})


@table(GPU_ASKS)
def test_a_cpu_profile_for_a_template_that_asks_for_gpus_fails_it_saying_so(case: GpuAsk) -> None:
    """An image with no profile for the template's GPU answers with a CPU one: running that on
    the GPU nodes the template asked for would not be what it promises, so it fails, naming the
    field and the two ways out, however the template asks for a GPU."""
    comp = discovered_on(case.hardware, CPU_PROFILE)

    assert comp.status["status"] == "Failed", case.reason
    assert conditions(comp)["Failure"] == ("True", "UnknownAccelerator"), case.reason
    said = message(comp, "Discovered")
    assert "runs on CPUs" in said
    assert "spec.hardware.gpu" in said
    assert tree(comp.status)["profile"]["metadata"]["gpu_count"] == 0


def test_a_cpu_profile_for_a_cpu_template_is_its_answer() -> None:
    """A CPU template (hardware.cpu, no GPU) takes a CPU profile: its cores are no GPU count and
    its accelerator no GPU model, so nothing about it is unknown."""
    comp = discovered_on({"cpu": {"requests": 8}}, CPU_PROFILE)

    assert conditions(comp)["Discovered"][0] == "True", message(comp, "Discovered")
    assert "gpu" not in tree(comp.status)["profile"]["metadata"]
    assert tree(comp.status)["profile"]["metadata"]["gpu_count"] == 0


@table(UNKNOWN_CASES)
def test_a_profile_for_an_unknown_accelerator_fails_the_template_naming_it(
    case: UnknownCase,
) -> None:
    """The template is Failed, UnknownAccelerator, with the accelerator and the known models in
    its message, and the profile stays in its status for the user to read: never dropped."""
    comp = discovered(case.metadata)

    assert comp.status["status"] == "Failed", case.reason
    assert conditions(comp)["Discovered"] == ("False", "UnknownAccelerator"), case.reason
    assert conditions(comp)["Failure"] == ("True", "UnknownAccelerator"), case.reason
    said = message(comp, "Discovered")
    assert case.named in said, case.reason
    assert "MI300X" in said
    assert "R9700" in said  # the known models are listed
    assert tree(comp.status)["profile"]["metadata"]["gpu"] == case.named.strip("'")
    assert tree(comp.status)["discovery"]["completed"] is True  # not run again: it would agree
    assert tree(comp.status)["discovery"]["attempts"] == 0


def test_the_unknown_accelerator_is_still_reported_once_discovery_is_done() -> None:
    """The next call reads the result from status: still Failed, still named, no new Job."""
    first = discovered({"accelerator_model": "MI450X", "accelerator_count": 1})
    xr, _ = started()
    again = compose(step(xr, first))

    assert again.status["status"] == "Failed"
    assert conditions(again)["Discovered"] == ("False", "UnknownAccelerator")
    assert "'MI450X'" in message(again, "Discovered")
    assert DISCOVERY_JOB not in again.resources


def test_a_radeon_profile_is_known() -> None:
    """An R9700 profile of an R9700 template, on an R9700 node, is Available."""
    xr = template(hardware={"gpu": {"requests": 1, "model": "AMD Radeon AI PRO R9700"}})
    r9700 = node(**{"amd.com/gpu.device-id": "7551"})
    first = compose(xr, [model(), r9700])
    job = job_of(first)
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["AIM_ACCELERATOR_MODEL"] == "AMD Radeon AI PRO R9700"
    metadata = {**COMMON, "accelerator_model": "R9700", "accelerator_count": 1}
    pods = [pod(job, "Succeeded", message=dry_run(metadata))]
    comp = compose(
        step(xr, first), [model(), r9700, *pods], resources={DISCOVERY_JOB: complete_job(job)}
    )

    assert comp.status["status"] == "Available", comp.conditions
    assert comp.status["hardwareSummary"] == "1 x R9700"


def test_the_discovery_job_sets_both_env_families() -> None:
    """Older images read AIM_GPU_*, newer ones AIM_ACCELERATOR_*: the Job sets both, the same."""
    job = job_of(compose(template(), [model(), MI300X_NODE]))
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}

    assert (env["AIM_GPU_MODEL"], env["AIM_GPU_COUNT"]) == ("MI300X", "1")
    assert (env["AIM_ACCELERATOR_MODEL"], env["AIM_ACCELERATOR_COUNT"]) == ("MI300X", "1")


def test_a_template_without_a_gpu_sets_neither_family() -> None:
    """No GPU in the spec: the image chooses, in either schema."""
    job = job_of(compose(template(hardware=None), [model()]))
    names = {e["name"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}

    assert not names & {"AIM_GPU_MODEL", "AIM_GPU_COUNT", "AIM_ACCELERATOR_MODEL"}
    assert "AIM_ACCELERATOR_COUNT" not in names


def test_the_model_names_the_unknown_accelerator_of_its_template() -> None:
    """A model whose template failed so says which accelerator, not only which template."""
    failed = discovered({"accelerator_model": "MI450X", "accelerator_count": 1})
    written = [
        {"type": c.type, "status": c.status.value, "reason": c.reason, "message": c.message}
        for c in failed.conditions
    ]
    listed = {
        **template(),
        "metadata": {"name": "tpl-mi450x", "namespace": "ml-team"},
        "status": {**failed.status, "conditions": written},
    }
    available = {
        **template(),
        "metadata": {"name": "tpl-ok", "namespace": "ml-team"},
        "status": {"status": "Available"},
    }
    xr = model()
    xr["spec"]["discovery"] = {"enabled": False}
    comp = loop.reconcile(compose_model, Observed(xr), [listed, available])

    said = next(c for c in comp.conditions if c.type == "TemplatesReady")
    assert (said.status.value, said.reason) == ("False", "SomeTemplatesDegraded")
    assert "tpl-mi450x (Failed: the image's profile is for accelerator 'MI450X'" in said.message


def test_a_cpu_profile_of_a_cpu_template_is_summarised_as_cpu() -> None:
    """A CPU template whose image answers with a CPU profile (AMD's CPU images say
    `accelerator_type: cpu`, `accelerator_model: CPU`, one "accelerator") is Available on no
    GPU node, and `kubectl get` shows CPU, not a GPU."""
    xr = template(hardware={"cpu": {"requests": "1"}})
    first = compose(xr, [model()])
    job = job_of(first)
    metadata = {
        **COMMON,
        "accelerator_type": "cpu",
        "accelerator_model": "CPU",
        "accelerator_count": 1,
    }
    pods = [pod(job, "Succeeded", message=dry_run(metadata))]
    comp = compose(step(xr, first), [model(), *pods], resources={DISCOVERY_JOB: complete_job(job)})

    assert comp.status["status"] == "Available", comp.conditions
    assert comp.status["hardwareSummary"] == "CPU"
    assert tree(comp.status)["profile"]["metadata"]["gpu_count"] == 0
