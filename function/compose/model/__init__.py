"""AIMModel / AIMClusterModel: an image in the catalog, and the service templates it brings.

Each call works out the model's image metadata (see `metadata`), composes its templates (see
`templates`) and reports how they are doing. The only network call, reading the image's labels
from its registry, is made by `fn.py` between two calls of `compose_model`: the first answers
`Inspect` with the image to read, the second finds the registry's answer in
`Observed.inspection`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from function.api.meta import Kind, Manifest
from function.api.model import ModelSpec, ModelStatus, ModelStatusValue, SourceType
from function.api.template import TemplateStatusValue
from function.compose.frame import Frame, cluster_credentials, open_frame
from function.compose.model import metadata, templates
from function.kube.contract import (
    Composition,
    Desired,
    Inspect,
    Observed,
    keep,
)
from function.kube.lookup import Listing
from function.kube.objects import name_of
from function.kube.parse import has_headline, parse_headline, parse_spec
from function.kube.views import condition_of, string_at
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import (
    Condition,
    ConditionStatus,
    ConditionType,
    Health,
    Reason,
    State,
)

HEADLINE: Final = {
    # A model's status.status for its worst component; model sources share the vocabulary.
    State.FAILED: ModelStatusValue.FAILED,
    State.DEGRADED: ModelStatusValue.DEGRADED,
    State.PENDING: ModelStatusValue.PENDING,
    State.PROGRESSING: ModelStatusValue.PROGRESSING,
    State.READY: ModelStatusValue.READY,
}
_TEMPLATE_PREFIX = "template-"
_MAX_WHY = 512
_MAX_WHYS = 4


def compose_model(observed: Observed) -> Composition | Inspect:
    """Compose one AIMModel or AIMClusterModel, once its image's labels are known if needed."""
    ctx = _context(observed)
    spec, meta = ctx.spec, ctx.metadata
    if meta.request is not None and observed.inspection is None:
        return Inspect(meta.request)
    frame = ctx.frame
    comp = frame.comp
    listing = _templates_listing(ctx.namespace)
    comp.requirements += [
        *metadata.secret_requirements(_pull_secrets(ctx.spec, ctx.config), ctx.secret_namespace),
        listing.requirement(),
    ]

    create = spec.discovery is None or spec.discovery.auto_create_templates
    model_meta = meta.metadata.model if meta.metadata else None
    deployments = model_meta.recommended_deployments if model_meta and create else None
    planned = templates.plan(observed.name, spec, ctx.namespace, deployments or [])
    listed = listing.items(observed.required)
    statuses = _template_statuses(observed, planned.templates, listed)

    for name, manifest in planned.templates.items():
        comp.resources[_TEMPLATE_PREFIX + name] = Desired(
            manifest, ready=statuses.get(name) == TemplateStatusValue.AVAILABLE
        )
    for key, current in observed.resources.items():
        # A deployment that left the image's labels keeps its template: services may use it.
        if key.startswith(_TEMPLATE_PREFIX) and key not in comp.resources:
            comp.resources[key] = keep(
                current,
                ready=has_headline(current, TemplateStatusValue.AVAILABLE),
            )

    gap = _metadata_gap(meta)
    templates_health = _templates_health(
        statuses,
        gap=gap,
        expected=bool(planned.templates),
        skipped=planned.skipped,
        why=_unknown_accelerators(observed, listed),
    )
    healths = [frame.config_health, meta.health, templates_health]
    state = frame.report(
        healths,
        also=[
            _templates_auto_generated(
                spec,
                has_metadata=meta.metadata is not None,
                gap=gap,
                generated=len(planned.templates),
                kept=sum(k.startswith(_TEMPLATE_PREFIX) for k in comp.resources),
            ),
            *_credentials(observed, spec),
        ],
    )
    comp.ttl_seconds = meta.retry_after_s
    status = ModelStatus(
        status=HEADLINE[state],
        source_type=SourceType.CUSTOM if spec.model_sources else SourceType.IMAGE,
        resolved_runtime_config=ctx.config.ref if ctx.config else None,
        templates=len(statuses),
    )
    return frame.finish(meta.image.recorded_in(status) if meta.image else status, status.status)


@dataclass(frozen=True)
class _Context:
    spec: ModelSpec
    namespace: str | None
    secret_namespace: str
    frame: Frame
    metadata: metadata.MetadataOutcome

    @property
    def config(self) -> RuntimeConfig | None:
        return self.frame.config


def _context(observed: Observed) -> _Context:
    spec = parse_spec(observed.composite, ModelSpec)
    namespace = observed.namespace or None
    secret_namespace = namespace or observed.settings.system_namespace
    frame = open_frame(
        observed,
        spec.runtime_config_name,
        _config_namespace(observed),
        ConditionType.RUNTIME_RESOLVED,
    )
    config = frame.config
    if config is None:
        # The runtime config may list pull secrets; inspect only once it is known.
        meta = metadata.MetadataOutcome(
            ConditionType.METADATA_EXTRACTED.pending(
                Reason.WAITING,
                "waiting for the runtime config, which may list image pull secrets",
            )
        )
    else:
        meta = metadata.decide(observed, spec, _pull_secrets(spec, config), secret_namespace)
    return _Context(spec, namespace, secret_namespace, frame, meta)


