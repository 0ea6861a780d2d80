"""Generators: XRDs, Compositions, claims and docs/api.md from the API models."""
