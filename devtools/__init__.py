"""Developer tooling, grouped by job; none of it is shipped in the function's image.

    tools.py   what every job shares: the repository root, the Go-built tools, ports, subprocesses
    gen/       generators: XRDs, Compositions and claims from the API models (`schema`), docs/api.md
    render/    the render harness (the function and the real crossplane CLI), the API checks of
               manifests against the XRDs (`admission`, with apicheck), RunFunctionRequests as
               Crossplane builds them (`requests`, for the fuzz tier and the benchmarks)
    pkg/       the runtime image, the Crossplane packages, publishing them
    cluster/   a small Kubernetes for the end-to-end tier: control plane, node, REST client,
               kubeconfig, PKI, registry, KServe's controller, test images, and the stand-ins for
               the controllers that cannot run here (`simulate`) with the waits on them (`converge`)
    apicheck/, pause/, aimstub/   our Go programs (scripts/build-tools.sh builds them)

Layers: tools < gen < render < pkg < cluster, each importing only those before it; the test
tiers import these, never the reverse (tests/unit/devtools/test_devtools_layers.py).
"""
