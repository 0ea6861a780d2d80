"""Route path templates: JSONPath fragments rendered against the AIMService, then normalised."""

from __future__ import annotations

from typing import Any

import pytest

from function.rules.routepath import RoutePathError, render_path

SERVICE: dict[str, Any] = {
    "metadata": {
        "name": "Chat.v2",
        "namespace": "ml-team",
        "labels": {"team": "NLP", "app.kubernetes.io/part-of": "a/b c"},
        "annotations": {"owner": "ml-team"},
    },
    "spec": {"model": {"ref": "qwen3"}, "replicas": 2, "cacheModel": True},
}


@pytest.mark.parametrize(
    ("template", "want"),
    [
        ("/{.metadata.namespace}/{.metadata.name}", "/ml-team/chat.v2"),
        ("{.metadata.namespace}/{.spec.model.ref}/", "/ml-team/qwen3"),
        ("/{.metadata.labels['team']}//{.metadata.labels.team}/x", "/nlp/x"),
        ('/{.metadata.labels["app.kubernetes.io/part-of"]}', "/a%2Fb%20c"),
        ("/{.metadata.namespace}/{.metadata.annotations.owner}/chat", "/ml-team/chat"),
        ("/r{.spec.replicas}/{.spec.cacheModel}", "/r2/true"),
        ("/Static Path/Ünïcode", "/static%20path/%C3%BCn%C3%AFcode"),
    ],
)
def test_renders_and_normalises(template: str, want: str) -> None:
    """Path templates render and normalise to valid URL paths."""
    assert render_path(template, SERVICE) == want


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("/{.metadata.labels['missing']}", "finds nothing"),
        ("/{.spec.model}", "finds an object"),
        ("/{metadata.name}", "starting with '.'"),
        ("/{.metadata.name", "unbalanced braces"),
        ("/{.metadata[}", "not valid JSONPath"),
        ("/{.metadata.labels.*}", "finds 2 values"),
        ("/" + "a" * 199, "under 200"),
        ("//", "renders to nothing"),
    ],
)
def test_what_cannot_render_is_an_error_naming_the_fragment(template: str, message: str) -> None:
    """A template that cannot render names the fragment at fault."""
    with pytest.raises(RoutePathError, match=message):
        render_path(template, SERVICE)


def test_path_of_199_characters_is_accepted() -> None:
    """A path at the length limit is accepted."""
    assert len(render_path("/" + "a" * 198, SERVICE)) == 199
