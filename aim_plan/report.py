"""What a plan prints: a page a person reads, or the same as data (`-o yaml|json`) for tools.

Secrets are in the world (the function reads them) but never in the output: not as objects, not
in what an XR composes, so neither a value nor a key of one can reach a terminal or a CI log.
"""

from __future__ import annotations

from typing import Any, Final

from aim_plan.choice import not_chosen
from aim_plan.load import Ignored, Obj, is_aim, key_of
from aim_plan.registry import Asked
from aim_plan.rounds import SERVICE_KINDS, Plan
from aim_plan.simulate import SIMULATIONS
from aim_plan.views import Condition, condition_of, conditions_of, entries_at, meta_text, text_at
from function.kube.views import string_at
from function.registry.inspect import Inspection
from function.registry.listing import ListingAnswer

ABNORMAL_WHEN_TRUE: Final = frozenset(
    {"Progressing", "Failure", "Degraded", "Retained", "MaxModelsLimitReached", "CredentialsInline"}
)
"""Conditions that say something is wrong (or pending) when True; the others when not True."""

SIMULATED: Final = {
    fn.__name__: (fn.__doc__ or "").splitlines()[0].rstrip(".") for fn in SIMULATIONS.values()
}
"""Each simulation's name and the controller it stands for (its docstring's first line)."""

NOT_CHOSEN_SHOWN: Final = 5
"""Templates not chosen the page lists under a service before `and N more` (data lists all)."""

NO_NODE: Final = (
    "no Node in the manifests: templates that ask for a GPU find none in the plan's cluster; "
    "add --gpu-node MI300X (or the model you run), or a Node manifest"
)


def data(plan: Plan, ignored: list[Ignored], notes: list[str]) -> dict[str, Any]:
    """The plan as data: a summary per AIM object, what was simulated or left out, the end state."""
    objects = [o for o in plan.world if key_of(o)[1] != "Secret"]
    return {
        "converged": plan.converged,
        "rounds": plan.rounds,
        "didNotConverge": [] if plan.converged else plan.unsettled,
        "aim": [_summary(plan, o) for o in objects if is_aim(o)],
        "simulated": {
            name: {"standsFor": SIMULATED.get(name, name), "objects": acted}
            for name, acted in sorted(plan.simulations.items())
        },
        "registry": _registry(plan.registry),
        "ignored": [{"source": i.source, "object": i.what, "why": i.why} for i in ignored],
        "notes": notes,
        "objects": objects,
    }


def _registry(asked: Asked) -> dict[str, Any]:
    """Each image inspected and source listed, with its outcome (never a credential).

    An image asked with two pull secrets (two models) is listed once per distinct outcome.
    """
    images: list[dict[str, Any]] = []
    for request, outcome in asked.images.items():
        if isinstance(outcome, Inspection):
            entry = {"image": request.image, "outcome": "read", "digest": outcome.digest}
        else:
            entry = {"image": request.image, "outcome": outcome.kind.value}
            entry["message"] = outcome.message
        if entry not in images:
            images.append(entry)
    sources = [_listed(listing) for listing in asked.sources.values()]
    registry: dict[str, Any] = {}
    if images:
        registry["images"] = sorted(images, key=lambda e: (e["image"], e["outcome"]))
    if sources:
        registry["sources"] = sorted(
            (s for i, s in enumerate(sources) if s not in sources[:i]),
            key=lambda s: str(s["source"]),
        )
    return registry


def _listed(listing: ListingAnswer) -> dict[str, Any]:
    """A source's listing: what it found, what failed, or why it was given up."""
    if listing.stopped is not None:
        return {
            "source": listing.source,
            "outcome": "RegistryTooLarge",
            "message": f"given up past {listing.stopped.past} ({listing.stopped.setting})",
        }
    repositories = [r for a in listing.answers for r in a.repositories]
    failed = [
        {
            "query": f"{a.query.registry}/{a.query.repository}",
            "outcome": a.failure.value,
            "message": a.message,
        }
        for a in listing.answers
        if a.failure is not None
    ]
    out: dict[str, Any] = {
        "source": listing.source,
        "outcome": "listed" if not failed else "failed" if not repositories else "partly listed",
        "repositories": len(repositories),
        "tags": sum(len(r.tags) for r in repositories),
    }
    if failed:
        out["failed"] = failed
    return out


