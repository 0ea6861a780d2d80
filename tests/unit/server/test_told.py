"""Events only for news: what the server told each XR decides what a call sends (issue 33).

Each result is an event write. Crossplane 2.4 reconciles an XR several times from a stale copy
(crossplane/crossplane#7062), and composers report warnings on every call; the server remembers,
per XR uid, what it told (function/server/told.py) so that neither becomes an event per call.
Driven through `FunctionRunner.run_bytes`, in process, with a fake clock.
"""

from __future__ import annotations

import asyncio
import tracemalloc
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.errors import InvalidSpecError
from function.kube.contract import Composition, Notice, Observed, Requirement
from function.kube.wire import results
from function.rules.status import Condition, ConditionStatus, ConditionType
from function.server.call import Call, Composed, Composers, step
from function.server.fn import FunctionRunner
from function.server.told import News, Told
from function.settings import Settings
from tests.cases import Case, table

T, F, U = ConditionStatus.TRUE, ConditionStatus.FALSE, ConditionStatus.UNKNOWN
PODS = ConditionType.INFERENCE_SERVICE_PODS_READY  # a StrEnum member, as composers write
WAITING = Condition(PODS, F, "Waiting", "0 of 1 pods Ready")
RUNNING = Condition(PODS, T, "Running", "1 of 1 pods Ready")
CRASHING = Condition(PODS, F, "CrashLoop", "the pod restarts")
RESOLVING = Condition(PODS, U, "Resolving")
NO_DEFAULT = Condition(
    "RuntimeConfigReady", T, "DefaultRuntimeConfigMissing", "defaults", warn=True
)
START = datetime(2025, 1, 1, tzinfo=UTC)


class Clock:
    """The runner's clock, moved on by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


class World:
    """A composer saying what the test sets, as a real one says what it finds in its world."""

    def __init__(self) -> None:
        self.conditions: tuple[Condition, ...] = ()
        self.warnings: tuple[str, ...] = ()

    def __call__(self, _: Observed) -> Composition:
        return Composition(conditions=list(self.conditions), warnings=list(self.warnings))


def request(uid: str, copy: tuple[Condition, ...] = ()) -> bytes:
    """A call for XR `uid`, whose copy carries `copy` as Crossplane last wrote them."""
    conditions = [{"type": c.type, "status": c.status.value, "reason": c.reason} for c in copy]
    meta: dict[str, Any] = {"name": f"xr-{uid}", "namespace": "team"}
    if uid:
        meta["uid"] = uid
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(
        {"apiVersion": "a/v1", "kind": "K", "metadata": meta, "status": {"conditions": conditions}}
    )
    return req.SerializeToString()


@dataclass(frozen=True)
class Turn:
    """One reconcile: the XR's copy, what the composer finds, and the events expected."""

    copy: tuple[Condition, ...]
    now: tuple[Condition, ...]
    told: tuple[str, ...]
    """The results' messages, in order."""
    warnings: tuple[str, ...] = ()
    after_s: float = 1.0
    """Seconds since the previous turn."""
    uid: str = "a"
    restart: bool = False
    """A new server process: nothing remembered."""


@dataclass(frozen=True)
class Story(Case):
    turns: tuple[Turn, ...]
    suppressed: dict[str, float] = field(default_factory=dict)
    """function_aim_events_suppressed_total by reason, at the end."""


def flapping(turns: int) -> list[Turn]:
    """`turns` calls a tenth of a second apart, Running then Waiting: each one news."""
    return [
        Turn((), ((RUNNING,), (WAITING,))[i % 2], ((R,), (W,))[i % 2], after_s=0.1)
        for i in range(turns)
    ]


W, R, C = (f"{PODS} is {c.status}: {c.reason}: {c.message}" for c in (WAITING, RUNNING, CRASHING))
PULL = "cannot pull image m:1: unauthorized"

