# syntax=docker/dockerfile:1
# The function's runtime image. Both stages use the same Python release: the virtualenv built in
# the first stage hard-codes its interpreter's version in its paths, so a runtime stage on another
# Python cannot import it (the upstream template broke exactly that way).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

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
# 65532 is the conventional "nonroot" uid of distroless images; no shell login, no home needed.
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["/venv/bin/function-aim"]
