# The two commands of the README. Both install what they need (Python deps, Go-built tools).
EXAMPLE ?= examples/aimservice-basic

.PHONY: render test generate image package publish

render:  ## Render an example AIMService through the real Crossplane engine; print what it composes
	@scripts/render $(EXAMPLE)

test:    ## Run every check: lockfile, ruff, mypy --strict, unit, fuzz, API, registry, render, image and end-to-end tests
	@scripts/test

generate: ## Regenerate xrds/, compositions/ and docs/api.md from the API models
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.xrds write

image:   ## Build the function's runtime image without Docker (as root): _output/image/{oci,function-aim.tar}
	@scripts/build-image

package: ## Build the image, then the Configuration and the Function package (image embedded) into _output/
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.packages

publish: ## Build the image and both packages, push them to REGISTRY (e.g. make publish REGISTRY=ghcr.io/acme)
	@test -n "$(REGISTRY)" || { echo "usage: make publish REGISTRY=<registry>[/<path>] [VERSION=v0.1.0]"; exit 2; }
	@scripts/publish $(REGISTRY) $(if $(VERSION),--version $(VERSION))
