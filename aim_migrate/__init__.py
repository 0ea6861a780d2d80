"""Convert AIM manifests of the older API generations (seeds 000-002) into the canonical API."""
