"""Which hostnames a tenant may pin a route to, under the platform's route policy.

A Gateway serves whichever route claims a host, so hosts are bounded like paths: a tenant may use
the hostnames the platform's own config lists, and those its policy's patterns cover. A pattern is
a Gateway API hostname whose whole labels may be `{.metadata.namespace}`; its wildcard `*.` covers
every name below it (Gateway API's wildcards match any number of labels), but not the name itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

NAMESPACE_LABEL: Final = "{.metadata.namespace}"


def render_pattern(pattern: str, namespace: str) -> str:
    """The pattern for a service in `namespace`: each `{.metadata.namespace}` label replaced.

    A namespace's name is a DNS label, so the result is a hostname (or wildcard) again.
    """
    return pattern.replace(NAMESPACE_LABEL, namespace)


def covers(pattern: str, hostname: str) -> bool:
    """Whether the rendered `pattern` allows `hostname` (itself a name or a wildcard).

    `*.example.com` covers `a.example.com`, `a.b.example.com`, `*.a.example.com` and itself,
    not `example.com`.
    """
    if pattern == hostname:
        return True
    if not pattern.startswith("*."):
        return False
    suffix = pattern[1:]
    return hostname.endswith(suffix) and len(hostname) > len(suffix)


def refused_hostnames(
    hostnames: Sequence[str], platform: Sequence[str], patterns: Sequence[str], namespace: str
) -> list[str]:
    """The hostnames neither the platform's own list nor a policy pattern allows, in order."""
    rendered = [render_pattern(p, namespace) for p in patterns]
    return [h for h in hostnames if h not in platform and not any(covers(p, h) for p in rendered)]
