"""Command-line parsing the registry flags share, for `function-aim` and `aim plan` alike.

Both read registries with the same client (`OrasInspector`, `OrasLister`), so a flag such as
`--registry-mirror` means and parses the same in both. The listing flags are named in the
listing's failure messages (`oras_listing.TIMEOUT_FLAG`, `MAX_TAGS_FLAG`), so both commands
must accept them.
"""

from __future__ import annotations

from typing import Final

import click

from function.registry.listing import MAX_SYNC_TAGS
from function.registry.oras import DEFAULT_TIMEOUT_S
from function.registry.oras_listing import DEFAULT_TIMEOUT_S as DEFAULT_LISTING_TIMEOUT_S
from function.registry.oras_listing import MAX_TAGS_FLAG, TIMEOUT_FLAG
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


insecure_registry: Final = click.option(
    "--insecure-registry",
    "insecure_registries",
    multiple=True,
    metavar="HOST[:PORT]",
    help="A registry spoken to over plain HTTP (repeatable); all others use HTTPS.",
)
registry_mirror: Final = click.option(
    "--registry-mirror",
    "registry_mirrors",
    multiple=True,
    metavar="REGISTRY=HOST[:PORT]",
    callback=registry_mirrors,
    help="Read images of REGISTRY from HOST instead (repeatable), e.g. "
    "ghcr.io=mirror.internal:5000; pull secrets are still those of REGISTRY.",
)
registry_timeout: Final = click.option(
    "--registry-timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds one image inspection may take in all.",
)
registry_listing_timeout: Final = click.option(
    TIMEOUT_FLAG,
    "registry_listing_timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_LISTING_TIMEOUT_S,
    show_default=True,
    help="Seconds one model source's sync may spend listing registries in all; keep it well "
    "under Crossplane's 2 minutes for a whole reconcile, or Crossplane gives up on the call "
    "before the sync can record its failure.",
)
registry_listing_max_tags: Final = click.option(
    MAX_TAGS_FLAG,
    "registry_listing_max_tags",
    type=click.IntRange(min=1),
    default=MAX_SYNC_TAGS,
    show_default=True,
    help="Tags one model source's sync may read across all its filters; a listing that grows "
    "past them is given up (the source says RegistryTooLarge). A sync over a million tags "
    "composes in well under a second; raise the function's --compose-budget with it.",
)
