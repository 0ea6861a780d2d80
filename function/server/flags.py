"""Command-line parsing the registry flags share, for `function-aim` and `aim plan` alike.

Both read registries with the same client (`OrasInspector`, `OrasLister`), so a flag such as
`--registry-mirror` means and parses the same in both.
"""

from __future__ import annotations

import click

from function.registry.reference import registry_host


def registry_mirrors(
    _: click.Context, __: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    """`REGISTRY=HOST` pairs; the registry in the form image references resolve to."""
    mirrors: dict[str, str] = {}
    for value in values:
        registry, sep, host = value.partition("=")
        if not sep or not registry.strip() or not host.strip() or "/" in host:
            msg = f"{value!r}: expected REGISTRY=HOST[:PORT], e.g. ghcr.io=mirror.internal:5000"
            raise click.BadParameter(msg)
        mirrors[registry_host(registry)] = host.strip().lower()
    return mirrors
