"""Which rule converts each of the AIM operator's v1alpha1 kinds, and the kinds it refuses."""

from __future__ import annotations

from typing import Final

from aim_migrate.operator import Rule
from aim_migrate.operator_caches import model_cache, model_source, template_cache
from aim_migrate.operator_configs import runtime_config
from aim_migrate.operator_models import model, template
from aim_migrate.operator_services import service

RULES: Final[dict[str, Rule]] = {
    "AIMRuntimeConfig": runtime_config,
    "AIMClusterRuntimeConfig": runtime_config,
    "AIMModel": model,
    "AIMClusterModel": model,
    "AIMServiceTemplate": template,
    "AIMClusterServiceTemplate": template,
    "AIMService": service,
    "AIMTemplateCache": template_cache,
    "AIMModelCache": model_cache,
    "AIMArtifact": model_cache,
    "AIMClusterModelSource": model_source,
}

REFUSED: Final[dict[str, str]] = {
    "AIMKVCache": (
        "KV caches have no counterpart here; services run with the inference engine's own "
        "in-memory KV cache"
    ),
}
