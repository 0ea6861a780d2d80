# The two commands of the README. Both install what they need (Python deps, Go-built tools).
EXAMPLE ?= examples/aimservice-basic

.PHONY: render test generate package publish

render:  ## Render an example AIMService through the real Crossplane engine; print what it composes
	@scripts/render $(EXAMPLE)

test:    ## Run every check: lockfile, ruff, mypy --strict, unit, API (admission), render and schema tests
	@scripts/test

generate: ## Regenerate xrds/, compositions/ and docs/api.md from the API models
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.xrds write

package: ## Build the Configuration and Function packages into _output/ with crossplane xpkg build
	@bash scripts/bootstrap.sh >/dev/null && .venv/bin/python -m devtools.packages

publish: ## Build both packages and push them to REGISTRY (e.g. make publish REGISTRY=ghcr.io/acme)
	@test -n "$(REGISTRY)" || { echo "usage: make publish REGISTRY=<registry>[/<path>] [VERSION=v0.1.0]"; exit 2; }
	@scripts/publish $(REGISTRY) $(if $(VERSION),--version $(VERSION))
