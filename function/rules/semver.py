"""Semantic versions and version constraints, for choosing which image tags join the catalog.

Constraints read as users of Helm and the AIM operator write them (the Masterminds dialect):
comparators `= != > < >= <=`, tilde `~1.2` (patch updates), caret `^1.2` (no new major; no new
minor below 1.0), wildcards `1.2.x` / `1.*`, partial versions filled with zeros (`>=1.2` is
`>=1.2.0`), comparators joined by commas or spaces (all must hold) and `||` (either side).
A prerelease tag (`1.3.0-rc.1`) satisfies a constraint only if the constraint names a prerelease,
so release catalogs do not fill with release candidates.

Tags are read leniently, as registries are tagged: a leading `v` and missing minor or patch
numbers are fine (`v1.2` is 1.2.0); anything else (`latest`, `main-abc123`) is no version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from function.api.modelsource import MAX_CONSTRAINT

_PARTS: Final = 3

_NUMBER = r"0|[1-9]\d{0,8}"
_VERSION: Final = re.compile(
    rf"^v?(?P<major>{_NUMBER})(?:\.(?P<minor>{_NUMBER}))?(?:\.(?P<patch>{_NUMBER}))?"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_WILD = r"x|X|\*"
_COMPARATOR: Final = re.compile(
    rf"^(?P<op>!=|>=|<=|=|>|<|~>|~|\^)?\s*v?(?P<major>{_NUMBER}|{_WILD})"
    rf"(?:\.(?P<minor>{_NUMBER}|{_WILD}))?(?:\.(?P<patch>{_NUMBER}|{_WILD}))?"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


class ConstraintError(ValueError):
    """A constraint is not one this module reads; the message quotes it and says why."""


@dataclass(frozen=True)
class Version:
    """A semantic version; build metadata is dropped, as it does not order versions."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    def key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        """Sort key in SemVer 2.0 precedence: a release sorts after its prereleases."""
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)


def parse_version(tag: str) -> Version | None:
    """The version a tag names, or None when it names none."""
    m = _VERSION.match(tag)
    if m is None:
        return None
    pre = m.group("pre")
    return Version(
        int(m.group("major")),
        int(m.group("minor") or 0),
        int(m.group("patch") or 0),
        tuple(pre.split(".")) if pre else (),
    )


@dataclass(frozen=True)
class _Bound:
    op: str
    version: Version

    def holds(self, v: Version) -> bool:
        a, b = v.key(), self.version.key()
        return {
            "=": a == b,
            "!=": a != b,
            ">": a > b,
            "<": a < b,
            ">=": a >= b,
            "<=": a <= b,
        }[self.op]


@dataclass(frozen=True)
class Constraint:
    """A parsed constraint: any of its alternatives, each a set of bounds that must all hold."""

    text: str
    alternatives: tuple[tuple[_Bound, ...], ...]

    def allows(self, version: Version) -> bool:
        """Whether `version` satisfies the constraint."""
        if version.prerelease and not self._admits_prerelease(version):
            return False
        return any(all(b.holds(version) for b in bounds) for bounds in self.alternatives)

    def _admits_prerelease(self, version: Version) -> bool:
        # A prerelease is let in only next to a bound that names a prerelease of the same
        # release, as npm and Masterminds do: `>=1.3.0-rc.1` admits 1.3.0-rc.2, not 1.4.0-rc.1.
        return any(
            b.version.prerelease
            and (b.version.major, b.version.minor, b.version.patch)
            == (version.major, version.minor, version.patch)
            for bounds in self.alternatives
            for b in bounds
        )


def parse_constraint(text: str) -> Constraint:
    """Read a constraint such as `>=1.2, <2` or `~0.8 || ^1.0`.

    Raises:
        ConstraintError: the text is empty, too long, or holds something that is no comparator.
    """
    if len(text) > MAX_CONSTRAINT:
        msg = f"{text[:40]!r}... is longer than {MAX_CONSTRAINT} characters"
        raise ConstraintError(msg)
    alternatives = []
    for alternative in text.split("||"):
        parts = [p for p in re.split(r"[\s,]+", _join_operators(alternative.strip())) if p]
        if not parts:
            msg = f"{text!r} has an empty alternative; write e.g. '>=1.0' or '>=1.0 || ^2.0'"
            raise ConstraintError(msg)
        bounds: list[_Bound] = []
        for part in parts:
            bounds.extend(_comparator(part, text))
        alternatives.append(tuple(bounds))
    return Constraint(text, tuple(alternatives))


def _join_operators(text: str) -> str:
    """`>= 1.2` as `>=1.2`, so splitting on spaces keeps an operator with its version."""
    return re.sub(r"(!=|>=|<=|=|>|<|~>|~|\^)\s+", r"\1", text)


def _comparator(part: str, text: str) -> list[_Bound]:
    m = _COMPARATOR.match(part)
    if m is None:
        msg = (
            f"{text!r}: {part!r} is not a version comparator (write e.g. '>=1.2.0', '~0.8', "
            "'^1.0', '1.2.x')"
        )
        raise ConstraintError(msg)
    op = m.group("op") or "="
    known: list[int] = []
    for f in (m.group("major"), m.group("minor"), m.group("patch")):
        if f is None or f in {"x", "X", "*"}:
            break
        known.append(int(f))
    if not known:  # `*`: any version
        return [_Bound(">=", Version(0, 0, 0))] if op in {"=", ">=", "~", "~>", "^"} else []
    full = len(known) == _PARTS
    pre = tuple(m.group("pre").split(".")) if m.group("pre") and full else ()
    padded = [*known, 0, 0][:_PARTS]
    low = Version(padded[0], padded[1], padded[2], pre)
    if op in {"~", "~>", "^"}:
        return [_Bound(">=", low), _Bound("<", _bump(known, _ceiling(op, known)))]
    if full:
        return [_Bound(op, low)]
    return _partial(op, known, low, part, text)


def _ceiling(op: str, known: list[int]) -> int:
    """Which number a tilde or caret range lets grow: `~` the patch, `^` all but the first."""
    if op == "^":
        return next((i for i, n in enumerate(known) if n != 0), len(known) - 1)
    return min(len(known) - 1, 1)


def _partial(op: str, known: list[int], low: Version, part: str, text: str) -> list[_Bound]:
    """A comparator on a partial version (`1.2`): the range of versions it stands for."""
    after = _bump(known, len(known) - 1)
    if op == "=":
        return [_Bound(">=", low), _Bound("<", after)]
    if op == "!=":
        # The complement of a range, which one conjunction cannot say.
        msg = f"{text!r}: {part!r} excludes a range; write '<1.2.0 || >=1.3.0' instead"
        raise ConstraintError(msg)
    if op == ">":
        return [_Bound(">=", after)]
    if op == "<=":
        return [_Bound("<", after)]
    return [_Bound(op, low)]


def _bump(known: list[int], at: int) -> Version:
    """The first version after every version that starts with `known[: at + 1]`."""
    parts = [*known[:at], known[at] + 1]
    parts += [0] * (_PARTS - len(parts))
    return Version(parts[0], parts[1], parts[2])
