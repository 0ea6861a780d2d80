#!/usr/bin/env bash
# Installs the Debian packages the tests and the image build need: docker-registry (Debian's
# build of the CNCF Distribution registry) for the registry and end-to-end tests; openssl, which
# makes the end-to-end control plane's certificates (slim images lack it); mmdebstrap, umoci and
# skopeo, which build the runtime image without Docker (scripts/build-image), with Debian's
# archive keyring to verify its packages on any host; runc, which runs it in the image tests; and
# for the end-to-end tier's node, containerd (with runc), the CNI plugins (bridge, host-local,
# loopback, portmap), iptables and conntrack for kube-proxy, and iproute2 (network namespaces).
# Quiet and quick when already there.
set -euo pipefail
log() { printf '[system-deps] %s\n' "$*" >&2; }

packages=(docker-registry openssl mmdebstrap umoci skopeo runc debian-archive-keyring
  containerd containernetworking-plugins iptables conntrack iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  log "missing Debian packages: ${missing[*]}; install them (apt-get install ${missing[*]}) and rerun"
  exit 1
fi
log "installing ${missing[*]}"
apt-get update -qq >&2
# The package's service is not wanted: the tests start their own registries on free ports.
DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >&2
