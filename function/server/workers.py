"""Where composing runs: in worker processes with a time budget, or in process for tests.

The gRPC server's event loop only receives requests, awaits the registry and sends responses.
Composing is CPU work on input nobody vetted, so it runs in a pool of worker processes: one call
per worker at a time, several workers so both cores serve, and a budget per call. A call that
exceeds its budget has its worker killed and replaced, and its caller gets `BudgetExceeded`
(which `fn.py` turns into a result naming the XR); every other call goes on undisturbed, since
no Python thread can stop a runaway computation but a process can be killed.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final, Protocol

from crossplane.function import logging

from function.server.call import Call, Composers, Step, step

DEFAULT_BUDGET_S: Final = 10.0
_START_TIMEOUT_S: Final = 60.0
_READY: Final = "ready"


class BudgetExceeded(Exception):  # noqa: N818 - it is an outcome the caller reports, not a fault
    """The call took longer than the budget; its worker was replaced."""


class WorkerLost(Exception):  # noqa: N818 - as above
    """The worker died during the call (killed from outside, out of memory); it was replaced."""


class Executor(Protocol):
    """Runs `call.step` for one call."""

    async def run(self, call: Call) -> Step:
        """The step's outcome.

        Raises:
            BudgetExceeded: the call took longer than allowed.
            WorkerLost: the process running it died.
        """
        ...

    def close(self) -> None:
        """Stop whatever runs the calls."""
        ...


@dataclass(frozen=True)
class InProcess:
    """Composes on the caller's thread: no budget, no isolation. For tests and `--workers 0`."""

    composers: Composers

    async def run(self, call: Call) -> Step:
        """Compose at once."""
        return step(self.composers, call)

    def close(self) -> None:
        """Nothing to stop."""


class WorkerPool:
    """`size` worker processes, each composing one call at a time within `budget_s`."""

    def __init__(
        self,
        composers: Composers,
        *,
        size: int,
        budget_s: float = DEFAULT_BUDGET_S,
        log_level: logging.Level = logging.Level.INFO,
    ) -> None:
        """Start the workers (spawned, so none inherits the gRPC server's threads)."""
        if size < 1:
            msg = f"a worker pool needs at least one worker, not {size}"
            raise ValueError(msg)
        self._composers = composers
        self._budget_s = budget_s
        self._log_level = log_level
        self._context = multiprocessing.get_context("spawn")
        self._workers = [self._start() for _ in range(size)]
        self._idle: asyncio.Queue[_Worker] | None = None

    async def run(self, call: Call) -> Step:
        """Compose in the next idle worker."""
        if self._idle is None:  # made on first use, inside the server's event loop
            self._idle = asyncio.Queue()
            for worker in self._workers:
                self._idle.put_nowait(worker)
        worker = await self._idle.get()
        # Shielded: a caller that gives up (a gRPC deadline) must not hand the worker to the next
        # call while it still composes this one, or that call would read this call's answer.
        return await asyncio.shield(self._on(worker, call, self._idle))

    async def _on(self, worker: _Worker, call: Call, idle: asyncio.Queue[_Worker]) -> Step:
        try:
            return await worker.call(call, self._budget_s)
        except (BudgetExceeded, WorkerLost):
            await asyncio.to_thread(worker.stop)
            self._workers.remove(worker)
            worker = self._start()
            self._workers.append(worker)
            raise
        finally:
            idle.put_nowait(worker)

    def close(self) -> None:
        """Stop every worker."""
        for worker in self._workers:
            worker.stop()

    @property
    def pids(self) -> list[int]:
        """The workers' process ids (for tests that kill one)."""
        return [w.pid for w in self._workers]

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(
            target=_serve,
            args=(theirs, self._composers, self._log_level),
            name="function-aim-worker",
            daemon=True,
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    started: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid or 0

    async def call(self, call: Call, budget_s: float) -> Step:
        """Send the call and wait for its step, at most `budget_s`."""
        try:
            if not self.started:
                # A new worker imports the function first; that time is not the call's.
                try:
                    ready = await self._receive(_START_TIMEOUT_S)
                except BudgetExceeded as e:
                    raise WorkerLost from e
                if ready != _READY:
                    raise WorkerLost
                self.started = True
            self.conn.send(call)
            answer: Step = await self._receive(budget_s)
        except (EOFError, OSError) as e:
            raise WorkerLost from e
        return answer

    async def _receive(self, timeout_s: float) -> Any:  # noqa: ANN401 - whatever the worker sent
        """The next message; `BudgetExceeded` when none starts arriving within `timeout_s`.

        Awaited on the event loop: handing each call to a thread cost more than composing a
        small XR.
        """
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not readable.done():
                readable.set_result(None)

        fd = self.conn.fileno()
        loop.add_reader(fd, wake)
        try:
            await asyncio.wait_for(readable, timeout_s)
        except TimeoutError as e:
            raise BudgetExceeded from e
        finally:
            loop.remove_reader(fd)
        return self.conn.recv()

    def stop(self) -> None:
        self.conn.close()
        self.process.kill()
        self.process.join(timeout=_START_TIMEOUT_S)


def _serve(conn: Connection, composers: Composers, log_level: logging.Level) -> None:
    """A worker's life: compose each call that arrives until the pool closes the pipe."""
    # The pool stops workers; a Ctrl-C meant for the server must not print a traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.configure(level=log_level)
    conn.send(_READY)
    while True:
        try:
            call = conn.recv()
        except EOFError:  # the server closed the pipe or died
            return
        conn.send(step(composers, call))
