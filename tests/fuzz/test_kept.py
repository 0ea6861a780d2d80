"""What the fuzz tier ever found stays fixed: each kept case is replayed, whatever the seed.

A kept case (tests/fuzz/kept/*.yaml) is one RunFunction call as plain manifests (the XR, its
composed objects, the lookups' answers) with the reason it is kept. The seeded run draws the
same examples each time, but a change to the strategies or the composers changes which; these
calls do not change, so what broke once is asked again on every run, with every check of the
tier (`tests.fuzz.driver.replay`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fuzz import strategies as fz
from tests.fuzz.driver import Call, SimulatedRegistry, replay

KEPT = sorted((Path(__file__).parent / "kept").glob("*.yaml"))


def _load(path: Path) -> dict[str, Any]:
    case = yaml.safe_load(path.read_text())
    assert isinstance(case, dict), f"{path.name}: not a mapping"
    return case


def test_kept_cases_say_why_and_name_a_kind() -> None:
    """A case without its reason cannot be judged when it fails; one of an unknown kind tests
    nothing. The waiting.reason mapping CI found is among them."""
    assert KEPT, "tests/fuzz/kept/ holds no case"
    for path in KEPT:
        case = _load(path)
        reason = str(case.get("reason", ""))
        assert reason.strip(), f"{path.name}: no reason"
        assert "TODO" not in reason, f"{path.name}: the reason is still to be written"
        assert case.get("kind") in fz.xrds(), f"{path.name}: unknown kind {case.get('kind')!r}"
    assert "model-cache-waiting-reason-mapping" in {p.stem for p in KEPT}


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
def test_kept_case_stays_fixed(path: Path) -> None:
    """Replays one kept call with every check of the fuzz tier; its reason says what it found."""
    case = _load(path)
    call = case["call"]
    drawn = case.get("registry") or {}
    registry = SimulatedRegistry(drawn.get("labels", {}), tuple(drawn.get("entrypoint", ())))
    problems = replay(
        case["kind"],
        Call(call["xr"], call.get("observed") or {}, call.get("required") or {}),
        registry,
        case.get("secrets") or (),
    )
    assert not problems, f"{path.name} ({case['reason']}):\n\n" + "\n\n".join(problems)
