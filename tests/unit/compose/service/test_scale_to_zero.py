"""Scale to zero: a service at `minReplicas: 0` idles to no pod and its next request wakes it.

Its predictor runs under KServe's `external` class (KEDA owns the count), an HTTPScaledObject of
the KEDA HTTP add-on names it, and its HTTPRoute sends requests to the add-on's interceptor with
the Host naming the predictor, so the request that wakes it is held and answered. What the add-on
and KEDA write back is hand-written here (a unit test of one kind); the end-to-end tier runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from function.compose.service import (
    HTTP_ROUTE,
    HTTP_SCALED_OBJECT,
    INFERENCE_SERVICE,
    WAKE_RESPONDER,
)
from function.kube.contract import Composition
from tests.cases import Case, table
from tests.unit.compose.service.test_compose_service import (
    NS,
    READY_ISVC,
    WORLD,
    conditions,
    config,
    isvc,
    message_of,
    reconcile,
    service,
    status,
)
from tests.unit.compose.service.test_route_policy import ROUTING_ON

PREDICTOR = "qwen-chat-a04542d9-predictor"
TO_ZERO = {"minReplicas": 0, "maxReplicas": 2}


def platform(**spec: Any) -> Any:
    """The platform's AIMClusterRuntimeConfig `default`: routing on, and what else it sets."""
    return config(kind="AIMClusterRuntimeConfig", routing=ROUTING_ON, **spec)


def manifest(comp: Composition, key: str) -> Any:
    return comp.resources[key].manifest


