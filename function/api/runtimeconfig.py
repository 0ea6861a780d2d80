"""AIMRuntimeConfig / AIMClusterRuntimeConfig: defaults that models, templates and services read.

A namespace's AIMRuntimeConfig is merged over the AIMClusterRuntimeConfig of the same name, but
for `model.creationScope: Cluster`, which only the cluster one may set. Only the cluster one
composes, the AIMClusterModels its `model.creationScope: Cluster` asks for; their status holds
Crossplane's conditions and the function's `AutoCreatedModels`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from function.api.common import (
    OBJECT_NAME_PATTERN,
    ApiModel,
    EnvVar,
    LocalObjectReference,
    ObservedStatus,
    ParentReference,
    StringMap,
)
from function.api.hardware import INT32_MAX

# Gateway API's Duration: up to four <number><unit> parts, as HTTPRoute timeouts accept.
DURATION_PATTERN = r"^([0-9]{1,5}(h|m|s|ms)){1,4}$"

Duration = Annotated[str, Field(pattern=DURATION_PATTERN)]

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# Gateway API's Hostname: a DNS name, lowercase, its first label alone may be the wildcard `*`.
HOSTNAME_PATTERN = rf"^(\*\.)?{_DNS_LABEL}(\.{_DNS_LABEL})*$"
_PATTERN_LABEL = rf"({_DNS_LABEL}|\{{\.metadata\.namespace\}})"
# A hostname pattern of the route policy: a hostname whose whole labels may be the namespace.
HOSTNAME_POLICY_PATTERN = rf"^(\*\.)?{_PATTERN_LABEL}(\.{_PATTERN_LABEL})*$"

Hostname = Annotated[str, Field(min_length=1, max_length=253, pattern=HOSTNAME_PATTERN)]


class RoutingConfig(ApiModel):
    """Defaults for the HTTPRoutes of AIMServices."""

    enabled: bool | None = Field(
        default=None, description="Create an HTTPRoute for services (a service may override)."
    )
    gateway_ref: ParentReference | None = Field(
        default=None, description="The Gateway the HTTPRoutes attach to."
    )
    path_template: str | None = Field(
        default=None,
        min_length=1,
        max_length=512,
        description=(
            "HTTP path prefix, with JSONPath fragments in braces rendered against the "
            "AIMService, e.g. `/{.metadata.namespace}/{.metadata.name}`. It must lie under the "
            "route policy's prefix (by default `/<namespace>/`; the AIMClusterRuntimeConfig's "
            "`routing.policy.pathPrefix`)."
        ),
    )
    request_timeout: Duration | None = Field(
        default=None, description="HTTPRoute request timeout, e.g. `60s` or `5m`."
    )
    hostnames: list[Hostname] | None = Field(
        default=None,
        max_length=16,
        description=(
            "Hostnames the HTTPRoutes answer for (`HTTPRoute.spec.hostnames`), e.g. "
            "`chat.team-a.example.com` or `*.team-a.example.com`. A route without hostnames "
            "attaches to every listener of its Gateway that takes it, so on a Gateway with "
            "several listeners (other teams' hosts, an authenticated one) a service without "
            "hostnames gets no HTTPRoute (`RouteHostnameRequired`). A service's list replaces "
            "its runtime config's whole. Tenants may use the AIMClusterRuntimeConfig's own "
            "hostnames and those `routing.policy.allowedHostnames` allows."
        ),
    )
    annotations: StringMap | None = Field(
        default=None,
        description=(
            "Annotations added to the HTTPRoutes. A service's or an AIMRuntimeConfig's need "
            "their keys allowed by the AIMClusterRuntimeConfig's "
            "`routing.policy.allowedAnnotations` (by default none is)."
        ),
    )


DEFAULT_PATH_PREFIX = "/{.metadata.namespace}/"

ANNOTATION_KEY_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$"
)
"""An annotation key (`[prefix/]name`), or a prefix alone ending in `/`."""


class RoutePolicy(ApiModel):
    """Where services may put their routes on a shared Gateway: paths, hosts and annotations."""

    path_prefix: str = Field(
        default=DEFAULT_PATH_PREFIX,
        min_length=1,
        max_length=512,
        pattern=r"^/",
        description=(
            "Every service's route path must lie under this prefix, a template rendered against "
            "the AIMService like `pathTemplate` (without dropping a repeated segment). Paths are "
            "compared segment by segment, so `/team-a/` covers `/team-a` and `/team-a/chat` but "
            "not `/team-ab/chat`. A path outside it gets no HTTPRoute (`RoutePathNotAllowed`). "
            "Services without a path template are routed at `<prefix>/<uid>`. The default keeps "
            "each namespace under its own `/<namespace>/`, so no team can take, or shadow with a "
            "longer prefix, another's paths; `/` lets services take any path. Use only "
            "`{.metadata.namespace}` and fixed text: a service's name, labels and annotations "
            "are its team's to write."
        ),
    )
    allowed_annotations: list[
        Annotated[str, Field(min_length=1, max_length=317, pattern=ANNOTATION_KEY_PATTERN)]
    ] = Field(
        default_factory=list,
        max_length=64,
        description=(
            "Route annotations services and namespace runtime configs may set: exact keys, or "
            "prefixes ending in `/` (`example.com/` allows `example.com/anything`). Gateway "
            "controllers read some annotations as settings (authentication, rate limits, "
            "rewrites), so by default none is allowed: a service or AIMRuntimeConfig that sets "
            "one gets no HTTPRoute (`RouteAnnotationNotAllowed`). The annotations of this "
            "AIMClusterRuntimeConfig's own `routing.annotations` are the platform's and always "
            "pass."
        ),
    )
    allowed_hostnames: list[
        Annotated[str, Field(min_length=1, max_length=253, pattern=HOSTNAME_POLICY_PATTERN)]
    ] = Field(
        default_factory=list,
        max_length=64,
        description=(
            "Hostnames services and namespace runtime configs may pin their routes to: exact "
            "names or wildcards (`*.example.com` allows `a.example.com`, `a.b.example.com` and "
            "`*.a.example.com`, not `example.com`), where a whole label may be "
            "`{.metadata.namespace}`, the service's namespace (`*.{.metadata.namespace}."
            "example.com` gives each team its own subdomain). By default none is: tenants use "
            "the hostnames of this AIMClusterRuntimeConfig's own `routing.hostnames` or none, "
            "so no team answers for another's host; any other gets no HTTPRoute "
            "(`RouteHostnameNotAllowed`)."
        ),
    )


class ClusterRoutingConfig(RoutingConfig):
    """The cluster's routing defaults, and the policy that only the platform sets."""

    policy: RoutePolicy | None = Field(
        default=None,
        description=(
            "What tenants' routes may do on a shared Gateway; only an AIMClusterRuntimeConfig "
            "sets it. It binds the services of every namespace that use this config's name, and "
            "a service picks that name itself (`runtimeConfigName`), so a looser policy under "
            "another name is open to every namespace. Unset: each namespace's services route "
            "under `/<namespace>/`, add no annotations and pin no hostnames of their own."
        ),
    )