STORIES = [
    Story(
        "stale-copy",
        "#7062: Crossplane reconciles again from a copy that still shows the old condition; the "
        "change was told, so it is not told again (today's comparison with the copy re-told it)",
        (
            Turn((WAITING,), (RUNNING,), (R,)),
            Turn((WAITING,), (RUNNING,), ()),
            Turn((WAITING,), (RUNNING,), ()),
        ),
        {"told": 2},
    ),
    Story(
        "real-change",
        "a change after a told state is one event, even read from a stale copy",
        (Turn((WAITING,), (RUNNING,), (R,)), Turn((WAITING,), (CRASHING,), (C,))),
    ),
    Story(
        "flip-back-on-stale-copy",
        "back to the state the stale copy shows is news too: the user was told it had left it",
        (Turn((WAITING,), (RUNNING,), (R,)), Turn((WAITING,), (WAITING,), (W,))),
    ),
    Story(
        "unknown-between",
        "a condition that went Unknown is remembered so: coming back is news, though the copy "
        "(stale) shows the same state as now",
        (
            Turn((), (RUNNING,), (R,)),
            Turn((RUNNING,), (RESOLVING,), ()),
            Turn((RUNNING,), (RUNNING,), (R,)),
        ),
    ),
    Story(
        "restart-up-to-date-copy",
        "no memory (a restart): the copy decides, as before; it shows what was told: nothing new",
        (Turn((), (RUNNING,), (R,)), Turn((RUNNING,), (RUNNING,), (), restart=True)),
    ),
    Story(
        "restart-stale-copy",
        "no memory (a restart) and a stale copy: the change is told once more, the documented "
        "cost of a memory the process keeps",
        (
            Turn((WAITING,), (RUNNING,), (R,)),
            Turn((WAITING,), (RUNNING,), (R,), restart=True),
            Turn((WAITING,), (RUNNING,), ()),
        ),
        {"told": 1},
    ),
    Story(
        "warning-repeat",
        "the same warning on consecutive calls is one Warning result, sent again once "
        "--warning-repeat has passed, so it stays listed while its cause lasts",
        (
            Turn((), (), (PULL,), (PULL,)),
            Turn((), (), (), (PULL,), after_s=10),
            Turn((), (), (), (PULL,), after_s=589),
            Turn((), (), (PULL,), (PULL,), after_s=1),
            Turn((), (), (), (PULL,), after_s=1),
        ),
        {"repeat": 3},
    ),
    Story(
        "another-warning",
        "a different warning is news at once, and the first still waits for its repeat",
        (
            Turn((), (), (PULL,), (PULL,)),
            Turn((), (), ("disk full",), (PULL, "disk full")),
        ),
        {"repeat": 1},
    ),
    Story(
        "duplicate-warning",
        "a warning said twice in one call is one event",
        (Turn((), (), (PULL,), (PULL, PULL)),),
        {"repeat": 1},
    ),
    Story(
        "burst",
        "a condition flapping ten times a second: 10 events, then none until the budget refills "
        "(10 a minute, one per 6 s); each dropped one is counted, and the condition is "
        "remembered as it is, so what comes after is told against it",
        (
            *flapping(10),
            Turn((), (RUNNING,), (), after_s=0.1),
            Turn((), (WAITING,), (), after_s=0.1),
            Turn((), (RUNNING,), (R,), after_s=6),
        ),
        {"rate": 2},
    ),
    Story(
        "burst-keeps-order",
        "past the budget the first of a call's events go out (transitions, then warnings); a "
        "warning held back is not remembered as sent, so it goes out when the budget refills",
        (
            *flapping(9),
            Turn((), (WAITING,), (W,), (PULL,), after_s=0.1),
            Turn((WAITING,), (WAITING,), (PULL,), (PULL,), after_s=6),
        ),
        {"rate": 1},
    ),
    Story(
        "two-xrs",
        "two XRs never share memory: the same change on another XR is its own news, and each "
        "XR's budget and warnings are its own",
        (
            Turn((WAITING,), (RUNNING,), (R, PULL), (PULL,)),
            Turn((WAITING,), (RUNNING,), (R, PULL), (PULL,), uid="b"),
            Turn((WAITING,), (RUNNING,), (), (PULL,)),
            Turn((WAITING,), (RUNNING,), (), (PULL,), uid="b"),
        ),
        {"told": 2, "repeat": 2},
    ),
    Story(
        "no-uid",
        "an XR without a uid (`crossplane render`) has no memory: told against its copy, every "
        "warning every call, as before",
        (
            Turn((WAITING,), (RUNNING,), (R, PULL), (PULL,), uid=""),
            Turn((WAITING,), (RUNNING,), (R, PULL), (PULL,), uid=""),
        ),
    ),
]


STORY_SETTINGS = Settings(events_per_minute=10)
"""The stories' budget: 10 events a minute, whatever the default (one every 6 s)."""


def play(story: Story) -> tuple[list[list[str]], FunctionRunner]:
    """The results' messages of each turn, and the runner (for its metrics)."""
    world, clock = World(), Clock()
    runner = FunctionRunner({"K": world}, settings=STORY_SETTINGS, clock=clock)
    told = []
    for turn in story.turns:
        if turn.restart:
            runner = FunctionRunner({"K": world}, settings=STORY_SETTINGS, clock=clock)
        clock.now += timedelta(seconds=turn.after_s)
        world.conditions, world.warnings = turn.now, turn.warnings
        rsp = fnv1.RunFunctionResponse.FromString(
            asyncio.run(runner.run_bytes(request(turn.uid, turn.copy)))
        )
        told.append([r.message for r in rsp.results])
    return told, runner


