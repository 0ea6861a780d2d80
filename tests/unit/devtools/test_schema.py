"""The XRDs are generated from the API models, and the committed ones are up to date."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from devtools.gen.schema import UnsupportedSchemaError, structural_schema
from devtools.gen.xrds import stale_files


def test_committed_xrds_compositions_and_api_docs_match_the_models() -> None:
    """Editing the models without `make generate` (or the YAML or docs/api.md by hand) fails."""
    assert stale_files() == []


def test_unions_of_types_are_refused() -> None:
    """A field the API server cannot express structurally fails generation, not admission."""

    class Bad(BaseModel):
        x: int | list[str]

    with pytest.raises(UnsupportedSchemaError, match=r"Bad\.x"):
        structural_schema(Bad)


def test_optional_fields_have_no_null_default() -> None:
    """`None` means "unset"; a null default would be stored by the API server."""

    class M(BaseModel):
        x: str | None = None

    assert structural_schema(M) == {"type": "object", "properties": {"x": {"type": "string"}}}
