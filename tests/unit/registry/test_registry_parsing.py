"""Image references, pull-secret credentials and AIM image labels: the registry's pure parts."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from function.registry import reference
from function.registry.credentials import Credential, SecretFormatError, credential_for
from function.registry.inspect import InspectionRequest, RegistryFailure
from function.registry.labels import (
    LabelError,
    image_metadata,
    missing_required,
    recommended_deployments,
)
from function.registry.oras import OrasInspector
from tests.cases import Case, table


@dataclass(frozen=True)
class ReferenceCase(Case):
    image: str
    want: tuple[str, str, str | None, str | None]


DIGEST = "sha256:" + "0" * 64
REFERENCE_CASES = [
    ReferenceCase(
        "docker-hub",
        "a registry-less name is Docker Hub",
        "amdenterpriseai/aim-qwen:0.8.5",
        ("docker.io", "amdenterpriseai/aim-qwen", "0.8.5", None),
    ),
    ReferenceCase(
        "official",
        "one path segment is Docker Hub's library/",
        "busybox",
        ("docker.io", "library/busybox", None, None),
    ),
    ReferenceCase(
        "ghcr",
        "a first segment with a dot is a registry",
        "ghcr.io/silogen/aim-dummy:0.1.10",
        ("ghcr.io", "silogen/aim-dummy", "0.1.10", None),
    ),
    ReferenceCase(
        "localhost",
        "localhost is a registry without a dot",
        "localhost/x/y:1",
        ("localhost", "x/y", "1", None),
    ),
    ReferenceCase(
        "port",
        "a port is part of the registry, not a tag",
        "127.0.0.1:5000/a/b",
        ("127.0.0.1:5000", "a/b", None, None),
    ),
    ReferenceCase(
        "digest", "a digest is not a tag", "r.io/a@" + DIGEST, ("r.io", "a", None, DIGEST)
    ),
]


@table(REFERENCE_CASES)
def test_references_parse_as_docker_does(case: ReferenceCase) -> None:
    """Image references parse as Docker parses them."""
    ref = reference.parse(case.image)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == case.want, case.reason


@dataclass(frozen=True)
class TextCase(Case):
    text: str


MALFORMED_CASES = [
    TextCase("empty", "an empty image field", ""),
    TextCase("empty-tag", "a colon with no tag after it", "r.io/a:"),
    TextCase("empty-segment", "a repository with an empty path segment", "r.io//a"),
    TextCase("short-digest", "a digest of the wrong length", "a@sha256:short"),
]


@table(MALFORMED_CASES)
def test_malformed_references_are_refused(case: TextCase) -> None:
    """Malformed references are refused with a reason."""
    with pytest.raises(reference.ReferenceError):
        reference.parse(case.text)


def secret(auths: dict[str, Any], kind: str = "kubernetes.io/dockerconfigjson") -> Any:
    data = base64.b64encode(json.dumps({"auths": auths}).encode()).decode()
    return {"metadata": {"name": "creds"}, "type": kind, "data": {".dockerconfigjson": data}}


def test_credentials_match_the_registry_however_the_key_is_written() -> None:
    """A docker config's key matches its registry in any of the spellings Docker accepts."""
    auth = base64.b64encode(b"bob:hunter2").decode()
    secrets = [secret({"https://index.docker.io/v1/": {"auth": auth}})]
    found = credential_for("docker.io", secrets)

    assert found is not None
    assert (found.username, found.password) == ("bob", "hunter2")
    assert "hunter2" not in repr(found)
    assert credential_for("ghcr.io", secrets) is None


def test_username_and_password_fields_are_read_too() -> None:
    """Credentials given as username and password are read, not only auth."""
    found = credential_for("r.io", [secret({"r.io": {"username": "u", "password": "p"}})])
    assert found is not None
    assert found.password == "p"  # noqa: S105 - the test secret's value


@dataclass(frozen=True)
class SecretCase(Case):
    secret: Any
    says: str


SECRET_CASES = [
    SecretCase("opaque", "a secret of the wrong type", secret({}, kind="Opaque"), "type 'Opaque'"),
    SecretCase(
        "no-data",
        "a secret of the right type that holds nothing",
        {"metadata": {"name": "creds"}, "type": "kubernetes.io/dockerconfigjson"},
        "no data",
    ),
    SecretCase(
        "bad-auth",
        "an auth field that is not base64",
        secret({"r.io": {"auth": "not base64!"}}),
        "not base64",
    ),
]


@table(SECRET_CASES)
def test_unreadable_secrets_say_why_without_values(case: SecretCase) -> None:
    """An unreadable secret is explained without printing its contents."""
    with pytest.raises(SecretFormatError, match=case.says):
        credential_for("r.io", [case.secret])


def test_labels_new_prefix_wins_and_legacy_is_read() -> None:
    """The current label prefix wins; the legacy one is still read."""
    meta = image_metadata(
        {
            "com.amd.aim.model.canonicalName": "new/name",
            "org.amd.silogen.model.canonicalName": "old/name",
            "org.amd.silogen.model.tags": "chat, code ,",
            "com.amd.aim.hfToken.required": "true",
            "org.opencontainers.image.version": "1.2",
        }
    )
    assert meta.model is not None
    assert meta.model.canonical_name == "new/name"
    assert meta.model.tags == ["chat", "code"]
    assert meta.model.hf_token_required is True
    assert meta.oci is not None
    assert meta.oci.version == "1.2"


