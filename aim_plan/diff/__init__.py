"""What a plan would change in a live cluster: per object and per running service.

Pure: it compares the live objects (as read) with the plan's end state (the live world with the
manifests laid over it, planned to a fixed point). The plan only adds and updates what the
manifests give: a live object they leave out stays as it is, so `deleted` lists only what the
function would stop composing (or the garbage collector would take with it).

Fields compared, as `kubectl apply` would change them: `spec` (and the other top-level fields
of kinds without one, such as a ServiceAccount's), `metadata.labels` and
`metadata.annotations`, and of the status only `status.status` and each condition's status and
reason (a condition type only the live object carries is not the plan's). A field the live
object holds and the plan does not set is not a change: the API server
fills in defaults and other controllers write their fields, and an apply keeps both (so a field
removed from a manifest is not shown either). Volatile metadata (resourceVersion, uid,
managedFields, generation, timestamps) is never compared.

Secrets are compared but never described: `Secret ns/name changed`, not which key.
"""

from aim_plan.diff.changes import MAX_PATHS, Change, changed_paths
from aim_plan.diff.compute import Diff, diff
from aim_plan.diff.output import LIMIT, as_data, as_text
from aim_plan.diff.services import ServiceImpact

__all__ = [
    "LIMIT",
    "MAX_PATHS",
    "Change",
    "Diff",
    "ServiceImpact",
    "as_data",
    "as_text",
    "changed_paths",
    "diff",
]
