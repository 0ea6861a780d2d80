"""OrasInspector against real registries (Debian's docker-registry), with images pushed by oras."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from devtools.cluster.registry import PASSWORD, USER, Registry
from devtools.tools import Tools
from function.registry import reference
from function.registry.credentials import Credential
from function.registry.inspect import (
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.oras import OrasInspector
from tests.cases import Case, table

LABELS = {
    "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]
    ),
    "org.opencontainers.image.version": "0.8.5",
}


def inspect(
    tools: Tools, image: str, *, credential: Credential | None = None, timeout: float = 20
) -> InspectionOutcome:
    ref = reference.parse(image)
    inspector = OrasInspector(
        oras=str(tools.oras), timeout_s=timeout, insecure=frozenset({ref.registry})
    )
    return asyncio.run(inspector.inspect(InspectionRequest(image, ref, credential)))


def test_reads_labels_entrypoint_and_the_digest_the_tag_resolved_to(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """A real registry answers labels, entrypoint and the digest the tag resolved to."""
    digest = registry.push(
        "amd/aim-qwen", "0.8.5", LABELS, entrypoint=("aim-runtime", "--x"), workdir=tmp_path
    )
    outcome = inspect(tools, f"{registry.host}/amd/aim-qwen:0.8.5")

    assert isinstance(outcome, Inspection)
    assert outcome.digest == digest
    assert outcome.labels == LABELS
    assert outcome.entrypoint == ("aim-runtime", "--x")


def test_a_digest_reference_reads_the_same_image(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """A digest reference reads the same image as its tag."""
    digest = registry.push("amd/pinned", "1", LABELS, workdir=tmp_path)
    outcome = inspect(tools, f"{registry.host}/amd/pinned@{digest}")

    assert isinstance(outcome, Inspection)
    assert outcome.digest == digest
    assert outcome.labels["com.amd.aim.model.canonicalName"] == "Qwen/Qwen3-32B"


def test_an_image_index_is_read_through_its_linux_amd64_image(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """A multi-platform image is read through its linux/amd64 image."""
    arm = registry.push("amd/multi", "arm", {"which": "arm64"}, workdir=tmp_path)
    amd = registry.push("amd/multi", "amd", {"which": "amd64"}, workdir=tmp_path)
    index = registry.push_index(
        "amd/multi", "1.0", [(arm, "linux", "arm64"), (amd, "linux", "amd64")]
    )
    outcome = inspect(tools, f"{registry.host}/amd/multi:1.0")

    assert isinstance(outcome, Inspection)
    assert outcome.digest == index  # the tag's digest, not the platform image's
    assert outcome.labels == {"which": "amd64"}


def test_an_index_without_linux_amd64_is_reported(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """An index without linux/amd64 is reported as such."""
    arm = registry.push("amd/armonly", "arm", {"which": "arm64"}, workdir=tmp_path)
    registry.push_index("amd/armonly", "1.0", [(arm, "linux", "arm64")])
    outcome = inspect(tools, f"{registry.host}/amd/armonly:1.0")

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.NOT_FOUND
    assert "linux/amd64" in outcome.message


def test_a_missing_tag_is_not_found_in_the_registrys_words(
    tools: Tools, registry: Registry
) -> None:
    """A missing tag is NotFound, in the registry's words."""
    outcome = inspect(tools, f"{registry.host}/amd/nothing-here:9.9")

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.NOT_FOUND
    assert "not found" in outcome.message
    assert "amd/nothing-here:9.9" in outcome.message


def test_basic_auth_with_the_right_credential(
    tools: Tools, private_registry: Registry, tmp_path: Path
) -> None:
    """A private registry is read with the right credential."""
    private_registry.push("team/model", "v1", LABELS, workdir=tmp_path)
    outcome = inspect(
        tools,
        f"{private_registry.host}/team/model:v1",
        credential=Credential(private_registry.host, USER, PASSWORD),
    )

    assert isinstance(outcome, Inspection)
    assert outcome.labels == LABELS


@dataclass(frozen=True)
class PasswordCase(Case):
    password: str | None