def test_a_service_at_zero_is_woken_through_the_interceptor() -> None:
    """The whole shape: KServe's external class at 0 to max, the add-on's object for the
    predictor, and a route to the interceptor for the predictor's own host."""
    comp = reconcile(service(**TO_ZERO), [platform(), *WORLD])
    predictor = isvc(comp)["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (0, 2)
    annotations = isvc(comp)["metadata"]["annotations"]
    assert annotations["serving.kserve.io/autoscalerClass"] == "external"
    [container] = predictor["containers"]
    assert container["readinessProbe"] == {"tcpSocket": {"port": 8000}, "periodSeconds": 1}, (
        "KServe's default probe runs every 10 s, which a waking request would wait out"
    )
    scaled = manifest(comp, HTTP_SCALED_OBJECT)
    assert scaled["metadata"]["name"] == PREDICTOR, "its ScaledObject's HPA: keda-hpa-<predictor>"
    assert scaled["spec"]["hosts"] == [f"{PREDICTOR}.{NS}"]
    assert scaled["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": PREDICTOR,
        "service": PREDICTOR,
        "port": 80,
    }
    assert scaled["spec"]["replicas"] == {"min": 0, "max": 2}
    assert scaled["spec"]["scaledownPeriod"] == 300, "idle for 5 minutes by default"
    assert scaled["spec"]["timeouts"] == {"conditionWait": "600s"}, "held up to 10 minutes"
    [rule] = manifest(comp, HTTP_ROUTE)["spec"]["rules"]
    assert rule["backendRefs"] == [
        {
            "group": "",
            "kind": "Service",
            "name": "keda-add-ons-http-interceptor-proxy",
            "namespace": "keda",
            "port": 8080,
        }
    ]
    rewrite = rule["filters"][0]["urlRewrite"]
    assert rewrite["hostname"] == f"{PREDICTOR}.{NS}"
    assert rewrite["path"]["replacePrefixMatch"] == "/", "the server still sees /v1/..."
    assert conditions(comp)["ScaleToZeroReady"] == ("False", "Creating")


def test_a_service_with_pods_routes_to_its_predictor_as_before() -> None:
    """minReplicas 1: no add-on object, the route's backend is the predictor's Service."""
    comp = reconcile(service(minReplicas=1, maxReplicas=2), [platform(), *WORLD])
    assert HTTP_SCALED_OBJECT not in comp.resources
    assert "readinessProbe" not in isvc(comp)["spec"]["predictor"]["containers"][0]
    [rule] = manifest(comp, HTTP_ROUTE)["spec"]["rules"]
    assert rule["backendRefs"][0]["name"] == PREDICTOR
    assert "hostname" not in rule["filters"][0]["urlRewrite"]
    assert "ScaleToZeroReady" not in conditions(comp)


@dataclass(frozen=True)
class IdleCase(Case):
    service: str | None
    """The service's scaleToZero.idleAfter."""
    namespaced: str | None
    """The namespace's AIMRuntimeConfig's scaleToZero.idleAfter."""
    cluster: dict[str, Any] = field(default_factory=dict)
    """The platform's scaleToZero."""
    route_timeout: str | None = None
    """The service's routing.requestTimeout."""
    want: dict[str, Any] = field(default_factory=dict)
    """Fields of the HTTPScaledObject's spec."""


IDLE_CASES = [
    IdleCase("service-wins", "the service's idle time wins over its runtime config's",
             "1m", "30m", want={"scaledownPeriod": 60}),
    IdleCase("namespace", "the namespace's config over the cluster's", None, "30m",
             {"idleAfter": "2h"}, want={"scaledownPeriod": 1800}),
    IdleCase("cluster", "the platform's idle time and wake bound", None, None,
             {"idleAfter": "90s", "wakeTimeout": "15m"},
             want={"scaledownPeriod": 90, "timeouts": {"conditionWait": "900s"}}),
    IdleCase("request-timeout", "a route's request timeout bounds the wait for the answer too",
             None, None, route_timeout="5m",
             want={"timeouts": {"conditionWait": "600s", "responseHeader": "300s"}}),
]  # fmt: skip


@table(IDLE_CASES)
def test_how_long_a_service_idles_and_waits(case: IdleCase) -> None:
    """The idle time comes from the service, else its runtime config; how long a waking request
    waits is the platform's."""
    spec: dict[str, Any] = dict(TO_ZERO)
    if case.service:
        spec["scaleToZero"] = {"idleAfter": case.service}
    if case.route_timeout:
        spec["routing"] = {"requestTimeout": case.route_timeout}
    pool = [platform(**({"scaleToZero": case.cluster} if case.cluster else {})), *WORLD]
    if case.namespaced:
        pool.append(config(scaleToZero={"idleAfter": case.namespaced}))
    comp = reconcile(service(**spec), pool)
    scaled = manifest(comp, HTTP_SCALED_OBJECT)["spec"]
    assert {k: scaled[k] for k in case.want} == case.want, case.reason


def test_the_platform_names_the_interceptor() -> None:
    """An add-on installed elsewhere: the route points there."""
    interceptor = {"name": "interceptor", "namespace": "scaling", "port": 9080}
    comp = reconcile(
        service(**TO_ZERO), [platform(scaleToZero={"interceptor": interceptor}), *WORLD]
    )
    [backend] = manifest(comp, HTTP_ROUTE)["spec"]["rules"][0]["backendRefs"]
    assert (backend["name"], backend["namespace"], backend["port"]) == (
        "interceptor",
        "scaling",
        9080,
    )


def test_a_request_held_past_the_wake_timeout_goes_to_the_wake_responder() -> None:
    """Past its bound a waiting request is failed over, not answered 502: the add-on dials a
    failover in the HTTPScaledObject's namespace, so a Service there names the platform's
    responder (by default the one package/wake-responder.yaml runs), on the responder's port,
    after the same wait as the platform's wake timeout."""
    comp = reconcile(service(**TO_ZERO), [platform(), *WORLD])
    waking = manifest(comp, WAKE_RESPONDER)
    isvc_name = PREDICTOR.removesuffix("-predictor")
    assert waking["metadata"]["name"] == f"{isvc_name}-waking"
    assert waking["metadata"]["namespace"] == NS
    assert waking["spec"] == {
        "type": "ExternalName",
        "externalName": "aim-wake-responder.aim-system.svc.cluster.local",
    }
    assert comp.resources[WAKE_RESPONDER].ready, "nothing reports on it: ready once it exists"
    assert manifest(comp, HTTP_SCALED_OBJECT)["spec"]["coldStartTimeoutFailoverRef"] == {
        "service": f"{isvc_name}-waking",
        "port": 8080,
        "timeoutSeconds": 600,
    }, "the add-on waits timeoutSeconds (default 30), not conditionWait, once a failover is set"


def test_the_platform_names_the_wake_responder() -> None:
    """A responder run elsewhere, on another port, with a shorter wake timeout."""
    responder = {"name": "answers", "namespace": "platform", "port": 9000}
    comp = reconcile(
        service(**TO_ZERO),
        [platform(scaleToZero={"responder": responder, "wakeTimeout": "2m"}), *WORLD],
    )
    assert manifest(comp, WAKE_RESPONDER)["spec"]["externalName"] == (
        "answers.platform.svc.cluster.local"
    )
    failover = manifest(comp, HTTP_SCALED_OBJECT)["spec"]["coldStartTimeoutFailoverRef"]
    assert (failover["port"], failover["timeoutSeconds"]) == (9000, 120)


def test_a_service_with_pods_always_names_no_wake_responder() -> None:
    """Only a service at zero can be woken; one at `minReplicas: 1` composes neither object."""
    comp = reconcile(service(minReplicas=1, maxReplicas=2), [platform(), *WORLD])
    assert WAKE_RESPONDER not in comp.resources
    assert HTTP_SCALED_OBJECT not in comp.resources


@dataclass(frozen=True)
class RefusalCase(Case):
    spec: dict[str, Any]
    want: str
    says: str
    routed: bool = True


REFUSAL_CASES = [
    RefusalCase("no-routing", "with no route nothing can wake a service that has no pod",
                TO_ZERO, "RoutingRequiredForScaleToZero", "enable spec.routing", routed=False),
    RefusalCase("metrics", "the add-on's trigger is the requests; metrics would need KEDA's own",
                {**TO_ZERO, "autoScaling": {"metrics": [{"type": "PodMetric", "podmetric": {
                    "metric": {"metricNames": ["x"]}, "target": {"type": "Value",
                                                              "value": "1"}}}]}},
                "ScaleToZeroWithMetrics", "remove spec.autoScaling"),
]  # fmt: skip


@table(REFUSAL_CASES)
def test_a_service_that_cannot_wake_is_refused_before_anything_is_made(case: RefusalCase) -> None:
    """Failed, naming the field and the fix; no InferenceService is created (it would idle into
    a state it could never leave)."""
    pool = [platform() if case.routed else config(kind="AIMClusterRuntimeConfig"), *WORLD]
    comp = reconcile(service(**case.spec), pool)
    assert conditions(comp)["ScaleToZeroReady"] == ("False", case.want), case.reason
    assert case.says in message_of(comp, "ScaleToZeroReady"), case.reason
    assert status(comp)["status"] == "Failed"
    assert INFERENCE_SERVICE not in comp.resources
    assert HTTP_SCALED_OBJECT not in comp.resources
    assert WAKE_RESPONDER not in comp.resources


def add_on(ready: str, message: str = "") -> Any:
    """The HTTPScaledObject as the add-on's operator reports on it."""
    return {
        "apiVersion": "http.keda.sh/v1alpha1",
        "kind": "HTTPScaledObject",
        "metadata": {"name": PREDICTOR, "namespace": NS},
        "status": {
            "conditions": [
                {"type": "Ready", "status": ready, "reason": "Reconciled", "message": message}
            ]
        },
    }


def keda_hpa(current: int, active: str, reason: str) -> Any:
    """KEDA's HPA for the add-on's ScaledObject, with the HPA controller's conditions.

    As the controller writes it: a count of zero is left out of its status.
    """
    counts = {"currentReplicas": current} if current else {}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{PREDICTOR}", "namespace": NS},
        "status": {
            **counts,
            "desiredReplicas": current,
            "conditions": [
                {"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale"},
                {"type": "ScalingActive", "status": active, "reason": reason},
            ],
        },
    }


