"""A Pod's container statuses, read by type and cut at bounds.

The kubelet writes them, but anyone with write access to a Pod's status may. Both readers of a
Pod read them here: function/kube/jobs.py (a Job's result in its termination message, a pull
failure in its waiting state) and rules/pods.py (why an inference pod does not serve). A field of
another type reads as absent; a name, image or reason is cut at `MAX_WORD` characters, a waiting
message at `MAX_MESSAGE`, a termination message at `MAX_TERMINATION_MESSAGE`; at most
`MAX_CONTAINERS` statuses are read of each list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeGuard

from pydantic import JsonValue

from function.rules.text import MAX_MESSAGE, text, word

MAX_CONTAINERS: Final = 64
"""Statuses read of a Pod's init containers, and of its containers; real Pods have a few."""
MAX_TERMINATION_MESSAGE: Final = 64 * 1024
"""A kubelet keeps at most 4 KiB of one container's termination message (12 KiB of a Pod's);
a longer one is cut here, still longer than any reader accepts, which then says it is too long."""


@dataclass(frozen=True)
class Termination:
    """A container's `terminated` state: how it ended."""

    reason: str = ""
    exit_code: int | None = None
    """None when it is not an integer."""
    message: str = ""
    """Its termination message; empty when it left none."""


@dataclass(frozen=True)
class ContainerStatus:
    """One entry of a Pod's `initContainerStatuses` or `containerStatuses`."""

    name: str = ""
    image: str = ""
    waiting_reason: str = ""
    waiting_message: str = ""
    terminated: Termination | None = None
    """Its current state, when that is `terminated`."""
    last_terminated: Termination | None = None
    """Its `lastState`: how it ended before the kubelet restarted it."""
    restarts: int = 0

    @property
    def ended(self) -> Termination | None:
        """How it last ended: before its restart, else now (a container not restarted)."""
        return self.last_terminated or self.terminated


def container_statuses(pod: Mapping[str, JsonValue]) -> tuple[ContainerStatus, ...]:
    """The statuses of a Pod's init containers, then of its containers (ours run work in both).

    Each list is cut before it is looked at: a status may list millions of entries.
    """
    status = _map(pod.get("status"))
    found: list[ContainerStatus] = []
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status.get(key)
        if isinstance(items, list):
            found += [_status(i) for i in items[:MAX_CONTAINERS] if isinstance(i, dict)]
    return tuple(found)


def _status(item: Mapping[str, JsonValue]) -> ContainerStatus:
    state = _map(item.get("state"))
    waiting = _map(state.get("waiting"))
    restarts = item.get("restartCount")
    return ContainerStatus(
        name=word(item.get("name")),
        image=word(item.get("image")),
        waiting_reason=word(waiting.get("reason")),
        waiting_message=text(waiting.get("message"), MAX_MESSAGE),
        terminated=_termination(state.get("terminated")),
        last_terminated=_termination(_map(item.get("lastState")).get("terminated")),
        restarts=restarts if _is_count(restarts) else 0,
    )


def _termination(value: JsonValue | None) -> Termination | None:
    if not isinstance(value, dict):
        return None
    code = value.get("exitCode")
    return Termination(
        reason=word(value.get("reason")),
        exit_code=code if _is_count(code) else None,
        message=text(value.get("message"), MAX_TERMINATION_MESSAGE),
    )


def _is_count(value: JsonValue | None) -> TypeGuard[int]:
    # A bool is an int to Python, and no count.
    return isinstance(value, int) and not isinstance(value, bool)


def _map(value: JsonValue | None) -> Mapping[str, JsonValue]:
    return value if isinstance(value, dict) else {}
