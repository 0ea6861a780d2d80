#!/usr/bin/env bash
# Builds the Go tools the project runs (the crossplane CLI, Crossplane core, oras, our apicheck,
# and for the end-to-end tier etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kube-proxy, KServe's controller, KEDA's operator and metrics adapter, the KEDA HTTP
# add-on's interceptor, scaler and operator, Traefik and a pause program) from the Go module proxy
# into a cache outside the repository, and copies the KServe, Gateway API, KEDA and KEDA HTTP
# add-on CRDs out of their modules beside them. Idempotent: a tool already
# built at its pinned version (or, for apicheck, from the same sources) is reused.
#
#   scripts/build-tools.sh [render|all]
#   scripts/build-tools.sh patched-core PATCH
#   scripts/build-tools.sh bin-dir
#
# `render` builds what `make render` and `make package` need (the CLI, core and oras); `all`
# (the default) everything the tests need as well. `patched-core` builds the pinned core with a
# patch applied to a copy of its module (for benchmarks measuring a core fix not yet released;
# never packaged) and prints that binary's path. `bin-dir` builds nothing and prints the directory
# that links the pinned set (scripts/plan uses its oras if it was built). Each tool is built once
# per version into tools/store/; the directory printed on stdout (last line) links the pinned set.
# Progress goes to stderr.
#
#   AIM_CACHE_DIR   root of the cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/aim-crossplane)
set -euo pipefail

CLI_VERSION=v2.5.0    # github.com/crossplane/cli/v2 (the newest the Go proxy serves)
CORE_VERSION=v2.4.0   # github.com/crossplane/crossplane/v2 (v2.4 watches required resources)
# The oldest core the packages claim (spec.crossplane.version); a render test runs it too.
OLDEST_CORE_VERSION=v2.3.4  # render without Docker needs >= v2.3.0
ORAS_VERSION=v1.2.3   # oras.land/oras: the function reads model images' labels with it
KUBE_VERSION=v1.35.3  # k8s.io/kubernetes: the end-to-end control plane (core's client-go is v0.35)
ETCD_VERSION=v3.5.24  # go.etcd.io/etcd/server/v3: the API server's storage
KSERVE_VERSION=v0.20.0       # github.com/kserve/kserve: the InferenceService CRD we compose for
GATEWAY_API_VERSION=v1.6.1   # sigs.k8s.io/gateway-api: the HTTPRoute CRD (standard channel)
KEDA_VERSION=v2.18.0         # github.com/kedacore/keda/v2, as KServe's go.mod pins it
# github.com/kedacore/http-add-on: holds a request to a workload at zero replicas until it is up
# (its compatibility table pairs v0.12 with KEDA v2.18 and Kubernetes 1.33-1.35).
KEDA_HTTP_VERSION=v0.12.0
OTEL_OPERATOR_VERSION=v0.113.0  # github.com/open-telemetry/opentelemetry-operator, likewise
# github.com/traefik/traefik/v3: the end-to-end tier's Gateway API implementation (pure Go, so it
# builds here; v3.7 needs modules this proxy does not serve).
TRAEFIK_VERSION=v3.6.12

set_name=${1:-all}
case $set_name in
  render|all|bin-dir) ;;
  patched-core) core_patch=$(realpath "${2:?usage: $0 patched-core PATCH}") ;;
  *) echo "usage: $0 [render|all] | patched-core PATCH | bin-dir" >&2; exit 2 ;;
esac

cache=${AIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aim-crossplane}
# One directory per combination of pinned versions, so two checkouts pinning different versions
# do not overwrite each other's links.
pins=$(sed -n 's/^\([A-Z_]*_VERSION\)=\([^ ]*\).*/\1=\2/p' "$0" | sha256sum | cut -c1-12)
bin="$cache/tools/sets/$pins/bin"
if [ "$set_name" = bin-dir ]; then echo "$bin"; exit 0; fi
store="$cache/tools/store"
mkdir -p "$bin" "$store" "$cache/tools/work"