def _config_namespace(observed: Observed) -> str:
    """Cluster models read the runtime config of the system namespace over the cluster one."""
    return observed.namespace or observed.settings.system_namespace


def _pull_secrets(spec: ModelSpec, config: RuntimeConfig | None) -> list[str]:
    names = [s.name for s in spec.image_pull_secrets or ()]
    if config is not None:
        names += [s.name for s in config.spec.image_pull_secrets or () if s.name not in names]
    return names


def _templates_listing(namespace: str | None) -> Listing:
    if namespace:
        return Listing("templates", Kind.SERVICE_TEMPLATE, namespace)
    return Listing("cluster-templates", Kind.CLUSTER_SERVICE_TEMPLATE)


def _template_statuses(
    observed: Observed,
    planned: Mapping[str, Manifest],
    listed: tuple[Manifest, ...] | None,
) -> dict[str, TemplateStatusValue | None]:
    """`status.status` of every template of this model: composed by it, or made by anyone else."""
    statuses: dict[str, TemplateStatusValue | None] = dict.fromkeys(planned)
    for key, current in observed.resources.items():
        if key.startswith(_TEMPLATE_PREFIX):
            statuses[name_of(current)] = parse_headline(current, TemplateStatusValue)
    for tpl in listed or ():
        if string_at(tpl, "spec", "modelName") == observed.name:
            statuses[name_of(tpl)] = parse_headline(tpl, TemplateStatusValue)
    return statuses


def _unknown_accelerators(
    observed: Observed, listed: tuple[Manifest, ...] | None
) -> dict[str, str]:
    """What its Failure says, for each template of this model discovery found an unknown GPU for.

    A template fails so when its image's profile runs on an accelerator we cannot place pods on;
    the model names that accelerator too, as the fix is in the image or the GPU table.
    """
    composed = [m for k, m in observed.resources.items() if k.startswith(_TEMPLATE_PREFIX)]
    others = [t for t in listed or () if string_at(t, "spec", "modelName") == observed.name]
    found: dict[str, str] = {}
    for tpl in [*composed, *others]:
        failure = condition_of(tpl, "Failure")
        if failure and failure.is_true and failure.reason == Reason.UNKNOWN_ACCELERATOR:
            found[name_of(tpl)] = failure.message[:_MAX_WHY]
            if len(found) == _MAX_WHYS:  # the same few accelerators: enough to name them
                break
    return found


def _metadata_gap(meta: metadata.MetadataOutcome) -> Health | None:
    """What a model with no templates reports for them when its image's metadata is not known.

    None when it is known, and for a custom model (its templates come from its spec).

    Metadata that could not be read (a missing secret, a registry's refusal, a timeout, required
    labels missing) says nothing about the image's deployments: never "none recommended".
    """
    if meta.metadata is not None:
        return None
    if meta.health.reason == Reason.DISCOVERY_DISABLED:
        # None expected, but not because the image recommends none: it is not read at all.
        return ConditionType.TEMPLATES_READY.ready(
            Reason.NO_TEMPLATES_EXPECTED,
            "spec.discovery.enabled is false, so no templates are generated from the image; "
            "create them by hand",
        )
    if meta.health.state in {State.PENDING, State.PROGRESSING}:
        return ConditionType.TEMPLATES_READY.progressing(
            Reason.AWAITING_METADATA, "waiting for the image labels"
        )
    if meta.health.state in {State.FAILED, State.DEGRADED}:
        cause = meta.health.message.split(":", 1)[0]
        # Pending, not failed: MetadataExtracted carries the failure and sets the headline.
        return ConditionType.TEMPLATES_READY.pending(
            Reason.METADATA_UNAVAILABLE,
            f"the image's metadata is unavailable ({cause}; see MetadataExtracted), so the "
            "deployments it recommends are unknown",
        )
    return None


