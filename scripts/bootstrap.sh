#!/usr/bin/env bash
# Installs the Python side: a pinned uv in the project cache, then the locked dependencies into
# .venv. Idempotent and quick when nothing changed. Prints the path of uv on stdout (last line).
#
#   AIM_CACHE_DIR   root of the cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/aim-crossplane)
set -euo pipefail

UV_VERSION=0.13.8

cache=${AIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aim-crossplane}
root=$(cd "$(dirname "$0")/.." && pwd)
uv="$cache/uv-$UV_VERSION/bin/uv"

log() { printf '[bootstrap] %s\n' "$*" >&2; }

command -v python3 >/dev/null || { log "python3 (>= 3.11) is not on PATH"; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { log "python3 is $(python3 -V 2>&1); 3.11 or newer is needed"; exit 1; }

if ! "$uv" --version 2>/dev/null | grep -q "$UV_VERSION"; then
  log "installing uv $UV_VERSION into $cache"
  rm -rf "$cache/uv-$UV_VERSION"
  if ! python3 -m venv "$cache/uv-$UV_VERSION" 2>/dev/null; then
    # Debian's python3 ships venv separately.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing Debian's python3-venv"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
      rm -rf "$cache/uv-$UV_VERSION"
      python3 -m venv "$cache/uv-$UV_VERSION"
    else
      log "python3 cannot create virtualenvs; install your distribution's python3-venv package"
      exit 1
    fi
  fi
  "$cache/uv-$UV_VERSION/bin/pip" install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi

# --frozen: install exactly uv.lock; a pyproject.toml that disagrees with it fails the check run.
(cd "$root" && "$uv" sync --frozen --quiet)
echo "$uv"
