"""Every benchmark runs in its smoke mode, so one that breaks fails the suite instead of rotting.

All but the cold-start benchmark run here; it starts a node, and one host runs one node at a
time, so its smoke run is among the end-to-end modules that start their own
(tests/e2e/test_coldstart_benchmark.py), before the platform's node exists.

The figures of a smoke run mean nothing (a few calls each); what is checked is that the
benchmark starts what it measures, gets through every row, and prints the comparison with its
baseline that its docstring promises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from tests.benchmarks.run import run_benchmark
from tests.cases import Case, table


@dataclass(frozen=True)
class Bench(Case):
    script: str
    prints: tuple[str, ...]
    """Lines (or parts) the run must print: its rows and the baseline it is compared with."""
    timeout_s: float = 120
    never: tuple[str, ...] = ()
    """What the run must not print: a batch that could not finish, say."""


BENCHMARKS = [
    Bench(
        "run-function",
        "RunFunction latency beside the no-op function: the figures README quotes",
        "run_function.py",
        ("aim, 2 workers", "the no-op", "RSS after the runs"),
    ),
    Bench(
        "isolation",
        "well-formed callers alone and beside hostile ones, for both servers",
        "isolation.py",
        ("worker pool   hostile", "in process    hostile"),
    ),
    Bench(
        "inspect-image",
        "inspections against a real registry beside spawning oras, at 1 and 8 at a time",
        "inspect_image.py",
        ("baseline: oras version    8", "inspection                8"),
    ),
    Bench(
        "model-source",
        "a sync composed over 10 x 500 tags (100 x 5,000 in full), and two such wildcards, "
        "beside one repository",
        "model_source.py",
        ("baseline: 1 repository", "listing, versions >=0.5 <4", "2 wildcards, the sync's bound"),
    ),
    Bench(
        "plan",
        "aim plan of a cluster model and 3, then 10 services beside one service, each row saying "
        "whether it converged with every service Running (issue 34's bound is 1,000 in a minute)",
        "plan.py",
        ("baseline: 1 service", "3 services", "yes (3/3)", "10 services", "yes (10/10)"),
    ),
    Bench(
        "scale",
        "services on the local control plane: ours and the floor recorded from it on the stock "
        "core, ours on the patched one (so the patch still applies to the pinned core), each "
        "converging, in its grace and at rest, a circuit breaker opened and closed, compared",
        "scale.py",
        (
            "== 3 services (total 3) in 1 namespaces, stock/ours",
            "== 3 services (total 3) in 1 namespaces, stock/floor",
            "== 3 services (total 3) in 1 namespaces, patched/ours",
            "API writes to Running:",
            "at rest (",
            "component",
            "== #7692: team-0/svc-0 after its breaker opened",
            "== 3 services in 1 namespaces: stock/ours vs stock/floor vs patched/ours",
            "stock ours/floor",
        ),
        timeout_s=900,
        never=("INCOMPLETE", "no floor run"),
    ),
]


@table(BENCHMARKS)
@pytest.mark.timeout(max(b.timeout_s for b in BENCHMARKS) + 60)
def test_the_benchmark_runs_in_its_smoke_mode(case: Bench) -> None:
    """The benchmark exits 0 and prints its rows and its baseline."""
    run = run_benchmark(case.script, "--smoke", timeout_s=case.timeout_s)
    assert run.returncode == 0, f"{case.reason}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    for line in case.prints:
        assert line in run.stdout, f"{case.reason}: {line!r} not printed\n{run.stdout[-3000:]}"
    for line in case.never:
        assert line not in run.stdout, f"{case.reason}: {line!r} printed\n{run.stdout[-3000:]}"


def test_run_function_refuses_too_few_calls_saying_why() -> None:
    """`--calls 1` leaves one latency per row, too few for percentiles: argparse's usage error
    (exit 2) naming the least it takes, not a StatisticsError after the servers have started."""
    run = run_benchmark("run_function.py", "--calls", "1", timeout_s=60)
    assert run.returncode == 2, run.stderr
    assert "--calls must be a whole number of at least 2" in run.stderr


def test_model_source_counts_the_images_past_max_models() -> None:
    """The plain listing row (10 x 500 tags, maxModels 100) creates 100 models and counts the
    other 4,900 as omitted: a sync that lost status.modelsOmitted, or named past the cap, shows
    here even in smoke mode."""
    run = run_benchmark("model_source.py", "--smoke", timeout_s=120)
    assert run.returncode == 0, run.stderr[-3000:]
    row = re.search(r"^listing\s+10 x 500\s+\S+\s+\S+\s+(\S+)\s+(\S+)$", run.stdout, re.MULTILINE)
    assert row is not None, run.stdout
    assert (row[1], row[2]) == ("100", "4900")
