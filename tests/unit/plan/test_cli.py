"""The `aim plan` command: its output formats, exit codes, and what it may import."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from aim_plan.cli import cli
from tests.unit.imports import imports

ROOT = Path(__file__).parents[3]
JOURNEY = ROOT / "examples" / "journeys" / "custom-models"


def test_json_and_yaml_carry_the_same_plan() -> None:
    """Tools get one plan whichever format they parse."""
    runner = CliRunner()
    as_json = runner.invoke(cli, ["plan", str(JOURNEY), "-o", "json"])
    as_yaml = runner.invoke(cli, ["plan", str(JOURNEY), "-o", "yaml"])
    assert (as_json.exit_code, as_yaml.exit_code) == (0, 0)
    assert json.loads(as_json.output) == yaml.safe_load(as_yaml.output)


def test_the_text_output_lists_each_aim_object_with_its_status_and_simulations() -> None:
    """The page shows `KIND NAMESPACE/NAME STATUS`, names each simulation and what it stands
    for, and ends with whether the plan converged."""
    result = CliRunner().invoke(cli, ["plan", str(JOURNEY), "--gpu-node", "MI300X:8"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "AIMService ml-team/llama-custom Running" in lines
    assert any(line.startswith("simulated kserve_reports_ready (KServe") for line in lines)
    assert lines[-1].startswith("converged: round")


def test_a_plan_that_does_not_converge_exits_1_naming_what_still_changed() -> None:
    """A CI gate sees exit 1, and the reader what was still changing."""
    result = CliRunner().invoke(cli, ["plan", str(JOURNEY), "--max-rounds", "2"])
    assert result.exit_code == 1
    assert "did not converge in 2 rounds; still changing:" in result.output
    assert "AIMService ml-team/llama-custom (changed)" in result.output


def test_unreadable_input_exits_2_naming_it(tmp_path: Path) -> None:
    """Input the plan cannot read is a usage error (2), naming the path."""
    result = CliRunner().invoke(cli, ["plan", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "missing.yaml: no such file or directory" in result.output


def test_an_unknown_gpu_model_exits_2_listing_the_known_ones() -> None:
    """A GPU the function does not know would match no template: refused, with the known ones."""
    result = CliRunner().invoke(cli, ["plan", str(JOURNEY), "--gpu-node", "H100"])
    assert result.exit_code == 2
    assert "MI300X" in result.output


def test_without_a_node_the_plan_says_how_to_add_one() -> None:
    """No Node means no GPU for any template: the output says so and how to add one."""
    result = CliRunner().invoke(cli, ["plan", str(JOURNEY)])
    assert "note: no Node in the manifests" in result.output
    assert "--gpu-node" in result.output


def test_aim_plan_imports_no_development_code() -> None:
    """Users install aim_plan with the project; devtools/ and tests/ are not installed."""
    found = [
        str(i)
        for path in sorted((ROOT / "aim_plan").rglob("*.py"))
        for i in imports(path)
        if i.module.split(".")[0] in {"devtools", "tests", "benchmarks"}
    ]
    assert not found
