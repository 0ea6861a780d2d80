"""Hypothesis profiles for the fuzz tier (`AIM_FUZZ_PROFILE`, `ci` when unset).

`ci` is what the README's test command runs: derandomized (the examples follow from each test's
own seed, whatever the run or the machine), a bounded count per kind, no example database. The
same code draws the same examples, so the tier cannot turn red on a change that did not cause
it; what earlier runs found is replayed first, as the kept cases of tests/fuzz/kept/.

`explore` is the open-ended search (docs/development.md, "Hostile input"): random each run, many
more examples, and a local example database (`.hypothesis/examples`, git-ignored) so a failure
it found is tried first on the next explore run while it is being fixed. `debug` skips shrinking,
so a failure shows at once.

Whatever the profile, the constants hypothesis mixes into its draws are the literals of
function/, the code under test, and nothing else (`_fixed_local_constants`): left to itself,
hypothesis collects them from every local module imported so far, so the examples a seed drew
depended on which tests had run before in the same process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants, constants_from_module
from hypothesis.internal.floats import float_to_int
from sortedcontainers import SortedSet  # type: ignore[import-untyped]

from tests.fuzz.driver import DIGESTS, TOTALS

ROOT = Path(__file__).resolve().parents[2]

# Drawing whole worlds is slow and large by design; examples are not timed (no deadline).
_COMMON = settings(
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


def _examples(default: int) -> int:
    return int(os.environ.get("AIM_FUZZ_EXAMPLES", str(default)))


settings.register_profile("ci", max_examples=_examples(60), derandomize=True, parent=_COMMON)
settings.register_profile(
    "explore",
    max_examples=_examples(11200),
    print_blob=True,
    database=DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis" / "examples")),
    parent=_COMMON,
)
settings.register_profile(
    "debug", max_examples=_examples(20), phases=[Phase.explicit, Phase.generate], parent=_COMMON
)
settings.load_profile(os.environ.get("AIM_FUZZ_PROFILE", "ci"))


@cache
def function_constants() -> Constants:
    """The literals of every module under function/, read from their files (none imported), in
    sorted sets as hypothesis keeps its own, so they are drawn in the same order in any process."""
    constants = Constants(
        integers=SortedSet(), floats=SortedSet(key=float_to_int), bytes=SortedSet(),
        strings=SortedSet(),
    )  # fmt: skip
    for path in sorted((ROOT / "function").rglob("*.py")):
        module = ModuleType(".".join(path.relative_to(ROOT).with_suffix("").parts))
        module.__file__ = str(path)
        constants |= constants_from_module(module)
    return constants


@pytest.fixture(autouse=True)
def _fixed_local_constants(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hypothesis draws, with a small probability, a constant found in the "local" modules
    (`hypothesis.internal.conjecture.providers._get_local_constants`): those of every module in
    sys.modules outside site-packages and the standard library, re-read whenever sys.modules
    grows. In a full run that is whatever the tests before had imported (devtools.plan,
    aim_migrate, ...), so a seed drew other examples than alone. Pinned to function/'s."""
    monkeypatch.setattr(providers, "_get_local_constants", function_constants)
    providers.CONSTANTS_CACHE.cache.clear()
    yield
    providers.CONSTANTS_CACHE.cache.clear()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Per kind: examples drawn, RunFunction calls, problems, distinct conditions reached, and a
    digest of every request sent (two `ci` runs of the same code print the same digests)."""
    if not TOTALS:
        return
    terminalreporter.section("fuzz tier")
    terminalreporter.write_line(
        f"{'kind':28} {'examples':>9} {'calls':>9} {'problems':>9} {'conditions':>10} digest"
    )
    for kind, totals in sorted(TOTALS.items()):
        reached = len([k for k in totals if "=" in k])
        digest = DIGESTS[kind].hexdigest()[:16] if kind in DIGESTS else "-"
        terminalreporter.write_line(
            f"{kind:28} {totals['examples']:>9} {totals['calls']:>9} {totals['problems']:>9} "
            f"{reached:>10} {digest}"
        )
