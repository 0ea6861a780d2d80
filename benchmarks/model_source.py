"""One AIMClusterModelSource sync composed over a huge registry listing, beside a small one.

    .venv/bin/python benchmarks/model_source.py [--calls N] [--smoke]

Composes, in this process, the call of a sync that has the registry's answer: a wildcard filter
whose listing holds 100 repositories of 5,000 tags each (the most `function/registry/listing.py`
reads of one wildcard), with `maxModels` 100, without and with version constraints, and two
such wildcards (a million tags: the most one sync reads across its filters, `MAX_SYNC_TAGS`).
The baseline is the same source over a listing of one repository of 100 tags: the same 100
models composed, so the difference is what the listing's size costs. The registry itself is not
called (that is `fn.py`'s and the lister's time, bounded by the sync's deadline); this is the
compose call that must stay within the function's compose budget.

`--smoke` runs every row with one call and a smaller listing: the test command runs it, so a
benchmark that breaks fails the suite; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from benchmarks.args import at_least
from function.compose.modelsource import compose_model_source
from function.kube.contract import Composition, ListRegistry, Observed
from function.registry.listing import ListingAnswer, QueryAnswer, RepositoryTags

REG = "registry.example.com"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
MAX_MODELS = 100


@dataclass(frozen=True)
class Row:
    """One listing to compose over."""

    name: str
    repositories: int
    """Per filter."""
    tags: int
    versions: tuple[str, ...] = ()
    filters: int = 1
    """Wildcard filters, each with its own `repositories` (`amd/aim-*`, `amd1/aim-*`, ...)."""


def namespace(index: int) -> str:
    """The namespace of the filter at `index`: `amd`, `amd1`, `amd2`, ..."""
    return f"amd{index}" if index else "amd"


def source(versions: tuple[str, ...], filters: int = 1) -> dict[str, Any]:
    """The source: `filters` wildcard filters, `maxModels` 100, `versions` if any."""
    spec: dict[str, Any] = {
        "registry": REG,
        "filters": [{"image": f"{namespace(i)}/aim-*"} for i in range(filters)],
        "maxModels": MAX_MODELS,
    }
    if versions:
        spec["versions"] = list(versions)
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterModelSource",
        "metadata": {"name": "amd-catalog", "uid": "uid-src", "generation": 1},
        "spec": spec,
    }


def tags(repository: int, count: int) -> tuple[str, ...]:
    """`count` tags as AIM images carry them.

    Versions (shared between repositories), prereleases (each repository's own) and a few names.
    """
    out = [
        f"{major}.{minor}.{patch}"
        for major in range(5)
        for minor in range(40)
        for patch in range(25)
    ]
    out = out[: count - 3 - count // 10]
    out += [f"{repository}.{n}.0-rc.{n % 7}" for n in range(count // 10)]
    out += ["latest", "stable", f"nightly-{repository}"]
    return tuple(out[:count])


def listed(xr: dict[str, Any], row: Row) -> Observed:
    """The sync's second call: the catalog read, the registry's answer in hand."""
    base = Observed(xr, now=NOW, required={"cluster-models": ()})
    asked = compose_model_source(base)
    if not isinstance(asked, ListRegistry):
        msg = f"the first call of a sync did not ask the registry: {asked}"
        raise SystemExit(msg)
    answers = tuple(
        QueryAnswer(
            query,
            tuple(
                RepositoryTags(f"{namespace(i)}/aim-model-{r}", tags(r, row.tags))
                for r in range(row.repositories)
            ),
        )
        for i, query in enumerate(asked.request.queries)
    )
    return replace(base, listing=ListingAnswer(asked.request.source, answers))


def measure(row: Row, calls: int) -> None:
    """Compose the sync `calls` times and print the row: times, models, images omitted."""
    observed = listed(source(row.versions, row.filters), row)
    times: list[float] = []
    comp: Composition | ListRegistry | None = None
    for _ in range(calls):
        start = time.perf_counter()
        comp = compose_model_source(observed)
        times.append((time.perf_counter() - start) * 1000)
    if not isinstance(comp, Composition):
        msg = f"the sync with the listing did not compose: {comp}"
        raise SystemExit(msg)
    status = comp.status
    print(
        f"{row.name:<34} {row.repositories:>5} x {row.tags:<5} "
        f"{statistics.median(times):>9.1f} {max(times):>9.1f}   "
        f"{len(comp.resources):>6} {status.get('modelsOmitted', '-')!s:>9}"
    )


def main() -> None:
    """Run the benchmark and print one row per listing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calls",
        type=at_least(1, "--calls"),
        default=5,
        help="composes per row, at least 1 (default 5)",
    )
    parser.add_argument("--smoke", action="store_true", help="one call, a smaller listing")
    args = parser.parse_args()
    repositories, count = (100, 5000) if not args.smoke else (10, 500)
    if args.smoke:
        args.calls = 1
    rows = [
        Row("baseline: 1 repository", 1, MAX_MODELS),
        Row("listing", repositories, count),
        Row("listing, versions >=0.5 <4", repositories, count, (">=0.5", "<4")),
        Row("2 wildcards, the sync's bound", repositories, count, filters=2),
    ]
    print(f"maxModels {MAX_MODELS}, {args.calls} call(s) per row; compose time in ms")
    print(f"{'':<34} {'repos x tags':<13} {'median':>9} {'max':>9}   {'models':>6} {'omitted':>9}")
    for row in rows:
        measure(row, args.calls)


if __name__ == "__main__":
    main()
