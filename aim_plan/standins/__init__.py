"""The controllers that cannot run where the function is tried, each named and written once.

`aim plan` has no cluster at all, and the end-to-end tier's control plane (and the scale
benchmark on it) has no node and no vendor controllers. The same controllers are missing in
both, and the function must see the same objects from each stand-in whichever caller runs it,
so what each writes is built here, once, and only here:

- `kubelet`: a Pod's container statuses (terminated, waiting) and the Pod of a Job;
- `jobs`: what a container of the function's Jobs prints, by its role, what the download's
  progress sidecar reports, and the Job controller's verdict;
- `provisioner`: a storage provisioner binding a claim;
- `kserve`: KServe reporting an InferenceService Ready, or not while a claim it mounts is unbound;
- `gateway`: a Gateway API implementation accepting an HTTPRoute on each parent;
- `keda`: KEDA's HTTP add-on and HPA idling an HTTPScaledObject at zero;
- `node`: a Node as the kubelet registers it and the AMD GPU operator labels it.

The builders are pure: given the object a controller acts on and the time it writes at, they
return what it writes, shaped as its YAML. Reading the objects and writing the result is each
caller's: `aim_plan/simulate.py` puts them in the plan's world at a fixed time;
`devtools/cluster/simulate.py` writes them through the API server's status subresources;
`tests/e2e/cluster.py` runs those in the background for journeys; `benchmarks/watchers.py`
reports InferenceServices Ready for the scale benchmark.
"""
