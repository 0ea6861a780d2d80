"""The plan's page: a service's templates not chosen, capped so a large catalog stays readable."""

from __future__ import annotations

from typing import Any

from aim_plan.report import NOT_CHOSEN_SHOWN, text


def report_with(not_chosen: int) -> dict[str, Any]:
    service = {
        "kind": "AIMService",
        "name": "chat",
        "namespace": "ml-team",
        "status": "Running",
        "conditions": [],
        "composes": [],
        "template": "best",
        "templateReady": "using AIMServiceTemplate 'best'",
        "notChosen": [
            {"name": f"t{i}", "kind": "AIMServiceTemplate", "why": f"reason {i}"}
            for i in range(not_chosen)
        ],
    }
    return {
        "aim": [service],
        "simulated": {},
        "registry": {},
        "ignored": [],
        "notes": [],
        "converged": True,
        "rounds": 1,
        "didNotConverge": [],
    }


def test_the_page_lists_the_first_templates_not_chosen_then_how_many_more() -> None:
    """Each shown with its reason under the template and its why; the rest counted, not cut
    silently (the data, -o json, lists them all)."""
    lines = text(report_with(NOT_CHOSEN_SHOWN + 2)).splitlines()
    start = lines.index("  template: best")
    assert lines[start + 1] == "    why: using AIMServiceTemplate 'best'"
    shown = lines[start + 2 : start + 2 + NOT_CHOSEN_SHOWN]
    assert shown == [f"    not chosen: t{i} — reason {i}" for i in range(NOT_CHOSEN_SHOWN)]
    assert lines[start + 2 + NOT_CHOSEN_SHOWN] == "    and 2 more"


def test_no_count_line_when_every_template_not_chosen_is_shown() -> None:
    """Exactly the cap: all shown, no `and 0 more`."""
    page = text(report_with(NOT_CHOSEN_SHOWN))
    assert "more" not in page
    assert f"not chosen: t{NOT_CHOSEN_SHOWN - 1} — reason" in page