log() { printf '[build-tools] %s\n' "$*" >&2; }

command -v go >/dev/null || { log "go is not on PATH; install Go >= 1.26 first"; exit 1; }

# Two runs at once (say, a test run and a render) must not build into the same files. A cold build
# holds the lock for many minutes, so the holder writes who it is beside it, and a run that has
# to wait says whom it waits for instead of hanging silently.
lock="$cache/tools/.lock"
exec 9>"$lock"
if ! flock -n 9; then
  holder="another process" hpid="" hwhat=""
  read -r hpid hwhat 2>/dev/null <"$lock.holder" || true
  # A holder killed before it could exit leaves its line behind: named only if still running.
  if [[ $hpid =~ ^[0-9]+$ ]] && { [ -d "/proc/$hpid" ] || kill -0 "$hpid" 2>/dev/null; }; then
    holder="PID $hpid ($hwhat)"
  fi
  log "the tools cache lock $lock is held by $holder; waiting for it to finish"
  flock 9
fi
printf '%s %s %s, since %s\n' "$$" "$(realpath "$0")" "$set_name" "$(date '+%F %T')" >"$lock.holder"

# The Go module and build caches live in the same cache, so deleting it gives a truly cold build.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build"
version_flag="github.com/crossplane/crossplane-runtime/v2/pkg/version.version"

built() { # binary, version
  # A tool that prints no version (KServe's manager) is known by the stamp its build left.
  [ -x "$1" ] && [ "$(cat "$1.version" 2>/dev/null)" = "$2" ] && return
  [ -x "$1" ] && "$1" version --client 2>/dev/null | grep -q "$2" \
    || { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "$2"; } \
    || { [ -x "$1" ] && "$1" version 2>/dev/null | grep -q "Version: *${2#v}\$"; } \
    || { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "Version: *${2#v}\$"; }
}

start=$(date +%s)

# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
# replaces them with ./staging paths, which a dependent module cannot see. Map each one to its
# published release (v0.<minor>.<patch> for v1.<minor>.<patch>) and keep Kubernetes' GODEBUG
# defaults. The list comes from the release's own go.mod, so it follows the pinned version.
kube_staging() {
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" \
    | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod"); do
    go mod edit -replace="$m=$m@v0.${KUBE_VERSION#v1.}"
  done
  grep '^godebug' "$gomod" >>go.mod || true
}

# KServe pins Kubernetes, controller-runtime and gRPC below what its other dependencies ask for,
# KEDA pins Kubernetes and Prometheus likewise, and Traefik uses forks of two libraries, with
# `replace` lines that a dependent module does not inherit: repeat them (all name versions, none
# a local path).
module_replaces() { # module@version
  local gomod
  gomod=$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  sed -n 's#^\(replace \)\{0,1\}[[:space:]]*\([^[:space:]]*\) => \([^[:space:]]*\) \(v[^[:space:]]*\)$#\2=\3@\4#p' \
    "$gomod" | while read -r r; do go mod edit -replace="$r"; done
}

