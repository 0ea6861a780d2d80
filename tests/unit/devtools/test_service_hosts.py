"""devtools.cluster.node.ServiceHosts: Services' names in /etc/hosts for the host-process plane."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster.node import ServiceHosts


def external(name: str, target: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "c"},
        "spec": {"type": "ExternalName", "externalName": target},
    }


class FakeApi:
    """A Service with a ClusterIP, a headless one with a ready and an unready endpoint, and two
    ExternalName Services: one naming the first Service, one a name outside the cluster."""

    def list(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        del api_version
        if kind == "Service":
            return [
                {"metadata": {"name": "web", "namespace": "a"}, "spec": {"clusterIP": "10.96.0.7"}},
                {"metadata": {"name": "fn", "namespace": "b"}, "spec": {"clusterIP": "None"}},
                external("alias", "web.a.svc.cluster.local."),
                external("elsewhere", "example.com"),
            ]
        endpoints = [
            {"addresses": ["10.244.0.3"], "conditions": {"ready": True}},
            {"addresses": ["10.244.0.4"], "conditions": {"ready": False}},
        ]
        labels = {"kubernetes.io/service-name": "fn"}
        return [{"metadata": {"namespace": "b", "labels": labels}, "endpoints": endpoints}]


def test_names_resolve_to_a_cluster_ip_or_a_headless_services_ready_pods() -> None:
    """Crossplane's function Services are headless: their names must give the ready pods' IPs,
    never an unready one, and never the literal 'None'."""
    lines = ServiceHosts(FakeApi()).lines()  # type: ignore[arg-type]
    assert lines == [
        "10.244.0.3 fn.b fn.b.svc fn.b.svc.cluster.local",
        "10.96.0.7 alias.c alias.c.svc alias.c.svc.cluster.local",
        "10.96.0.7 web.a web.a.svc web.a.svc.cluster.local",
    ]


def test_an_external_name_resolves_as_cluster_dns_would_resolve_its_cname() -> None:
    """A wake responder is named in each team's namespace by an ExternalName Service: its name
    gives the named Service's ClusterIP (the absolute name's dot or not); a name outside the
    cluster, which only real DNS resolves, gives no line."""
    lines = ServiceHosts(FakeApi()).lines()  # type: ignore[arg-type]
    assert "10.96.0.7 alias.c alias.c.svc alias.c.svc.cluster.local" in lines
    assert not [line for line in lines if "elsewhere" in line]


def test_the_hosts_file_is_put_back_even_after_a_killed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block a killed run left is dropped, the block is written while running, and the file
    is exactly as it was (less the stale block) afterwards."""
    hosts = tmp_path / "hosts"
    stale = f"{ServiceHosts.BEGIN}\n10.0.0.9 old.x\n{ServiceHosts.END}\n"
    hosts.write_text("127.0.0.1 localhost\n" + stale)
    monkeypatch.setattr(ServiceHosts, "HOSTS", hosts)
    with ServiceHosts(FakeApi()).running():  # type: ignore[arg-type]
        deadline = time.monotonic() + 5
        while "web.a" not in hosts.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        written = hosts.read_text()
    assert "10.96.0.7 web.a" in written
    assert "old.x" not in written
    assert hosts.read_text() == "127.0.0.1 localhost\n"
