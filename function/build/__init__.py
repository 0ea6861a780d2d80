"""Builders: one function per Kubernetes kind, returning a manifest shaped like its YAML."""

from pydantic import JsonValue

Manifest = dict[str, JsonValue]
"""A Kubernetes object in its JSON/YAML form, the way builders and composers pass it around."""
