"""Reading a model image's labels from its registry, without pulling the image.

The composers stay pure: they say which image to inspect (`InspectionRequest`) and read the answer
(`Inspection` or `RegistryFailure`) from `Observed`. `fn.py` runs the one network call in between,
through an `Inspector`: `oras.OrasInspector` in production, a fake in unit tests.
"""
