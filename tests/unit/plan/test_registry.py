"""`aim plan` reads registries with the function's client: its flags, --offline, the plan without
an oras, and each question asked once per run (tests/registry/ reads a real registry)."""

from __future__ import annotations

import base64
import json
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import aim_plan.cli
from aim_plan.cli import cli
from aim_plan.load import load
from aim_plan.registry import (
    NO_ORAS_NOTE,
    NO_ORAS_READ,
    NOT_READ,
    Answers,
    OfflineRegistry,
)
from aim_plan.report import data, text
from aim_plan.rounds import Plan, plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World
from function.registry.inspect import (
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.listing import MAX_SYNC_TAGS
from function.registry.oras_listing import DEFAULT_TIMEOUT_S as DEFAULT_LISTING_TIMEOUT_S
from function.registry.oras_listing import OrasLister
from tests.cases import Case, table
from tests.e2e.images import LLAMA_31_8B

JOURNEYS = Path(__file__).parents[3] / "examples" / "journeys"
CLUSTER_MODEL = JOURNEYS / "cluster-model"
DIGEST = "sha256:" + "ab" * 32
CAT = shutil.which("cat") or "/bin/cat"  # found before the tests empty PATH
PASSWORD = "s3cret-pull-password-4711"  # noqa: S105 - a made-up login for a made-up registry


@pytest.fixture(autouse=True)
def no_ambient_oras(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """PATH holds only a directory the test fills, and AIM_ORAS is unset: no oras of the
    machine's is found unless the test puts one there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("AIM_ORAS", raising=False)
    return bin_dir


def run(*args: str, code: int = 0) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["plan", *args, "--gpu-node", "MI300X", "-o", "json"])
    assert result.exit_code == code, result.output
    report: dict[str, Any] = json.loads(result.output)
    return report


def condition(report: dict[str, Any], kind: str, ctype: str) -> dict[str, Any]:
    [obj] = [o for o in report["objects"] if o["kind"] == kind]
    return next(c for c in obj["status"]["conditions"] if c["type"] == ctype)


@dataclass(frozen=True)
class FlagCase(Case):
    args: tuple[str, ...]
    names: tuple[str, ...]
    """What the error must name: the flag, and the form or the flag it conflicts with."""


FLAG_CASES = [
    FlagCase(
        "mirror-without-host",
        "a mirror needs REGISTRY=HOST; the function's own parser says so",
        ("--registry-mirror", "ghcr.io"),
        ("--registry-mirror", "REGISTRY=HOST[:PORT]"),
    ),
    FlagCase(
        "mirror-with-path",
        "a mirror is a host, not a repository path",
        ("--registry-mirror", "ghcr.io=mirror:5000/cache"),
        ("--registry-mirror", "REGISTRY=HOST[:PORT]"),
    ),
    FlagCase(
        "timeout-below-a-second",
        "an inspection needs at least a second, as in the function",
        ("--registry-timeout", "0.5"),
        ("--registry-timeout",),
    ),
    FlagCase(
        "listing-timeout-below-a-second",
        "a listing needs at least a second, as in the function",
        ("--registry-listing-timeout", "0.5"),
        ("--registry-listing-timeout",),
    ),
    FlagCase(
        "listing-max-tags-zero",
        "a sync that may read no tag lists nothing: at least one, as in the function",
        ("--registry-listing-max-tags", "0"),
        ("--registry-listing-max-tags",),
    ),
    FlagCase(
        "offline-with-listing-timeout",
        "a listing timeout beside --offline would be ignored: refused instead",
        ("--offline", "--registry-listing-timeout", "5"),
        ("--registry-listing-timeout", "--offline"),
    ),
    FlagCase(
        "offline-with-listing-max-tags",
        "a listing bound beside --offline would be ignored: refused instead",
        ("--offline", "--registry-listing-max-tags", "5"),
        ("--registry-listing-max-tags", "--offline"),
    ),
    FlagCase(
        "oras-missing",
        "an --oras that is not there is an error, not a silent offline plan",
        ("--oras", "/nonexistent/oras"),
        ("--oras", "/nonexistent/oras", "--offline"),
    ),
    FlagCase(
        "offline-with-mirror",
        "a mirror beside --offline would be ignored: refused instead",
        ("--offline", "--registry-mirror", "ghcr.io=m:5000"),
        ("--registry-mirror", "--offline"),
    ),
    FlagCase(
        "offline-with-insecure",
        "an insecure registry beside --offline would be ignored: refused instead",
        ("--offline", "--insecure-registry", "m:5000"),
        ("--insecure-registry", "--offline"),
    ),
    FlagCase(
        "offline-with-timeout",
        "a timeout beside --offline would be ignored: refused instead",
        ("--offline", "--registry-timeout", "5"),
        ("--registry-timeout", "--offline"),
    ),
]


@table(FLAG_CASES)
def test_a_registry_flag_error_exits_2_naming_the_flag(case: FlagCase) -> None:
    """Flag errors are usage errors (2) that name the flag and what to write instead."""
    result = CliRunner().invoke(cli, ["plan", str(CLUSTER_MODEL), *case.args])
    assert result.exit_code == 2, case.reason
    for name in case.names:
        assert name in result.output, case.reason


def test_offline_reads_no_registry_and_says_how_to_plan_past_it() -> None:
    """--offline: the model's condition and the registry section say --offline read nothing and
    name the fix (spec.imageMetadata, or drop --offline); no note about oras."""
    report = run(str(CLUSTER_MODEL), "--offline")
    extracted = condition(report, "AIMClusterModel", "MetadataExtracted")
    assert extracted["reason"] == "MetadataExtractionFailed"
    # What the user reads on the model: why nothing was read, and both ways past it.
    for words in ("--offline", "set spec.imageMetadata", "drop --offline"):
        assert words in extracted["message"]
    assert report["registry"]["images"] == [
        {"image": LLAMA_31_8B.image, "outcome": "RegistryUnreachable", "message": NOT_READ}
    ]
    assert NO_ORAS_NOTE not in report["notes"]


def test_without_an_oras_the_plan_is_offline_with_a_note_naming_the_fix() -> None:
    """No oras on PATH and no --oras: not a crash but an offline plan, the note and the model's
    condition naming the fixes (install oras, --oras, --offline to silence)."""
    report = run(str(CLUSTER_MODEL))
    [note] = [n for n in report["notes"] if "oras" in n]
    for fix in ("install oras", "--oras PATH", "--offline"):
        assert fix in note
    extracted = condition(report, "AIMClusterModel", "MetadataExtracted")
    assert NO_ORAS_READ in extracted["message"]
    assert report["converged"]


def fake_oras(bin_dir: Path, labels: dict[str, str]) -> Path:
    """An `oras` that answers `manifest fetch` with an image manifest and `fetch-config` with a
    config carrying `labels`, and records each command line (never its standard input)."""
    config = {"architecture": "amd64", "os": "linux", "config": {"Labels": labels}}
    (bin_dir / "config.json").write_text(json.dumps(config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json"},
        "layers": [],
    }
    (bin_dir / "manifest.json").write_text(json.dumps(manifest))
    script = bin_dir / "oras"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {bin_dir}/calls\n'
        f'if [ "$2" = fetch-config ]; then exec {CAT} {bin_dir}/config.json; fi\n'
        f"exec {CAT} {bin_dir}/manifest.json\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_the_oras_on_path_reads_the_labels_and_the_report_lists_the_image(
    no_ambient_oras: Path,
) -> None:
    """By default the plan reads the image with the oras on PATH, as the function does: the
    model's templates come from the labels, and the text output has one line for the image."""
    fake_oras(no_ambient_oras, LLAMA_31_8B.labels())
    result = CliRunner().invoke(cli, ["plan", str(CLUSTER_MODEL), "--gpu-node", "MI300X"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "AIMService ml-team/llama-chat Running" in lines
    [line] = [line for line in lines if line.startswith("registry:")]
    assert line.startswith(f"registry: read {LLAMA_31_8B.image} (sha256:")
    calls = (no_ambient_oras / "calls").read_text().splitlines()
    # The manifest once, its config once: the model is reconciled every round, asked once.
    assert [c.split()[1] for c in calls] == ["fetch", "fetch-config"]
    assert not any("--plain-http" in c for c in calls)


def test_the_function_s_flags_reach_its_client(no_ambient_oras: Path) -> None:
    """--registry-mirror and --insecure-registry mean what they mean to the function: the image
    keeps its name, the mirror is asked, over plain HTTP when listed insecure; --oras (here as
    AIM_ORAS, the function's variable) picks the binary."""
    script = fake_oras(no_ambient_oras, LLAMA_31_8B.labels())
    script.rename(no_ambient_oras / "my-oras")
    result = CliRunner().invoke(
        cli,
        [
            "plan",
            str(CLUSTER_MODEL),
            "--registry-mirror",
            "GHCR.io=Mirror.local:5000",
            "--insecure-registry",
            "mirror.local:5000",
            "-o",
            "json",
        ],
        env={"AIM_ORAS": str(no_ambient_oras / "my-oras")},
    )
    assert result.exit_code == 0, result.output
    calls = (no_ambient_oras / "calls").read_text().splitlines()
    assert calls[0].startswith("manifest fetch mirror.local:5000/silogen/aim-meta-llama")
    assert all("--plain-http" in c for c in calls)
    [image] = json.loads(result.output)["registry"]["images"]
    assert (image["image"], image["outcome"]) == (LLAMA_31_8B.image, "read")


def test_the_listing_flags_reach_the_lister(
    no_ambient_oras: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--registry-listing-timeout and --registry-listing-max-tags, which a source's listing
    failure tells the user to raise, bound the plan's listings as they bound the function's:
    the lister the plan reads sources with has them (the defaults are the function's)."""
    fake_oras(no_ambient_oras, LLAMA_31_8B.labels())
    listers: list[OrasLister] = []

    def recording(world: World, max_rounds: int, registry: Answers) -> Plan:
        assert isinstance(registry.lister, OrasLister)
        listers.append(registry.lister)
        return plan(world, max_rounds, registry)

    monkeypatch.setattr(aim_plan.cli, "plan", recording)
    args = ["plan", str(CLUSTER_MODEL), "-o", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        cli, [*args, "--registry-listing-timeout", "5", "--registry-listing-max-tags", "7"]
    )
    assert result.exit_code == 0, result.output
    defaults, given = listers
    assert (defaults.timeout_s, defaults.max_tags) == (DEFAULT_LISTING_TIMEOUT_S, MAX_SYNC_TAGS)
    assert (given.timeout_s, given.max_tags) == (5.0, 7)
    assert given.inspector.oras == str(no_ambient_oras / "oras")


@dataclass
class CountingInspector:
    """An inspector that counts the questions it is asked (credentials included)."""

    answer: str = "fail"
    asked: list[InspectionRequest] = field(default_factory=list)

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        self.asked.append(request)
        if self.answer == "fail":
            return RegistryFailure(request.image, FailureKind.TIMEOUT, "no answer within 30s")
        return Inspection(request.image, DIGEST, LLAMA_31_8B.labels())


def pull_secret(name: str, namespace: str) -> dict[str, Any]:
    auth = base64.b64encode(f"reader:{PASSWORD}".encode()).decode()
    config = json.dumps({"auths": {"ghcr.io": {"auth": auth}}})
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": namespace},
        "data": {".dockerconfigjson": base64.b64encode(config.encode()).decode()},
    }


def team_model(namespace: str, secret: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"image": LLAMA_31_8B.image, "discovery": {"enabled": True}}
    if secret:
        spec["imagePullSecrets"] = [{"name": secret}]
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": "llama", "namespace": namespace},
        "spec": spec,
    }


def world(*extra: dict[str, Any]) -> World:
    return World([*load([CLUSTER_MODEL]).objects, *extra, gpu_node("MI300X", 8)])


def test_each_question_is_asked_once_per_run_with_its_credential_part_of_it() -> None:
    """A failing image is asked again by every reconcile of every round, and by the second plan
    of --against: the registry is asked once per distinct question. The same image asked with
    a pull secret's login is another question (it may get another answer)."""
    fake = CountingInspector()
    answers = Answers(fake, OfflineRegistry())
    extra = [
        team_model("team-a", None),
        team_model("team-b", "creds"),
        pull_secret("creds", "team-b"),
    ]
    first = plan(world(*extra), registry=answers)
    second = plan(world(*extra), registry=answers)
    assert first.rounds >= 2  # the failing models were reconciled again, and asked again
    assert len(fake.asked) == 2
    assert {r.credential is None for r in fake.asked} == {True, False}
    for each in (first, second):
        assert {r.image for r in each.registry.images} == {LLAMA_31_8B.image}
        assert len(each.registry.images) == 2


def test_a_failure_is_reported_with_its_kind_and_the_registry_s_words_never_a_password() -> None:
    """The report lists each image with its outcome; the pull secret's password is nowhere."""
    result = plan(
        world(team_model("team-b", "creds"), pull_secret("creds", "team-b")),
        registry=Answers(CountingInspector(), OfflineRegistry()),
    )
    report = data(result, [], [])
    assert report["registry"]["images"] == [
        {
            "image": LLAMA_31_8B.image,
            "outcome": "RegistryTimeout",
            "message": "no answer within 30s",
        }
    ]
    page = text(report)
    assert f"registry: {LLAMA_31_8B.image}: RegistryTimeout: no answer within 30s" in page
    assert PASSWORD not in page
    assert PASSWORD not in yaml.safe_dump(report)
