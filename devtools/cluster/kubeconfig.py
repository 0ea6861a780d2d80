"""The e2e tier's credentials from a user's kubeconfig, read by `aim_plan.kubeconfig`.

One reader for both `aim plan --against` and the tier: the same fields are accepted and refused
(exec plugins, auth providers, plain http, skipped TLS verification), with the same messages.
"""

from __future__ import annotations

from pathlib import Path

from aim_plan import kubeconfig as _reader
from aim_plan.kubeconfig import MAX_BYTES
from devtools.cluster.kube import Credentials
from devtools.tools import HarnessError

__all__ = ["MAX_BYTES", "KubeconfigError", "credentials"]


class KubeconfigError(HarnessError):
    """The kubeconfig cannot be used; the message names the file, the field and the fix."""


def credentials(path: Path, into: Path, context: str | None = None) -> Credentials:
    """The server, CA and client credentials of a context of the kubeconfig at `path`.

    `context` defaults to the current context; embedded data is written under `into`.
    """
    try:
        read = _reader.credentials(path, into, context)
    except _reader.KubeconfigError as e:
        raise KubeconfigError(str(e)) from None
    return Credentials(read.server, read.ca, read.cert, read.key, read.token)
