"""Label keys AIM puts on what it composes, so users and tools can find objects by their origin."""

from __future__ import annotations

from typing import Final

from function.rules import naming

PREFIX: Final = "aim.silogen.ai/"
SERVICE: Final = PREFIX + "service"
TEMPLATE: Final = PREFIX + "template"
BASE_TEMPLATE: Final = PREFIX + "base-template"
MODEL: Final = PREFIX + "model"
METRIC: Final = PREFIX + "metric"
PRECISION: Final = PREFIX + "precision"
ORIGIN: Final = PREFIX + "origin"
CUSTOM_MODEL: Final = PREFIX + "custom-model"
TEMPLATE_ALIAS: Final = PREFIX + "template.alias"
PROFILE_TYPE: Final = PREFIX + "profile-type"
"""On a template made from a recommended deployment: the tuning level the deployment declared."""
DISCOVERY: Final = PREFIX + "discovery"
MODEL_CACHE: Final = PREFIX + "model-cache"
TEMPLATE_CACHE: Final = PREFIX + "template-cache"

AUTO_GENERATED: Final = "auto-generated"
DERIVED: Final = "derived"

MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "aim-crossplane"}


def value(text: str) -> str:
    """A label value made from any name: lowercase, DNS-safe, at most 63 characters."""
    return naming.sanitize_part(text)
