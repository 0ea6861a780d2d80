"""The composer contract, its protobuf adapter and object parsing, under their former home.

Split by job into `contract` (what composers are given and answer), `wire` (the protobuf
adapter) and `parse` (specs and statuses); this module re-exports them so that code importing
from here keeps working.
"""

from __future__ import annotations

from function.kube.contract import (
    AskRegistry,
    Composition,
    Desired,
    Inspect,
    ListRegistry,
    Notice,
    Observed,
    Requirement,
    keep,
)
from function.kube.parse import parse_headline, parse_spec, parse_status
from function.kube.wire import apply_composition, read_observed

__all__ = [
    "AskRegistry",
    "Composition",
    "Desired",
    "Inspect",
    "ListRegistry",
    "Notice",
    "Observed",
    "Requirement",
    "apply_composition",
    "keep",
    "parse_headline",
    "parse_spec",
    "parse_status",
    "read_observed",
]
