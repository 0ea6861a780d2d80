"""Image references, pull-secret credentials and AIM image labels: the registry's pure parts."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from function.registry import reference
from function.registry.credentials import SecretFormatError, credential_for
from function.registry.labels import LabelError, image_metadata, recommended_deployments


@pytest.mark.parametrize(
    ("image", "registry", "repository", "tag", "digest"),
    [
        ("amdenterpriseai/aim-qwen:0.8.5", "docker.io", "amdenterpriseai/aim-qwen", "0.8.5", None),
        ("busybox", "docker.io", "library/busybox", None, None),
        ("ghcr.io/silogen/aim-dummy:0.1.10", "ghcr.io", "silogen/aim-dummy", "0.1.10", None),
        ("localhost/x/y:1", "localhost", "x/y", "1", None),
        ("127.0.0.1:5000/a/b", "127.0.0.1:5000", "a/b", None, None),
        ("r.io/a@sha256:" + "0" * 64, "r.io", "a", None, "sha256:" + "0" * 64),
    ],
)
def test_references_parse_as_docker_does(
    image: str, registry: str, repository: str, tag: str | None, digest: str | None
) -> None:
    """Image references parse as Docker parses them."""
    ref = reference.parse(image)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        registry,
        repository,
        tag,
        digest,
    )


@pytest.mark.parametrize("image", ["", "r.io/a:", "r.io//a", "a@sha256:short"])
def test_malformed_references_are_refused(image: str) -> None:
    """Malformed references are refused with a reason."""
    with pytest.raises(reference.ReferenceError):
        reference.parse(image)


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


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (secret({}, kind="Opaque"), "type 'Opaque'"),
        ({"metadata": {"name": "creds"}, "type": "kubernetes.io/dockerconfigjson"}, "no data"),
        (secret({"r.io": {"auth": "not base64!"}}), "not base64"),
    ],
)
def test_unreadable_secrets_say_why_without_values(bad: Any, says: str) -> None:
    """An unreadable secret is explained without printing its contents."""
    with pytest.raises(SecretFormatError, match=says):
        credential_for("r.io", [bad])


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


def test_an_image_without_aim_labels_has_no_model_metadata() -> None:
    """An image without AIM labels yields no model metadata, not an error."""
    assert image_metadata({"maintainer": "someone"}).model is None


@pytest.mark.parametrize(
    "text",
    [
        '[{"gpuModel": "MI300X", "gpuCount": 1}]',
        "[{'gpuModel': 'MI300X', 'gpuCount': 1}]",
        "{'gpuModel': 'MI300X', 'gpuCount': 1}",
        "{'gpuModel': 'MI300X', 'gpuCount': 1, 'tensorParallel': 1}",
    ],
    ids=["json", "single-quotes", "no-brackets", "extra-keys"],
)
def test_recommended_deployments_are_read_leniently(text: str) -> None:
    """Deployments written with single quotes, without brackets or with extra keys still read."""
    [deployment] = recommended_deployments("label", text)
    assert (deployment.gpu_model, deployment.gpu_count) == ("MI300X", 1)


@pytest.mark.parametrize(
    "text", ["[{gpuModel: MI300X}]", "[1, 2]", "[{'gpuCount': 'one'}]"], ids=str
)
def test_garbage_deployments_are_an_error_naming_the_label(text: str) -> None:
    """A deployments label that cannot be read fails naming the label."""
    with pytest.raises(LabelError, match=r"com\.amd\.aim\.model\.recommendedDeployments"):
        recommended_deployments("com.amd.aim.model.recommendedDeployments", text)
