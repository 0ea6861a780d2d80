"""devtools.cluster.kedahttp: the KEDA HTTP add-on's settings and the Services in front of it."""

from __future__ import annotations

from dataclasses import dataclass

from devtools.cluster.keda import NAMESPACE
from devtools.cluster.kedahttp import (
    ADMIN_SERVICE,
    PROXY_SERVICE,
    SCALER_PORT,
    SCALER_SERVICE,
    Timeouts,
    fronts,
)
from tests.cases import table


@dataclass(frozen=True)
class Wait:
    """Timeouts in seconds, and what the interceptor is given for them."""

    id: str
    reason: str
    timeouts: Timeouts
    condition_wait: str
    response_header: str


WAITS = [
    Wait(
        "cold-start",
        "the defaults, long enough for a pod to start and a server's first answer",
        Timeouts(),
        "120000ms",
        "60000ms",
    ),
    Wait(
        "fractions",
        "a fraction of a second is kept in whole milliseconds, which Go's durations read",
        Timeouts(condition_wait=2.5, response_header=0.25),
        "2500ms",
        "250ms",
    ),
]


@table(WAITS)
def test_timeouts_are_go_durations_in_the_interceptors_variables(case: Wait) -> None:
    """The interceptor reads these variables as Go durations and panics on anything else, so a
    seconds value must reach it with a unit."""
    assert case.timeouts.env() == {
        "KEDA_CONDITION_WAIT_TIMEOUT": case.condition_wait,
        "KEDA_RESPONSE_HEADER_TIMEOUT": case.response_header,
    }


def test_each_listener_has_a_service_whose_slice_points_at_the_host_process() -> None:
    """kube-proxy pairs a Service's port with its slices' by name, and the scaler finds the
    interceptors by the admin Service's slice label: each Service's one slice must carry its
    name, the same port name, the node's address and the process's port."""
    objects = fronts("192.0.2.2", proxy=41001, admin=41002, scaler=41003)
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    slices = {
        o["metadata"]["labels"]["kubernetes.io/service-name"]: o
        for o in objects
        if o["kind"] == "EndpointSlice"
    }
    assert set(services) == set(slices) == {PROXY_SERVICE, ADMIN_SERVICE, SCALER_SERVICE}
    expected = {PROXY_SERVICE: 41001, ADMIN_SERVICE: 41002, SCALER_SERVICE: 41003}
    for name, service in services.items():
        [port] = service["spec"]["ports"]
        [slice_port] = slices[name]["ports"]
        [endpoint] = slices[name]["endpoints"]
        assert service["metadata"]["namespace"] == slices[name]["metadata"]["namespace"]
        assert slice_port["name"] == port["name"]
        assert slice_port["port"] == port["targetPort"] == expected[name]
        assert endpoint["addresses"] == ["192.0.2.2"]
    # What the add-on's operator writes as every trigger's scalerAddress must name a Service
    # port that exists.
    [scaler_port] = services[SCALER_SERVICE]["spec"]["ports"]
    assert scaler_port["port"] == SCALER_PORT
    assert services[SCALER_SERVICE]["metadata"]["namespace"] == NAMESPACE
