"""The AIM API, defined once as pydantic models; XRDs and docs are generated from it."""