def suppressed(runner: FunctionRunner) -> dict[str, float]:
    """function_aim_events_suppressed_total by reason, those never counted left out."""
    counts = {
        reason: runner.metrics.registry.get_sample_value(
            "function_aim_events_suppressed_total", {"reason": reason}
        )
        for reason in ("told", "repeat", "rate")
    }
    return {reason: n for reason, n in counts.items() if n}


@table(STORIES)
def test_an_xr_is_told_only_news(case: Story) -> None:
    """`kubectl describe` lists each change once and a lasting warning every 10 minutes, and the
    API server gets an event write only for those, however often Crossplane reconciles."""
    told, runner = play(case)
    assert told == [list(t.told) for t in case.turns], case.reason
    assert suppressed(runner) == case.suppressed, case.reason


def test_the_oldest_xr_is_forgotten_past_the_cap() -> None:
    """Memory is bounded: past `capacity` XRs the least recently composed one is forgotten and
    told against its copy again (a stale copy repeats its change), the others are remembered."""
    world, stale = World(), (WAITING,)
    world.conditions = (RUNNING,)
    told = Told(warning_repeat_s=600, events_per_minute=10, capacity=2)
    runner = FunctionRunner({"K": world}, told=told)

    def messages(uid: str) -> list[str]:
        rsp = asyncio.run(runner.run_bytes(request(uid, stale)))
        return [r.message for r in fnv1.RunFunctionResponse.FromString(rsp).results]

    assert [messages(uid) for uid in ("a", "b", "a", "c")] == [[R], [R], [], [R]]
    assert len(told) == 2
    assert "b" not in told, "b was composed least recently (a again after it)"
    assert messages("a") == [], "a, used recently, is remembered"
    assert messages("b") == [R], "b, forgotten, is told against its stale copy"


def test_a_remembered_xr_costs_under_a_kilobyte() -> None:
    """The default cap of 100,000 XRs must fit a function pod: under 100 MB at worst."""
    conditions = tuple(
        Condition(kind, T, f"{kind}Fine", "a message that is not kept")
        for kind in ("ModelReady", "TemplateReady", "RuntimeConfigReady", "PodsReady", "Routed")
    )
    told, xrs = Told(warning_repeat_s=600, events_per_minute=10), 10_000
    tracemalloc.start()
    try:
        for _ in range(xrs):
            told.tell(News(str(uuid.uuid4()), "team/x", conditions, {}), 0.0)
        used, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert used / xrs < 1024


def test_events_keep_their_shape() -> None:
    """A transition is a Normal result; one of a condition that warns a Warning with its reason
    (Crossplane makes it the event's); a composer's warning a Warning as the SDK writes it."""
    world = World()
    world.conditions, world.warnings = (RUNNING, NO_DEFAULT), (PULL,)
    rsp = fnv1.RunFunctionResponse.FromString(
        asyncio.run(FunctionRunner({"K": world}).run_bytes(request("a")))
    )
    assert [(r.severity, r.reason) for r in rsp.results] == [
        (fnv1.SEVERITY_NORMAL, ""),
        (fnv1.SEVERITY_WARNING, "DefaultRuntimeConfigMissing"),
        (fnv1.SEVERITY_WARNING, ""),
    ]


def test_the_results_appended_to_the_worker_s_bytes_round_trip() -> None:
    """The server appends the serialized results to the worker's serialized response rather
    than parsing it again: it must read back as that response with the results added."""
    world = World()
    world.conditions, world.warnings = (RUNNING,), (PULL,)
    composers = Composers({"K": world}, Settings())
    composed = step(composers, Call(request("a"), START))
    assert isinstance(composed, Composed)
    assert composed.news is not None
    expected = fnv1.RunFunctionResponse.FromString(composed.response)
    assert list(expected.results) == [], "the worker adds no events of its own"
    expected.results.extend(results(*_all(composed.news)))

    served = asyncio.run(FunctionRunner({"K": world}, clock=Clock()).run_bytes(request("a")))

    assert fnv1.RunFunctionResponse.FromString(served) == expected
    assert len(expected.conditions) == 1, "the response's other fields survive the append"


def _all(news: News) -> tuple[list[Notice], list[str]]:
    told = Told(warning_repeat_s=0, events_per_minute=100)
    telling = told.tell(news, 0.0)
    return telling.notices, telling.warnings


