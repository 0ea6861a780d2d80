# The two commands of the README (render, test) and the others; `make help` lists them.
# Both install what they need (Python deps, Go-built tools).
EXAMPLE ?= examples/aimservice-basic

.PHONY: help render plan migrate test generate image package publish

help:    ## List these targets, one line each
	@awk 'BEGIN {FS = ":.*## "} /^[a-z]+:.*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

render:  ## Render an AIM manifest through the real Crossplane engine: EXAMPLE=<dir or name>, or FILE=<your.yaml> [REQUIRED="a.yaml b.yaml"] [OBSERVED=...] (FILE wins)
	@scripts/render $(or $(FILE),$(EXAMPLE)) $(foreach r,$(REQUIRED),--required $(r)) $(if $(OBSERVED),--observed $(OBSERVED))

plan:    ## Plan AIM manifests to their end state, no cluster: ARGS="examples/journeys/cluster-model --gpu-node MI300X [-o yaml]"
	@test -n "$(ARGS)" || { echo 'usage: make plan ARGS="<dir or files> [--gpu-node MI300X] [-o yaml|json]"'; exit 2; }
	@scripts/plan $(ARGS)

migrate: ## Convert AIM operator or older manifests (kubectl get -o yaml lists too) to this API, report on stderr: ARGS="cluster.yaml ml-team.yaml [-o converted.yaml] [--quiet]"
	@test -n "$(ARGS)" || { echo 'usage: make migrate ARGS="<old.yaml ...> [-o new.yaml] [--quiet]"'; exit 2; }
	@scripts/migrate $(ARGS)

test:    ## Run every check: lockfile, ruff, mypy --strict, unit, fuzz, API, registry, render, image, doc-command and end-to-end tests
	@scripts/test

generate: ## Regenerate xrds/, compositions/, claims/ and docs/api.md from the API models
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.gen.xrds write

image:   ## Build the function's runtime image without Docker (as root): _output/image/{oci,function-aim.tar}
	@scripts/build-image

package: ## Build the image, then the Configuration and the Function package (image embedded) into _output/
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.pkg.packages

publish: ## Build the image and both packages, push them to REGISTRY (e.g. make publish REGISTRY=ghcr.io/acme)
	@test -n "$(REGISTRY)" || { echo "usage: make publish REGISTRY=<registry>[/<path>] [VERSION=v0.1.0]"; exit 2; }
	@scripts/publish $(REGISTRY) $(if $(VERSION),--version $(VERSION))
