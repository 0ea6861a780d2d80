"""The two-replica benchmark in its smoke mode, among the modules that start a node of their own.

`benchmarks/replicas.py` runs the function in pods on a node (two replicas, then one) and kills
one of them while services converge. Its figures are printed, not asserted; what a user relies
on is: every service still reaches Running and none gets a second InferenceService.
"""

from __future__ import annotations

from tests.benchmarks.run import run_benchmark

ROWS = (
    "kill to next service written (s)",
    "kill to replicas ready again (s)",
    "kill to every service Running (s)",
    "events repeated",
)


def cells(stdout: str, row: str) -> list[str]:
    """The cells of a row of the table, one per phase."""
    [line] = [x for x in stdout.splitlines() if x.startswith(row)]
    return line[len(row) :].split()


def test_a_killed_replica_loses_and_duplicates_no_service() -> None:
    """Four services a phase, with two replicas and then one, a pod killed half way: the run
    exits 0 (every phase finished: the replicas came back, every service ran), prints every row
    for both phases, and no service is lost or duplicated. A figure may be "-": four services
    can all be Running before the kill, and then no write follows it."""
    run = run_benchmark("replicas.py", "--smoke", timeout_s=900)
    out = f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, out
    assert cells(run.stdout, "replicas") == ["2", "1"], out
    for row in ROWS:
        figures = cells(run.stdout, row)
        assert len(figures) == len(("two replicas", "one replica")), f"{row!r}: {figures}\n{out}"
    assert cells(run.stdout, "services lost") == ["0", "0"], out
    assert cells(run.stdout, "services duplicated") == ["0", "0"], out