@dataclass(frozen=True)
class RequiredCase(Case):
    labels: dict[str, str]
    missing: list[str]


CANONICAL = "com.amd.aim.model.canonicalName or org.amd.silogen.model.canonicalName"
REQUIRED_CASES = [
    RequiredCase(
        "none",
        "an image without AIM labels lacks the required ones (seed 004: its model is Failed)",
        {"maintainer": "someone"},
        [CANONICAL],
    ),
    RequiredCase(
        "deployments-only",
        "deployments do not name the model an image serves",
        {"com.amd.aim.model.recommendedDeployments": "[]"},
        [CANONICAL],
    ),
    RequiredCase(
        "blank", "a blank name names nothing", {"com.amd.aim.model.canonicalName": " "}, [CANONICAL]
    ),
    RequiredCase("new", "the current prefix", {"com.amd.aim.model.canonicalName": "o/m"}, []),
    RequiredCase(
        "legacy",
        "older images carry the legacy prefix",
        {"org.amd.silogen.model.canonicalName": "o/m"},
        [],
    ),
]


@table(REQUIRED_CASES)
def test_the_required_aim_labels_are_named_when_missing(case: RequiredCase) -> None:
    """The canonical name is required (either prefix); recommended deployments are not, since an
    image may recommend none (seed 004's `NoRecommendedTemplates`)."""
    assert missing_required(case.labels) == case.missing, case.reason


LENIENT_CASES = [
    TextCase("json", "the documented form", '[{"gpuModel": "MI300X", "gpuCount": 1}]'),
    TextCase(
        "single-quotes",
        "images in the wild use Python's quotes",
        "[{'gpuModel': 'MI300X', 'gpuCount': 1}]",
    ),
    TextCase(
        "no-brackets",
        "...and one deployment without a list",
        "{'gpuModel': 'MI300X', 'gpuCount': 1}",
    ),
    TextCase(
        "extra-keys",
        "keys newer images add are ignored, not refused",
        "{'gpuModel': 'MI300X', 'gpuCount': 1, 'tensorParallel': 1}",
    ),
    TextCase(
        "python-repr-apostrophe",
        "AMD's label generator prints Python's repr: a text with an apostrophe is double-quoted "
        "and the rest single-quoted, which swapping quotes would break",
        "[{'gpuModel': 'MI300X', 'gpuCount': 1, 'description': \"MI300X's fastest\"}]",
    ),
    TextCase(
        "python-repr-constants",
        "...and its True and None, which are no JSON",
        "[{'gpuModel': 'MI300X', 'gpuCount': 1, 'precision': None, 'default': True}]",
    ),
]


@table(LENIENT_CASES)
def test_recommended_deployments_are_read_leniently(case: TextCase) -> None:
    """Deployments written with single quotes, without brackets or with extra keys still read."""
    [deployment] = recommended_deployments("label", case.text)
    assert (deployment.gpu_model, deployment.gpu_count) == ("MI300X", 1), case.reason


GARBAGE_CASES = [
    TextCase("unquoted", "neither JSON nor Python", "[{gpuModel: MI300X}]"),
    TextCase("numbers", "a list of something other than deployments", "[1, 2]"),
    TextCase("wrong-type", "a count that is not a number", "[{'gpuCount': 'one'}]"),
    TextCase(
        "python-set",
        "a Python literal JSON has no word for is not read as a list",
        "[{'gpuModel': 'MI300X', 'gpuCount': {1, 2}}]",
    ),
    TextCase(
        "python-deep",
        "nesting past the bound is refused before Python's parser recurses into it",
        "[" * 5000 + "]" * 5000,
    ),
]


@table(GARBAGE_CASES)
def test_garbage_deployments_are_an_error_naming_the_label(case: TextCase) -> None:
    """A deployments label that cannot be read fails naming the label."""
    with pytest.raises(LabelError, match=r"com\.amd\.aim\.model\.recommendedDeployments"):
        recommended_deployments("com.amd.aim.model.recommendedDeployments", case.text)


def test_an_oras_that_exits_without_reading_its_password_is_a_failure_not_a_crash(
    tmp_path: Path,
) -> None:
    """oras may exit (refused flags, a crash) before it reads the password written to its
    stdin. The write then meets a closed pipe; that must end as the registry failure oras
    reported, never as an exception out of the inspector (the inspection benchmark, eight at a
    time, hit it)."""
    fake = tmp_path / "oras"
    fake.write_text("#!/bin/sh\necho 'Error: refused before reading' >&2\nexit 1\n")
    fake.chmod(0o755)
    inspector = OrasInspector(oras=str(fake))
    image = "registry.example.com/aim/x:1"
    # More than a pipe holds, so the write cannot complete before the process is gone.
    secret = Credential("registry.example.com", "u", "p" * (1 << 20))
    request = InspectionRequest(image, reference.parse(image), secret)
    outcome = asyncio.run(inspector.inspect(request))
    assert isinstance(outcome, RegistryFailure)
    assert "refused before reading" in outcome.message
