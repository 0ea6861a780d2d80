"""The diff as `aim plan --against` prints it: text like kubectl diff's, or data."""

from __future__ import annotations

from typing import Any, Final

from aim_plan.diff.compute import Diff
from aim_plan.diff.services import ServiceImpact
from aim_plan.load import Obj, describe
from aim_plan.world import Key


def as_data(result: Diff) -> dict[str, Any]:
    """The diff for `-o yaml|json`; a Secret's changed fields are not named."""
    return {
        "note": LIMIT,
        "created": [c.what for c in result.changes if c.action == "created"],
        "deleted": [c.what for c in result.changes if c.action == "deleted"],
        "changed": [
            {"object": c.what}
            if c.secret
            else {"object": c.what, "paths": list(c.paths), **({"more": c.more} if c.more else {})}
            for c in result.changes
            if c.action == "changed"
        ],
        "runningServices": [
            {
                "service": describe(_stub(s.key)),
                "switchesTemplate": s.switches_template,
                "template": {"live": s.template[0], "planned": s.template[1]},
                "cache": {"live": s.cache[0], "planned": s.cache[1]},
                "cachesLost": list(s.caches_lost),
                "cachesChanged": list(s.caches_changed),
                "redeployed": s.redeployed,
                "rescaled": s.rescaled,
            }
            for s in result.services
        ],
        "redeploys": result.redeploys,
    }


LIMIT: Final = (
    "the plan adds and updates what the manifests give; it deletes no live object they leave "
    "out, and fields only the live object sets (defaults, other controllers') are not compared"
)


def _stub(key: Key) -> Obj:
    return {"apiVersion": key[0], "kind": key[1], "metadata": {"namespace": key[2], "name": key[3]}}


def as_text(result: Diff) -> str:
    """The diff as kubectl diff shows one: `+` created, `-` deleted, `~` changed."""
    sign = {"created": "+", "deleted": "-", "changed": "~"}
    lines = [f"diff against the live cluster ({LIMIT}):"]
    if not result.changes:
        lines.append("  no change")
    for c in result.changes:
        if c.secret and c.action == "changed":
            lines.append(f"~ {c.what} changed")
            continue
        lines.append(f"{sign[c.action]} {c.what}")
        lines += [f"    {p}" for p in c.paths]
        if c.more:
            lines.append(f"    ... and {c.more} more")
    for s in result.services:
        lines += _service_lines(s)
    return "\n".join(lines)


def _service_lines(s: ServiceImpact) -> list[str]:
    what = describe(_stub(s.key))
    if not s.affected:
        return [f"running {what}: unaffected"]
    lines = [f"running {what}:"]
    if s.switches_template:
        lines.append(f"  switches template: {s.template[0]} -> {s.template[1] or '(none)'}")
    if s.cache[0] != s.cache[1]:
        lines.append(f"  template cache: {s.cache[0] or '(none)'} -> {s.cache[1] or '(none)'}")
    lines += [f"  loses cache: {c}" for c in s.caches_lost]
    lines += [f"  cache changes: {c}" for c in s.caches_changed]
    if s.redeployed:
        lines.append(f"  redeployed: {s.redeployed}")
    elif s.rescaled:
        lines.append(f"  rescaled, no pod restarted: {s.rescaled}")
    return lines
