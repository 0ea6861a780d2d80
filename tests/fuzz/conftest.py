"""Hypothesis profiles for the fuzz tier.

`ci` (the default) is what the README's test command runs: a bounded, derandomized example
count per kind, so the tier stays under a minute and a red run is reproducible. `long` is the
documented deep run (`AIM_FUZZ_PROFILE=long AIM_FUZZ_EXAMPLES=12000 .venv/bin/pytest tests/fuzz`),
random each time, printing a reproduction blob for whatever it finds.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.fuzz.driver import TOTALS

_SLOW_DRAWS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]

settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("AIM_FUZZ_EXAMPLES", "60")),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=_SLOW_DRAWS,
)
settings.register_profile(
    "long",
    max_examples=int(os.environ.get("AIM_FUZZ_EXAMPLES", "12000")),
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_DRAWS,
)

settings.register_profile(
    "debug",
    max_examples=int(os.environ.get("AIM_FUZZ_EXAMPLES", "20")),
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=_SLOW_DRAWS,
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
