"""Errors that are the user's to fix, as opposed to our bugs.

A composer raises one of these when its input cannot be composed; `fn.py` is the one place that
turns it into a result (and the composer's condition says the same thing in status). Anything else
that escapes a composer is a bug in this function and is reported as such.

    FunctionError
    └── InvalidSpecError     a field of the composite resource has a value we cannot use
"""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    """How bad an error is for the composite that caused it."""

    FATAL = "Fatal"
    """Nothing can be composed; Crossplane stops the pipeline and marks the XR not synced."""
    WARNING = "Warning"
    """What could be composed was; the rest waits for the user."""


class FunctionError(Exception):
    """A problem with the input, reported to the user with the field that caused it."""

    severity: Severity = Severity.FATAL

    def __init__(self, field: str, problem: str) -> None:
        """Record the offending field path (as the user writes it) and what is wrong with it."""
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class InvalidSpecError(FunctionError):
    """A spec field the API server accepted but which this function cannot act on."""
