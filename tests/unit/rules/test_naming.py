"""Derived names must equal the AIM operator's, so objects keep their names across the move."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from function.rules import naming
from function.rules.naming import (
    NameTooLongError,
    derived_name,
    hash_suffix,
    inference_service_name,
    sanitize_part,
)
from tests.cases import Case, table


@dataclass(frozen=True)
class NameCase(Case):
    parts: tuple[str, ...]
    inputs: tuple[str | int | None, ...]
    want: str


# Expected names are the worked examples of the operator's behaviour reference (§0.6), which were
# computed by the operator's algorithm, not by this code.
OPERATOR_EXAMPLES = [
    NameCase(
        "image-model",
        "model from an image: name and tag parts, hashed on the image URI",
        ("aim-dummy", "0-1-10"),
        ("ghcr.io/silogen/aim-dummy:0.1.10",),
        "aim-dummy-0-1-10-9bf80281",
    ),
    NameCase(
        "custom-model",
        "custom model: model id part, hashed on base image and source",
        ("Qwen/Qwen2-0.5B",),
        ("amdenterpriseai/aim-base:0.9", "Qwen/Qwen2-0.5B", "hf://Qwen/Qwen2-0.5B"),
        "qwen-qwen2-0-5b-8cd3ca3d",
    ),
    NameCase(
        "template-cache",
        "shared template cache: template name, hashed on the namespace",
        ("my-template",),
        ("ml-team",),
        "my-template-a04542d9",
    ),
]


@table(OPERATOR_EXAMPLES)
def test_derived_name_matches_operator(case: NameCase) -> None:
    """The port reproduces names the operator computed."""
    assert case.want == derived_name(case.parts, case.inputs), case.reason


def test_inference_service_name_matches_operator() -> None:
    """An InferenceService keeps the name the operator gave it."""
    assert inference_service_name("qwen-chat", "ml-team") == "qwen-chat-a04542d9"


@dataclass(frozen=True)
class PartCase(Case):
    part: str
    want: str


PART_CASES = [
    PartCase(
        "model-id",
        "lower case, and every other character a dash",
        "Qwen/Qwen2-0.5B",
        "qwen-qwen2-0-5b",
    ),
    PartCase("edges", "a label starts and ends alphanumeric", "--edge--", "edge"),
    PartCase("no-collapse", "repeated dashes stay, as in the operator", "a__b", "a--b"),
    PartCase("nothing-left", "a part with nothing usable is still a part", "///", "part"),
    PartCase("long", "a part alone never exceeds a label", "x" * 70, "x" * 63),
]


@table(PART_CASES)
def test_sanitize_part(case: PartCase) -> None:
    """Parts become DNS-label-safe the operator's way."""
    assert case.want == sanitize_part(case.part), case.reason


def test_long_names_shorten_the_longest_part_and_keep_the_hash() -> None:
    """A name over the limit keeps its hash, so two long names never collide by truncation."""
    a = derived_name(["s" * 80], ["ns-a"])
    b = derived_name(["s" * 80], ["ns-b"])
    assert len(a) == 63
    assert a != b
    assert a.endswith("-" + hash_suffix(["ns-a"]))


def test_inference_service_name_leaves_room_for_kserve_suffix() -> None:
    """KServe's `<isvc>-predictor-<namespace>` must still be a DNS label."""
    namespace = "n" * 30
    name = inference_service_name("a-very-long-service-name-for-chat", namespace)
    assert len(f"{name}-predictor-{namespace}") <= 63


def test_namespace_too_long_for_kserve_names_is_an_error() -> None:
    """Instead of an InferenceService KServe cannot name, the user gets told why."""
    with pytest.raises(NameTooLongError, match="namespace"):
        inference_service_name("chat", "n" * 50)


def test_names_of_composed_models_and_derived_templates_match_the_operator() -> None:
    """Examples from the AIM operator's behaviour reference (computed there, not by us)."""
    assert naming.image_model_name("ghcr.io/silogen/aim-dummy:0.1.10") == (
        "aim-dummy-0-1-10-9bf80281"
    )
    sources = [("Qwen/Qwen2-0.5B", "hf://Qwen/Qwen2-0.5B", None)]
    assert naming.custom_model_name("amdenterpriseai/aim-base:0.9", sources) == (
        "qwen-qwen2-0-5b-8cd3ca3d"
    )
    assert naming.derived_template_name(
        "my-template", gpu="MI325X", count=None, precision="fp16", metric=None
    ) == ("my-template-ovr-mi325x-fp16-ac2b")


def test_image_model_name_handles_digests_and_missing_tags() -> None:
    """Model names from images with digests or without tags are valid and stable."""
    assert naming.image_model_name("reg.io/org/model").startswith("model-latest-")
    digest = "reg.io/org/model@sha256:abcdef0123456789"
    assert naming.image_model_name(digest).startswith("model-abcdef-")


DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class AutoModelCase(Case):
    image: str
    want: str


AUTO_MODEL_CASES = [
    AutoModelCase(
        "tagged",
        "the AIM API's auto-<hash of image>; the hash is the older name's, so the two pair up",
        "ghcr.io/silogen/aim-dummy:0.1.10",
        "auto-9bf80281",
    ),
    AutoModelCase(
        "seed-004",
        "the image of the AIM API's own example of a service by image",
        "ghcr.io/example/my-model:v1.0.0",
        "auto-" + hash_suffix(["ghcr.io/example/my-model:v1.0.0"]),
    ),
    AutoModelCase(
        "long-uppercase",
        "however long or oddly spelled the image, the name is a short DNS label",
        "Registry.Example.com:5000/" + "Org/" * 60 + "Model_Name:V1",
        "auto-" + hash_suffix(["Registry.Example.com:5000/" + "Org/" * 60 + "Model_Name:V1"]),
    ),
]


@table(AUTO_MODEL_CASES)
def test_auto_created_model_is_named_auto_hash_of_image(case: AutoModelCase) -> None:
    """The model a service composes for an image is `auto-<hash of image>`, a valid DNS label."""
    name = naming.auto_model_name(case.image)
    assert name == case.want, case.reason
    assert DNS_LABEL.match(name)
    assert naming.image_model_name(case.image).endswith(name.removeprefix("auto-"))


def test_auto_model_names_tell_images_apart_and_refuse_non_images() -> None:
    """Another tag or a digest is another model; a reference with no image name is refused."""
    names = {
        naming.auto_model_name(i)
        for i in ("reg.io/org/model:v1", "reg.io/org/model:v2", "reg.io/org/model@sha256:abcdef")
    }
    assert len(names) == 3
    with pytest.raises(ValueError, match="not an image reference"):
        naming.auto_model_name("reg.io/org/")
