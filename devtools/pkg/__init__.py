"""Packaging: the runtime image, the Crossplane packages, publishing them."""