DEFAULT_IDLE_AFTER = "5m"
DEFAULT_WAKE_TIMEOUT = "10m"


class ScaleToZeroDefaults(ApiModel):
    """When the predictors of services with `minReplicas: 0` go to zero pods."""

    idle_after: Duration | None = Field(
        default=None,
        description=(
            "How long a service with `minReplicas: 0` may go without a request before its "
            f"predictor has no pod (default `{DEFAULT_IDLE_AFTER}`); a service's own "
            "`scaleToZero.idleAfter` wins."
        ),
    )


class ServiceReference(ApiModel):
    """A Service in another namespace, by name and port."""

    name: str = Field(min_length=1, max_length=63, pattern=OBJECT_NAME_PATTERN, description="Name.")
    namespace: str = Field(
        min_length=1, max_length=63, pattern=OBJECT_NAME_PATTERN, description="Namespace."
    )
    port: int = Field(ge=1, le=65535, description="Port of the Service.")


DEFAULT_INTERCEPTOR = ServiceReference(
    name="keda-add-ons-http-interceptor-proxy", namespace="keda", port=8080
)
DEFAULT_RESPONDER = ServiceReference(name="aim-wake-responder", namespace="aim-system", port=8080)


class ClusterScaleToZero(ScaleToZeroDefaults):
    """Scale to zero's defaults, and what only the platform sets: where requests wait."""

    wake_timeout: Duration | None = Field(
        default=None,
        description=(
            "How long the request that wakes a service is held for its pod to turn ready "
            f"(default `{DEFAULT_WAKE_TIMEOUT}`): enough for the image pull and the model load "
            "from its cache. Past it the request goes to `responder`, which answers 503 with "
            "`Retry-After`."
        ),
    )
    responder: ServiceReference | None = Field(
        default=None,
        description=(
            "The Service that answers a request held past `wakeTimeout`: 503 with "
            "`Retry-After`, which OpenAI clients retry (default "
            f"`{DEFAULT_RESPONDER.namespace}/{DEFAULT_RESPONDER.name}:{DEFAULT_RESPONDER.port}`, "
            "the function image's `aim-wake-responder` as package/wake-responder.yaml runs it). "
            "Each service at `minReplicas: 0` names it by an ExternalName Service "
            "`<name>.<namespace>.svc.cluster.local`, which the interceptor dials. Not running: "
            "the interceptor answers 502 instead."
        ),
    )
    interceptor: ServiceReference | None = Field(
        default=None,
        description=(
            "The KEDA HTTP add-on's interceptor proxy Service that the routes of services at "
            "`minReplicas: 0` send their requests to (default "
            f"`{DEFAULT_INTERCEPTOR.namespace}/{DEFAULT_INTERCEPTOR.name}:"
            f"{DEFAULT_INTERCEPTOR.port}`, the add-on's install). Its namespace needs a "
            "ReferenceGrant from each namespace whose services scale to zero."
        ),
    )