def _templates_health(  # noqa: PLR0911 - one return per row of the aggregation table
    statuses: Mapping[str, TemplateStatusValue | None],
    *,
    gap: Health | None,
    expected: bool,
    skipped: Sequence[str],
    why: Mapping[str, str] | None = None,
) -> Health:
    """The model's templates as one component, as AIM aggregates them.

    `why` adds to a template's name what its own status says of its failure.
    """
    values = list(statuses.values())
    count = len(values)
    failed = sum(v in {TemplateStatusValue.FAILED, TemplateStatusValue.DEGRADED} for v in values)
    unavailable = sum(v == TemplateStatusValue.NOT_AVAILABLE for v in values)
    available = sum(v == TemplateStatusValue.AVAILABLE for v in values)
    if skipped:
        return ConditionType.TEMPLATES_READY.degraded(
            Reason.DEPLOYMENT_SKIPPED,
            "; ".join(skipped) + "; the image's other deployments became templates",
        )
    if count == 0:
        if gap is not None:
            return gap
        if not expected:
            return ConditionType.TEMPLATES_READY.ready(
                Reason.NO_TEMPLATES_EXPECTED, "the image recommends no deployments"
            )
        return ConditionType.TEMPLATES_READY.progressing(
            Reason.CREATING_TEMPLATES, "creating templates"
        )
    summary = f"{available}/{count} templates Available"
    if available == count:
        return ConditionType.TEMPLATES_READY.ready(Reason.ALL_TEMPLATES_READY, summary)
    if failed == count:
        return ConditionType.TEMPLATES_READY.failed(
            Reason.ALL_TEMPLATES_FAILED, summary + _named(statuses, why)
        )
    if unavailable == count:
        return ConditionType.TEMPLATES_READY.degraded(
            Reason.NO_TEMPLATES_AVAILABLE,
            "no template's GPU is in the cluster" + _named(statuses, why),
        )
    if failed:
        return ConditionType.TEMPLATES_READY.degraded(
            Reason.SOME_TEMPLATES_DEGRADED, summary + _named(statuses, why)
        )
    if available and available + unavailable == count:
        return ConditionType.TEMPLATES_READY.ready(
            Reason.SOME_TEMPLATES_READY, summary + _named(statuses, why)
        )
    return ConditionType.TEMPLATES_READY.progressing(
        Reason.TEMPLATES_PROGRESSING, summary + _named(statuses, why)
    )


def _templates_auto_generated(  # noqa: PLR0911 - one return per case, in the order they are checked
    spec: ModelSpec,
    *,
    has_metadata: bool,
    gap: Health | None,
    generated: int,
    kept: int,
) -> Condition:
    """Seed 004's TemplatesAutoGenerated: did this model make templates, and if not, why not.

    It explains, it does not judge: the headline follows TemplatesReady, so a model whose image
    recommends nothing is still Ready.
    """
    kind = ConditionType.TEMPLATES_AUTO_GENERATED
    if spec.model_sources:
        return Condition(
            kind,
            ConditionStatus.TRUE,
            Reason.TEMPLATES_AUTO_GENERATED,
            f"{generated} template(s) from spec.custom",
        )
    if spec.discovery is not None and not spec.discovery.auto_create_templates:
        return Condition(
            kind,
            ConditionStatus.FALSE,
            Reason.AUTO_CREATE_DISABLED,
            "spec.discovery.autoCreateTemplates is false; create templates for this model by hand",
        )
    if generated:
        return Condition(
            kind,
            ConditionStatus.TRUE,
            Reason.TEMPLATES_AUTO_GENERATED,
            f"{generated} template(s) from the image's recommended deployments",
        )
    if has_metadata:
        return Condition(
            kind,
            ConditionStatus.FALSE,
            Reason.NO_RECOMMENDED_TEMPLATES,
            "the image's labels recommend no deployments (com.amd.aim.model.recommendedDeployments"
            "); create templates for this model by hand",
        )
    if kept:
        # Seed 004: disabling discovery leaves the templates it made, and says so.
        return Condition(
            kind,
            ConditionStatus.TRUE,
            Reason.TEMPLATES_AUTO_GENERATED,
            f"{kept} template(s) generated earlier are kept; "
            + (
                "the image is no longer read"
                if not spec.discovery_enabled
                else "the image's labels are not known now"
            ),
        )
    if gap is not None and gap.state is not State.READY:
        return Condition(kind, ConditionStatus.UNKNOWN, gap.reason, gap.message)
    return Condition(
        kind,
        ConditionStatus.FALSE,
        Reason.DISCOVERY_DISABLED,
        "spec.discovery.enabled is false and spec.imageMetadata is unset, so no deployments are "
        "known; enable discovery or create templates by hand",
    )


def _named(
    statuses: Mapping[str, TemplateStatusValue | None], why: Mapping[str, str] | None = None
) -> str:
    notes = why or {}
    others = [
        f"{n} ({s or 'no status yet'}{': ' + notes[n] if n in notes else ''})"
        for n, s in sorted(statuses.items())
        if s != TemplateStatusValue.AVAILABLE
    ]
    return f"; not Available: {', '.join(others)}" if others else ""


def _credentials(observed: Observed, spec: ModelSpec) -> list[Condition]:
    """`CredentialsInline` for a cluster model whose env sets a credential to a literal value.

    Its env reaches every namespace's pods; the warning sits beside the components, so the model
    stays Ready.
    """
    if observed.kind != Kind.CLUSTER_MODEL:
        return []
    custom = spec.custom.templates if spec.custom and spec.custom.templates else ()
    found = cluster_credentials(
        observed,
        [
            ("spec.env", spec.env),
            *(
                (f"spec.modelSources[{i}].env", s.env)
                for i, s in enumerate(spec.model_sources or ())
            ),
            *((f"spec.custom.templates[{i}].env", t.env) for i, t in enumerate(custom)),
        ],
    )
    return [found] if found is not None else []
