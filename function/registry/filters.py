"""An AIMClusterModelSource's filters: what each asks the registry, and which images match.

A filter is one image (`org/aim-qwen:0.8.5`, taken as written, no registry call), one repository
(`org/aim-qwen`, its tags listed) or a wildcard (`org/aim-*`, the registry's catalog listed, then
each matching repository's tags). Tags are kept when they satisfy the filter's version
constraints (or the source's); with no constraints every tag is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from function.api.modelsource import ClusterModelSourceSpec, ModelSourceFilter
from function.registry import reference
from function.registry.credentials import Credential
from function.registry.listing import QueryAnswer, RepositoryQuery
from function.rules import semver


@dataclass(frozen=True)
class Filter:
    """A filter read: where to look, what to keep."""

    image: str
    """The filter as written, to name it in status."""
    registry: str
    repository: str
    wildcard: bool = False
    tag: str | None = None
    exclude: frozenset[str] = frozenset()
    constraints: tuple[semver.Constraint, ...] = ()

    def query(self, credential: Credential | None) -> RepositoryQuery | None:
        """The registry question this filter needs; None for a single image (no call)."""
        if self.tag is not None:
            return None
        return RepositoryQuery(
            self.registry, self.repository, self.wildcard, self.exclude, credential
        )


@dataclass(frozen=True)
class FilterError:
    """A filter that cannot be read; `message` names the field and the fix."""

    image: str
    message: str


@dataclass(frozen=True)
class Match:
    """An image a filter matched."""

    registry: str
    repository: str
    tag: str

    @property
    def image(self) -> str:
        """The image as a model names it (`image_name`, then a colon and the tag)."""
        return f"{image_name(self.registry, self.repository)}:{self.tag}"


def image_name(registry: str, repository: str) -> str:
    """An image without its tag as a model names it: Docker Hub's without the registry, as AIM."""
    return repository if registry == reference.DOCKER_HUB else f"{registry}/{repository}"


def read_filters(spec: ClusterModelSourceSpec) -> list[Filter | FilterError]:
    """Every filter of `spec`, read, in order (an unreadable one does not stop the others)."""
    return [_read(i, f, spec) for i, f in enumerate(spec.filters)]


def _read(index: int, f: ModelSourceFilter, spec: ClusterModelSourceSpec) -> Filter | FilterError:
    where = f"spec.filters[{index}]"
    texts = f.versions if f.versions is not None else spec.versions or []
    named_in = f"{where}.versions" if f.versions is not None else "spec.versions"
    try:
        constraints = tuple(semver.parse_constraint(t) for t in texts)
    except semver.ConstraintError as e:
        return FilterError(f.image, f"{named_in}: {e}")
    exclude = frozenset(f.exclude or ())
    text = f.image.strip()
    if "*" in text:
        first, sep, rest = text.partition("/")
        registry, pattern = (first, rest) if sep and _is_host(first) else (spec.registry, text)
        if ":" in pattern or "@" in pattern:
            return FilterError(
                f.image,
                f"{where}.image: a wildcard takes no tag or digest; choose tags with "
                f"{where}.versions",
            )
        return Filter(
            f.image,
            reference.registry_host(registry),  # Docker Hub's aliases are docker.io (same models)
            pattern.lower(),
            wildcard=True,
            exclude=exclude,
            constraints=constraints,
        )
    if "@" in text:
        return FilterError(
            f.image, f"{where}.image: name images by tag, not digest (a catalog lists tags)"
        )
    first, sep, rest = text.partition("/")
    named = bool(sep) and _is_host(first)
    registry, path = (first, rest) if named else (spec.registry, text)
    try:
        ref = reference.parse(f"{reference.registry_host(registry)}/{path}")
    except reference.ReferenceError as e:
        return FilterError(f.image, f"{where}.image: {e}")
    return Filter(
        f.image,
        ref.registry,
        ref.repository,
        tag=ref.tag,
        exclude=exclude,
        constraints=constraints,
    )


def _is_host(segment: str) -> bool:
    return "." in segment or ":" in segment or segment == "localhost"


class Versions(dict[str, semver.Version | None]):
    """Tags read as versions, each tag once: a sync reads the same tags in many repositories."""

    def of(self, tag: str) -> semver.Version | None:
        """The version `tag` names, or None."""
        try:
            return self[tag]
        except KeyError:
            version = self[tag] = semver.parse_version(tag)
            return version


@dataclass(frozen=True)
class Matched:
    """The tags of one repository a filter kept, in the registry's order.

    Only as many images are named from them as are created: ordering them (`newest_first`) and
    naming each image is the per-image work a `maxModels` cap stops; counting them is not.
    """

    registry: str
    repository: str
    tags: tuple[str, ...]
    versions: Versions = field(default_factory=Versions, compare=False, repr=False)

    def prefix(self) -> str:
        """The image without its tag (`image_name`): an image of a tag is this, `:` and the tag."""
        return image_name(self.registry, self.repository)

    def newest_first(self) -> list[str]:
        """The tags, versions highest first, then the tags that are no version, by name."""
        versions = {t: v for t in self.tags if (v := self.versions.of(t)) is not None}
        ordered = sorted(versions, key=lambda t: (versions[t].key(), t), reverse=True)
        return ordered + sorted(t for t in self.tags if t not in versions)


def matched(
    f: Filter, answer: QueryAnswer | None, versions: Versions | None = None
) -> list[Matched]:
    """The tags `f` keeps, per repository: its own image, or the tags listed that pass.

    Only the constraints are checked per tag (one version read per distinct tag, shared through
    `versions`); `Matched.newest_first` orders a repository's tags when they are needed, so a
    `maxModels` cap keeps the newest.
    """
    versions = Versions() if versions is None else versions
    if f.tag is not None:
        return [Matched(f.registry, f.repository, (f.tag,), versions)]
    found: list[Matched] = []
    allowed: dict[str, bool] = {}
    for repo in answer.repositories if answer is not None else ():
        if repo.repository in f.exclude:
            continue
        kept = repo.tags if not f.constraints else tuple(_kept(repo.tags, f, versions, allowed))
        if kept:
            found.append(Matched(f.registry, repo.repository, kept, versions))
    return found


def _kept(
    tags: Sequence[str], f: Filter, versions: Versions, allowed: dict[str, bool]
) -> list[str]:
    """The tags that satisfy `f`'s constraints, each distinct tag checked once (`allowed`)."""
    out = []
    for tag in tags:
        ok = allowed.get(tag)
        if ok is None:
            version = versions.of(tag)
            ok = allowed[tag] = version is not None and all(
                c.allows(version) for c in f.constraints
            )
        if ok:
            out.append(tag)
    return out