class ModelCreationScope(StrEnum):
    """Where a model auto-created for `spec.model.image` should live."""

    NAMESPACE = "Namespace"
    CLUSTER = "Cluster"


class ModelCreationConfig(ApiModel):
    """How models auto-created for services are made."""

    creation_scope: ModelCreationScope = Field(
        default=ModelCreationScope.NAMESPACE,
        description=(
            "Scope of models auto-created for services' `spec.model.image`. Namespace: each "
            "service creates an AIMModel in its namespace. Cluster: this config creates one "
            "AIMClusterModel per image, shared by services in every namespace that use this "
            "config's name (a namespaced service cannot compose cluster objects), inspected with "
            "the system namespace's pull secrets. Only this config can switch to Cluster; a "
            "namespace's AIMRuntimeConfig of the same name may opt its services out with "
            "`Namespace`."
        ),
    )
    auto_discovery: bool = Field(
        default=False, description="Auto-created models inspect their image and create templates."
    )


class NamespaceModelCreationConfig(ModelCreationConfig):
    """How models auto-created for a namespace's services are made; only the platform shares."""

    creation_scope: ModelCreationScope = Field(
        default=ModelCreationScope.NAMESPACE,
        description=(
            "Scope of models auto-created for the namespace's services' `spec.model.image`. "
            "`Namespace` makes them create AIMModels in the namespace, even where the "
            "AIMClusterRuntimeConfig of this name says `Cluster`. `Cluster` takes effect only "
            "where that AIMClusterRuntimeConfig says `Cluster` itself: only the platform may "
            "switch services to shared AIMClusterModels, which are inspected with the system "
            "namespace's pull secrets. Elsewhere it is ignored, and the objects that use this "
            "config say so (`ClusterScopeNotAllowed`)."
        ),
    )


class CachingMode(StrEnum):
    """Which services cache their model's weights when they do not say (`spec.cacheModel`)."""

    AUTO = "Auto"
    ALWAYS = "Always"


DEFAULT_CACHE_RETENTION = "24h"


class CachingConfig(ApiModel):
    """Model caching for the services that use this config, and how long their caches stay."""

    # No schema defaults here: the API server would write them into a namespace's config,
    # which is merged field by field over the cluster's, and so undo the cluster's choice.
    mode: CachingMode | None = Field(
        default=None,
        description=(
            "`Auto` (the default): a service caches when it sets `cacheModel: true`, when its "
            "template caches itself, or when its model is custom. `Always`: every service "
            "caches unless it sets `cacheModel: false` (custom models and caching templates "
            "cache in any case)."
        ),
    )
    retention: Duration | None = Field(
        default=None,
        description=(
            "How long a template cache a service created for an image model is kept, with its "
            "PVCs and weights, once no service relies on it (default `24h`); a service on the "
            "same template within that time mounts it without downloading. Applies to caches "
            "made by services only."
        ),
    )


DEFAULT_INFERENCE_USER = 1000


class InferenceSecurity(ApiModel):
    """The identity inference containers run with; they are non-root in any case."""

    run_as_user: int = Field(
        default=DEFAULT_INFERENCE_USER,
        ge=1,
        le=INT32_MAX,
        description=(
            "UID of the inference container. Namespaces that enforce the `restricted` Pod "
            "Security level admit only non-root pods, so root (0) is not offered."
        ),
    )
    run_as_group: int | None = Field(
        default=None,
        ge=0,
        le=INT32_MAX,
        description="GID of the container, and the group that owns its volumes (fsGroup); "
        "default: the UID.",
    )
    supplemental_groups: list[Annotated[int, Field(ge=0, le=INT32_MAX)]] | None = Field(
        default=None,
        max_length=16,
        description=(
            "Further groups of the container, e.g. the host groups that own the GPU device "
            "nodes (`video`, `render`) where the device plugin leaves them group-only."
        ),
    )


