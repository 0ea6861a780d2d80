# syntax=docker/dockerfile:1
# The function's runtime image, for those with Docker. scripts/build-image (`make image`) builds
# the same contents without Docker, and tests/unit/repo/test_dockerfile.py keeps the two agreed:
# Debian bookworm's Python 3.11, the dependencies exactly as uv.lock pins them, oras at the version the
# tests use, a CA bundle, user 65532, no shell. Both stages use the same Debian Python: the
# virtualenv links its interpreter by path and version, so a runtime on another Python cannot
# import it.
ARG BUILD_IMAGE=debian:bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/python3-debian12:nonroot
ARG GO_IMAGE=golang:1.26-bookworm
# The registry client the function runs to read model images' labels; the same version the
# tests build (scripts/build-tools.sh).
ARG ORAS_VERSION=v1.2.3
ARG UV_VERSION=0.13.8

FROM ${GO_IMAGE} AS oras
ARG ORAS_VERSION
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
WORKDIR /build
RUN go mod init aim-crossplane.local/tools \
 && go mod edit -require=oras.land/oras@${ORAS_VERSION} \
 && go build -trimpath -o /oras \
    -ldflags "-s -w -X oras.land/oras/internal/version.Version=${ORAS_VERSION#v} -X oras.land/oras/internal/version.BuildMetadata=" \
    oras.land/oras/cmd/oras

FROM ${BUILD_IMAGE} AS build
ARG UV_VERSION
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.11 python3.11-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*
RUN python3.11 -m pip install --no-cache-dir --break-system-packages uv==${UV_VERSION}
ENV UV_PROJECT_ENVIRONMENT=/venv UV_PYTHON=/usr/bin/python3.11 UV_PYTHON_DOWNLOADS=never
WORKDIR /src
COPY pyproject.toml uv.lock README.md ./
# Dependencies first, so code changes do not invalidate the dependency layer.
RUN uv sync --frozen --no-dev --no-install-project --compile-bytecode
COPY function ./function
RUN uv sync --frozen --no-dev --no-editable --compile-bytecode

FROM ${RUNTIME_IMAGE} AS runtime
COPY --from=build /venv /venv
COPY --from=oras /oras /usr/local/bin/oras
# 65532 is the conventional "nonroot" uid of distroless images; no shell login, no home needed.
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["/venv/bin/function-aim"]
