"""The render harness: the function and the real crossplane CLI, and API checks of manifests."""
