"""The AIM objects composers resolve references to, typed by kind: spec, status and headline."""

from __future__ import annotations

from typing import TypeVar

from function.api.meta import Kind, Manifest, Scope
from function.api.model import ModelSpec, ModelStatus, ModelStatusValue
from function.api.template import ClusterServiceTemplateSpec, TemplateStatus, TemplateStatusValue
from function.kube.lookup import Resolved, resolved

TemplateSpecT = TypeVar("TemplateSpecT", bound=ClusterServiceTemplateSpec)

Model = Resolved[ModelSpec, ModelStatus, ModelStatusValue]
"""An AIMModel or AIMClusterModel."""

Template = Resolved[TemplateSpecT, TemplateStatus, TemplateStatusValue]
"""An AIMServiceTemplate or AIMClusterServiceTemplate (generic in which spec it parsed to)."""


def resolved_model(manifest: Manifest, kind: Kind, scope: Scope, spec: ModelSpec) -> Model:
    """A model with its status parsed."""
    return resolved(manifest, kind, scope, spec, status=ModelStatus, headline=ModelStatusValue)


def resolved_template(
    manifest: Manifest, kind: Kind, scope: Scope, spec: TemplateSpecT
) -> Template[TemplateSpecT]:
    """A template with its status parsed."""
    return resolved(
        manifest, kind, scope, spec, status=TemplateStatus, headline=TemplateStatusValue
    )
