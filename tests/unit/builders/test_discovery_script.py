"""build/discovery.sh, run for real by /bin/sh with a stand-in for the AIM image's entrypoint.

The stand-in prints what an AIM dry-run prints; the termination-message file is a temporary file
instead of /dev/termination-log (the script reads both locations from its environment).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from function.build.job import SCRIPT, TERMINATION_MESSAGE_LIMIT
from function.rules import discovery

PROFILE = {
    "filename": "vllm-mi300x-fp8-tp1-latency.yaml",
    "profile": {"metadata": {"gpu": "MI300X", "gpu_count": 1}},
    "models": [{"name": "Org/M", "source": "hf://Org/M", "size_gb": 1.5}],
}


def entrypoint(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "aim-runtime"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def run(tmp_path: Path, program: Path, *, path: str | None = None) -> tuple[int, str, str]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    log = tmp_path / "termination-log"
    log.write_text("")
    env = {
        "PATH": path if path is not None else os.environ["PATH"],
        "AIM_DISCOVERY_DIR": str(out),
        "AIM_TERMINATION_LOG": str(log),
    }
    proc = subprocess.run(
        ["/bin/sh", "-c", SCRIPT, "aim-discovery", str(program), "dry-run", "--format=json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=30,
    )
    return proc.returncode, proc.stdout, log.read_text()


def test_a_result_that_fits_travels_whole(tmp_path: Path) -> None:
    """A dry-run result that fits the termination message travels whole."""
    program = entrypoint(tmp_path, f"echo '{json.dumps([PROFILE])}'\n")
    code, stdout, message = run(tmp_path, program)

    assert code == 0
    assert json.loads(message) == [PROFILE]
    assert json.loads(stdout) == [PROFILE]  # still in the log for kubectl logs
    result = discovery.parse_result(message, limit=TERMINATION_MESSAGE_LIMIT)
    assert result.sources[0].size == "1536Mi"


def test_the_entrypoint_gets_the_dry_run_arguments(tmp_path: Path) -> None:
    """The wrapper runs the entrypoint with the dry-run arguments."""
    program = entrypoint(tmp_path, 'printf "%s," "$@"\n')
    _, stdout, _ = run(tmp_path, program)
    assert stdout == "dry-run,--format=json,"


def test_a_large_result_is_cut_to_its_first_profile(tmp_path: Path) -> None:
    """A result too large for a termination message is cut to its first profile."""
    many = [PROFILE] + [{**PROFILE, "filename": f"p{i}.yaml", "pad": "x" * 200} for i in range(30)]
    program = entrypoint(tmp_path, f"cat <<'EOF'\n{json.dumps(many)}\nEOF\n")
    code, _, message = run(tmp_path, program)

    assert code == 0
    assert len(message) <= TERMINATION_MESSAGE_LIMIT
    assert json.loads(message) == [PROFILE]


def test_too_large_even_when_cut_says_how_large(tmp_path: Path) -> None:
    """A result too large even when cut says how large it was."""
    huge = [{**PROFILE, "pad": "x" * 5000}]
    program = entrypoint(tmp_path, f"cat <<'EOF'\n{json.dumps(huge)}\nEOF\n")
    code, _, message = run(tmp_path, program)

    assert code == 0
    assert json.loads(message)["aimDiscoveryOutputBytes"] > TERMINATION_MESSAGE_LIMIT
    with pytest.raises(discovery.ResultError, match="more than the 4096"):
        discovery.parse_result(message, limit=TERMINATION_MESSAGE_LIMIT)


def test_without_python_a_large_result_is_reported_not_truncated(tmp_path: Path) -> None:
    """Without Python in the image, a large result is reported, never truncated into garbage."""
    many = [{**PROFILE, "pad": "x" * 3000}, {**PROFILE, "pad": "y" * 3000}]
    program = entrypoint(tmp_path, f"cat <<'EOF'\n{json.dumps(many)}\nEOF\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("cat", "wc", "mv", "printf"):  # what the script needs, and no python3
        real = subprocess.run(
            ["/bin/sh", "-c", f"command -v {tool}"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if real.startswith("/"):
            (tools / tool).symlink_to(real)
    code, _, message = run(tmp_path, program, path=str(tools))

    assert code == 0
    assert "aimDiscoveryOutputBytes" in json.loads(message)


def test_a_failing_dry_run_fails_the_container_and_leaves_the_message_to_kubernetes(
    tmp_path: Path,
) -> None:
    """A failing dry-run fails the container and leaves its message to Kubernetes."""
    program = entrypoint(
        tmp_path, "echo 'partial'; echo 'ERROR: no profile for MI210' >&2; exit 3\n"
    )
    code, stdout, message = run(tmp_path, program)

    assert code == 3
    assert "partial" in stdout
    assert message == ""  # FallbackToLogsOnError then uses the log's tail