def _summary(plan: Plan, obj: Obj) -> dict[str, Any]:
    key = key_of(obj)
    _, kind, namespace, name = key
    out: dict[str, Any] = {
        "kind": kind,
        "name": name,
        "status": text_at(obj, "status", "status") or _ready(obj),
    }
    if namespace:
        out["namespace"] = namespace
    out["conditions"] = [_shown(c) for c in conditions_of(obj) if _worth_showing(c)]
    # The world's index by controller: a scan of every object per XR grows with the square.
    out["composes"] = sorted(
        f"{k[1]}/{k[3]}"
        for k in map(key_of, plan.world.controlled_by(meta_text(obj, "uid")))
        if k[1] != "Secret"
    )
    if kind in SERVICE_KINDS:
        out["template"] = string_at(obj, "status", "resolvedTemplate", "name")
        ready = condition_of(obj, "TemplateReady")
        out["templateReady"] = ready.message if ready is not None else ""
        out["adapters"] = [
            f"{string_at(a, 'name')} {string_at(a, 'state')}"
            for a in entries_at(obj, "status", "adapters")
        ]
        out["notChosen"] = [
            {"name": a.name, "kind": a.kind, "why": a.why} for a in not_chosen(plan, key)
        ]
    reconciled = plan.reconciled.get(key)
    if reconciled is not None and reconciled.events:
        out["events"] = reconciled.events
    return out


def _shown(condition: Condition) -> dict[str, str]:
    """The condition's fields that are set, as the page and the data show them."""
    fields = {
        "type": condition.type,
        "status": condition.status,
        "reason": condition.reason,
        "message": condition.message,
    }
    return {k: v for k, v in fields.items() if v}


def _ready(obj: Obj) -> str:
    ready = condition_of(obj, "Ready")
    if ready is None:
        return "Unknown"
    return "Ready" if ready.status == "True" else "NotReady"


def _worth_showing(condition: Condition) -> bool:
    true = condition.status == "True"
    return true if condition.type in ABNORMAL_WHEN_TRUE else not true


def text(report: dict[str, Any]) -> str:
    """The plan as a page: `KIND NAMESPACE/NAME STATUS` per AIM object, then the rest."""
    lines: list[str] = []
    for s in report["aim"]:
        where = f"{s['namespace']}/{s['name']}" if s.get("namespace") else s["name"]
        lines.append(f"{s['kind']} {where} {s['status']}")
        if s["kind"] in SERVICE_KINDS:
            lines += _template_lines(s)
        for c in s["conditions"]:
            reason = f" {c['reason']}" if c.get("reason") else ""
            message = f": {c['message']}" if c.get("message") else ""
            lines.append(f"  {c['type']}={c['status']}{reason}{message}")
        if s.get("adapters"):
            lines.append(f"  adapters: {', '.join(s['adapters'])}")
        if s["composes"]:
            lines.append(f"  composes: {', '.join(s['composes'])}")
        lines += [f"  event {e}" for e in s.get("events") or []]
    lines.append("")
    for name, sim in report["simulated"].items():
        lines.append(f"simulated {name} ({sim['standsFor']}): {', '.join(sim['objects'])}")
    lines += _registry_lines(report["registry"])
    lines += [f"ignored {i['source']}: {i['object']}: {i['why']}" for i in report["ignored"]]
    lines += [f"note: {n}" for n in report["notes"]]
    if report["converged"]:
        lines.append(f"converged: round {report['rounds']} changed nothing")
    else:
        lines.append(f"did not converge in {report['rounds']} rounds; still changing:")
        lines += [f"  {u}" for u in report["didNotConverge"]]
    return "\n".join(lines)


def _registry_lines(registry: dict[str, Any]) -> list[str]:
    """One line per image inspected and per source listed."""
    lines = []
    for i in registry.get("images") or []:
        if i["outcome"] == "read":
            lines.append(f"registry: read {i['image']} ({i['digest']})")
        else:
            lines.append(f"registry: {i['image']}: {i['outcome']}: {i['message']}")
    for s in registry.get("sources") or []:
        if "repositories" not in s:
            lines.append(f"registry: source {s['source']}: {s['outcome']}: {s['message']}")
            continue
        found = f"{s['repositories']} repositories, {s['tags']} tags"
        failed = "".join(
            f"; {f['query']}: {f['outcome']}: {f['message']}" for f in s.get("failed") or []
        )
        lines.append(f"registry: source {s['source']} {s['outcome']}: {found}{failed}")
    return lines


def _template_lines(service: dict[str, Any]) -> list[str]:
    """A service's template, why, and why not each other one (the first few)."""
    lines = [f"  template: {service.get('template') or '(none chosen)'}"]
    if service.get("templateReady"):
        lines.append(f"    why: {service['templateReady']}")
    others = service.get("notChosen") or []
    lines += [f"    not chosen: {o['name']} — {o['why']}" for o in others[:NOT_CHOSEN_SHOWN]]
    if len(others) > NOT_CHOSEN_SHOWN:
        lines.append(f"    and {len(others) - NOT_CHOSEN_SHOWN} more")
    return lines
