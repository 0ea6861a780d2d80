"""What a plan prints: a page a person reads, or the same as data (`-o yaml|json`) for tools.

Secrets are in the world (the function reads them) but never in the output: not as objects, not
in what an XR composes, so neither a value nor a key of one can reach a terminal or a CI log.
"""

from __future__ import annotations

from typing import Any, Final

from aim_plan.load import Ignored, Obj, is_aim
from aim_plan.registry import NOT_LISTED, NOT_READ
from aim_plan.rounds import Plan
from aim_plan.simulate import SIMULATIONS

ABNORMAL_WHEN_TRUE: Final = frozenset(
    {"Progressing", "Failure", "Degraded", "Retained", "MaxModelsLimitReached", "CredentialsInline"}
)
"""Conditions that say something is wrong (or pending) when True; the others when not True."""

SIMULATED: Final = {
    fn.__name__: (fn.__doc__ or "").splitlines()[0].rstrip(".") for fn in SIMULATIONS.values()
}
"""Each simulation's name and the controller it stands for (its docstring's first line)."""

NO_NODE: Final = (
    "no Node in the manifests: templates that ask for a GPU find none in the plan's cluster; "
    "add --gpu-node MI300X (or the model you run), or a Node manifest"
)


def data(plan: Plan, ignored: list[Ignored], notes: list[str]) -> dict[str, Any]:
    """The plan as data: a summary per AIM object, what was simulated or left out, the end state."""
    objects = [o for o in plan.world if o.get("kind") != "Secret"]
    registry: dict[str, Any] = {}
    if plan.registry.images:
        registry["imagesNotInspected"] = sorted(plan.registry.images)
        registry["why"] = NOT_READ
    if plan.registry.sources:
        registry["sourcesNotListed"] = sorted(plan.registry.sources)
        registry["whyNotListed"] = NOT_LISTED
    return {
        "converged": plan.converged,
        "rounds": plan.rounds,
        "didNotConverge": [] if plan.converged else plan.unsettled,
        "aim": [_summary(plan, o) for o in objects if is_aim(o)],
        "simulated": {
            name: {"standsFor": SIMULATED.get(name, name), "objects": acted}
            for name, acted in sorted(plan.simulations.items())
        },
        "registry": registry,
        "ignored": [{"source": i.source, "object": i.what, "why": i.why} for i in ignored],
        "notes": notes,
        "objects": objects,
    }


def _summary(plan: Plan, obj: Obj) -> dict[str, Any]:
    meta = obj["metadata"]
    status = obj.get("status") or {}
    out: dict[str, Any] = {
        "kind": obj["kind"],
        "name": meta["name"],
        "status": status.get("status") or _ready(obj),
    }
    if meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    out["conditions"] = [
        {k: c[k] for k in ("type", "status", "reason", "message") if c.get(k)}
        for c in status.get("conditions") or []
        if isinstance(c, dict) and _worth_showing(c)
    ]
    out["composes"] = [
        f"{o['kind']}/{o['metadata']['name']}"
        for o in plan.world
        if o.get("kind") != "Secret" and _controlled_by(o, meta.get("uid"))
    ]
    if obj["kind"] == "AIMService":
        template = status.get("resolvedTemplate") or {}
        ready: dict[str, Any] = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "TemplateReady"), {}
        )
        out["template"] = template.get("name")
        out["templateReady"] = ready.get("message", "")
    reconciled = plan.reconciled.get(
        (obj["apiVersion"], obj["kind"], meta.get("namespace") or "", meta["name"])
    )
    if reconciled is not None and reconciled.events:
        out["events"] = reconciled.events
    return out


def _ready(obj: Obj) -> str:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return "Ready" if c.get("status") == "True" else "NotReady"
    return "Unknown"


def _worth_showing(condition: dict[str, Any]) -> bool:
    true = condition.get("status") == "True"
    return true if condition.get("type") in ABNORMAL_WHEN_TRUE else not true


def _controlled_by(obj: Obj, uid: str | None) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("controller") and r.get("uid") == uid for r in refs if isinstance(r, dict))


def text(report: dict[str, Any]) -> str:
    """The plan as a page: `KIND NAMESPACE/NAME STATUS` per AIM object, then the rest."""
    lines: list[str] = []
    for s in report["aim"]:
        where = f"{s['namespace']}/{s['name']}" if s.get("namespace") else s["name"]
        lines.append(f"{s['kind']} {where} {s['status']}")
        if s["kind"] == "AIMService":
            lines.append(f"  template: {s.get('template') or '(none chosen)'}")
            if s.get("templateReady"):
                lines.append(f"    {s['templateReady']}")
        for c in s["conditions"]:
            reason = f" {c['reason']}" if c.get("reason") else ""
            message = f": {c['message']}" if c.get("message") else ""
            lines.append(f"  {c['type']}={c['status']}{reason}{message}")
        if s["composes"]:
            lines.append(f"  composes: {', '.join(s['composes'])}")
        lines += [f"  event {e}" for e in s.get("events") or []]
    lines.append("")
    for name, sim in report["simulated"].items():
        lines.append(f"simulated {name} ({sim['standsFor']}): {', '.join(sim['objects'])}")
    registry = report["registry"]
    if registry.get("imagesNotInspected"):
        images = ", ".join(registry["imagesNotInspected"])
        lines.append(f"registry: {registry['why']} (images: {images})")
    if registry.get("sourcesNotListed"):
        sources = ", ".join(registry["sourcesNotListed"])
        lines.append(f"registry: {registry['whyNotListed']} (sources: {sources})")
    lines += [f"ignored {i['source']}: {i['object']}: {i['why']}" for i in report["ignored"]]
    lines += [f"note: {n}" for n in report["notes"]]
    if report["converged"]:
        lines.append(f"converged: round {report['rounds']} changed nothing")
    else:
        lines.append(f"did not converge in {report['rounds']} rounds; still changing:")
        lines += [f"  {u}" for u in report["didNotConverge"]]
    return "\n".join(lines)
