"""The diff itself: every change from the live objects to the plan's end state."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from aim_plan.diff.changes import MAX_PATHS, Change, changed_paths
from aim_plan.diff.services import SERVICE_KINDS, Indexed, ServiceImpact, impact
from aim_plan.load import Obj, key_of
from aim_plan.views import text_at
from aim_plan.world import Key


@dataclass
class Diff:
    """Every change the plan would make, and its effect on the running services."""

    changes: list[Change] = field(default_factory=list)
    services: list[ServiceImpact] = field(default_factory=list)

    @property
    def redeploys(self) -> bool:
        """Whether a running service would be redeployed (`aim plan --against` exits 2)."""
        return any(s.redeployed for s in self.services)


def diff(live: Iterable[Obj], planned: Iterable[Obj]) -> Diff:
    """The changes from the `live` objects to the `planned` end state."""
    before = {key_of(o): o for o in live}
    after = {key_of(o): o for o in planned}
    changes: dict[Key, Change] = {}
    for key, obj in after.items():
        old = before.get(key)
        if old is None:
            changes[key] = Change("created", key)
            continue
        paths = changed_paths(old, obj)
        if paths:
            changes[key] = Change("changed", key, tuple(paths[:MAX_PATHS]), len(paths[MAX_PATHS:]))
    for key in before.keys() - after.keys():
        changes[key] = Change("deleted", key)
    result = Diff(changes=[changes[k] for k in sorted(changes, key=_order)])
    indexed = (Indexed.of(before), Indexed.of(after))
    result.services = [
        impact(key, obj, indexed, changes)
        for key, obj in sorted(before.items(), key=lambda kv: _order(kv[0]))
        if key[1] in SERVICE_KINDS and text_at(obj, "status", "status") == "Running"
    ]
    return result


def _order(key: Key) -> tuple[str, str, str, str]:
    return (key[1], key[2], key[3], key[0])
