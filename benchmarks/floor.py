"""Crossplane's floor: a function that answers each AIMService with what ours answers it at rest.

The scale benchmark's `--function floor` runs the same core, XRDs and Composition with this
program in place of function-aim. Each AIMService is answered from the first call with the
objects, status, conditions and readiness our function gave it once it was Running (recorded
from a plane where ours ran the same batches), replayed with no logic: no requirements asked,
no waiting for KServe, no events, no recheck. What core then spends on the service is the least
any function producing that end state could make it spend, so the difference between the two
runs is ours alone.

One piece of logic is kept: the status write's precondition (function/kube/precondition.py),
computed for each call as ours does. It works around a core bug every function meets on
Crossplane 2.3 and 2.4 (crossplane/crossplane#7062); without it the floor itself would be
rewritten after Running on a busy plane, and the comparison would measure the bug.

Recording (`record`) reads the plane at rest as `aim plan --against` does and asks our function,
in this process, the last question core asked each service: the answer is what the plane holds.
Kinds other than AIMService (the catalog the services use) are answered by our function, in
process, on both planes.

    .venv/bin/python -m benchmarks.floor --recorded FILE --address HOST:PORT --tls-certs-dir DIR
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.runtime import load_credentials

from aim_plan import kubeconfig
from aim_plan.live import read
from aim_plan.rounds import SERVICE_KINDS, plan
from aim_plan.world import World
from function.kube.wire import read_observed, require_observed_version
from function.server.fn import FunctionRunner
from function.server.serve import Listen, serve
from function.settings import Settings

Recorded = dict[str, bytes]
"""`namespace/name` of an AIMService → the RunFunctionResponse replayed to it, serialized."""


def record(kubeconfig_path: Path, into: Path) -> Recorded:
    """Each AIMService's answer at rest on the plane of `kubeconfig_path` (files under `into`).

    Raises:
        RuntimeError: planning the plane did not converge, or a service's answer is a fatal
            result.
    """
    logging.configure(level=logging.Level.INFO)  # not every call of the plan on the page
    creds = kubeconfig.credentials(kubeconfig_path, into)
    live = read(creds, [])
    result = plan(World(live.objects))
    if not result.converged:
        msg = f"planning the plane did not converge: it still changed {result.unsettled[:5]}"
        raise RuntimeError(msg)
    runner = FunctionRunner(settings=Settings(event_memory=0))
    recorded: Recorded = {}
    try:
        for (_, kind, namespace, name), reconciled in result.reconciled.items():
            if kind not in SERVICE_KINDS or reconciled.request is None:
                continue
            req = fnv1.RunFunctionRequest.FromString(reconciled.request)
            rsp = asyncio.run(runner.RunFunction(req))
            fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
            if fatal:
                msg = f"AIMService {namespace}/{name} answers a fatal result: {fatal[0]}"
                raise RuntimeError(msg)
            recorded[f"{namespace}/{name}"] = replayable(rsp).SerializeToString(deterministic=True)
    finally:
        runner.close()
    return recorded


def replayable(rsp: fnv1.RunFunctionResponse) -> fnv1.RunFunctionResponse:
    """The answer with nothing that is logic: no requirements, events, recheck or precondition."""
    out = fnv1.RunFunctionResponse()
    out.CopyFrom(rsp)
    out.ClearField("requirements")
    out.ClearField("results")
    out.meta.ClearField("ttl")
    if "metadata" in out.desired.composite.resource.fields:
        del out.desired.composite.resource.fields["metadata"]
    return out


def save(recorded: Recorded, path: Path) -> None:
    """Write the recording."""
    path.write_text(json.dumps({k: base64.b64encode(v).decode() for k, v in recorded.items()}))


def load(path: Path) -> Recorded:
    """Read a recording."""
    return {k: base64.b64decode(v) for k, v in json.loads(path.read_text()).items()}


class Replay(FunctionRunner):
    """Answers recorded AIMServices from the recording, every other call with our function."""

    def __init__(self, recorded: Mapping[str, bytes]) -> None:
        """Replay `recorded`; compose everything else in process."""
        super().__init__(settings=Settings(event_memory=0))
        self._recorded = {k: fnv1.RunFunctionResponse.FromString(v) for k, v in recorded.items()}

    async def run_bytes(self, request: bytes) -> bytes:
        """The recorded answer to a recorded service; our function's to anything else."""
        req = fnv1.RunFunctionRequest.FromString(request)
        observed = read_observed(req)
        key = f"{observed.namespace}/{observed.name}"
        recorded = self._recorded.get(key) if observed.kind == "AIMService" else None
        if recorded is None:
            return await super().run_bytes(request)
        rsp = fnv1.RunFunctionResponse()
        rsp.CopyFrom(recorded)
        rsp.meta.tag = req.meta.tag
        require_observed_version(rsp, observed)
        # The line the scale benchmark counts calls by, as function-aim logs each call.
        logging.get_logger().debug("composed", kind=observed.kind, xr=key, replayed=True)
        return rsp.SerializeToString(deterministic=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the replay where core expects function-aim (its other flags are accepted, unused)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recorded", type=Path, required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--tls-certs-dir", required=True)
    parser.add_argument("--debug", action="store_true")
    args, _ = parser.parse_known_args(argv)
    logging.configure(level=logging.Level.DEBUG if args.debug else logging.Level.INFO)
    runner = Replay(load(args.recorded))
    try:
        serve(runner, Listen(args.address, credentials=load_credentials(args.tls_certs_dir)))
    finally:
        runner.close()


if __name__ == "__main__":
    main(sys.argv[1:])
