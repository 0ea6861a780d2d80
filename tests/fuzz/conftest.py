"""Hypothesis profiles for the fuzz tier.

`ci` (the default) is what the README's test command runs: a bounded, derandomized example
count per kind, so the tier stays under a minute and a red run is reproducible. `long` is the
documented deep run (README, "Hostile input"), random each time, printing a reproduction blob
for whatever it finds.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.fuzz.driver import TOTALS

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
settings.register_profile("long", max_examples=_examples(11200), print_blob=True, parent=_COMMON)
# While fixing a finding: no shrinking, so a failure shows at once.
settings.register_profile(
    "debug", max_examples=_examples(20), phases=[Phase.explicit, Phase.generate], parent=_COMMON
)
settings.load_profile(os.environ.get("AIM_FUZZ_PROFILE", "ci"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Per kind: examples drawn, RunFunction calls, problems, distinct conditions reached."""
    if not TOTALS:
        return
    terminalreporter.section("fuzz tier")
    terminalreporter.write_line(
        f"{'kind':28} {'examples':>9} {'calls':>9} {'problems':>9} conditions"
    )
    for kind, totals in sorted(TOTALS.items()):
        reached = len([k for k in totals if "=" in k])
        terminalreporter.write_line(
            f"{kind:28} {totals['examples']:>9} {totals['calls']:>9} {totals['problems']:>9} "
            f"{reached}"
        )