def serving() -> dict[str, Any]:
    """What a woken-up service observes: KServe Ready, the add-on and the Gateway in agreement."""
    route = manifest(reconcile(service(**TO_ZERO), [platform(), *WORLD]), HTTP_ROUTE)
    parent = route["spec"]["parentRefs"][0]
    accepted = {"type": "Accepted", "status": "True", "reason": "Accepted"}
    route["status"] = {"parents": [{"parentRef": parent, "conditions": [accepted]}]}
    return {INFERENCE_SERVICE: READY_ISVC, HTTP_SCALED_OBJECT: add_on("True"), HTTP_ROUTE: route}


def test_an_idle_service_runs_at_zero_and_says_so() -> None:
    """At zero pods KEDA disables its HPA (ScalingActive False): the service is Running, scaled
    to zero, 0/0 of 0-2; KServe reports a Deployment of zero pods Ready."""
    observed = serving()
    pool = [platform(), *WORLD, keda_hpa(0, "False", "ScalingDisabled")]
    comp = reconcile(service(**TO_ZERO), pool, observed)
    assert conditions(comp)["HPAReady"] == ("True", "ScaledToZero")
    assert conditions(comp)["ScaleToZeroReady"] == ("True", "WakeReady")
    assert status(comp)["status"] == "Running"
    assert status(comp)["runtime"]["replicas"] == "0/0 (0-2)"


def test_a_woken_service_scales_on_keda_s_metric() -> None:
    """One pod up: KEDA's HPA is active and the count reads 1/1 of 0-2."""
    observed = serving()
    pool = [platform(), *WORLD, keda_hpa(1, "True", "ValidMetricFound")]
    comp = reconcile(service(**TO_ZERO), pool, observed)
    assert conditions(comp)["HPAReady"] == ("True", "HPAOperational")
    assert status(comp)["runtime"]["replicas"] == "1/1 (0-2)"


def test_an_add_on_that_cannot_scale_degrades_the_service() -> None:
    """The add-on's operator could not make its ScaledObject: requests are held but nothing
    wakes the predictor; the service says so, quoting it."""
    observed = {**serving(), HTTP_SCALED_OBJECT: add_on("False", "no KEDA")}
    comp = reconcile(service(**TO_ZERO), [platform(), *WORLD], observed)
    assert conditions(comp)["ScaleToZeroReady"] == ("False", "WakeNotReady")
    assert "no KEDA" in message_of(comp, "ScaleToZeroReady")
    assert status(comp)["status"] == "Degraded"
