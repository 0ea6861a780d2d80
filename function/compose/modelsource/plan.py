"""A model source's sync planned: a model for each image matched, named and built within the cap.

Images are named and built only while `spec.maxModels` leaves room; an image some other model of
the catalog serves, or whose name another model holds, is skipped, saying why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from function.api.meta import Kind, Manifest
from function.api.model import ModelSpec
from function.api.modelsource import ClusterModelSourceSpec, ClusterModelSourceStatus, FilterStatus
from function.build.aim import build_aim_object
from function.kube.contract import Observed
from function.kube.objects import metadata_of, name_of
from function.kube.views import string_at
from function.registry import reference
from function.registry.filters import Match, Matched
from function.rules import labels, naming
from function.rules.discovery import rfc3339

SOURCE_LABEL: Final = labels.PREFIX + "model-source"
SOURCE_REGISTRY: Final = labels.PREFIX + "source-registry"
SOURCE_REPOSITORY: Final = labels.PREFIX + "source-repository"
SOURCE_TAG: Final = labels.PREFIX + "source-tag"
MAX_SKIPPED: Final = 20


@dataclass
class Sync:
    """One sync's outcome: the models to add, and its record (the status fields a sync sets)."""

    record: ClusterModelSourceStatus
    new: dict[str, Manifest] = field(default_factory=dict)


def plan(
    observed: Observed,
    spec: ClusterModelSourceSpec,
    outcomes: tuple[list[FilterStatus], list[Matched]],
    own: Mapping[str, Manifest],
    catalog: Sequence[Manifest],
) -> Sync:
    """The models to add for the images matched, and the record of this sync.

    Images are named and built only while `spec.maxModels` leaves room: past it each matched
    image costs a set lookup (counted, not named), so a registry of 100 repositories of 5,000
    tags each is planned in well under a second.
    """
    statuses, matches = outcomes
    ours = {_image(m) for m in own.values()}
    own_names = {name_of(m) for m in own.values()}
    others = {_image(m): name_of(m) for m in catalog if name_of(m) not in own_names}
    taken = set(others.values())
    seen: dict[str, set[str]] = {}  # tags per image prefix (the listing's strings, no copies)
    new: dict[str, Manifest] = {}
    skipped: list[str] = []
    over = 0
    for repo in matches:
        room = len(own) + len(new) < spec.max_models
        prefix = repo.prefix() + ":"
        done = seen.setdefault(prefix, set())
        for tag in repo.newest_first() if room else repo.tags:
            if tag in done:
                continue
            done.add(tag)
            image = prefix + tag
            if image in ours:
                continue
            if image in others:
                skipped.append(f"{image}: in the catalog already as {others[image]}")
                continue
            if len(own) + len(new) >= spec.max_models:
                over += 1  # only counted: naming and building it is what the cap saves
                continue
            name, why = _name(image, taken)
            if why:
                skipped.append(why)
                continue
            new[name] = _model(
                observed.name, name, Match(repo.registry, repo.repository, tag), spec
            )
    if over:
        skipped.append(f"{over} more image(s): spec.maxModels ({spec.max_models}) is reached")
    if len(skipped) > MAX_SKIPPED:
        skipped = [*skipped[: MAX_SKIPPED - 1], f"and {len(skipped) - MAX_SKIPPED + 1} more"]
    record = ClusterModelSourceStatus(
        available_models=sum(len(tags) for tags in seen.values()),
        models_limit_reached=over > 0,
        models_omitted=over,
        last_sync_time=rfc3339(observed.now),
        synced_generation=observed.generation,
        filters=statuses or None,
        skipped=skipped or None,
    )
    return Sync(record, new)


def _name(image: str, taken: set[str]) -> tuple[str, str]:
    """The model name of `image`, and why no model can have it ('' when one can)."""
    try:
        reference.parse(image)
        name = naming.image_model_name(image)
    except ValueError:  # a registry's answer only OrasLister vets; nothing to name it by
        return "", f"{image[:300]}: not an image reference"
    if name in taken:
        return name, f"{image}: the name {name} is taken by another model"
    return name, ""


def _model(source: str, name: str, match: Match, spec: ClusterModelSourceSpec) -> Manifest:
    """The AIMClusterModel for one image, labelled and annotated with where it came from."""
    model = build_aim_object(
        Kind.CLUSTER_MODEL,
        name=name,
        namespace=None,
        labels={SOURCE_LABEL: labels.value(source), labels.ORIGIN: labels.AUTO_GENERATED},
        spec=ModelSpec(
            image=match.image,
            image_pull_secrets=spec.image_pull_secrets,
            discovery=spec.discovery,
        ),
    )
    annotations: Manifest = {
        SOURCE_REGISTRY: match.registry,
        SOURCE_REPOSITORY: match.repository,
        SOURCE_TAG: match.tag,
    }
    return {**model, "metadata": {**metadata_of(model), "annotations": annotations}}


def _image(model: Manifest) -> str:
    return string_at(model, "spec", "image") or ""
