"""What the function last told each XR, so that an event is sent only for news.

Each result of a call becomes an event write: Crossplane records it, or patches the count of the
same event. Crossplane 2.4 reconciles an XR several times from a stale copy of it
(crossplane/crossplane#7062), whose status still carries the conditions from before the last
call; compared with them, every such call would tell the same transition again. And composers
report their warnings on every call, so a lasting failure would be an event write per reconcile.

So the server remembers, per XR (by metadata.uid), the conditions it last told, when it last sent
each warning, and a budget of events per minute. It is the server's process that remembers: every
call passes through it, while the calls of one XR are composed by any of the workers, which share
no memory. Memory is bounded: past `capacity` XRs the least recently composed is forgotten, and an
XR without memory (forgotten, or all of them after a restart) is told against the conditions its
copy carries, as before.
"""

from __future__ import annotations

import sys
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from function.kube.contract import Notice
from function.kube.transitions import Said, said, transitions
from function.rules.status import Condition
from function.settings import DEFAULT_EVENT_MEMORY

_MINUTE: Final = 60.0

TOLD: Final = "told"
"""A transition the XR's copy shows but that was told already: the copy is stale (#7062)."""
REPEAT: Final = "repeat"
"""A warning sent to the XR within `--warning-repeat`."""
RATE: Final = "rate"
"""An event past the XR's `--events-per-minute`."""


@dataclass(frozen=True)
class News:
    """What one composed call may tell, as plain values a worker sends back (`call.Composed`)."""

    uid: str
    """The XR's metadata.uid; empty when it has none (`crossplane render`), and then every call
    is told against the XR's copy, with no memory and no cap."""
    xr: str
    """`namespace/name`, for the log."""
    conditions: tuple[Condition, ...]
    carried: Mapping[str, tuple[str, str]]
    """The conditions the XR's copy carries (`transitions.carried`): what was told before, when
    the server does not remember."""
    warnings: tuple[str, ...] = ()
    guarded: bool = False
    """Crossplane writes this call's answer only if the copy it was asked about is the current
    one (function/kube/precondition.py): refused, the answer and its events are dropped. So the
    copy's conditions, which are then what was last written, say what is news, not the memory of
    what was told, which a refused call would have moved past events nobody saw."""


@dataclass(frozen=True)
class Telling:
    """What to send this call, and what was held back by reason (TOLD, REPEAT, RATE)."""

    notices: list[Notice]
    warnings: list[str]
    suppressed: Counter[str] = field(default_factory=Counter)


class _Memory:
    """One XR's: the conditions last told, when each warning went out, its event budget."""

    __slots__ = ("at", "said", "tokens", "warned")

    def __init__(self, tokens: float, at: float) -> None:
        self.said: tuple[tuple[str, str, str], ...] = ()
        """(type, status, reason) of each condition: a tuple is half the size of a dict."""
        self.warned: dict[str, float] | None = None
        """When each warning was last sent; None for none (most XRs), saving an empty dict."""
        self.tokens = tokens
        self.at = at


class Told:
    """The memory of what was told each XR, and the choice of what to tell it next."""

    def __init__(
        self,
        *,
        warning_repeat_s: float,
        events_per_minute: int,
        capacity: int = DEFAULT_EVENT_MEMORY,
    ) -> None:
        """Remember up to `capacity` XRs, each in well under a kilobyte (test_told measures it).

        A warning is sent again after `warning_repeat_s`, and one XR is sent at most
        `events_per_minute` events (a burst of as many, then as many a minute). With `capacity`
        0 nothing is remembered and nothing held back: every call tells what changed against
        the XR's copy, and every warning, as `crossplane render` expects of each render.
        """
        if capacity < 0 or events_per_minute < 1:
            msg = f"capacity {capacity} (0 or more), events_per_minute {events_per_minute} (1+)"
            raise ValueError(msg)
        self._repeat_s = warning_repeat_s
        self._per_minute = events_per_minute
        self._capacity = capacity
        self._memories: OrderedDict[str, _Memory] = OrderedDict()

    def __len__(self) -> int:
        """The XRs remembered."""
        return len(self._memories)

    def __contains__(self, uid: object) -> bool:
        """Whether the XR with this uid is remembered."""
        return uid in self._memories

    def tell(self, news: News, now: float) -> Telling:
        """What to send for `news` at `now` (seconds), remembering it as told.

        A condition is news when its status or reason differs from the one last told (or, for
        an XR not remembered or a guarded call, from its copy's); a warning when not sent within
        the repeat (a warning of a refused guarded call waits one repeat); and
        of those, in order (transitions, then warnings), as many as the XR's budget has left.
        The conditions are remembered as they are now, Unknown ones too, whether or not the
        budget let their events through: an event held back for a flapping condition is
        not worth sending late.
        """
        if not news.uid or not self._capacity:
            return Telling(
                transitions(news.carried, news.conditions, news.warnings), list(news.warnings)
            )
        suppressed: Counter[str] = Counter()
        memory = self._memories.get(news.uid)
        if memory is None:
            notices = transitions(news.carried, news.conditions, news.warnings)
            memory = _Memory(float(self._per_minute), now)
            self._memories[news.uid] = memory
            if len(self._memories) > self._capacity:
                self._memories.popitem(last=False)
        elif news.guarded:
            self._memories.move_to_end(news.uid)
            notices = transitions(news.carried, news.conditions, news.warnings)
        else:
            self._memories.move_to_end(news.uid)
            before = {kind: (status, reason) for kind, status, reason in memory.said}
            notices = transitions(before, news.conditions, news.warnings)
            copy = transitions(news.carried, news.conditions, news.warnings)
            suppressed[TOLD] = sum(n not in notices for n in copy)

        warned = {m: t for m, t in (memory.warned or {}).items() if now - t < self._repeat_s}
        warnings = []
        for message in dict.fromkeys(news.warnings):
            if message in warned:
                suppressed[REPEAT] += 1
            else:
                warnings.append(message)
        suppressed[REPEAT] += len(news.warnings) - len(dict.fromkeys(news.warnings))

        memory.tokens = min(
            float(self._per_minute),
            memory.tokens + max(now - memory.at, 0.0) * self._per_minute / _MINUTE,
        )
        memory.at = now
        room = int(memory.tokens)
        sent_notices = notices[:room]
        sent_warnings = warnings[: room - len(sent_notices)]
        suppressed[RATE] = len(notices) + len(warnings) - len(sent_notices) - len(sent_warnings)
        memory.tokens -= len(sent_notices) + len(sent_warnings)
        warned.update(dict.fromkeys(sent_warnings, now))
        memory.warned = warned or None
        memory.said = _interned(said(news.conditions))
        return Telling(sent_notices, sent_warnings, +suppressed)


def _interned(conditions: Said) -> tuple[tuple[str, str, str], ...]:
    """`conditions` as triples, their strings shared with every other XR's.

    Types, statuses and reasons are few; a hundred thousand XRs would otherwise each hold copies.
    Composers' are often StrEnum members, which `sys.intern` refuses: their plain `str` is kept.
    """
    return tuple(
        (sys.intern(str(kind)), sys.intern(str(status)), sys.intern(str(reason)))
        for kind, (status, reason) in conditions.items()
    )