PASSWORD_CASES = [
    PasswordCase("anonymous", "no pull secret for a private registry", None),
    PasswordCase("wrong", "a pull secret with a wrong password", "wrong-password"),
]


@table(PASSWORD_CASES)
def test_basic_auth_refused_is_unauthorized_and_never_shows_the_password(
    tools: Tools, private_registry: Registry, tmp_path: Path, case: PasswordCase
) -> None:
    """A refused credential is Unauthorized, and the password never appears."""
    password = case.password
    private_registry.push("team/locked", "v1", LABELS, workdir=tmp_path)
    credential = Credential(private_registry.host, USER, password) if password else None
    outcome = inspect(tools, f"{private_registry.host}/team/locked:v1", credential=credential)

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.UNAUTHORIZED
    assert "team/locked" in outcome.message
    assert PASSWORD not in repr(outcome)
    assert "wrong-password" not in repr(outcome)


def test_a_registry_that_never_answers_times_out(tools: Tools, silent_server: str) -> None:
    """A registry that never answers times out instead of hanging the call."""
    outcome = inspect(tools, f"{silent_server}/amd/slow:1", timeout=2)

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.TIMEOUT
    assert "within 2s" in outcome.message


def test_nothing_listening_is_unreachable(tools: Tools) -> None:
    """A registry address with nothing listening is Unreachable."""
    outcome = inspect(tools, "127.0.0.1:9/amd/none:1")

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.UNREACHABLE
    assert "connection refused" in outcome.message


def test_a_missing_oras_binary_is_a_registry_error_not_a_crash() -> None:
    """A missing oras binary is a registry error, not a crash."""
    ref = reference.parse("127.0.0.1:9/amd/none:1")
    inspector = OrasInspector(oras="/nonexistent/oras")
    outcome = asyncio.run(inspector.inspect(InspectionRequest("x", ref)))

    assert isinstance(outcome, RegistryFailure)
    assert outcome.kind is FailureKind.ERROR
    assert "/nonexistent/oras" in outcome.message


def test_inspections_run_concurrently_without_blocking_the_event_loop(
    tools: Tools, silent_server: str
) -> None:
    """Two hanging registries and a ticking coroutine: the ticks go on while oras waits."""
    ref = reference.parse(f"{silent_server}/amd/slow:1")
    inspector = OrasInspector(
        oras=str(tools.oras), timeout_s=1.5, insecure=frozenset({ref.registry})
    )

    async def scenario() -> tuple[int, list[InspectionOutcome]]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.create_task(tick())
        outcomes = await asyncio.gather(
            inspector.inspect(InspectionRequest("a", ref)),
            inspector.inspect(InspectionRequest("b", ref)),
        )
        ticker.cancel()
        return ticks, list(outcomes)

    ticks, outcomes = asyncio.run(scenario())
    assert all(isinstance(o, RegistryFailure) and o.kind is FailureKind.TIMEOUT for o in outcomes)
    assert ticks >= 10  # about 30 in 1.5 s; a blocking call would allow none


def test_a_mirror_serves_a_registrys_images_with_that_registrys_credential(
    tools: Tools, private_registry: Registry, tmp_path: Path
) -> None:
    """`--registry-mirror private.registry=<host>`: the image keeps its name and pull secret;
    only the host asked changes (how seed 004's private registry is served in the journeys)."""
    digest = private_registry.push("models/proprietary", "v1", LABELS, workdir=tmp_path)
    image = "private.registry/models/proprietary:v1"
    inspector = OrasInspector(
        oras=str(tools.oras),
        timeout_s=20,
        insecure=frozenset({private_registry.host}),
        mirrors={"private.registry": private_registry.host},
    )
    ref = reference.parse(image)
    outcome = asyncio.run(
        inspector.inspect(
            InspectionRequest(image, ref, Credential("private.registry", USER, PASSWORD))
        )
    )

    assert isinstance(outcome, Inspection)
    assert outcome.image == image  # recorded as the user wrote it
    assert outcome.digest == digest

    anonymous = asyncio.run(inspector.inspect(InspectionRequest(image, ref, None)))
    assert isinstance(anonymous, RegistryFailure)
    assert anonymous.kind is FailureKind.UNAUTHORIZED