def test_a_failed_call_warns_on_every_call_as_before() -> None:
    """A spec the composer cannot use is reported by the worker on each call, unchanged: the
    memory only chooses among a composed call's events."""

    def composer(_: Observed) -> Composition:
        raise InvalidSpecError(field="spec.x", problem="is odd")

    runner = FunctionRunner({"K": composer})
    for _ in range(2):
        rsp = fnv1.RunFunctionResponse.FromString(asyncio.run(runner.run_bytes(request("a"))))
        assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]


def test_the_flags_reach_the_memory() -> None:
    """--warning-repeat and --events-per-minute, through Settings, are what the runner uses."""
    world, clock = World(), Clock()
    world.warnings = (PULL,)
    settings = Settings(warning_repeat_s=5, events_per_minute=1)
    runner = FunctionRunner({"K": world}, settings=settings, clock=clock)

    def warned(after_s: float) -> int:
        clock.now += timedelta(seconds=after_s)
        rsp = fnv1.RunFunctionResponse.FromString(asyncio.run(runner.run_bytes(request("a"))))
        return len(rsp.results)

    # Sent; within the repeat; past the repeat but not a whole minute's budget; past both.
    assert [warned(0), warned(1), warned(10), warned(60)] == [1, 0, 0, 1]


def test_no_memory_tells_every_call_as_crossplane_render_expects() -> None:
    """--event-memory=0: each call is told against the XR's copy, every warning and no cap, so
    rendering the same XR again against a long-running function shows the same events."""
    world = World()
    world.conditions, world.warnings = (RUNNING,), (PULL,)
    runner = FunctionRunner({"K": world}, settings=Settings(event_memory=0), clock=Clock())
    for _ in range(12):
        rsp = asyncio.run(runner.run_bytes(request("a", (WAITING,))))
        assert [r.message for r in fnv1.RunFunctionResponse.FromString(rsp).results] == [R, PULL]
    assert suppressed(runner) == {}


class Asking(World):
    """A composer that needs a model looked up first, as a service does."""

    def __call__(self, observed: Observed) -> Composition:
        composition = super().__call__(observed)
        composition.requirements = [Requirement("model", "a/v1", "Model", match_name="m")]
        return composition


def test_a_call_whose_response_crossplane_drops_tells_nothing_and_is_not_remembered() -> None:
    """Crossplane calls again while the function asks for objects the call was not given, and
    keeps only the last response: events said in the first would never reach the user, and if
    remembered as told, the kept response would not say them either."""
    world = Asking()
    world.conditions = (RUNNING,)
    runner = FunctionRunner({"K": world}, clock=Clock())

    def messages(req: fnv1.RunFunctionRequest) -> list[str]:
        raw = asyncio.run(runner.run_bytes(req.SerializeToString()))
        return [r.message for r in fnv1.RunFunctionResponse.FromString(raw).results]

    first = fnv1.RunFunctionRequest.FromString(request("a"))
    assert messages(first) == [], "the lookup call's results are dropped by Crossplane"
    then = fnv1.RunFunctionRequest.FromString(request("a"))
    then.required_resources["model"].items.add()
    assert messages(then) == [R], "the kept call tells the change"
    assert messages(then) == [], "and only once"


def guarded_request(copy: tuple[Condition, ...], version: str) -> bytes:
    """A call for XR `a` at `version`, composing nothing new: its answer carries the version
    as the precondition of Crossplane's status write (function/kube/precondition.py)."""
    req = fnv1.RunFunctionRequest.FromString(request("a", copy))
    req.observed.composite.resource.update(
        {
            "metadata": {
                "name": "xr-a",
                "namespace": "team",
                "uid": "a",
                "resourceVersion": version,
            },
            "spec": {"crossplane": {"compositionRef": {"name": "c"}, "resourceRefs": []}},
        }
    )
    return req.SerializeToString()


def test_a_guarded_call_tells_against_its_copy_so_a_refused_one_loses_no_event() -> None:
    """A guarded answer is written only if its copy is the current one; refused (409), its events
    are dropped with it. Judged against memory, the change it told would never be told again;
    judged against the copy, the next call tells it, and once written it is not told twice."""
    world = World()
    world.conditions = (RUNNING,)
    runner = FunctionRunner({"K": world}, clock=Clock())

    def messages(raw_request: bytes) -> list[str]:
        raw = asyncio.run(runner.run_bytes(raw_request))
        rsp = fnv1.RunFunctionResponse.FromString(raw)
        assert "metadata" in rsp.desired.composite.resource.fields  # the precondition: guarded
        return [r.message for r in rsp.results]

    assert messages(guarded_request((WAITING,), "5")) == [R], "told; Crossplane refuses it (409)"
    assert messages(guarded_request((WAITING,), "5")) == [R], "the copy never changed: told again"
    assert messages(guarded_request((RUNNING,), "6")) == [], "written: nothing new to tell"
