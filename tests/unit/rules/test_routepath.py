"""Route path templates: JSONPath fragments rendered against the AIMService, then normalised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from function.rules.routepath import RoutePathError, extend, render_path, render_prefix, within
from tests.cases import Case, table

SERVICE: dict[str, Any] = {
    "metadata": {
        "name": "Chat.v2",
        "namespace": "ml-team",
        "labels": {"team": "NLP", "app.kubernetes.io/part-of": "a/b c"},
        "annotations": {"owner": "ml-team", "up": ".."},
    },
    "spec": {"model": {"ref": "qwen3"}, "replicas": 2, "cacheModel": True},
}


@dataclass(frozen=True)
class PathCase(Case):
    template: str
    want: str


RENDER_CASES = [
    PathCase(
        "default",
        "the default template, dots kept",
        "/{.metadata.namespace}/{.metadata.name}",
        "/ml-team/chat.v2",
    ),
    PathCase(
        "slashes",
        "a leading slash added, a trailing one dropped",
        "{.metadata.namespace}/{.spec.model.ref}/",
        "/ml-team/qwen3",
    ),
    PathCase(
        "label-spellings",
        "both label spellings, and an empty segment dropped",
        "/{.metadata.labels['team']}//{.metadata.labels.team}/x",
        "/nlp/x",
    ),
    PathCase(
        "escaped",
        "a value with a slash and a space stays one segment",
        '/{.metadata.labels["app.kubernetes.io/part-of"]}',
        "/a%2Fb%20c",
    ),
    PathCase(
        "annotation",
        "annotations are readable too",
        "/{.metadata.namespace}/{.metadata.annotations.owner}/chat",
        "/ml-team/chat",
    ),
    PathCase(
        "scalars",
        "numbers and booleans render as text",
        "/r{.spec.replicas}/{.spec.cacheModel}",
        "/r2/true",
    ),
    PathCase(
        "static",
        "static text is lower-cased and percent-encoded",
        "/Static Path/Ünïcode",
        "/static%20path/%C3%BCn%C3%AFcode",
    ),
]


@table(RENDER_CASES)
def test_renders_and_normalises(case: PathCase) -> None:
    """Path templates render and normalise to valid URL paths."""
    assert render_path(case.template, SERVICE) == case.want, case.reason


ERROR_CASES = [
    PathCase(
        "missing",
        "a label the service does not have",
        "/{.metadata.labels['missing']}",
        "finds nothing",
    ),
    PathCase("object", "a path must end on a value", "/{.spec.model}", "finds an object"),
    PathCase("no-dot", "JSONPath starts at the object", "/{metadata.name}", "starting with '.'"),
    PathCase("unbalanced", "an unclosed brace", "/{.metadata.name", "unbalanced braces"),
    PathCase("bad-jsonpath", "a bracket that opens nothing", "/{.metadata[}", "not valid JSONPath"),
    PathCase(
        "many",
        "a wildcard gives several values, not one segment",
        "/{.metadata.labels.*}",
        "finds 2 values",
    ),
    PathCase("long", "a path of 200 characters", "/" + "a" * 199, "under 200"),
    PathCase("empty", "a path that renders to '/' alone", "//", "renders to nothing"),
    PathCase(
        "dot-dot",
        "`..` would climb out of a route policy's prefix; Gateway API refuses it too",
        "/{.metadata.namespace}/../other",
        "'..' would climb out",
    ),
    PathCase("dot", "`.` is refused by Gateway API as well", "/{.metadata.namespace}/./x", "'.'"),
    PathCase(
        "dot-dot-value",
        "a value of `..` is a segment of its own like any other",
        "/{.metadata.namespace}/{.metadata.annotations.up}",
        "'..' would climb out",
    ),
]


@table(ERROR_CASES)
def test_what_cannot_render_is_an_error_naming_the_fragment(case: PathCase) -> None:
    """A template that cannot render names the fragment at fault."""
    with pytest.raises(RoutePathError, match=case.want):
        render_path(case.template, SERVICE)


def test_path_of_199_characters_is_accepted() -> None:
    """A path at the length limit is accepted."""
    assert len(render_path("/" + "a" * 198, SERVICE)) == 199


PREFIX_CASES = [
    PathCase(
        "namespace",
        "the default prefix, trailing slash trimmed",
        "/{.metadata.namespace}/",
        "/ml-team",
    ),
    PathCase("root", "`/` renders to nothing: every path is under it", "/", "/"),
    PathCase(
        "repeats-kept",
        "a repeated segment is kept: dropping it would widen the prefix",
        "/ml-team/{.metadata.namespace}/",
        "/ml-team/ml-team",
    ),
]


@table(PREFIX_CASES)
def test_prefixes_render_like_paths_but_keep_repeats(case: PathCase) -> None:
    """A route policy's prefix renders as a path does, but may be `/` and keeps repeats."""
    assert render_prefix(case.template, SERVICE) == case.want, case.reason


@dataclass(frozen=True)
class WithinCase(Case):
    path: str
    prefix: str
    inside: bool


WITHIN_CASES = [
    WithinCase("below", "a path below the prefix", "/team-a/chat", "/team-a", inside=True),
    WithinCase("equal", "the prefix itself", "/team-a", "/team-a", inside=True),
    WithinCase("root", "everything is under `/`", "/team-b/chat", "/", inside=True),
    WithinCase("sibling", "another segment", "/team-b/chat", "/team-a", inside=False),
    WithinCase(
        "string-prefix",
        "shares the characters, not the segment",
        "/team-ab/chat",
        "/team-a",
        inside=False,
    ),
    WithinCase(
        "above", "a path shorter than the prefix covers more", "/teams", "/teams/a", inside=False
    ),
]


@table(WITHIN_CASES)
def test_within_compares_whole_segments(case: WithinCase) -> None:
    """A path is within a prefix when the prefix's segments begin it, whole."""
    assert within(case.path, case.prefix) is case.inside, case.reason


def test_extend_encodes_only_the_new_segments() -> None:
    """A prefix that needed encoding (`/team a/` is `/team%20a`) keeps its encoding when a
    service's uid is appended: encoded twice (`%2520`) it would lie outside its own prefix."""
    prefix = render_prefix("/Team A/{.metadata.namespace}/", SERVICE)
    path = extend(prefix, ["UID-1"])
    assert path == prefix + "/uid-1"
    assert within(path, prefix)


def test_extend_keeps_the_length_limit() -> None:
    """Appending may not take a path past 199 characters."""
    with pytest.raises(RoutePathError, match="under 200"):
        extend("/" + "a" * 190, ["b" * 10])
