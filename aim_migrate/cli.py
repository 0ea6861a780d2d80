"""The `aim-migrate` command: old AIM manifests in, canonical manifests out, and a report.

    aim-migrate old.yaml [more.yaml ...] > new.yaml     # or `-` for standard input

It reads the older generations of this API (`aim.silogen.ai`) and the AIM operator's manifests
(`aim.eai.amd.com/v1alpha1` and `v1alpha2`, github.com/amd-enterprise-ai/aim-engine). Give the
manifests that refer to each other in one run: models are found by image and profiles by name.

A list as `kubectl get -o yaml` writes it (`kind: List`, or a typed list such as
`AIMServiceList`, with `items`) is read as its items, each as if it were a document of its own.

The converted YAML stream goes to standard output (or --output); the report, one block per
manifest, goes to standard error: what changed, warnings (carried over, but behaving differently
from before, such as a route path that now renders another value), and what was not carried.
Exit status: 0 when everything was carried over, 1 when something could not be (the output is
still written, for review), 2 on unreadable input (or a document the converter failed on), in
one line naming the file, the document and the field: input is read within the bounds of
`aim_migrate.manifests` (size, nesting, values, strings, JSON values only).
"""

from __future__ import annotations

import sys
from typing import BinaryIO, Final, TextIO

import click
import yaml
from pydantic import JsonValue

from aim_migrate.convert import ConverterFailedError, convert
from aim_migrate.manifests import UnreadableError, objects_of, read_stream
from aim_migrate.objects import Head
from aim_migrate.rules import Migration

_DUMPER: Final[type[yaml.SafeDumper | yaml.CSafeDumper]] = getattr(
    yaml, "CSafeDumper", yaml.SafeDumper
)
"""libyaml's writer when PyYAML has it: the same YAML as PyYAML's own, a tenth of the time for
the largest files read."""


class _UnreadableInputError(click.ClickException):
    exit_code = 2


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.File("rb"))
@click.option(
    "--output", "-o", type=click.File("w"), default="-", help="Where to write the converted YAML."
)
@click.option(
    "--quiet", "-q", is_flag=True, help="Report only warnings and what could not be carried."
)
def cli(files: tuple[BinaryIO, ...], output: TextIO, *, quiet: bool) -> None:
    """Convert AIM manifests into the canonical API (aim.silogen.ai/v1alpha1).

    Reads this API's older generations (aim.silogen.ai) and the AIM operator's manifests
    (aim.eai.amd.com/v1alpha1 and v1alpha2). A List (kubectl get -o yaml) is read as its
    items. Objects with no counterpart (profile sets, KV caches) are left out of the output and
    reported.
    """
    docs: list[JsonValue] = []
    where: list[str] = []
    for f in files:
        name = getattr(f, "name", "-")  # standard input may have none (a test's)
        try:
            read = read_stream(name, f)
        except UnreadableError as e:
            raise _UnreadableInputError(str(e)) from None
        for index, doc in enumerate(read):
            try:
                objects = objects_of(name, index, doc)
            except UnreadableError as e:
                raise _UnreadableInputError(str(e)) from None
            if doc is not None and not objects and not quiet:
                # Said, or a run over `kubectl get` of an empty namespace writes nothing silently.
                kind = Head.read(doc).kind
                click.echo(f"{name} (document {index}): a {kind} with no items", err=True)
            for at, obj in objects:
                docs.append(obj)
                where.append(at)
    try:
        results = convert(docs)
    except ConverterFailedError as e:
        msg = f"{where[e.index]}: {e}"
        raise _UnreadableInputError(msg) from None
    kept = [m.manifest for m in results if not m.dropped]
    output.write(yaml.dump_all(kept, Dumper=_DUMPER, sort_keys=False))
    for m in results:
        _report(m, quiet=quiet)
    if any(m.not_carried for m in results):
        sys.exit(1)


def _report(m: Migration, *, quiet: bool) -> None:
    if quiet and not m.not_carried and not m.warnings:
        return
    if m.dropped:
        arrow = f"{m.source} -> (left out)"
    else:
        arrow = m.source if m.source == m.target else f"{m.source} -> {m.target}"
    lines = [arrow]
    if not quiet:
        lines += [f"  changed: {c}" for c in m.changes] or ([] if m.dropped else ["  unchanged"])
    lines += [f"  WARNING: {w}" for w in m.warnings]
    lines += [f"  NOT CARRIED: {n}" for n in m.not_carried]
    click.echo("\n".join(lines), err=True)


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
