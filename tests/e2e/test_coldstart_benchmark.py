"""The cold-start benchmark in its smoke mode, among the modules that start a node of their own.

`benchmarks/coldstart.py` runs a node (with KEDA and the HTTP add-on), and one host runs one
node at a time: beside the platform's node it would take the bridge and the Services' host
names from under it. tests/e2e/conftest.py runs this module before the platform starts.
"""

from __future__ import annotations

from tests.benchmarks.run import run_benchmark

ROWS = (
    "baseline: scaled to Ready",
    "wake: request to pod seen",
    "wake: Ready to answered",
    "wake: request to answered",
    "overhead: wake answered - baseline Ready",
)


def test_the_cold_start_benchmark_runs_in_its_smoke_mode() -> None:
    """One round: a workload at zero woken through the add-on beside the same pod scaled up by
    hand; it exits 0 and prints every row of its table, the baseline's among them."""
    run = run_benchmark("coldstart.py", "--smoke", timeout_s=600)
    assert run.returncode == 0, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    for row in ROWS:
        assert row in run.stdout, f"{row!r} not printed\n{run.stdout[-3000:]}"
    assert "INCOMPLETE" not in run.stdout + run.stderr
