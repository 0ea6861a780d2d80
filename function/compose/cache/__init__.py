"""Model caching: AIMTemplateCache and AIMModelCache.

An AIMTemplateCache composes one AIMModelCache per model source of a template; an AIMModelCache
composes a PVC, the download into it, and a size check when the size is unknown.
"""

from __future__ import annotations

from function.compose.cache.model_cache import compose_model_cache
from function.compose.cache.template_cache import compose_template_cache

__all__ = ["compose_model_cache", "compose_template_cache"]
