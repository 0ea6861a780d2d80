"""function-aim without its status precondition: the scale benchmark's baseline for #7062.

The function makes Crossplane's status apply conditional on the XR version it observed
(function/kube/precondition.py), so core cannot write a stale copy's conditions back
(crossplane/crossplane#7062). This program is function-aim with that one thing taken off every
answer, as the function answered before it: `benchmarks/scale.py --function unguarded` runs it
beside ours on the same core, so the difference the precondition makes is measured in one run.
Stripping it costs the server a parse and a serialization per call; nothing else differs.

    .venv/bin/python -m benchmarks.unguarded [function-aim's flags]
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.server import main as function_main
from function.server.fn import FunctionRunner


class Unguarded(FunctionRunner):
    """Our function, its answers' `metadata.resourceVersion` removed."""

    async def run_bytes(self, request: bytes) -> bytes:
        """Our answer, without the precondition."""
        answer = await super().run_bytes(request)
        rsp = fnv1.RunFunctionResponse.FromString(answer)
        fields = rsp.desired.composite.resource.fields
        if "metadata" not in fields:
            return answer
        del fields["metadata"]
        return rsp.SerializeToString(deterministic=True)


if __name__ == "__main__":
    # The one seam the command offers: the runner class it builds.
    function_main.FunctionRunner = Unguarded  # type: ignore[attr-defined]
    function_main.cli()
