"""`kubectl get` columns: each reads a field the kind's XRD has, so none is always `<none>`.

The API server evaluates a printer column's JSONPath against the stored object and prints
`<none>` where it finds nothing, silently: a column naming a field that does not exist (a typo,
a renamed field) never fails anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from devtools.tools import ROOT
from function.api.definitions import DEFINITIONS, PrinterColumn, XrdDefinition
from tests.cases import Case, table


def schema_at(definition: XrdDefinition, column: PrinterColumn) -> Any:
    """The schema the column's path leads to in the generated XRD, None where it leads nowhere."""
    xrd = yaml.safe_load((ROOT / "xrds" / f"{definition.plural}.yaml").read_text())
    [version] = xrd["spec"]["versions"]
    node: Any = version["schema"]["openAPIV3Schema"]
    for part in column.json_path.strip(".").split("."):
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return node


@dataclass(frozen=True)
class ColumnCase(Case):
    """One column of one kind."""

    definition: XrdDefinition
    column: PrinterColumn


COLUMN_CASES = [
    ColumnCase(
        f"{d.plural}-{c.name.lower().replace(' ', '-')}",
        f"`kubectl get {d.plural}` shows {c.name} from {c.json_path}",
        d,
        c,
    )
    for d in DEFINITIONS
    for c in d.columns
]

# Kubernetes types of a column, by the schema types they may show.
_SHOWS = {
    "string": {"string", "array", "boolean"},
    "integer": {"integer"},
    "boolean": {"boolean"},
    "date": {"string"},
}


@table(COLUMN_CASES)
def test_a_column_reads_a_field_of_its_kind(case: ColumnCase) -> None:
    """The column's path names a field of the XRD, of a type the column can show."""
    found = schema_at(case.definition, case.column)
    assert found is not None, f"{case.reason}: no such field"
    # A quantity is an int-or-string: a string column prints either.
    types = {found.get("type")} | {t.get("type") for t in found.get("anyOf") or ()}
    assert types & _SHOWS[case.column.type], (case.reason, types)