# Both tools are built from wrapper modules that pin exact versions with `go mod edit -require`.
# `go install module@version` would be shorter, but it asks the proxy for the module's version list
# (to look for deprecations), which some proxies refuse; and core cannot be built that way at all,
# because its go.mod replaces its apis module with a local path. Requiring core and its apis module
# at the same tag reproduces the release build.
build() { # name, version, link name in the set, package, module@version...
  local name=$1 version=$2 link="$bin/$3" pkg=$4 out="$store/$1-$2"; shift 4
  local ldflags="-s -w -X $version_flag=$version"
  case $name in
    oras) ldflags="-s -w -X oras.land/oras/internal/version.Version=${version#v} -X oras.land/oras/internal/version.BuildMetadata=" ;;
    kube-*|kubelet) ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$version")" ;;
    etcd|kserve-manager) ldflags="-s -w" ;;
    traefik) ldflags="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=${version#v}" ;;
    keda-http-*) ldflags="-s -w -X github.com/kedacore/http-add-on/pkg/build.version=$version" ;;
    keda-*) ldflags="-s -w -X github.com/kedacore/keda/v2/version.Version=$version" ;;
  esac
  if built "$out" "$version"; then ln -sfn "$out" "$link"; log "$name $version: cached"; return; fi
  local w="$cache/tools/work/$name-$version"
  rm -rf "$w" && mkdir -p "$w"
  log "$name $version: building (go output in $w/build.log)"
  (
    cd "$w"
    go mod init aim-crossplane.local/tools
    for req in "$@"; do go mod edit -require="$req"; done
    # A patched core builds from its copy (`patched-core`); its version says so in build metadata,
    # which version constraints ignore, so packages still accept it.
    [ -n "${patched_src:-}" ] && go mod edit -replace="github.com/crossplane/crossplane/v2=$patched_src"
    case $name in
      kube-*|kubelet) kube_staging ;;
      kserve-manager|traefik|keda-*) module_replaces "$1" ;;
    esac
    go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg"
  ) >"$w/build.log" 2>&1 &
  local pid=$! t0 ticks=0
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( ++ticks % 30 == 0 )) && kill -0 "$pid" 2>/dev/null; then
      log "$name: $(( $(date +%s) - t0 ))s, $(grep -c '^go: downloading' "$w/build.log") modules downloaded"
    fi
  done
  if ! wait "$pid"; then
    log "$name $version: build failed; the end of $w/build.log:"
    tail -n 40 "$w/build.log" >&2
    exit 1
  fi
  mv "$out.tmp" "$out"
  echo "$version" >"$out.version"
  ln -sfn "$out" "$link"
  log "$name $version: built in $(( $(date +%s) - t0 ))s"
}

build crossplane-cli "$CLI_VERSION" crossplane github.com/crossplane/cli/v2/cmd/crossplane \
  "github.com/crossplane/cli/v2@$CLI_VERSION"
core() { # version, link name
  build crossplane-core "$1" "$2" github.com/crossplane/crossplane/v2/cmd/crossplane \
    "github.com/crossplane/crossplane/v2@$1" "github.com/crossplane/crossplane/apis/v2@$1"
}
core "$CORE_VERSION" crossplane-core

if [ "$set_name" = patched-core ]; then
  sum=$(sha256sum "$core_patch" | cut -c1-12)
  patched_src="$cache/tools/work/crossplane-src-$CORE_VERSION-$sum"
  if [ ! -f "$patched_src/.patched" ]; then
    rm -rf "$patched_src"
    cp -r "$GOMODCACHE/github.com/crossplane/crossplane/v2@$CORE_VERSION" "$patched_src"
    chmod -R u+w "$patched_src"
    patch -s -p1 -d "$patched_src" <"$core_patch"
    touch "$patched_src/.patched"
  fi
  build crossplane-core "$CORE_VERSION+patched.$sum" crossplane-core-patched \
    github.com/crossplane/crossplane/v2/cmd/crossplane \
    "github.com/crossplane/crossplane/v2@$CORE_VERSION" \
    "github.com/crossplane/crossplane/apis/v2@$CORE_VERSION"
  echo "$bin/crossplane-core-patched"
  exit 0
fi

# Core's CRDs (for `core init`) and Helm chart (its RBAC) come from its module, read-only.
ln -sfn "$GOMODCACHE/github.com/crossplane/crossplane/v2@$CORE_VERSION" "$bin/../crossplane-src"

build oras "$ORAS_VERSION" oras oras.land/oras/cmd/oras "oras.land/oras@$ORAS_VERSION"

if [ "$set_name" = render ]; then
  log "render tools ready in $(( $(date +%s) - start ))s: $bin"
  echo "$bin"
  exit 0
fi

