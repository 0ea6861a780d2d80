"""Image references as registries see them: `registry/repository[:tag][@digest]`.

Users write Docker-style short names (`amdenterpriseai/aim-qwen:0.8.5`); registry clients and
pull-secret lookups need the registry host spelled out (`docker.io`). A leaf module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DOCKER_HUB: Final = "docker.io"
# Names Docker Hub goes by in pull secrets written by `docker login` and by hand.
_DOCKER_HUB_ALIASES: Final = frozenset(
    {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}
)


class ReferenceError(ValueError):  # noqa: A001 - the domain's word; builtins' is unrelated
    """The text is not an image reference."""


@dataclass(frozen=True)
class ImageReference:
    """A parsed image reference; `tag` is None when only a digest pins the image."""

    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """`registry/repository`, with no tag or digest."""
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        """The fully qualified reference: a digest wins over a tag, as registries resolve it."""
        if self.digest:
            return f"{self.name}@{self.digest}"
        return f"{self.name}:{self.tag or 'latest'}"

    def at(self, digest: str) -> str:
        """The same repository, pinned to `digest`."""
        return f"{self.name}@{digest}"


def parse(image: str) -> ImageReference:
    """Parse `image` the way Docker does.

    The first path segment is a registry only if it has a `.` or a `:` or is `localhost`;
    otherwise the image is on Docker Hub.

    Raises:
        ReferenceError: `image` is empty or malformed.
    """
    text = image.strip()
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        if not digest.startswith("sha256:") or len(digest) != len("sha256:") + 64:
            msg = f"{image!r}: the digest must be sha256:<64 hex digits>"
            raise ReferenceError(msg)
    first, sep, rest = text.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, rest
    else:
        registry, path = DOCKER_HUB, text
    tag = None
    last_slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > last_slash:
        path, tag = path[:colon], path[colon + 1 :]
    if not path or (not tag and tag is not None) or any(not part for part in path.split("/")):
        msg = f"{image!r} is not an image reference such as registry/org/name:tag"
        raise ReferenceError(msg)
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    return ImageReference(registry, path.lower(), tag, digest)


def registry_host(key: str) -> str:
    """The registry a pull secret's `auths` key is for, in the form `parse` gives.

    Keys come as `host`, `host:port`, `https://host/v1/` and the like.
    """
    host = key.strip()
    for scheme in ("https://", "http://"):
        host = host.removeprefix(scheme)
    host = host.split("/", 1)[0].lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host
