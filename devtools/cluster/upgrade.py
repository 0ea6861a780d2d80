"""Moving an installed AIM platform to other package versions, as a platform team does it.

An upgrade changes the Function package first and the Configuration second: the Configuration's
dependency (`>=` its own version) is then met by a Function already running the new code. A
rollback goes the other way, the Configuration first, whose older dependency the newer Function
still meets. Each step is the user's one edit (`spec.package`); Crossplane makes the revision and,
its activation policy being Automatic, activates it. The Function's step is done when its new
revision is active and healthy; the Configuration's when its new revision is active; the move,
when both packages report Installed and Healthy.

The Configuration is not waited on between the steps: its dependency range is checked with
Crossplane's semantic versions, where `>=v0.1.0` admits no pre-release, so a move between a
release and a development build (`v0.2.0-dev.0`) leaves the package not yet moved reporting an
unmet dependency until the second step (nothing it installed is removed meanwhile). Between two
releases each step is healthy on its own.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from devtools.cluster.kube import Kube, condition, wait_for
from devtools.pkg.publish import Published

PKG: Final = "pkg.crossplane.io/v1"
CONFIGURATION: Final = "aim"
"""The Configuration object's name, as devtools.cluster.platform installs it."""
STEP_S: Final = 300.0
"""A package version change: pulling the package (the Function's carries its image), the new
revision, and for the Function its pod's rollout."""


def upgrade(kube: Kube, to: Published, *, claims: bool = False) -> None:
    """The Function, then the Configuration, to `to`'s versions."""
    set_function(kube, to)
    set_configuration(kube, to, claims=claims)
    _wait_package(kube, "Function", to.function_name)
    _wait_package(kube, "Configuration", CONFIGURATION)


def roll_back(kube: Kube, to: Published, *, claims: bool = False) -> None:
    """The Configuration, then the Function, back to `to`'s versions."""
    set_configuration(kube, to, claims=claims)
    set_function(kube, to)
    _wait_package(kube, "Function", to.function_name)
    _wait_package(kube, "Configuration", CONFIGURATION)


def set_function(kube: Kube, to: Published) -> None:
    """The Function package to `to.function`; wait until its revision is active and healthy."""
    _set_package(kube, "Function", to.function_name, to.function)
    _wait_revision(kube, "FunctionRevision", to.function_name, to.function, healthy=True)


def set_configuration(kube: Kube, to: Published, *, claims: bool = False) -> None:
    """The Configuration package to `to`'s flavour; wait until its revision is the active one."""
    package = to.claims_configuration if claims else to.configuration
    _set_package(kube, "Configuration", CONFIGURATION, package)
    _wait_revision(kube, "ConfigurationRevision", CONFIGURATION, package, healthy=False)


def active_revision(kube: Kube, kind: str, package: str) -> dict[str, Any] | None:
    """The package's active revision, if one is."""
    revisions = kube.list(PKG, kind, labels={"pkg.crossplane.io/package": package})
    return next((r for r in revisions if r["spec"].get("desiredState") == "Active"), None)


def _set_package(kube: Kube, kind: str, name: str, package: str) -> None:
    # Apply only spec.package, as `kubectl patch` of that one field would: the rest of the
    # object, the dependency manager's included, is left as it is.
    kube.apply(
        {"apiVersion": PKG, "kind": kind, "metadata": {"name": name}, "spec": {"package": package}}
    )


def _wait_revision(kube: Kube, kind: str, package: str, image: str, *, healthy: bool) -> None:
    def active() -> bool:
        revision = active_revision(kube, kind, package)
        return (
            revision is not None
            and revision["spec"].get("image") == image
            and (
                not healthy
                or (condition(revision, "RevisionHealthy") or {}).get("status") == "True"
            )
        )

    wait_for(
        f"{kind} of {image} to be active" + (" and healthy" if healthy else ""),
        active,
        timeout_s=STEP_S,
        explain=lambda: yaml.safe_dump(
            kube.list(PKG, kind, labels={"pkg.crossplane.io/package": package})
        ),
    )


def _wait_package(kube: Kube, kind: str, name: str) -> None:
    def healthy() -> bool:
        obj = kube.get(PKG, kind, name)
        return all(
            (condition(obj, t) or {}).get("status") == "True" for t in ("Installed", "Healthy")
        )

    wait_for(
        f"{kind} {name} to be Installed and Healthy",
        healthy,
        timeout_s=STEP_S,
        explain=lambda: yaml.safe_dump(kube.get(PKG, kind, name) or {}),
    )