core "$OLDEST_CORE_VERSION" crossplane-core-oldest
ln -sfn "$GOMODCACHE/github.com/crossplane/crossplane/v2@$OLDEST_CORE_VERSION" \
  "$bin/../crossplane-src-oldest"

# The schemas our composed objects must satisfy, as their projects publish them: the module zips
# carry the CRD YAML, so nothing is built. Explicit versions only (proxies refuse version lists).
crds() { # destination under the set, module@version, directory in the module, files...
  local dest="$bin/../$1" module=$2 dir=$3 stamp; shift 3
  stamp="$dest/.version"
  # The files are in the stamp: a list that grows is copied again.
  if [ "$(cat "$stamp" 2>/dev/null)" = "$module $*" ]; then log "$module CRDs: cached"; return; fi
  local src
  src=$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { log "$module: go mod download gave no directory"; exit 1; }
  rm -rf "$dest" && mkdir -p "$dest"
  for f in "$@"; do cp "$src/$dir/$f" "$dest/$f"; done
  echo "$module $*" >"$stamp"
  log "$module CRDs: copied ${#@} files"
}
crds crds/kserve "github.com/kserve/kserve@$KSERVE_VERSION" config/crd/full \
  serving.kserve.io_inferenceservices.yaml serving.kserve.io_servingruntimes.yaml \
  serving.kserve.io_clusterservingruntimes.yaml
# GRPCRoutes and BackendTLSPolicies too: Traefik watches every standard-channel kind it serves.
crds crds/gateway-api "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" config/crd/standard \
  gateway.networking.k8s.io_gatewayclasses.yaml gateway.networking.k8s.io_gateways.yaml \
  gateway.networking.k8s.io_httproutes.yaml gateway.networking.k8s.io_referencegrants.yaml \
  gateway.networking.k8s.io_grpcroutes.yaml gateway.networking.k8s.io_backendtlspolicies.yaml
# What KServe's KEDA autoscaler class creates, beside the rest (not installed on every plane):
# KServe's controller makes a ScaledObject and an OpenTelemetryCollector only where these exist.
# KEDA's operator watches all of its kinds, so all of its CRDs come along.
crds autoscaling-crds/keda "github.com/kedacore/keda/v2@$KEDA_VERSION" config/crd/bases \
  keda.sh_scaledobjects.yaml keda.sh_scaledjobs.yaml keda.sh_triggerauthentications.yaml \
  keda.sh_clustertriggerauthentications.yaml eventing.keda.sh_cloudeventsources.yaml \
  eventing.keda.sh_clustercloudeventsources.yaml
# The add-on's one kind, which its three programs watch.
crds autoscaling-crds/keda-http "github.com/kedacore/http-add-on@$KEDA_HTTP_VERSION" \
  config/crd/bases http.keda.sh_httpscaledobjects.yaml
crds autoscaling-crds/opentelemetry \
  "github.com/open-telemetry/opentelemetry-operator@$OTEL_OPERATOR_VERSION" config/crd/bases \
  opentelemetry.io_opentelemetrycollectors.yaml

# The end-to-end tier's control plane (tests/e2e). etcd's server module replaces its sibling
# modules with relative paths too, but requiring it at a tag resolves them to the same tag.
build etcd "$ETCD_VERSION" etcd go.etcd.io/etcd/server/v3 "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
build kube-apiserver "$KUBE_VERSION" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver \
  "k8s.io/kubernetes@$KUBE_VERSION"
build kube-controller-manager "$KUBE_VERSION" kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-controller-manager "k8s.io/kubernetes@$KUBE_VERSION"
# ...and its node: the scheduler, the kubelet and kube-proxy of the same release.
for component in kube-scheduler kubelet kube-proxy; do
  build "$component" "$KUBE_VERSION" "$component" "k8s.io/kubernetes/cmd/$component" \
    "k8s.io/kubernetes@$KUBE_VERSION"
done