class LabelPropagation(ApiModel):
    """Which of an AIM object's own labels go onto what it composes."""

    enabled: bool = Field(default=False, description="Copy the labels `match` selects.")
    match: list[Annotated[str, Field(min_length=1, max_length=317)]] | None = Field(
        default=None,
        max_length=32,
        description=(
            "Label key patterns, as Go's filepath.Match reads them: `*` is any run of "
            "characters but `/`, `?` one such character (e.g. `team.example.com/*`, "
            "`cost-center`). A composed object's own labels are never overwritten; Jobs' pods "
            "get the labels too."
        ),
    )


class RuntimeDefaults(ApiModel):
    """The runtime defaults both scopes carry; a namespace's win over the cluster's."""

    default_storage_class_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Storage class of model caches that do not name one.",
    )
    pvc_headroom_percent: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="Extra space, in percent of the model size, given to model-cache PVCs.",
    )
    routing: RoutingConfig | None = Field(default=None, description="HTTP routing defaults.")
    env: list[EnvVar] | None = Field(
        default=None,
        description=(
            "Environment for every inference container, and for model caches' size-check and "
            "download Jobs (under the cache's own env)."
        ),
    )
    model: ModelCreationConfig | None = Field(
        default=None, description="How models auto-created from `spec.model.image` are made."
    )
    caching: CachingConfig | None = Field(
        default=None,
        description="Whether services cache model weights by default, and how long caches stay.",
    )
    inference_security: InferenceSecurity | None = Field(
        default=None,
        description="UID, GID and groups of inference containers (default: UID and GID 1000).",
    )
    label_propagation: LabelPropagation | None = Field(
        default=None,
        description=(
            "Labels of the AIM objects that use this config, copied onto what they compose."
        ),
    )
    scale_to_zero: ScaleToZeroDefaults | None = Field(
        default=None, description="When services with `minReplicas: 0` go to zero pods."
    )


DEFAULT_MAX_CONCURRENT_DISCOVERY_JOBS = 10


class ClusterRuntimeConfigSpec(RuntimeDefaults):
    """Cluster-wide runtime defaults, and the limits that only make sense cluster-wide."""

    routing: ClusterRoutingConfig | None = Field(
        default=None, description="HTTP routing defaults, and the route policy of tenants."
    )
    scale_to_zero: ClusterScaleToZero | None = Field(
        default=None,
        description=(
            "When services with `minReplicas: 0` go to zero pods, how long their waking request "
            "waits, and where it waits."
        ),
    )

    max_concurrent_discovery_jobs: int = Field(
        default=DEFAULT_MAX_CONCURRENT_DISCOVERY_JOBS,
        ge=1,
        le=1000,
        description=(
            "At most this many discovery Jobs run at once in the whole cluster (they pull model "
            "images, each many GB); templates beyond it wait their turn, oldest first, with "
            "`Discovered=False/DiscoveryCapReached`. Read from the AIMClusterRuntimeConfig a "
            "template uses (normally `default`); not settable per namespace."
        ),
    )


class RuntimeConfigSpec(RuntimeDefaults):
    """Namespace runtime defaults; also carries the namespace's credentials."""

    service_account_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description=(
            "Service account of discovery Jobs, cache size checks and inference pods; a cache's "
            "download runs as an account of its own."
        ),
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling model and runtime images."
    )
    model: NamespaceModelCreationConfig | None = Field(
        default=None, description="How models auto-created from `spec.model.image` are made."
    )


class EffectiveRuntimeConfigSpec(RuntimeConfigSpec, ClusterRuntimeConfigSpec):
    """What AIM objects read: a namespace's config merged over the cluster's of the same name.

    Not an XRD of its own; it has every field of both scopes. Its `routing.policy` is the
    cluster's: a namespace's config that carries one is refused before the merge, which would
    let it loosen the platform's.
    """

    # Said again: pydantic takes an inherited field from the first base (the namespace's
    # RoutingConfig), where Python's attribute lookup finds the cluster's first. (`model` is the
    # namespace's class, whose scope takes the same values: the merge decides which apply.)
    routing: ClusterRoutingConfig | None = Field(
        default=None, description="HTTP routing defaults, and the route policy of tenants."
    )
    scale_to_zero: ClusterScaleToZero | None = Field(
        default=None, description="Scale to zero's defaults, and where waking requests wait."
    )


class RuntimeConfigStatus(ObservedStatus):
    """Runtime configs are read, not reconciled: Crossplane's conditions and the generation."""
