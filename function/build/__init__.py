"""Builders: one function per Kubernetes kind, returning a manifest shaped like its YAML.

A manifest is `function.api.meta.Manifest`, the type every layer passes objects in.
"""
