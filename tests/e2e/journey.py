"""Running a journey: the seed documents' manifests (examples/journeys/), applied as a user would.

A journey's manifests are files a user applies in order; older API generations go through the
real converter (`scripts/migrate`) first, as the README tells users to do. Two things differ from
a user's cluster, both on purpose and both visible here:

- namespaces: the seeds put every team in `ml-team`, so each journey maps a seed namespace to one
  of its own (`ml-team-<journey>`), and journeys do not see each other's objects; the platform's
  system namespace (where cluster objects' secrets live) is the one there is;
- placeholders: where a seed writes `BASE64_CONFIG` for a registry login, the journey fills in
  the test registry's.

Cluster-scoped objects a journey applies (and what it puts in the system namespace) are deleted
when it ends, whatever happened, and it
waits until they and what they composed are gone: seed 002 and seed 004 both name a cluster
model `meta-llama-3-8b-instruct`.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.converge import AIM, CONVERGE_S, aim_statuses, templates_of
from devtools.cluster.kube import wait_for
from devtools.cluster.platform import PRIVATE_REGISTRY, SYSTEM_NAMESPACE, Platform
from devtools.cluster.registry import PASSWORD, USER
from devtools.tools import ROOT
from tests.e2e.cluster import SimulatedCluster

JOURNEYS: Final = ROOT / "examples" / "journeys"
PLACEHOLDER: Final = "BASE64_CONFIG"


@dataclass
class Journey:
    """One journey's namespaces, its simulated cluster, and what it applied cluster-wide."""

    platform: Platform
    cluster: SimulatedCluster
    suffix: str
    namespaces: dict[str, str] = field(default_factory=dict)
    cluster_scoped: list[tuple[str, str, str]] = field(default_factory=list)
    shared: list[tuple[str, str, str]] = field(default_factory=list)
    """Objects applied in the system namespace, which journeys share."""
    applied: list[dict[str, Any]] = field(default_factory=list)
    """Every manifest applied, in order, as applied (what `aim plan` is given to compare)."""

    def namespace(self, seed_namespace: str) -> str:
        """The journey's namespace for a seed's (created on first use, `restricted` pods)."""
        if seed_namespace not in self.namespaces:
            name = f"{seed_namespace}-{self.suffix}"
            self.platform.team_namespace(name)
            self.cluster.serve(name)
            self.namespaces[seed_namespace] = name
        return self.namespaces[seed_namespace]

    def manifests(
        self, directory: str, file: str, *, migrate: bool = False
    ) -> list[dict[str, Any]]:
        """A step's manifests: converted if asked, in the journey's namespaces, filled in."""
        path = JOURNEYS / directory / file
        docs = _migrated(path) if migrate else _load(path.read_text())
        return [self._localized(doc) for doc in docs]

    def apply(self, docs: list[dict[str, Any]]) -> None:
        """`kubectl apply` of each manifest, in order."""
        for doc in docs:
            self.platform.kube.apply(doc)
            self.applied.append(doc)
            if doc["metadata"].get("namespace") == SYSTEM_NAMESPACE:
                self.shared.append((doc["apiVersion"], doc["kind"], doc["metadata"]["name"]))
            elif not doc["metadata"].get("namespace"):
                self.cluster_scoped.append(
                    (doc["apiVersion"], doc["kind"], doc["metadata"]["name"])
                )

    def step(self, directory: str, file: str, *, migrate: bool = False) -> list[dict[str, Any]]:
        """Apply one file of the journey; return what was applied."""
        docs = self.manifests(directory, file, migrate=migrate)
        self.apply(docs)
        return docs

    def cleanup(self) -> None:
        """Delete the cluster-scoped objects applied, and wait until they (and theirs) are gone."""
        kube = self.platform.kube
        for api_version, kind, name in self.shared:
            kube.delete(api_version, kind, name, SYSTEM_NAMESPACE)
        for api_version, kind, name in reversed(self.cluster_scoped):
            kube.delete(api_version, kind, name)
        for api_version, kind, name in self.cluster_scoped:

            def deleted(a: str = api_version, k: str = kind, n: str = name) -> bool:
                gone = kube.get(a, k, n) is None
                owned = k == "AIMClusterModel" and templates_of(
                    kube, "AIMClusterServiceTemplate", n
                )
                return gone and not owned

            wait_for(
                f"{kind} {name} (and what it composed) to be deleted",
                deleted,
                timeout_s=CONVERGE_S,
                explain=lambda: aim_statuses(kube, ""),
            )

    def _localized(self, doc: dict[str, Any]) -> dict[str, Any]:
        doc = json.loads(json.dumps(doc))
        meta = doc["metadata"]
        if meta.get("namespace") and meta["namespace"] != SYSTEM_NAMESPACE:
            meta["namespace"] = self.namespace(meta["namespace"])
        data = doc.get("data") or {}
        if data.get(".dockerconfigjson") == PLACEHOLDER:
            data[".dockerconfigjson"] = docker_config(PRIVATE_REGISTRY, USER, PASSWORD)
        return doc


def docker_config(registry: str, user: str, password: str) -> str:
    """What `base64 -w0 ~/.docker/config.json` gives after `docker login registry`."""
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    config = {"auths": {registry: {"auth": auth}}}
    return base64.b64encode(json.dumps(config).encode()).decode()


def _load(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def _migrated(path: Path) -> list[dict[str, Any]]:
    """The file through the converter users run, `scripts/migrate` (its report on stderr)."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "migrate"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"scripts/migrate {path.name} failed:\n{proc.stderr}"
    return _load(proc.stdout)


def kubectl_get(platform: Platform, kind: str, namespace: str | None = None) -> dict[str, Any]:
    """`kubectl get <kind>` as the API server renders it: rows by name, cells by column."""
    return platform.kube.table(AIM, kind, namespace)


def env_of(container: Mapping[str, Any]) -> dict[str, Any]:
    """A container's environment by name: the value, or the valueFrom source."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}
