# syntax=docker/dockerfile:1
# The function's runtime image. Both stages use the same Python release: the virtualenv built in
# the first stage hard-codes its interpreter's version in its paths, so a runtime stage on another
# Python cannot import it (the upstream template broke exactly that way).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG GO_IMAGE=golang:1.26-bookworm
# The registry client the function runs to read model images' labels; the same version the
# tests build (scripts/build-tools.sh).
ARG ORAS_VERSION=v1.2.3

FROM ${GO_IMAGE} AS oras
ARG ORAS_VERSION
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
WORKDIR /build
RUN go mod init aim-crossplane.local/tools \
 && go mod edit -require=oras.land/oras@${ORAS_VERSION} \
 && go build -trimpath -o /oras \
    -ldflags "-s -w -X oras.land/oras/internal/version.Version=${ORAS_VERSION#v}" \
    oras.land/oras/cmd/oras

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 UV_PROJECT_ENVIRONMENT=/venv UV_PYTHON_DOWNLOADS=never
RUN pip install --no-cache-dir uv==0.13.8
WORKDIR /src
COPY pyproject.toml uv.lock README.md ./
# Dependencies first, so code changes do not invalidate the dependency layer.
RUN uv sync --frozen --no-dev --no-install-project
COPY function ./function
RUN uv sync --frozen --no-dev --no-editable

FROM ${PYTHON_IMAGE} AS runtime
COPY --from=build /venv /venv
COPY --from=oras /oras /usr/local/bin/oras
# 65532 is the conventional "nonroot" uid of distroless images; no shell login, no home needed.
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["/venv/bin/function-aim"]
