"""One run of the converter over documents already read: what `aim-migrate` does, as a call.

The command (aim_migrate/cli.py) and `aim plan` (which plans older manifests converted in
memory) both convert through here, so a plan plans exactly what `scripts/migrate` would write.
"""

from __future__ import annotations

from pydantic import JsonValue

from aim_migrate.manifests import cut
from aim_migrate.objects import Head
from aim_migrate.rules import Migration, collect_context, is_aim, migrate
from function.api.definitions import DEFINITIONS
from function.errors import InvalidSpecError
from function.kube.parse import parse_spec

_SPECS = {d.kind.value: d.spec for d in DEFINITIONS}


class ConverterFailedError(RuntimeError):
    """The converter failed on a document: a shape its rules did not expect (a bug in them).

    `index` is the document's, in the list given to `convert`, so the caller can name it.
    """

    def __init__(self, index: int, cause: Exception) -> None:
        """The failure on document `index` of the run, caused by `cause`."""
        self.index = index
        # The cause's words cut: an exception may quote a value of the manifest whole.
        said = cut(str(cause))
        super().__init__(
            f"aim-migrate failed on it ({type(cause).__name__}: {said}); this is a bug in "
            "aim-migrate: report it with the manifest's shape, and check the manifest's fields "
            "against the operator's schema meanwhile"
        )


def convert(docs: list[JsonValue]) -> list[Migration]:
    """Each document converted, in order, with what changed and what could not be carried.

    Give the documents that refer to each other in one call: models are found by image and
    profiles by name across them. A result the API models still refuse is not carried either.

    Raises:
        ConverterFailedError: a rule failed on a document (never expected: every rule checks
            the types it reads; this names the document rather than showing a traceback).
    """
    try:
        context = collect_context(docs)
    except Exception as e:  # any failure is a rule's bug: name the document
        raise ConverterFailedError(_culprit(docs), e) from e
    results = []
    for index, doc in enumerate(docs):
        try:
            m = migrate(doc, context)
            _check(m)
        except Exception as e:  # any failure is a rule's bug: name the document
            raise ConverterFailedError(index, e) from e
        results.append(m)
    return results


def _culprit(docs: list[JsonValue]) -> int:
    """The first document that alone makes collecting the run's context fail (0 if none)."""
    for index, doc in enumerate(docs):
        try:
            collect_context([doc])
        except Exception:  # noqa: BLE001 - looking for the document that fails, whatever way
            return index
    return 0


def _check(m: Migration) -> None:
    """Parse the result with the API models, so a conversion that is still invalid says so."""
    if m.dropped or not isinstance(m.manifest, dict) or not is_aim(m.manifest):
        return
    spec_model = _SPECS.get(Head.read(m.manifest).kind)
    if spec_model is None:
        return
    try:
        parse_spec(m.manifest, spec_model)
    except InvalidSpecError as e:
        m.not_carried.append(f"the result is not valid yet: {e}")