# KServe's controller (InferenceService reconciler and webhooks) of the release whose CRDs we
# validate against; its configuration, CRDs and webhook manifests are read from its module.
build kserve-manager "$KSERVE_VERSION" kserve-manager github.com/kserve/kserve/cmd/manager \
  "github.com/kserve/kserve@$KSERVE_VERSION"
ln -sfn "$GOMODCACHE/github.com/kserve/kserve@$KSERVE_VERSION" "$bin/../kserve-src"

# KEDA, which acts on the ScaledObject KServe's KEDA class makes: its operator (the HPA it
# makes, and the scalers it reads) and its metrics adapter (the external metrics API the HPA
# controller reads through the API server). Both are one module; the second build reuses the
# first's compiled packages.
build keda-operator "$KEDA_VERSION" keda-operator github.com/kedacore/keda/v2/cmd/operator \
  "github.com/kedacore/keda/v2@$KEDA_VERSION"
build keda-adapter "$KEDA_VERSION" keda-adapter github.com/kedacore/keda/v2/cmd/adapter \
  "github.com/kedacore/keda/v2@$KEDA_VERSION"

# The KEDA HTTP add-on: the interceptor (the proxy that holds a request while its workload wakes),
# the external-push scaler KEDA asks about the interceptor's queue, and the operator that turns
# each HTTPScaledObject into a ScaledObject. One module with no `replace` lines; the scaler and
# the operator reuse most of the interceptor's compiled packages. None prints a version, so the
# stamp beside each binary is what `built` checks.
for component in interceptor scaler operator; do
  build "keda-http-$component" "$KEDA_HTTP_VERSION" "keda-http-$component" \
    "github.com/kedacore/http-add-on/$component" "github.com/kedacore/http-add-on@$KEDA_HTTP_VERSION"
done

# A Gateway API implementation that accepts our HTTPRoutes and carries their traffic.
build traefik "$TRAEFIK_VERSION" traefik github.com/traefik/traefik/v3/cmd/traefik \
  "github.com/traefik/traefik/v3@$TRAEFIK_VERSION"

# Our own Go programs, rebuilt whenever their sources change (go.sum, where there is one, pins
# every dependency): apicheck (devtools/apicheck), the API server's validation code, offline; and
# pause (devtools/pause), the pod sandbox process of the end-to-end tier's node; and aimstub
# (devtools/aimstub), the entrypoint of the test AIM image that node runs. Each is also kept as
# <name>-<sum of its sources>, which the harness runs (devtools/tools.py): checkouts with other
# sources share this cache and rebuild <name> in turn, but never change another's <name>-<sum>.
own() { # name
  local name=$1 src sum
  src="$(cd "$(dirname "$0")/.." && pwd)/devtools/$name"
  sum=$(cat "$src"/go.* "$src"/*.go | sha256sum | cut -c1-16)
  if [ -x "$bin/$name-$sum" ]; then
    log "$name: cached"
    return
  fi
  if [ "$(cat "$bin/$name.sum" 2>/dev/null)" = "$sum" ] && [ -x "$bin/$name" ]; then
    cp -f "$bin/$name" "$bin/$name-$sum"
    log "$name: cached"
    return
  fi
  log "$name: building (go output in $cache/tools/work/$name.log)"
  local t0
  t0=$(date +%s)
  if ! (cd "$src" && GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$bin/$name.tmp" .) \
      >"$cache/tools/work/$name.log" 2>&1; then
    log "$name: build failed; the end of $cache/tools/work/$name.log:"
    tail -n 40 "$cache/tools/work/$name.log" >&2
    exit 1
  fi
  cp -f "$bin/$name.tmp" "$bin/$name-$sum"
  mv "$bin/$name.tmp" "$bin/$name"
  echo "$sum" >"$bin/$name.sum"
  log "$name: built in $(( $(date +%s) - t0 ))s"
}
own apicheck
own pause
own aimstub

log "tools ready in $(( $(date +%s) - start ))s: $bin"
echo "$bin"
