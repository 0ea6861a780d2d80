"""Which fields the plan sets differently from a live object: the paths `--against` lists."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import JsonValue

from aim_plan.load import Obj, describe
from aim_plan.views import Condition, conditions_of, mapping_at
from aim_plan.world import Key
from function.kube.views import field_at

NOT_COMPARED_TOP: Final = frozenset({"apiVersion", "kind", "metadata", "status"})
NOT_COMPARED_ANNOTATIONS: Final = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
"""kubectl's copy of the last manifest applied: it changes with every apply, and holds a
Secret's data when the object is one."""
MAX_PATHS: Final = 50
"""Changed paths listed per object; more are counted (a rewritten object lists thousands)."""

Action = Literal["created", "deleted", "changed"]


@dataclass(frozen=True)
class Change:
    """One object the plan would create, delete or change, with the changed paths."""

    action: Action
    key: Key
    paths: tuple[str, ...] = ()
    more: int = 0
    """Changed paths beyond `MAX_PATHS`, not listed."""

    @property
    def what(self) -> str:
        """`Kind namespace/name`."""
        return describe(
            {
                "apiVersion": self.key[0],
                "kind": self.key[1],
                "metadata": {"namespace": self.key[2], "name": self.key[3]},
            }
        )

    @property
    def secret(self) -> bool:
        """Whether the object is a Secret (its paths are never shown)."""
        return self.key[:2] == ("v1", "Secret")


def changed_paths(live: Obj, planned: Obj) -> list[str]:
    """The compared paths whose value the plan sets differently from the live object's."""
    paths: list[str] = []
    for name in sorted(k for k in planned if k not in NOT_COMPARED_TOP):
        _set_differently(name, field_at(live, name), planned[name], paths)
    for name in ("labels", "annotations"):
        before = _without(mapping_at(live, "metadata", name))
        after = _without(mapping_at(planned, "metadata", name))
        # Labels and annotations are the manifest's own: one it drops is removed, so both ways.
        paths += [
            f"metadata.{name}.{k}"
            for k in sorted(before.keys() | after.keys())
            if before.get(k) != after.get(k)
        ]
    paths += _status_paths(live, planned)
    return paths


def _without(values: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    return {k: v for k, v in values.items() if k not in NOT_COMPARED_ANNOTATIONS}


def _set_differently(path: str, live: object, planned: object, out: list[str]) -> None:
    """Append the paths under `path` that `planned` sets and `live` holds otherwise."""
    if isinstance(planned, dict) and isinstance(live, dict):
        for k in sorted(planned):
            _set_differently(f"{path}.{k}", live.get(k), planned[k], out)
    elif isinstance(planned, list) and isinstance(live, list):
        if len(planned) != len(live):
            out.append(path)  # items added or removed: the list is replaced
            return
        for i, (old, new) in enumerate(zip(live, planned, strict=True)):
            _set_differently(f"{path}[{i}]", old, new, out)
    elif planned != live:
        out.append(path)


def _status_paths(live: Obj, planned: Obj) -> list[str]:
    status = field_at(live, "status", "status") != field_at(planned, "status", "status")
    paths = ["status.status"] if status else []
    before, after = _conditions(live), _conditions(planned)
    # A condition type only the live object carries is another writer's (core's Responsive,
    # say): the plan does not set it, so it is not a change, as for any field.
    for ctype in sorted(after):
        old, new = before.get(ctype, Condition(ctype)), after[ctype]
        if old.status != new.status:
            paths.append(f"status.conditions[{ctype}].status")
        if old.reason != new.reason:
            paths.append(f"status.conditions[{ctype}].reason")
    return paths


def _conditions(obj: Obj) -> dict[str, Condition]:
    return {c.type: c for c in conditions_of(obj) if c.type}
