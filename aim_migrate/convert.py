"""One run of the converter over documents already read: what `aim-migrate` does, as a call.

The command (aim_migrate/cli.py) and `aim plan` (which plans older manifests converted in
memory) both convert through here, so a plan plans exactly what `scripts/migrate` would write.
"""

from __future__ import annotations

from pydantic import JsonValue

from aim_migrate.rules import Migration, collect_context, is_aim, migrate
from function.api.definitions import DEFINITIONS
from function.errors import InvalidSpecError
from function.kube.parse import parse_spec

_SPECS = {d.kind.value: d.spec for d in DEFINITIONS}


def convert(docs: list[JsonValue]) -> list[Migration]:
    """Each document converted, in order, with what changed and what could not be carried.

    Give the documents that refer to each other in one call: models are found by image and
    profiles by name across them. A result the API models still refuse is not carried either.
    """
    context = collect_context(docs)
    results = [migrate(doc, context) for doc in docs]
    for m in results:
        _check(m)
    return results


def _check(m: Migration) -> None:
    """Parse the result with the API models, so a conversion that is still invalid says so."""
    if m.dropped or not isinstance(m.manifest, dict) or not is_aim(m.manifest):
        return
    spec_model = _SPECS.get(str(m.manifest.get("kind")))
    if spec_model is None:
        return
    try:
        parse_spec(m.manifest, spec_model)
    except InvalidSpecError as e:
        m.not_carried.append(f"the result is not valid yet: {e}")
